// See gguf_copy.h.
#include "support/gguf_copy.h"

#include <catch2/catch.hpp>

#include <regex>
#include <span>
#include <type_traits>

#include "core/gguf/gguf_reader.h"
#include "core/gguf/gguf_writer.h"
#include "kernels/kernels.h"

namespace les::test {

void copy_gguf_with_strings(const std::string& src, const std::string& dst,
                            const std::vector<std::pair<std::string, std::string>>& set) {
  auto in = gguf::GgufFile::open(src);
  REQUIRE(in.ok());
  gguf::GgufWriter w;
  REQUIRE(w.set_alignment((*in)->alignment()).ok());
  for (const auto& kv : (*in)->metadata()) {
    bool replaced = false;
    for (const auto& s : set) replaced = replaced || s.first == kv.key;
    if (!replaced && kv.key != "general.alignment") REQUIRE(w.set(kv.key, kv.value).ok());
  }
  for (const auto& s : set) REQUIRE(w.set_string(s.first, s.second).ok());
  for (const auto& t : (*in)->tensors()) {
    const auto data = (*in)->tensor_data(t);
    REQUIRE(w.add_tensor(t.name, t.type, std::span<const int64_t>(t.ne.data(), t.n_dims), data.data(), data.size())
                .ok());
  }
  REQUIRE(w.write_to_file(dst).ok());
}

void copy_gguf_edited(const std::string& src, const std::string& dst, const GgufEdit& edit) {
  auto in = gguf::GgufFile::open(src);
  REQUIRE(in.ok());
  gguf::GgufWriter w;
  REQUIRE(w.set_alignment((*in)->alignment()).ok());
  auto listed = [](const auto& list, const std::string& key) {
    for (const auto& e : list)
      if constexpr (std::is_same_v<std::decay_t<decltype(e)>, std::string>) {
        if (e == key) return true;
      } else {
        if (e.first == key) return true;
      }
    return false;
  };
  for (const auto& kv : (*in)->metadata())
    if (!listed(edit.set, kv.key) && !listed(edit.drop, kv.key) && kv.key != "general.alignment")
      REQUIRE(w.set(kv.key, kv.value).ok());
  for (const auto& [k, v] : edit.set) REQUIRE(w.set(k, v).ok());
  const std::regex rx(edit.retype.empty() ? std::string("$^") : edit.retype);
  const kernels::KernelTable& kt = kernels::default_kernel_table();
  for (const auto& t : (*in)->tensors()) {
    const auto data = (*in)->tensor_data(t);
    const std::span<const int64_t> ne(t.ne.data(), t.n_dims);
    if (edit.retype.empty() || !std::regex_match(t.name, rx)) {
      REQUIRE(w.add_tensor(t.name, t.type, ne, data.data(), data.size()).ok());
      continue;
    }
    const auto q = kt.of(edit.retype_to).quantize_row;
    REQUIRE(q != nullptr);
    const auto row = ggml_row_bytes(edit.retype_to, t.ne[0]);
    REQUIRE(row.has_value());
    const int64_t rows = t.n_elements() / t.ne[0];
    std::vector<uint8_t> out(*row * static_cast<size_t>(rows));
    // Rows of another type are dequantised to F32 first (the kernel table's dequantize_row).
    const auto deq = kt.of(t.type).dequantize_row;
    REQUIRE((t.type == GgmlType::F32 || deq != nullptr));
    const size_t in_row = static_cast<size_t>(t.row_bytes());
    std::vector<float> f32(static_cast<size_t>(t.ne[0]));
    for (int64_t r = 0; r < rows; ++r) {
      const uint8_t* src_row = data.data() + static_cast<size_t>(r) * in_row;
      const float* f = reinterpret_cast<const float*>(src_row);
      if (t.type != GgmlType::F32) {
        deq(src_row, f32.data(), t.ne[0]);
        f = f32.data();
      }
      q(f, out.data() + static_cast<size_t>(r) * *row, t.ne[0]);
    }
    REQUIRE(w.add_tensor(t.name, edit.retype_to, ne, out.data(), out.size()).ok());
  }
  REQUIRE(w.write_to_file(dst).ok());
}

}  // namespace les::test
