// les-mixed-iq2's bit allocation; see expert_bits.h.
#include "quant/expert_bits.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <numeric>

#include "core/gguf/expert_layout_keys.h"
#include "kernels/kernels.h"

namespace les::quant {
namespace {

Status read_at(int fd, uint8_t* dst, size_t n, uint64_t off, const std::string& path) {
  while (n > 0) {
    const ssize_t r = ::pread(fd, dst, n, static_cast<off_t>(off));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0)
      return io_error("reading " + path + " at offset " + std::to_string(off) + ": " +
                      (r == 0 ? std::string("unexpected end of file") : std::strerror(errno)));
    dst += r;
    n -= static_cast<size_t>(r);
    off += static_cast<uint64_t>(r);
  }
  return Status();
}

}  // namespace

Result<std::vector<ExpertScore>> score_routed_experts(const gguf::GgufFile& in, const std::string& in_path,
                                                      const Imatrix& imatrix) {
  const int fd = ::open(in_path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return io_error("cannot open " + in_path + ": " + std::strerror(errno));
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  const kernels::KernelTable& table = kernels::default_kernel_table();
  std::vector<ExpertScore> out;
  std::vector<uint8_t> slab;
  std::vector<float> x;
  for (const gguf::TensorInfo& t : in.tensors()) {
    if (expert_tensor_role(t.name).first < 0 || t.ne[0] % kQKK != 0) continue;
    const auto it = imatrix.entries.find(t.name);
    if (it == imatrix.entries.end()) continue;
    const kernels::DequantizeRowFn deq = table.of(t.type).dequantize_row;
    if (deq == nullptr || !(t.type == GgmlType::F32 || t.type == GgmlType::F16 || t.type == GgmlType::BF16 ||
                            t.type == GgmlType::Q8_0))
      return invalid_argument_error("tensor '" + t.name + "' of " + in_path + " is " + ggml_type_name(t.type) +
                                    "; les-mixed-iq2 scores only F32, F16, BF16 and Q8_0 experts");
    const std::vector<float> imp = it->second.importance();
    const int64_t ne0 = t.ne[0], ne1 = t.ne[1], n_rows = t.n_elements() / ne0;
    if (static_cast<int64_t>(imp.size()) != ne0 * t.ne[2])
      return invalid_argument_error("the imatrix entry '" + t.name + "' does not fit the tensor");
    const uint64_t rb = t.row_bytes();
    const int64_t slab_rows = std::max<int64_t>(1, static_cast<int64_t>((16u << 20) / rb));  // 16 MiB reads
    x.resize(static_cast<size_t>(ne0));
    double sum = 0;
    for (int64_t r0 = 0; r0 < n_rows; r0 += slab_rows) {
      const int64_t nr = std::min(slab_rows, n_rows - r0);
      slab.resize(static_cast<size_t>(nr * static_cast<int64_t>(rb)));
      if (Status s = read_at(fd, slab.data(), slab.size(), t.file_offset + static_cast<uint64_t>(r0) * rb, in_path);
          !s.ok())
        return s;
      for (int64_t r = r0; r < r0 + nr; ++r) {
        deq(slab.data() + static_cast<size_t>(r - r0) * rb, x.data(), ne0);
        const float* a = imp.data() + (r / ne1) * ne0;  // expert r / ne1's columns
        for (int64_t c = 0; c < ne0; ++c) sum += double(a[c]) * double(x[c]) * double(x[c]);
      }
    }
    out.push_back({t.name, sum / static_cast<double>(t.n_elements()), t.n_elements()});
  }
  return out;
}

std::vector<std::string> pick_iq2_xs_experts(const std::vector<ExpertScore>& scores, double fraction) {
  std::vector<size_t> order(scores.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return scores[a].score > scores[b].score; });
  int64_t total = 0;
  for (const ExpertScore& s : scores) total += s.n_weights;
  const double budget = std::clamp(fraction, 0.0, 1.0) * static_cast<double>(total);
  std::vector<std::string> picks;
  double used = 0;
  for (size_t i : order) {
    if (used + 0.5 * static_cast<double>(scores[i].n_weights) > budget) break;
    picks.push_back(scores[i].name);
    used += static_cast<double>(scores[i].n_weights);
  }
  return picks;
}

}  // namespace les::quant
