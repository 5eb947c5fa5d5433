// See gguf_copy.h.
#include "support/gguf_copy.h"

#include <catch2/catch.hpp>

#include <span>

#include "core/gguf/gguf_reader.h"
#include "core/gguf/gguf_writer.h"

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

}  // namespace les::test
