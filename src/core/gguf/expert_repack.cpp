// Expert repacking into the contiguous layout; see expert_repack.h.
#include "core/gguf/expert_repack.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <memory>
#include <vector>

#include <fmt/format.h>

#include "core/gguf/expert_layout.h"
#include "core/gguf/expert_layout_keys.h"
#include "core/gguf/gguf_reader.h"
#include "core/gguf/gguf_stream_writer.h"

namespace les {
namespace {

constexpr uint64_t kChunkBytes = uint64_t{64} << 20;  // bytes per write of blobs / dense data

// A GGUF file's metadata plus a descriptor for positioned reads of its data
// (no mapping: repacking a 13 GB file keeps memory at a few chunk buffers).
struct InputFile {
  std::string path;
  std::unique_ptr<gguf::GgufFile> meta;
  int fd = -1;
  InputFile() = default;
  InputFile(const InputFile&) = delete;
  InputFile& operator=(const InputFile&) = delete;
  ~InputFile() {
    if (fd >= 0) ::close(fd);
  }
  // Reads exactly [off, off + n) into dst. Errors: io (read error, or the file
  // shrank since it was opened: "unexpected end of file").
  Status read(uint64_t off, uint64_t n, uint8_t* dst) const {
    while (n > 0) {
      const ssize_t r = ::pread(fd, dst, std::min<uint64_t>(n, uint64_t{1} << 30), static_cast<off_t>(off));
      if (r < 0 && errno == EINTR) continue;
      if (r < 0) return io_error(fmt::format("cannot read '{}' at byte {}: {}", path, off, std::strerror(errno)));
      if (r == 0) return io_error(fmt::format("cannot read '{}' at byte {}: unexpected end of file", path, off));
      dst += r;
      off += static_cast<uint64_t>(r);
      n -= static_cast<uint64_t>(r);
    }
    return Status();
  }
};

Status copy_metadata(const gguf::GgufFile& in, const ExpertLayout& x, gguf::GgufWriter& w) {
  for (const gguf::KeyValue& kv : in.metadata())
    if (!is_expert_layout_key(kv.key)) LES_RETURN_IF_ERROR(w.set(kv.key, kv.value));
  std::vector<LayerExpertInfo> layers;
  for (int32_t l = 0; l < x.n_layer(); ++l) layers.push_back(x.layer(l));
  return set_contiguous_layout_keys(w, layers);
}

// The contiguous layout's blob stride for a layer's experts.
uint64_t blob_stride_of(const LayerExpertInfo& li) { return contiguous_blob_stride(li.expert_bytes); }

// Writes the blobs of one layer, in chunks of whole blobs.
Status write_layer_blobs(const InputFile& in, const ExpertLayout& x, int32_t layer, gguf::GgufStreamWriter& w,
                         std::vector<uint8_t>& buf) {
  const uint64_t stride = blob_stride_of(x.layer(layer));
  const int32_t per_chunk = static_cast<int32_t>(std::max<uint64_t>(1, kChunkBytes / stride));
  const std::string name = packed_experts_tensor_name(layer);
  for (int32_t e0 = 0; e0 < x.n_expert(); e0 += per_chunk) {
    const int32_t n = std::min(per_chunk, x.n_expert() - e0);
    buf.assign(static_cast<size_t>(n) * stride, 0);
    for (int32_t k = 0; k < n; ++k) {
      LES_ASSIGN_OR_RETURN(const ExpertRanges r, x.ranges(layer, e0 + k));
      uint8_t* dst = buf.data() + static_cast<size_t>(k) * stride;
      for (size_t i = 0; i < r.n_reads; ++i)
        LES_RETURN_IF_ERROR(in.read(r.reads[i].offset, r.reads[i].length, dst + r.read_dest_offset[i]));
    }
    LES_RETURN_IF_ERROR(w.write_rows(name, e0, buf));
  }
  return Status();
}

Status write_dense(const InputFile& in, const gguf::TensorInfo& t, gguf::GgufStreamWriter& w,
                   std::vector<uint8_t>& buf) {
  for (uint64_t off = 0; off < t.n_bytes; off += kChunkBytes) {
    const uint64_t n = std::min<uint64_t>(kChunkBytes, t.n_bytes - off);
    buf.resize(n);
    LES_RETURN_IF_ERROR(in.read(t.file_offset + off, n, buf.data()));
    LES_RETURN_IF_ERROR(w.write_bytes(t.name, off, buf));
  }
  return Status();
}

// Opens and validates `path` (metadata only) and a descriptor for its data.
Status open_input(const std::string& path, InputFile* f) {
  gguf::ReadOptions ro;
  ro.use_mmap = false;
  LES_ASSIGN_OR_RETURN(f->meta, gguf::GgufFile::open(path, ro));
  if (f->meta->tensors().empty()) return invalid_argument_error("'" + path + "' has no tensors");
  f->path = path;
  f->fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (f->fd < 0) return io_error(fmt::format("cannot open '{}': {}", path, std::strerror(errno)));
  return Status();
}

}  // namespace

Result<RepackReport> repack_experts(const std::string& in_path, const std::string& out_path,
                                    const RepackOptions& opts) {
  std::error_code ec;
  if (std::filesystem::equivalent(in_path, out_path, ec))
    return invalid_argument_error("repack: input and output are the same file '" + in_path + "'");
  InputFile inf;
  LES_RETURN_IF_ERROR(open_input(in_path, &inf));
  const gguf::GgufFile* in = inf.meta.get();
  auto xr = ExpertLayout::from_file(*in);
  if (!xr.ok()) return xr.status().with_context("repack '" + in_path + "'");
  const ExpertLayout& x = *xr;
  if (x.contiguous())
    return invalid_argument_error("repack: '" + in_path + "' already has the contiguous expert layout");
  if (x.n_moe_layers() == 0)
    return invalid_argument_error("repack: '" + in_path + "' has no routed expert tensors (blk.N.ffn_*_exps.weight)");

  gguf::GgufStreamWriter w;
  LES_RETURN_IF_ERROR(copy_metadata(*in, x, w.metadata()));
  // Stride of each MoE layer's blobs under the contiguous layout.
  std::vector<uint64_t> stride(static_cast<size_t>(x.n_layer()), 0);
  RepackReport rep;
  rep.n_moe_layers = x.n_moe_layers();
  rep.n_expert = x.n_expert();
  for (int32_t l = 0; l < x.n_layer(); ++l) {
    const LayerExpertInfo& li = x.layer(l);
    if (!li.present) continue;
    stride[static_cast<size_t>(l)] = blob_stride_of(li);
    rep.expert_bytes += li.expert_bytes * static_cast<uint64_t>(x.n_expert());
    rep.padding_bytes += (stride[static_cast<size_t>(l)] - li.expert_bytes) * static_cast<uint64_t>(x.n_expert());
  }
  // Tensors in input order; a layer's packed tensor takes the place of its first expert tensor.
  std::vector<bool> packed_declared(static_cast<size_t>(x.n_layer()), false);
  for (const gguf::TensorInfo& t : in->tensors()) {
    const auto [layer, role] = expert_tensor_role(t.name);
    if (layer >= 0 && layer < x.n_layer() && x.layer(layer).present) {
      (void)role;
      if (packed_declared[static_cast<size_t>(layer)]) continue;
      packed_declared[static_cast<size_t>(layer)] = true;
      LES_RETURN_IF_ERROR(w.declare_tensor(packed_experts_tensor_name(layer), GgmlType::I8,
                                           {static_cast<int64_t>(stride[static_cast<size_t>(layer)]), x.n_expert()}));
    } else {
      if (t.name.find("ffn_exps_packed") != std::string::npos)
        return format_error("repack: '" + in_path + "' has a stray packed-experts tensor '" + t.name + "'");
      LES_RETURN_IF_ERROR(w.declare_tensor(t.name, t.type, std::span<const int64_t>(t.ne.data(), t.n_dims)));
    }
  }
  LES_RETURN_IF_ERROR(w.begin(out_path));
  std::vector<uint8_t> buf;
  std::fill(packed_declared.begin(), packed_declared.end(), false);
  for (const gguf::TensorInfo& t : in->tensors()) {
    const auto [layer, role] = expert_tensor_role(t.name);
    (void)role;
    if (layer >= 0 && layer < x.n_layer() && x.layer(layer).present) {
      if (packed_declared[static_cast<size_t>(layer)]) continue;
      packed_declared[static_cast<size_t>(layer)] = true;
      LES_RETURN_IF_ERROR(write_layer_blobs(inf, x, layer, w, buf));
    } else {
      LES_RETURN_IF_ERROR(write_dense(inf, t, w, buf));
    }
  }
  // Verified before the rename: OUT never holds an unverified file (an
  // interrupt during verification leaves only OUT.tmp, which les repack removes).
  LES_RETURN_IF_ERROR(w.finish([&](const std::string& tmp) -> Status {
    if (!opts.verify) return Status();
    auto v = verify_repacked(in_path, tmp);
    if (!v.ok()) return v.status().with_context("repack verification");
    rep.experts_verified = *v;
    return Status();
  }));
  rep.in_file_bytes = in->file_size();
  rep.out_file_bytes = w.file_size();
  return rep;
}

Result<uint64_t> verify_repacked(const std::string& original_path, const std::string& repacked_path) {
  InputFile fa, fb;
  LES_RETURN_IF_ERROR(open_input(original_path, &fa));
  LES_RETURN_IF_ERROR(open_input(repacked_path, &fb));
  const gguf::GgufFile* a = fa.meta.get();
  const gguf::GgufFile* b = fb.meta.get();
  LES_ASSIGN_OR_RETURN(const ExpertLayout xa, ExpertLayout::from_file(*a));
  LES_ASSIGN_OR_RETURN(const ExpertLayout xb, ExpertLayout::from_file(*b));
  if (!xb.contiguous())
    return invalid_argument_error("verify: '" + repacked_path + "' does not have the contiguous expert layout");
  if (xa.n_layer() != xb.n_layer() || xa.n_expert() != xb.n_expert() || xa.n_moe_layers() != xb.n_moe_layers())
    return internal_error(fmt::format("verify: layers/experts differ: {} layers x {} experts ({} MoE) vs {} x {} ({})",
                                      xa.n_layer(), xa.n_expert(), xa.n_moe_layers(), xb.n_layer(), xb.n_expert(),
                                      xb.n_moe_layers()));
  // Metadata: every key of the original except the layout keys, same value, same order.
  std::vector<const gguf::KeyValue*> ka, kb;
  for (const auto& kv : a->metadata())
    if (!is_expert_layout_key(kv.key)) ka.push_back(&kv);
  for (const auto& kv : b->metadata())
    if (!is_expert_layout_key(kv.key)) kb.push_back(&kv);
  // Reported in this order: the first key of the original (in its order) that the repacked
  // file lacks or holds with another value, then the first key only the repacked file has,
  // then the first position where the same keys stand in another order.
  auto find = [](const std::vector<const gguf::KeyValue*>& kv, const std::string& key) -> const gguf::KeyValue* {
    for (const gguf::KeyValue* k : kv)
      if (k->key == key) return k;
    return nullptr;
  };
  for (const gguf::KeyValue* a_kv : ka) {
    const gguf::KeyValue* b_kv = find(kb, a_kv->key);
    if (b_kv == nullptr)
      return internal_error("verify: metadata key '" + a_kv->key + "' of '" + original_path + "' is missing from '" +
                            repacked_path + "'");
    if (!(a_kv->value == b_kv->value))
      return internal_error("verify: metadata key '" + a_kv->key + "' has another value in '" + repacked_path + "'");
  }
  for (const gguf::KeyValue* b_kv : kb)
    if (find(ka, b_kv->key) == nullptr)
      return internal_error("verify: metadata key '" + b_kv->key + "' of '" + repacked_path + "' is not in '" +
                            original_path + "'");
  for (size_t i = 0; i < std::min(ka.size(), kb.size()); ++i)
    if (ka[i]->key != kb[i]->key)
      return internal_error(fmt::format("verify: the metadata keys stand in another order: #{} is '{}' in '{}', "
                                        "'{}' in '{}'",
                                        i + 1, ka[i]->key, original_path, kb[i]->key, repacked_path));

  std::vector<uint8_t> ba, bb;
  // Compares [oa, oa + len) of the original with [ob, ob + len) of the repacked file.
  auto same = [&](uint64_t oa, uint64_t ob, uint64_t len, bool* eq) -> Status {
    *eq = true;
    for (uint64_t off = 0; off < len && *eq; off += kChunkBytes) {
      const uint64_t n = std::min<uint64_t>(kChunkBytes, len - off);
      ba.resize(n);
      bb.resize(n);
      LES_RETURN_IF_ERROR(fa.read(oa + off, n, ba.data()));
      LES_RETURN_IF_ERROR(fb.read(ob + off, n, bb.data()));
      *eq = std::memcmp(ba.data(), bb.data(), n) == 0;
    }
    return Status();
  };
  uint64_t n = 0;
  for (int32_t l = 0; l < xa.n_layer(); ++l) {
    const LayerExpertInfo &la = xa.layer(l), &lb = xb.layer(l);
    if (la.present != lb.present) return internal_error(fmt::format("verify: layer {}: experts present in one file only", l));
    if (!la.present) continue;
    for (int32_t e = 0; e < xa.n_expert(); ++e) {
      LES_ASSIGN_OR_RETURN(const ExpertRanges ra, xa.ranges(l, e));
      LES_ASSIGN_OR_RETURN(const ExpertRanges rb, xb.ranges(l, e));
      const FileRange* A[3] = {&ra.gate, &ra.up, &ra.down};
      const FileRange* B[3] = {&rb.gate, &rb.up, &rb.down};
      const ExpertMatrixInfo* MA[3] = {&la.gate, &la.up, &la.down};
      const ExpertMatrixInfo* MB[3] = {&lb.gate, &lb.up, &lb.down};
      static const char* kNames[3] = {"gate", "up", "down"};
      for (int m = 0; m < 3; ++m) {
        bool eq = MA[m]->type == MB[m]->type && MA[m]->cols == MB[m]->cols && MA[m]->rows == MB[m]->rows &&
                  A[m]->length == B[m]->length;
        if (eq) LES_RETURN_IF_ERROR(same(A[m]->offset, B[m]->offset, A[m]->length, &eq));
        if (!eq) return internal_error(fmt::format("verify: layer {} expert {}: {} matrix differs", l, e, kNames[m]));
      }
      ++n;
    }
  }
  // Every other tensor: same type, shape and bytes.
  for (const gguf::TensorInfo& t : a->tensors()) {
    const auto [layer, role] = expert_tensor_role(t.name);
    (void)role;
    if (layer >= 0 && layer < xa.n_layer() && xa.layer(layer).present) continue;
    const gguf::TensorInfo* u = b->find_tensor(t.name);
    if (u == nullptr) return internal_error("verify: tensor '" + t.name + "' is missing from the repacked file");
    bool eq = u->type == t.type && u->ne == t.ne && u->n_bytes == t.n_bytes;
    if (eq) LES_RETURN_IF_ERROR(same(t.file_offset, u->file_offset, t.n_bytes, &eq));
    if (!eq) return internal_error("verify: tensor '" + t.name + "' differs");
  }
  return n;
}

}  // namespace les
