// Streaming model quantisation; see quantize_model.h.
#include "quant/quantize_model.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

#include "core/gguf/expert_layout.h"
#include "core/gguf/expert_layout_keys.h"
#include "core/gguf/gguf_reader.h"
#include "core/gguf/gguf_stream_writer.h"
#include "kernels/kernels.h"
#include "kernels/weight_quantizers.h"
#include "quant/expert_bits.h"

namespace les::quant {
namespace {

// les-mixed-iq2: the share of the routed-expert weights that get IQ2_XS
// (2.3125 bits) instead of IQ2_XXS (2.0625): 2.19 bits per expert weight.
constexpr double kLesMixedIq2XsFraction = 0.5;

struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

Status pread_all(int fd, uint8_t* dst, size_t n, uint64_t off, const std::string& path) {
  while (n > 0) {
    const ssize_t r = ::pread(fd, dst, n, static_cast<off_t>(off));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return io_error("reading " + path + " at offset " + std::to_string(off) + ": " +
                                (r == 0 ? std::string("unexpected end of file") : std::strerror(errno)));
    dst += r;
    n -= static_cast<size_t>(r);
    off += static_cast<uint64_t>(r);
  }
  return Status();
}

bool can_convert_from(GgmlType t) {
  return t == GgmlType::F32 || t == GgmlType::F16 || t == GgmlType::BF16 || t == GgmlType::Q8_0;
}

// Runs f(i) for i in [0, n) on up to n_threads threads.
template <class F>
void parallel_rows(int64_t n, int n_threads, F&& f) {
  const int nt = static_cast<int>(std::clamp<int64_t>(n_threads, 1, std::max<int64_t>(n, 1)));
  std::atomic<int64_t> next{0};
  auto work = [&] {
    for (int64_t i; (i = next.fetch_add(1)) < n;) f(i);
  };
  std::vector<std::thread> pool;
  for (int t = 1; t < nt; ++t) pool.emplace_back(work);
  work();
  for (auto& th : pool) th.join();
}

// The names of the types LES writes, in ggml's id order ("F32, F16, Q4_0, ...").
std::string writable_type_names() {
  std::string names;
  for (uint32_t id = 0; id < kGgmlTypeCount; ++id) {
    const auto t = ggml_type_traits(id);
    if (!t || !kernels::weight_quantizer_available(static_cast<GgmlType>(id))) continue;
    names += (names.empty() ? "" : ", ") + std::string(t->name);
  }
  return names;
}

// The refusals that need only the plan: input types, target types, imatrix.
Status check_plan(const std::vector<gguf::TensorInfo>& tensors, const std::vector<TensorChoice>& plan,
                  const QuantizeParams& p, const std::string& in_path) {
  for (size_t i = 0; i < tensors.size(); ++i) {
    const gguf::TensorInfo& t = tensors[i];
    const TensorChoice& c = plan[i];
    if (!c.quantize) continue;
    if (c.needs_imatrix && p.imatrix == nullptr)
      return invalid_argument_error("tensor '" + t.name + "': " + ggml_type_name(c.type) +
                                    " needs an importance matrix (--imatrix FILE); its quality without one is garbage");
    if (!can_convert_from(t.type))
      return invalid_argument_error("tensor '" + t.name + "' of " + in_path + " is " + ggml_type_name(t.type) +
                                    "; LES requantises only F32, F16, BF16 and Q8_0 input (quantise from the "
                                    "original F16/BF16 file)");
    if (!kernels::weight_quantizer_available(c.type))
      return invalid_argument_error("tensor '" + t.name + "': LES cannot produce " + std::string(ggml_type_name(c.type)) +
                                    " (it writes " + writable_type_names() + ")");
  }
  if (p.imatrix == nullptr) return Status();
  for (const auto& [name, e] : p.imatrix->entries) {
    const auto it = std::find_if(tensors.begin(), tensors.end(), [&](const gguf::TensorInfo& t) { return t.name == name; });
    if (it == tensors.end())
      return invalid_argument_error("the imatrix was made for another model: it has an entry '" + name + "', which " +
                                    in_path + " lacks");
    const int64_t want = it->ne[0] * it->ne[2];
    if (static_cast<int64_t>(e.sums.size()) != want)
      return invalid_argument_error("the imatrix was made for another model: entry '" + name + "' has " +
                                    std::to_string(e.sums.size()) + " values, the tensor needs " +
                                    std::to_string(want) + " (" + std::to_string(it->ne[0]) + " columns x " +
                                    std::to_string(it->ne[2]) + " experts)");
  }
  return Status();
}

// `experts`: the output's expert layers when the layout is contiguous (else empty).
Status set_metadata(gguf::GgufWriter& m, const gguf::GgufFile& in, const QuantizeParams& p,
                    const std::vector<LayerExpertInfo>& experts) {
  for (const gguf::KeyValue& kv : in.metadata()) {
    if (is_expert_layout_key(kv.key)) continue;
    if (Status s = m.set(kv.key, kv.value); !s.ok()) return s;
  }
  if (Status s = experts.empty() ? m.set_alignment(in.alignment()) : set_contiguous_layout_keys(m, experts); !s.ok())
    return s;
  if (Status s = m.set_u32("general.quantization_version", 2); !s.ok()) return s;
  if (Status s = m.set_u32("general.file_type", preset_file_type(p.plan.preset)); !s.ok()) return s;
  if (p.imatrix == nullptr) return Status();
  Status s = m.set_string("quantize.imatrix.file", p.imatrix_path);
  if (s.ok() && !p.imatrix->datasets.empty()) s = m.set_string("quantize.imatrix.dataset", p.imatrix->datasets.front());
  if (s.ok()) s = m.set_u32("quantize.imatrix.entries_count", static_cast<uint32_t>(p.imatrix->entries.size()));
  if (s.ok() && p.imatrix->chunk_count > 0) s = m.set_u32("quantize.imatrix.chunks_count", p.imatrix->chunk_count);
  return s;
}

// The routed experts of the output (types from the plan), one entry per
// block, for the contiguous layout. Errors: invalid_argument (no routed
// experts; a layer missing one of gate/up/down; expert counts or shapes that
// disagree within a layer).
Result<std::vector<LayerExpertInfo>> output_expert_layers(const std::vector<gguf::TensorInfo>& tensors,
                                                          const std::vector<TensorChoice>& plan, int n_layer,
                                                          int n_expert, const std::string& in_path) {
  std::vector<LayerExpertInfo> layers(static_cast<size_t>(std::max(n_layer, 0)));
  std::vector<int> seen(layers.size(), 0);
  for (size_t i = 0; i < tensors.size(); ++i) {
    const auto [layer, role] = expert_tensor_role(tensors[i].name);
    if (layer < 0) continue;
    const gguf::TensorInfo& t = tensors[i];
    if (layer >= n_layer || t.n_dims != 3 || t.ne[2] != n_expert)
      return invalid_argument_error("--layout contiguous: expert tensor '" + t.name + "' of " + in_path +
                                    " does not fit the model's block_count and expert_count (" +
                                    std::to_string(n_layer) + ", " + std::to_string(n_expert) + ")");
    ExpertMatrixInfo mi;
    mi.type = plan[i].type;
    mi.cols = t.ne[0];
    mi.rows = t.ne[1];
    mi.row_bytes = *ggml_row_bytes(mi.type, mi.cols);
    mi.bytes = mi.row_bytes * static_cast<uint64_t>(mi.rows);
    LayerExpertInfo& li = layers[static_cast<size_t>(layer)];
    (role == 0 ? li.gate : role == 1 ? li.up : li.down) = mi;
    seen[static_cast<size_t>(layer)] |= 1 << role;
  }
  bool any = false;
  for (size_t l = 0; l < layers.size(); ++l) {
    if (seen[l] == 0) continue;
    LayerExpertInfo& li = layers[l];
    if (seen[l] != 7 || li.gate.cols != li.up.cols || li.gate.rows != li.up.rows || li.down.cols != li.gate.rows ||
        li.down.rows != li.gate.cols)
      return invalid_argument_error("--layout contiguous: layer " + std::to_string(l) + " of " + in_path +
                                    " lacks one of ffn_{gate,up,down}_exps or their shapes disagree");
    li.present = true;
    li.expert_bytes = li.gate.bytes + li.up.bytes + li.down.bytes;
    li.blob_stride = contiguous_blob_stride(li.expert_bytes);
    any = true;
  }
  if (!any) return invalid_argument_error("--layout contiguous: " + in_path + " has no routed expert tensors");
  return layers;
}

}  // namespace

Result<QuantizeReport> quantize_model(const std::string& in_path, const std::string& out_path,
                                      const QuantizeParams& p) {
  struct stat si {}, so {};
  if (in_path == out_path ||
      (::stat(in_path.c_str(), &si) == 0 && ::stat(out_path.c_str(), &so) == 0 && si.st_ino == so.st_ino &&
       si.st_dev == so.st_dev))
    return invalid_argument_error("the output " + out_path + " is the input file");
  gguf::ReadOptions ro;
  ro.use_mmap = false;
  auto opened = gguf::GgufFile::open(in_path, ro);
  if (!opened.ok()) return opened.status();
  const gguf::GgufFile& in = **opened;
  const std::string arch = in.architecture();
  const int n_layer = static_cast<int>(in.get_uint_or(arch + ".block_count", 0).ok() ? *in.get_uint_or(arch + ".block_count", 0) : 0);
  const int n_expert = static_cast<int>(in.get_uint_or(arch + ".expert_count", 0).ok() ? *in.get_uint_or(arch + ".expert_count", 0) : 0);
  std::vector<TensorShape> shapes;
  for (const gguf::TensorInfo& t : in.tensors()) {
    TensorShape s;
    s.name = t.name;
    s.type = t.type;
    s.n_dims = static_cast<int>(t.n_dims);
    for (int d = 0; d < 4; ++d) s.ne[d] = t.ne[static_cast<size_t>(d)];
    shapes.push_back(s);
  }
  if (in.find(kExpertLayoutKey) != nullptr)
    return invalid_argument_error(in_path + " has LES's contiguous expert layout (les repack or les quantize "
                                  "--layout contiguous wrote it); quantise the original per-tensor file, with "
                                  "--layout contiguous for this layout");
  // n_head / n_head_kv (the attn_v rules of IQ4_XS, IQ3_XXS, IQ2_XXS); 1 when either is missing or an array.
  const auto n_head = in.get_uint_or(arch + ".attention.head_count", 0);
  const auto n_head_kv = in.get_uint_or(arch + ".attention.head_count_kv", 0);
  const int n_gqa = n_head.ok() && n_head_kv.ok() && *n_head_kv > 0 ? static_cast<int>(*n_head / *n_head_kv) : 1;
  PlanOptions plan_options = p.plan;
  if (plan_options.preset == Preset::les_mixed_iq2 && plan_options.iq2_xs_experts.empty()) {
    // IQ2_XS for the half of the routed-expert weights the imatrix ranks highest (expert_bits.h).
    if (p.imatrix == nullptr)
      return invalid_argument_error("les-mixed-iq2 needs an importance matrix (--imatrix FILE): it quantises the "
                                    "experts to IQ2_XXS / IQ2_XS and ranks them by it");
    auto scores = score_routed_experts(in, in_path, *p.imatrix);
    if (!scores.ok()) return scores.status();
    plan_options.iq2_xs_experts = pick_iq2_xs_experts(*scores, kLesMixedIq2XsFraction);
  }
  const std::vector<TensorChoice> plan =
      plan_types(shapes, plan_options, n_layer, n_expert, n_gqa, p.imatrix != nullptr);
  if (Status s = check_plan(in.tensors(), plan, p, in_path); !s.ok()) return s;
  std::vector<LayerExpertInfo> experts;  // contiguous layout only
  if (p.layout == OutputLayout::contiguous) {
    auto e = output_expert_layers(in.tensors(), plan, n_layer, n_expert, in_path);
    if (!e.ok()) return e.status();
    experts = std::move(e).value();
  }
  // The output layer whose packed tensor holds tensor `t`, or -1 (written as itself).
  auto packed_layer = [&](const gguf::TensorInfo& t) {
    const int32_t l = experts.empty() ? -1 : expert_tensor_role(t.name).first;
    return l >= 0 && experts[static_cast<size_t>(l)].present ? l : -1;
  };

  gguf::GgufStreamWriter w;
  if (Status s = set_metadata(w.metadata(), in, p, experts); !s.ok()) return s;
  std::vector<bool> declared(experts.size(), false);
  for (size_t i = 0; i < plan.size(); ++i) {
    const gguf::TensorInfo& t = in.tensors()[i];
    Status s;
    if (const int32_t l = packed_layer(t); l < 0) {
      s = w.declare_tensor(t.name, plan[i].type, std::span<const int64_t>(t.ne.data(), t.n_dims));
    } else if (!declared[static_cast<size_t>(l)]) {  // the packed tensor takes the first expert tensor's place
      declared[static_cast<size_t>(l)] = true;
      s = w.declare_tensor(packed_experts_tensor_name(l), GgmlType::I8,
                           {static_cast<int64_t>(experts[static_cast<size_t>(l)].blob_stride), n_expert});
    }
    if (!s.ok()) return s;
  }
  Fd fd;
  fd.fd = ::open(in_path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd.fd < 0) return io_error("cannot open " + in_path + ": " + std::strerror(errno));
  if (Status s = w.begin(out_path); !s.ok()) return s;
  // Contiguous layout: each blob's zero padding, then every expert matrix at
  // its place in its blob; other tensors as themselves.
  for (size_t l = 0; l < experts.size(); ++l) {
    const LayerExpertInfo& li = experts[l];
    if (!li.present || li.blob_stride == li.expert_bytes) continue;
    const std::vector<uint8_t> zeros(li.blob_stride - li.expert_bytes, 0);
    for (int64_t e = 0; e < n_expert; ++e)
      if (Status s = w.write_bytes(packed_experts_tensor_name(static_cast<int32_t>(l)),
                                   static_cast<uint64_t>(e) * li.blob_stride + li.expert_bytes, zeros);
          !s.ok())
        return s;
  }
  // Writes `bytes` at byte `off` of tensor t's output data.
  auto write_out = [&](const gguf::TensorInfo& t, uint64_t off, std::span<const uint8_t> bytes) -> Status {
    const int32_t l = packed_layer(t);
    if (l < 0) return w.write_bytes(t.name, off, bytes);
    const LayerExpertInfo& li = experts[static_cast<size_t>(l)];
    const int role = expert_tensor_role(t.name).second;
    const uint64_t slab = (role == 0 ? li.gate : role == 1 ? li.up : li.down).bytes;
    const uint64_t base = role == 0 ? 0 : role == 1 ? li.gate.bytes : li.gate.bytes + li.up.bytes;
    const std::string packed = packed_experts_tensor_name(l);
    while (!bytes.empty()) {  // split at expert boundaries: expert e's slab goes to blob e
      const uint64_t e = off / slab, within = off % slab;
      const size_t n = static_cast<size_t>(std::min<uint64_t>(slab - within, bytes.size()));
      if (Status s = w.write_bytes(packed, e * li.blob_stride + base + within, bytes.first(n)); !s.ok()) return s;
      bytes = bytes.subspan(n);
      off += n;
    }
    return Status();
  };

  QuantizeReport rep;
  rep.in_bytes = in.file_size();
  QuantizeProgress prog;
  prog.n_tensors = static_cast<int64_t>(plan.size());
  for (const gguf::TensorInfo& t : in.tensors()) prog.bytes_total += t.n_bytes;
  const kernels::KernelTable& table = kernels::default_kernel_table();
  std::vector<uint8_t> src, dst;
  std::vector<float> f32;
  auto cancelled = [&] { return p.cancel != nullptr && p.cancel->load(std::memory_order_relaxed); };
  for (size_t i = 0; i < plan.size(); ++i) {
    const gguf::TensorInfo& t = in.tensors()[i];
    const TensorChoice& c = plan[i];
    std::string note;
    if (!c.quantize) {
      ++rep.n_copied;
      constexpr uint64_t kCopy = 16ull << 20;
      for (uint64_t off = 0; off < t.n_bytes; off += kCopy) {
        if (cancelled()) return cancelled_error("quantisation interrupted");
        const size_t n = static_cast<size_t>(std::min(kCopy, t.n_bytes - off));
        src.resize(n);
        if (Status s = pread_all(fd.fd, src.data(), n, t.file_offset + off, in_path); !s.ok()) return s;
        if (Status s = write_out(t, off, src); !s.ok()) return s;
      }
    } else {
      ++rep.n_quantized;
      rep.n_fallback += c.fallback ? 1 : 0;
      const int64_t ne0 = t.ne[0], ne1 = t.ne[1];
      const int64_t n_rows = t.n_elements() / ne0;
      const uint64_t in_row = t.row_bytes();
      const size_t out_row = *ggml_row_bytes(c.type, ne0);
      const kernels::DequantizeRowFn deq = table.of(t.type).dequantize_row;
      std::vector<float> imat;
      if (p.imatrix != nullptr) {
        if (auto it = p.imatrix->entries.find(t.name); it != p.imatrix->entries.end()) {
          imat = it->second.importance();
          ++rep.n_imatrix_used;
        } else {
          note = " (no imatrix entry)";
        }
      }
      const int64_t slab_rows =
          std::clamp<int64_t>(static_cast<int64_t>(p.slab_bytes / (static_cast<uint64_t>(ne0) * 4)), 1, n_rows);
      for (int64_t r0 = 0; r0 < n_rows; r0 += slab_rows) {
        if (cancelled()) return cancelled_error("quantisation interrupted");
        const int64_t nr = std::min(slab_rows, n_rows - r0);
        src.resize(static_cast<size_t>(nr * static_cast<int64_t>(in_row)));
        f32.resize(static_cast<size_t>(nr * ne0));
        dst.resize(static_cast<size_t>(nr) * out_row);
        if (Status s = pread_all(fd.fd, src.data(), src.size(), t.file_offset + static_cast<uint64_t>(r0) * in_row,
                                 in_path);
            !s.ok())
          return s;
        parallel_rows(nr, p.n_threads, [&](int64_t r) {
          float* x = f32.data() + r * ne0;
          deq(src.data() + static_cast<size_t>(r) * in_row, x, ne0);
          // Rows of expert e are rows [e * ne1, (e + 1) * ne1) of the 3-D tensor.
          const float* im = imat.empty() ? nullptr : imat.data() + ((r0 + r) / ne1) * ne0;
          kernels::quantize_weights_row(table, c.type, x, dst.data() + static_cast<size_t>(r) * out_row, ne0, im);
        });
        if (Status s = write_out(t, static_cast<uint64_t>(r0) * out_row, dst); !s.ok()) return s;
      }
    }
    prog.tensor_index = static_cast<int64_t>(i) + 1;
    prog.bytes_done += t.n_bytes;
    if (p.on_tensor) {
      std::string line = t.name + " " + ggml_type_name(t.type) + (c.quantize ? " -> " : " (kept)");
      if (c.quantize) line += ggml_type_name(c.type);
      if (c.fallback) line += std::string(" (fallback: ") + ggml_type_name(c.wanted) + " needs rows of " +
                              std::to_string(ggml_type_traits(c.wanted).block_size) + ")";
      p.on_tensor(line + note);
    }
    if (p.on_progress) p.on_progress(prog);
  }
  if (cancelled()) return cancelled_error("quantisation interrupted");
  rep.out_bytes = w.file_size();
  if (Status s = w.finish(); !s.ok()) return s;
  return rep;
}

}  // namespace les::quant
