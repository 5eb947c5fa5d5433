// Importance-matrix files (quant/imatrix_file.h): llama-imatrix's GGUF file
// of the trained fixture reads with its metadata; GGUF and legacy .dat round
// trips keep every per-column mean; malformed files are refused by name.
#include <sys/stat.h>

#include <catch2/catch.hpp>

#include <cstdio>
#include <fstream>
#include <string>

#include "quant/imatrix_file.h"
#include "support/cli_tool.h"
#include "support/fixtures.h"

using namespace les;
using namespace les::quant;

namespace {

void check_same_importance(const Imatrix& a, const Imatrix& b, double rel) {
  REQUIRE(a.entries.size() == b.entries.size());
  for (const auto& [name, e] : a.entries) {
    const auto it = b.entries.find(name);
    REQUIRE(it != b.entries.end());
    const auto x = e.importance();
    const auto y = it->second.importance();
    REQUIRE(x.size() == y.size());
    for (size_t i = 0; i < x.size(); ++i) REQUIRE(y[i] == Approx(x[i]).epsilon(rel));
  }
}

void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

}  // namespace

TEST_CASE("imatrix: llama-imatrix's file of the trained model", "[quant]") {
  LES_REQUIRE_FIXTURE(path, "trained/imatrix-train.gguf");
  auto im = read_imatrix(path);
  REQUIRE(im.ok());
  CHECK(im->entries.size() == 64);  // quantize.imatrix.entries_count of the mixed fixture
  CHECK(im->chunk_count == 4000);
  CHECK(im->chunk_size == 256);
  REQUIRE(im->datasets.size() == 1);
  CHECK(im->datasets[0] == "shared/fixtures/corpus/train.txt");
  const ImatrixEntry& down = im->entries.at("blk.3.ffn_down_exps.weight");
  CHECK(down.n_cols == 64);
  CHECK(down.n_mat() == 32);  // per expert
  int64_t routed = 0;
  for (const int64_t c : down.counts) routed += c;
  CHECK(routed == 4000LL * 256 * 4);  // every token goes to top-4 experts
  CHECK(im->entries.at("blk.0.attn_q.weight").counts == std::vector<int64_t>{4000LL * 256});

  const std::string dir = test::temp_dir();
  SECTION("GGUF round trip") {
    REQUIRE(write_imatrix_gguf(*im, dir + "/rt.gguf").ok());
    auto back = read_imatrix(dir + "/rt.gguf");
    REQUIRE(back.ok());
    check_same_importance(*im, *back, 1e-6);
    CHECK(back->entries.at("blk.3.ffn_down_exps.weight").counts == down.counts);
    CHECK(back->chunk_count == 4000);
    CHECK(back->datasets == im->datasets);
  }
  SECTION(".dat round trip") {
    REQUIRE(write_imatrix_dat(*im, dir + "/rt.dat").ok());
    auto back = read_imatrix(dir + "/rt.dat");
    REQUIRE(back.ok());
    CHECK(back->legacy);
    check_same_importance(*im, *back, 1e-5);  // mean x ncall / ncall in float
    CHECK(back->chunk_count == 4000);
    CHECK(back->datasets == im->datasets);
    REQUIRE(write_imatrix_dat(*back, dir + "/rt2.dat").ok());  // legacy to legacy
    auto again = read_imatrix(dir + "/rt2.dat");
    REQUIRE(again.ok());
    check_same_importance(*back, *again, 1e-6);
  }
  SECTION("malformed files are refused") {
    const std::string bytes = test::read_file(path);
    write_bytes(dir + "/cut.gguf", bytes.substr(0, bytes.size() / 2));
    CHECK_FALSE(read_imatrix(dir + "/cut.gguf").ok());
    REQUIRE(write_imatrix_dat(*im, dir + "/ok.dat").ok());
    const std::string dat = test::read_file(dir + "/ok.dat");
    write_bytes(dir + "/cut.dat", dat.substr(0, 200));
    auto cut = read_imatrix(dir + "/cut.dat");
    REQUIRE_FALSE(cut.ok());
    CHECK_THAT(cut.status().message(), Catch::Contains("truncated"));
    write_bytes(dir + "/text.dat", "hello world, not an imatrix");
    CHECK_FALSE(read_imatrix(dir + "/text.dat").ok());
    CHECK(read_imatrix(dir + "/missing.dat").status().code() == StatusCode::io);
    // Sums without counts.
    Imatrix one;
    const float x[4] = {1, 2, 3, 4};
    REQUIRE(one.accumulate("blk.0.attn_q.weight", 0, 1, x, 1, 4).ok());
    REQUIRE(write_imatrix_gguf(one, dir + "/one.gguf").ok());
    std::string g = test::read_file(dir + "/one.gguf");
    const size_t pos = g.find("blk.0.attn_q.weight.counts");
    REQUIRE(pos != std::string::npos);
    g[pos + 20] = 'X';  // rename the counts tensor
    write_bytes(dir + "/nocounts.gguf", g);
    auto nc = read_imatrix(dir + "/nocounts.gguf");
    REQUIRE_FALSE(nc.ok());
    CHECK_THAT(nc.status().message(), Catch::Contains("sums but no counts"));
  }
}

TEST_CASE("imatrix: accumulation per matrix and expert", "[quant]") {
  Imatrix im;
  const float rows[6] = {1, 2, 3, -1, -2, -3};
  REQUIRE(im.accumulate("blk.0.ffn_up_exps.weight", 2, 4, rows, 2, 3).ok());
  REQUIRE(im.accumulate("blk.0.ffn_up_exps.weight", 0, 4, rows, 1, 3).ok());
  const ImatrixEntry& e = im.entries.at("blk.0.ffn_up_exps.weight");
  CHECK(e.counts == std::vector<int64_t>{1, 0, 2, 0});
  const auto m = e.importance();
  CHECK(m[0] == 1.0f);
  CHECK(m[3] == 1.0f);  // expert 1 never routed: 1 (no preference)
  CHECK(m[6] == 1.0f);
  CHECK(m[8] == 9.0f);  // expert 2, column 2: (9 + 9) / 2
  CHECK_FALSE(im.accumulate("blk.0.ffn_up_exps.weight", 0, 4, rows, 1, 2).ok());  // another width
  CHECK_FALSE(im.accumulate("blk.0.ffn_up_exps.weight", 4, 4, rows, 1, 3).ok());  // expert out of range
}

TEST_CASE("imatrix: /dev/zero and a FIFO are refused before anything is read (issue 36)", "[quant]") {
  // Before, read_imatrix read /dev/zero until memory ran out and waited
  // forever on a FIFO without a writer.
  auto zero = read_imatrix("/dev/zero");
  REQUIRE_FALSE(zero.ok());
  CHECK(zero.status().code() == StatusCode::invalid_argument);
  CHECK(zero.status().message().find("character device") != std::string::npos);
  const std::string fifo = les::test::temp_dir() + "/imatrix.fifo";
  REQUIRE(mkfifo(fifo.c_str(), 0600) == 0);
  auto f = read_imatrix(fifo);  // returns at once: the FIFO is not waited on
  REQUIRE_FALSE(f.ok());
  CHECK(f.status().message().find("FIFO") != std::string::npos);
  std::remove(fifo.c_str());
}
