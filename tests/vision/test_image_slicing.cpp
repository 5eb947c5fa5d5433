// The llava-uhd slicing plan (vision/image_slicing.h) on a table of sizes
// worked out by hand from the rules in ../shared/fixtures/multimodal/README.md
// ("Preprocessing and slicing"), S = 224, A = 56 (the tiny fixture's mmproj).
// The 448x224 row is the fixture's own (its JSON's logged slicing summary).
#include <catch2/catch.hpp>

#include "vision/image_slicing.h"

using namespace les;
using namespace les::vision;

namespace {

struct Row {
  int32_t w, h;
  int32_t ov_w, ov_h;
  int32_t cols, rows;     // 0 x 0: no slices
  int32_t ref_w, ref_h;   // refined size
  const char* why;
};

// Worked out from the README's rules:
const Row kTable[] = {
    {448, 224, 336, 168, 2, 1, 448, 224, "the fixture: overview h=int(224/sqrt 2)=158, w=316 -> 168 x 336; m=2"},
    {224, 224, 224, 224, 0, 0, 0, 0, "exactly S x S: no slices"},
    {1, 1, 224, 224, 0, 0, 0, 0, "tiny within S: stretched to S x S"},
    {225, 225, 224, 224, 1, 2, 336, 336, "just above S: m=2, grids 1x2 and 2x1 tie at |log 2|; the first (1x2) wins"},
    {224, 225, 224, 224, 1, 2, 336, 336, "one side above S is enough to slice"},
    {1000, 1000, 224, 224, 3, 3, 672, 672, "m=ceil(19.9)=20 capped at 9: counts 8 and 9 only, 3x3 exact"},
    {448, 448, 224, 224, 2, 2, 448, 448, "m=4: 2x2"},
    {2000, 200, 728, 56, 9, 1, 2016, 224, "very wide: h=int(224/sqrt 10)=70 -> 56, w=700 -> 728 (12.5 rounds up); 9x1"},
    {200, 2000, 56, 728, 1, 9, 224, 2016, "very tall: the transpose"},
    {10, 500, 56, 504, 1, 2, 56, 2240, "tiny 10x500: area below S^2 keeps 10x500 -> 56x504; m=1: 1x2; cell 10x250 -> 56x1120"},
    {500, 10, 504, 56, 2, 1, 2240, 56, "the transpose"},
    {300, 100, 280, 112, 2, 1, 560, 168, "area below S^2, side above S; cell 150x100 -> 273x182 -> 280x168"},
    {640, 480, 280, 168, 3, 2, 672, 448, "m=7: counts 6,7,8; 3x2 is closest to log(4/3)"},
    {1280, 720, 280, 168, 4, 2, 896, 448, "m=9 (18.4 capped): counts 8, 9; 4x2"},
    {3000, 1000, 392, 112, 4, 2, 1120, 336, "m=9: 4x2 (log 2 is closer to log 3 than 3x3 or 9x1)"},
};

}  // namespace

TEST_CASE("the slicing plan follows the README's rules on a table of sizes", "[vision]") {
  SliceGeometry g;
  g.image_size = 224;
  for (const Row& r : kTable) {
    INFO(r.w << " x " << r.h << ": " << r.why);
    auto plan = plan_slices(r.w, r.h, g);
    REQUIRE(plan.ok());
    CHECK(plan->overview_width == r.ov_w);
    CHECK(plan->overview_height == r.ov_h);
    CHECK(plan->grid_cols == r.cols);
    CHECK(plan->grid_rows == r.rows);
    CHECK(plan->refined_width == r.ref_w);
    CHECK(plan->refined_height == r.ref_h);
    REQUIRE(plan->slices.size() == static_cast<size_t>(r.cols * r.rows));
    // Row-major crops of equal cells tiling the refined image.
    for (size_t i = 0; i < plan->slices.size(); ++i) {
      const SliceRect& s = plan->slices[i];
      CHECK(s.row == static_cast<int32_t>(i) / r.cols);
      CHECK(s.col == static_cast<int32_t>(i) % r.cols);
      CHECK(s.width == r.ref_w / r.cols);
      CHECK(s.height == r.ref_h / r.rows);
      CHECK(s.x == s.col * s.width);
      CHECK(s.y == s.row * s.height);
      CHECK(s.width % 56 == 0);
      CHECK(s.height % 56 == 0);
    }
  }
}

TEST_CASE("ensure_divide rounds to the alignment, half away from zero, at least one unit", "[vision]") {
  CHECK(ensure_divide(0, 56) == 56);
  CHECK(ensure_divide(27, 56) == 56);
  CHECK(ensure_divide(84, 56) == 112);  // 1.5 rounds up
  CHECK(ensure_divide(83, 56) == 56);
  CHECK(ensure_divide(700, 56) == 728);
  CHECK(ensure_divide(1000, 3) == 999);
  CHECK(ensure_divide(10, 1) == 10);
}

TEST_CASE("the real model's geometry (S = 448) plans 448x224 without slices and 1000x1000 as 2x2", "[vision]") {
  SliceGeometry g;  // defaults: 448, 14, 4
  auto a = plan_slices(448, 224, g);
  REQUIRE(a.ok());
  CHECK(a->grid_cols == 0);
  CHECK(a->overview_width == 448);
  auto b = plan_slices(1000, 1000, g);
  REQUIRE(b.ok());
  // m = ceil(10^6 / 448^2 = 4.98) = 5: counts 4, 5, 6; 2x2 has error 0.
  CHECK(b->grid_cols == 2);
  CHECK(b->grid_rows == 2);
  CHECK(b->overview_width == 448);
  CHECK(b->refined_width == 896);  // cell 500 -> 448
}

TEST_CASE("plan_slices refuses bad sizes and geometries", "[vision]") {
  SliceGeometry g;
  g.image_size = 224;
  for (auto [w, h] : {std::pair{0, 10}, std::pair{10, 0}, std::pair{-5, 10}}) {
    auto p = plan_slices(w, h, g);
    REQUIRE_FALSE(p.ok());
    CHECK(p.status().code() == StatusCode::invalid_argument);
    CHECK(p.status().message().find("zero-size") != std::string::npos);
  }
  SliceGeometry bad = g;
  bad.image_size = 200;  // not a multiple of 56
  CHECK(plan_slices(100, 100, bad).status().code() == StatusCode::invalid_argument);
  bad = g;
  bad.patch_size = 0;
  CHECK(plan_slices(100, 100, bad).status().code() == StatusCode::invalid_argument);
  bad = g;
  bad.n_merge = -1;
  CHECK(plan_slices(100, 100, bad).status().code() == StatusCode::invalid_argument);
  // Extreme sizes plan without overflow (the token bound is preprocess_image's).
  auto wide = plan_slices(2147483647, 1, g);
  REQUIRE(wide.ok());
  CHECK(wide->grid_cols * wide->grid_rows <= kMaxSlices);
  auto tall = plan_slices(1, 2147483647, g);
  CHECK(tall.ok());
}
