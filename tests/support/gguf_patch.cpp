// See gguf_patch.h.
#include "support/gguf_patch.h"

#include <catch2/catch.hpp>

#include <filesystem>
#include <map>
#include <span>

#include "core/gguf/gguf_reader.h"
#include "core/gguf/gguf_writer.h"
#include "support/fixtures.h"

namespace les::test {

void write_patched_gguf(const std::string& base, const std::string& patch, const std::string& dst) {
  auto in = gguf::GgufFile::open(base);
  REQUIRE(in.ok());
  auto p = gguf::GgufFile::open(patch);
  REQUIRE(p.ok());
  std::map<std::string, const gguf::TensorInfo*> repl;
  for (const auto& t : (*p)->tensors()) repl[t.name] = &t;
  gguf::GgufWriter w;
  REQUIRE(w.set_alignment((*in)->alignment()).ok());
  for (const auto& kv : (*in)->metadata())
    if (kv.key != "general.alignment") REQUIRE(w.set(kv.key, kv.value).ok());
  size_t replaced = 0;
  for (const auto& t : (*in)->tensors()) {
    const auto it = repl.find(t.name);
    const gguf::GgufFile& from = it == repl.end() ? **in : **p;
    const gguf::TensorInfo& ti = it == repl.end() ? t : *it->second;
    replaced += it != repl.end();
    const auto data = from.tensor_data(ti);
    REQUIRE(w.add_tensor(ti.name, ti.type, std::span<const int64_t>(ti.ne.data(), ti.n_dims), data.data(), data.size())
                .ok());
  }
  REQUIRE(replaced == repl.size());
  REQUIRE(w.write_to_file(dst).ok());
}

std::string golden_patch_model(const std::string& base_fixture, const std::string& patch) {
  const std::string base = fixture_path(base_fixture);
  if (base.empty()) return "";
  const std::string dst = temp_dir() + "/" + patch + ".model.gguf";
  if (!std::filesystem::exists(dst))
    write_patched_gguf(base, std::string(LES_TESTS_SOURCE_DIR) + "/core/model/data/" + patch, dst);
  return dst;
}

}  // namespace les::test
