// Files read with a bound (issue 36, defect 6): les_context_state_load_file
// read /dev/zero until the process held 11.7 GB, and read a model file passed
// as a state whole before looking at its magic. Now: a non-regular file is
// refused before anything is read or waited for (/dev/zero, a FIFO without a
// writer), the magic is checked on the first bytes, and a file larger than
// the largest state a context of this n_ctx holds is refused from its size (a
// huge sparse file). The bound itself is exact: a full context's state is
// that size and loads.
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <chrono>
#include <future>
#include <string>
#include <vector>

#include "core/model/context.h"
#include "core/model/model.h"
#include "les/les.h"
#include "support/c_api_loaded.h"
#include "support/fixtures.h"

namespace {

using les::test::Loaded;

bool has(const char* s, const char* part) { return s != nullptr && std::string(s).find(part) != std::string::npos; }

double peak_rss_mib() {
  struct rusage ru {};
  getrusage(RUSAGE_SELF, &ru);
  return static_cast<double>(ru.ru_maxrss) / 1024.0;
}

}  // namespace

TEST_CASE("Bounded files: /dev/zero, a FIFO and a huge sparse file are refused without reading them", "[api][files]") {
  LES_REQUIRE_FIXTURE(path, "synthetic/qwen3moe-Q4_K_M.gguf");
  Loaded l;
  REQUIRE(les::test::load(path, l, 256));
  const double rss0 = peak_rss_mib();

  // A character device that never ends.
  CHECK(les_context_state_load_file(l.ctx, "/dev/zero") == LES_ERR_INVALID_ARGUMENT);
  CHECK(has(les_context_last_error(l.ctx), "/dev/zero"));
  CHECK(has(les_context_last_error(l.ctx), "character device"));

  // A FIFO without a writer: opening it for reading would wait forever.
  const std::string fifo = les::test::temp_dir() + "/state.fifo";
  REQUIRE(mkfifo(fifo.c_str(), 0600) == 0);
  auto loading = std::async(std::launch::async, [&] { return les_context_state_load_file(l.ctx, fifo.c_str()); });
  if (loading.wait_for(std::chrono::seconds(10)) != std::future_status::ready) {
    const int w = ::open(fifo.c_str(), O_WRONLY);  // release the blocked reader before failing
    if (w >= 0) ::close(w);
    FAIL("les_context_state_load_file waited on a FIFO without a writer");
  }
  CHECK(loading.get() == LES_ERR_INVALID_ARGUMENT);
  CHECK(has(les_context_last_error(l.ctx), "FIFO"));

  // A 1 TiB sparse file that starts like a state.
  const std::string sparse = les::test::temp_dir() + "/huge.state";
  {
    const int fd = ::open(sparse.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    REQUIRE(fd >= 0);
    REQUIRE(::write(fd, "LESSTATE", 8) == 8);
    REQUIRE(::ftruncate(fd, off_t{1} << 40) == 0);
    ::close(fd);
  }
  CHECK(les_context_state_load_file(l.ctx, sparse.c_str()) == LES_ERR_INVALID_ARGUMENT);
  CHECK(has(les_context_last_error(l.ctx), "1024.0 GiB"));
  CHECK(has(les_context_last_error(l.ctx), "n_ctx 256"));
  ::unlink(sparse.c_str());

  // A model file: refused on its magic, not read whole first.
  CHECK(les_context_state_load_file(l.ctx, path.c_str()) == LES_ERR_FORMAT);
  CHECK(has(les_context_last_error(l.ctx), "GGUF"));
  // A directory.
  CHECK(les_context_state_load_file(l.ctx, les::test::temp_dir().c_str()) == LES_ERR_INVALID_ARGUMENT);
  CHECK(has(les_context_last_error(l.ctx), "directory"));

  INFO("peak RSS before " << rss0 << " MiB, after " << peak_rss_mib() << " MiB");
  CHECK(peak_rss_mib() < rss0 + 32);  // nothing of them was held
  CHECK(les_context_n_past(l.ctx) == 0);  // and the context is unchanged
}

TEST_CASE("Bounded files: the bound is the state of a full context, which loads", "[api][files]") {
  LES_REQUIRE_FIXTURE(path, "synthetic/qwen3moe-Q4_K_M.gguf");
  les::ModelParams mp;
  mp.n_threads = 1;
  auto model = les::Model::load(path, mp);
  REQUIRE(model.ok());
  for (les::GgmlType kv : {les::GgmlType::F16, les::GgmlType::Q8_0}) {
    les::ContextParams cp;
    cp.n_ctx = 24;
    cp.kv_type = kv;
    auto ctx = les::Context::create(**model, cp);
    REQUIRE(ctx.ok());
    std::vector<int32_t> ids(24);
    for (size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<int32_t>(10 + i);
    REQUIRE((*ctx)->decode(ids).ok());
    auto state = (*ctx)->save_state();
    REQUIRE(state.ok());
    CHECK(state->size() == (*ctx)->max_state_bytes());
  }
}

TEST_CASE("Bounded files: a full context's state file loads; one byte more is refused", "[api][files]") {
  LES_REQUIRE_FIXTURE(path, "synthetic/qwen3moe-Q4_K_M.gguf");
  Loaded a, b;
  REQUIRE(les::test::load(path, a, 32));
  REQUIRE(les::test::load(path, b, 32));
  std::vector<les_token> ids(32);
  for (size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<les_token>(20 + i);
  REQUIRE(les_context_decode(a.ctx, ids.data(), 32) == LES_OK);
  const std::string file = les::test::temp_dir() + "/full.state";
  REQUIRE(les_context_state_save_file(a.ctx, file.c_str()) == LES_OK);
  CHECK(les_context_state_load_file(b.ctx, file.c_str()) == LES_OK);
  CHECK(les_context_n_past(b.ctx) == 32);
  // Grown by one byte: over the bound, refused from its size.
  {
    const int fd = ::open(file.c_str(), O_WRONLY | O_APPEND);
    REQUIRE(fd >= 0);
    REQUIRE(::write(fd, "x", 1) == 1);
    ::close(fd);
  }
  REQUIRE(les_context_reset(b.ctx) == LES_OK);
  CHECK(les_context_state_load_file(b.ctx, file.c_str()) == LES_ERR_INVALID_ARGUMENT);
  CHECK(has(les_context_last_error(b.ctx), "the largest state a context of n_ctx 32 holds"));
  CHECK(les_context_n_past(b.ctx) == 0);
}
