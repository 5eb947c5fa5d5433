// A model file truncated while a context streams its experts (issue 11,
// defect 2): with the default LES_WEIGHTS_AUTO the dense weights are in LES's
// own memory, so the run never touches the file mapping and the next expert
// read reports the short file as LES_ERR_IO (before: SIGBUS from a dense
// weight's lost page, exit 135 without a message; LES_WEIGHTS_MMAP, which maps
// everything as before, still does). LES_WEIGHTS_READ keeps even a resident
// context running on a truncated file. Also: an out-of-range weights value is
// refused by name, and a caller's struct that ends before the new fields gets
// their defaults. (A file truncated while it loads: core_test_tensor_arena.)
#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <cstddef>
#include <cstring>
#include <filesystem>
#include <string>

#include "les/les.h"
#include "support/fixtures.h"
#include "support/greedy_params.h"

namespace {

namespace fs = std::filesystem;

// A private copy of the fixture (the test truncates it).
std::string private_copy(const std::string& src, const char* name) {
  const std::string dst = les::test::temp_dir() + "/" + name;
  fs::copy_file(src, dst, fs::copy_options::overwrite_existing);
  return dst;
}

bool collect(les_token, const char* piece, size_t len, void* ud) {
  static_cast<std::string*>(ud)->append(piece, len);
  return true;
}

}  // namespace

TEST_CASE("C API: a model file truncated during a streamed run gives LES_ERR_IO, no signal", "[api][stream]") {
  LES_REQUIRE_FIXTURE(fixture, "trained/tiny-qwen3moe-F16.gguf");
  const std::string path = private_copy(fixture, "streamed.gguf");
  les_model_params mp = les_model_default_params();  // LES_WEIGHTS_AUTO
  mp.n_threads = 2;
  les_model* m = nullptr;
  REQUIRE(les_model_load(path.c_str(), &mp, &m) == LES_OK);
  les_context_params cp = les_context_default_params();
  les_context* c = nullptr;
  cp.expert_budget_bytes = 4u << 20;  // a few slots: most selected experts are read from the file
  cp.io_backend = LES_IO_PREAD;
  REQUIRE(les_context_create(m, &cp, &c) == LES_OK);
  const les_generate_params gp = les::test::greedy_params(8);
  std::string before;
  REQUIRE(les_generate(c, "The castle stood upon a rock, and the", &gp, collect, &before) == LES_OK);
  CHECK(before == " sun was now heard, that the sun");

  struct stat st {};
  REQUIRE(::stat(path.c_str(), &st) == 0);
  REQUIRE(::truncate(path.c_str(), st.st_size / 4) == 0);  // the experts' bytes are gone
  les_context_reset(c);
  const les_generate_params longer = les::test::greedy_params(64);
  std::string after;
  const les_status s = les_generate(c, "It is a truth universally acknowledged, that a", &longer, collect, &after);
  const std::string msg = les_context_last_error(c);
  INFO(msg);
  CHECK(s == LES_ERR_IO);
  CHECK(msg.find("end of file") != std::string::npos);
  CHECK(msg.find("expert") != std::string::npos);
  CHECK(msg.find("'" + path + "'") != std::string::npos);  // names the file
  les_stream_stats ss;
  std::memset(&ss, 0, sizeof ss);
  ss.struct_size = sizeof ss;
  REQUIRE(les_context_stream_stats(c, &ss) == LES_OK);
  CHECK(ss.read_errors > 0);
  les_context_free(c);
  les_model_free(m);
  fs::remove(path);
}

TEST_CASE("C API: LES_WEIGHTS_READ keeps a resident run going on a truncated file", "[api]") {
  LES_REQUIRE_FIXTURE(fixture, "trained/tiny-qwen3moe-F16.gguf");
  const std::string path = private_copy(fixture, "resident.gguf");
  les_model_params mp = les_model_default_params();
  mp.n_threads = 2;
  mp.weights = LES_WEIGHTS_READ;
  les_model* m = nullptr;
  REQUIRE(les_model_load(path.c_str(), &mp, &m) == LES_OK);
  les_context* c = nullptr;
  REQUIRE(les_context_create(m, nullptr, &c) == LES_OK);
  REQUIRE(::truncate(path.c_str(), 0) == 0);
  const les_generate_params gp = les::test::greedy_params(8);
  std::string text;
  CHECK(les_generate(c, "The castle stood upon a rock, and the", &gp, collect, &text) == LES_OK);
  CHECK(text == " sun was now heard, that the sun");
  les_context_free(c);
  les_model_free(m);
  fs::remove(path);
}

TEST_CASE("C API: les_model_params.weights out of range is refused, naming the field", "[api]") {
  LES_REQUIRE_FIXTURE(fixture, "trained/tiny-qwen3moe-F16.gguf");
  les_model_params mp = les_model_default_params();
  mp.weights = static_cast<les_weight_memory>(7);
  les_model* m = nullptr;
  CHECK(les_model_load(fixture.c_str(), &mp, &m) == LES_ERR_INVALID_ARGUMENT);
  CHECK(m == nullptr);
  CHECK(std::string(les_last_error()).find("les_model_params.weights 7") != std::string::npos);
}

TEST_CASE("C API: a les_model_params of the size before weights/lock_weights loads with their defaults", "[api]") {
  LES_REQUIRE_FIXTURE(fixture, "trained/tiny-qwen3moe-F16.gguf");
  // The caller's struct ends at log_level: the bytes after it are not its own
  // (here garbage that would be refused as a weights value) and are not read.
  alignas(les_model_params) unsigned char buf[sizeof(les_model_params)];
  std::memset(buf, 0xff, sizeof buf);
  les_model_params v1 = les_model_default_params();
  v1.struct_size = static_cast<uint32_t>(offsetof(les_model_params, weights));
  std::memcpy(buf, &v1, offsetof(les_model_params, weights));
  les_model* m = nullptr;
  REQUIRE(les_model_load(fixture.c_str(), reinterpret_cast<const les_model_params*>(buf), &m) == LES_OK);
  les_model_free(m);
}
