// Reference activation quantisers against ggml's CPU from_float: the Q8_K and
// Q8_0 bytes in shared/fixtures/quant must be reproduced exactly.

#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "kernels/ref.h"
#include "support/fixtures.h"
#include "quant_fixture.h"

namespace {

using namespace les::kernels;

template <typename Block, typename Fn>
std::vector<uint8_t> quantize_rows(const std::vector<float>& x, int64_t rows, int64_t cols, Fn fn) {
  const int64_t per_row = cols * static_cast<int64_t>(sizeof(Block)) /
                          (std::is_same_v<Block, les::block_q8_K> ? les::kQKK : 32);
  std::vector<uint8_t> out(static_cast<size_t>(per_row * rows), 0xAB);
  for (int64_t r = 0; r < rows; ++r) {
    fn(x.data() + r * cols, reinterpret_cast<Block*>(out.data() + r * per_row), cols);
  }
  return out;
}

// Index of the first differing byte, or -1.
int64_t first_difference(const std::vector<uint8_t>& a, const std::vector<uint8_t>& b) {
  if (a.size() != b.size()) return 0;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i] != b[i]) return static_cast<int64_t>(i);
  }
  return -1;
}

}  // namespace

TEST_CASE("quantize_row_q8_K_ref reproduces ggml's q8_K.qbytes", "[kernels][quantize]") {
  LES_REQUIRE_FIXTURE(xpath, "quant/input_4x512.f32");
  LES_REQUIRE_FIXTURE(qpath, "quant/q8_K.qbytes");
  const auto x = les::test::read_file_f32(xpath);
  REQUIRE(x.size() == 4 * 512);
  const auto got = quantize_rows<les::block_q8_K>(x, 4, 512, quantize_row_q8_K_ref);
  const auto expected = les::test::read_file_bytes(qpath);
  CHECK(first_difference(got, expected) == -1);
}

TEST_CASE("activation quantisers reproduce the matvec x_vecdot fixtures", "[kernels][quantize]") {
  struct Case {
    const char* type;
    bool q8_K;  // else Q8_0
  };
  const Case cases[] = {{"q4_0", false}, {"q8_0", false}, {"q3_K", true},
                        {"q4_K", true},  {"q5_K", true},  {"q6_K", true}};
  LES_REQUIRE_FIXTURE(xpath, "quant/matvec_x_1024.f32");
  const auto x = les::test::read_file_f32(xpath);
  REQUIRE(x.size() == 1024);
  for (const Case& c : cases) {
    DYNAMIC_SECTION(c.type) {
      LES_REQUIRE_FIXTURE(qpath, std::string("quant/matvec_") + c.type + ".x_vecdot.qbytes");
      const auto expected = les::test::read_file_bytes(qpath);
      const auto got = c.q8_K ? quantize_rows<les::block_q8_K>(x, 1, 1024, quantize_row_q8_K_ref)
                              : quantize_rows<les::block_q8_0>(x, 1, 1024, quantize_row_q8_0_ref);
      CHECK(first_difference(got, expected) == -1);
    }
  }
}

TEST_CASE("Q8_K blocks hold the signed max as -127 and consistent bsums", "[kernels][quantize]") {
  std::vector<float> x(les::kQKK * 2, 0.0f);
  for (int i = 0; i < les::kQKK; ++i) x[i] = 0.01f * static_cast<float>(i % 37) - 0.1f;
  x[77] = 3.0f;  // largest magnitude, positive: quantises to -127 with a negative d
  // second block stays all zero
  les::block_q8_K y[2];
  quantize_row_q8_K_ref(x.data(), y, 2 * les::kQKK);
  CHECK(y[0].qs[77] == -127);
  CHECK(y[0].d < 0.0f);
  for (int j = 0; j < 16; ++j) {
    int s = 0;
    for (int i = 0; i < 16; ++i) s += y[0].qs[16 * j + i];
    CHECK(y[0].bsums[j] == s);
    CHECK(y[1].bsums[j] == 0);
  }
  CHECK(y[1].d == 0.0f);
  for (int i = 0; i < les::kQKK; ++i) CHECK(y[1].qs[i] == 0);
}

TEST_CASE("Q8_0 and Q8_1 round half to even and keep s = d * sum(q)", "[kernels][quantize]") {
  // amax = 127 makes id exactly 1, so x * id is x and the rounding rule shows.
  float x[32] = {};
  x[0] = 127.0f;
  x[1] = 2.5f;    // -> 2 (half to even)
  x[2] = -3.5f;   // -> -4
  x[3] = 0.49f;   // -> 0
  les::block_q8_0 q0;
  quantize_row_q8_0_ref(x, &q0, 32);
  CHECK(q0.qs[0] == 127);
  CHECK(q0.qs[1] == 2);
  CHECK(q0.qs[2] == -4);
  CHECK(q0.qs[3] == 0);
  CHECK(les::fp16_to_fp32(q0.d) == 1.0f);

  les::block_q8_1 q1;
  quantize_row_q8_1_ref(x, &q1, 32);
  CHECK(std::memcmp(q1.qs, q0.qs, 32) == 0);
  CHECK(les::fp16_to_fp32(q1.s) == 127.0f + 2.0f - 4.0f);

  float zeros[32] = {};
  quantize_row_q8_0_ref(zeros, &q0, 32);
  CHECK(q0.d == 0);
  for (int i = 0; i < 32; ++i) CHECK(q0.qs[i] == 0);
}

TEST_CASE("activation quantisers keep non-finite input inside its block", "[kernels][quantize]") {
  std::vector<float> x(2 * les::kQKK);
  for (size_t i = 0; i < x.size(); ++i) x[i] = std::cos(0.1f * static_cast<float>(i));
  les::block_q8_K ref[2], got[2];
  quantize_row_q8_K_ref(x.data(), ref, 2 * les::kQKK);
  x[5] = std::numeric_limits<float>::infinity();
  quantize_row_q8_K_ref(x.data(), got, 2 * les::kQKK);
  CHECK(std::memcmp(&got[1], &ref[1], sizeof(les::block_q8_K)) == 0);
  les::block_q8_0 r0[2], g0[2];
  x[5] = 0.5f;
  quantize_row_q8_0_ref(x.data(), r0, 64);
  x[5] = std::nanf("");
  quantize_row_q8_0_ref(x.data(), g0, 64);  // NaN in block 0
  CHECK(std::memcmp(&g0[1], &r0[1], sizeof(les::block_q8_0)) == 0);
}
