// Gated DeltaNet OpKernels (kernels.h: ssm_conv, l2_norm, rms_norm_gated,
// delta_rule) and the scalar ops around them (ops.h: silu_row, sigmoid,
// softplus, rope_imrope).
//  * The scalar references against the same math in double, within bounds
//    derived from the operations each one performs (u = 2^-24, the F32 unit
//    roundoff; a chain of m roundings is within gamma_m = m u / (1 - m u) of
//    the exact result, relative to the sum of the magnitudes it adds).
//  * Every SIMD tier this machine runs against the scalar reference, bit for
//    bit: sizes around the 4/8/16-lane widths and the 64-element dot blocks,
//    in-place and out-of-place states, strided rows, no output (replay), and
//    the element past each output left untouched.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "kernels/kernels.h"
#include "kernels/ops.h"

using namespace les;
using namespace les::kernels;

namespace {

constexpr double kU = 1.0 / (1 << 24);  // F32 unit roundoff
double gamma(int m) { return m * kU / (1 - m * kU); }

std::vector<const KernelTable*> simd_tables() {
  std::vector<const KernelTable*> v;
  for (int i = 1; i < kKernelTierCount; ++i)
    if (const KernelTable* t = kernel_table(static_cast<KernelTier>(i))) v.push_back(t);
  return v;
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

std::vector<float> randn(std::mt19937& rng, size_t n, float sd = 1.0f) {
  std::normal_distribution<float> nd(0.0f, sd);
  std::vector<float> v(n);
  for (float& x : v) x = nd(rng);
  return v;
}

}  // namespace

TEST_CASE("scalar ssm_conv is the causal convolution within its fma-chain bound", "[linear_attn]") {
  const KernelTable* s = kernel_table(KernelTier::scalar);
  std::mt19937 rng(1);
  for (int d_conv : {1, 2, 4, 7}) {
    const int64_t C = 37, n = 5;
    const auto x = randn(rng, static_cast<size_t>((d_conv - 1 + n) * C));
    const auto w = randn(rng, static_cast<size_t>(C * d_conv));
    std::vector<float> out(static_cast<size_t>(n * C));
    s->ops.ssm_conv(x.data(), n, C, w.data(), d_conv, out.data());
    for (int64_t t = 0; t < n; ++t)
      for (int64_t c = 0; c < C; ++c) {
        double e = 0, m = 0;
        for (int j = 0; j < d_conv; ++j) {
          e += double(x[static_cast<size_t>((t + j) * C + c)]) * w[static_cast<size_t>(c * d_conv + j)];
          m += std::fabs(double(x[static_cast<size_t>((t + j) * C + c)]) * w[static_cast<size_t>(c * d_conv + j)]);
        }
        // d_conv fused multiply-adds: one rounding each.
        CHECK(std::fabs(out[static_cast<size_t>(t * C + c)] - e) <= gamma(d_conv) * m);
      }
  }
}

TEST_CASE("scalar l2_norm and rms_norm_gated match the double formulas", "[linear_attn]") {
  const KernelTable* s = kernel_table(KernelTier::scalar);
  std::mt19937 rng(2);
  for (int64_t n : {1, 15, 16, 64, 130}) {
    const auto x = randn(rng, static_cast<size_t>(n), 3.0f);
    const auto w = randn(rng, static_cast<size_t>(n));
    const auto z = randn(rng, static_cast<size_t>(n), 2.0f);
    std::vector<float> y(static_cast<size_t>(n));
    const float eps = 1e-6f;
    s->ops.l2_norm(x.data(), n, eps, y.data());
    double ss = 0;
    for (float v : x) ss += double(v) * v;
    for (int64_t i = 0; i < n; ++i) {
      const double e = x[static_cast<size_t>(i)] / std::max(std::sqrt(ss), double(eps));
      // float(sum), sqrtf, 1/max, x * scale: four roundings (the double sum of
      // F32 squares adds one more u: each square is rounded to F32).
      CHECK(std::fabs(y[static_cast<size_t>(i)] - e) <= gamma(5) * std::fabs(e));
    }
    s->ops.rms_norm_gated(x.data(), w.data(), z.data(), n, eps, y.data());
    for (int64_t i = 0; i < n; ++i) {
      const double zi = z[static_cast<size_t>(i)];
      const double e = x[static_cast<size_t>(i)] / std::sqrt(ss / double(n) + eps) * w[static_cast<size_t>(i)] *
                       (zi / (1 + std::exp(-zi)));
      // mean, +eps, sqrt, 1/, three products (6 roundings plus the rounded
      // squares) and silu: exp within 1.5 ulp (expf_ggml) or 0.5 (libm), 1 + e,
      // z / (.): at most 4 u relative, since 1 + e >= 1 damps exp's error.
      CHECK(std::fabs(y[static_cast<size_t>(i)] - e) <= gamma(11) * std::fabs(e) + 1e-30);
    }
  }
}

TEST_CASE("scalar delta_rule is one gated delta-rule step within its derived bound", "[linear_attn]") {
  const KernelTable* s = kernel_table(KernelTier::scalar);
  std::mt19937 rng(3);
  for (int S : {8, 64, 100, 128}) {
    auto state = randn(rng, static_cast<size_t>(S) * S, 0.5f);
    auto q = randn(rng, static_cast<size_t>(S)), k = randn(rng, static_cast<size_t>(S)),
         v = randn(rng, static_cast<size_t>(S));
    const float decay = 0.8f, beta = 0.6f, scale = 1.0f / std::sqrt(float(S));
    std::vector<float> out(static_cast<size_t>(S)), scratch(static_cast<size_t>(S)),
        s_out(static_cast<size_t>(S) * S);
    DeltaRuleArgs a;
    a.n_tokens = 1;
    a.head_dim = S;
    a.state_in = state.data();
    a.state_out = s_out.data();
    a.q = q.data();
    a.k = k.data();
    a.v = v.data();
    a.decay = &decay;
    a.beta = &beta;
    a.scale = scale;
    a.out = out.data();
    a.scratch = scratch.data();
    s->ops.delta_rule(a);
    // Exact step in double from the same inputs, with a running bound on each
    // computed quantity: decayed state (1 rounding), delta (S fmas of the dot,
    // the subtraction, the product), updated state (1 fma plus the delta
    // error carried by |k_i|), output (S fmas, the scale product).
    for (int j = 0; j < S; ++j) {
      std::vector<double> sd(static_cast<size_t>(S)), err(static_cast<size_t>(S));
      double dot = 0, dmag = 0;
      for (int i = 0; i < S; ++i) {
        const double x = double(state[static_cast<size_t>(j * S + i)]) * decay;
        sd[static_cast<size_t>(i)] = x;
        err[static_cast<size_t>(i)] = kU * std::fabs(x);
        dot += x * k[static_cast<size_t>(i)];
        dmag += std::fabs(x * k[static_cast<size_t>(i)]) + err[static_cast<size_t>(i)] * std::fabs(k[static_cast<size_t>(i)]);
      }
      const double delta = (v[static_cast<size_t>(j)] - dot) * beta;
      const double delta_err = beta * (gamma(S) * dmag + kU * (std::fabs(v[static_cast<size_t>(j)]) + std::fabs(dot))) +
                               kU * std::fabs(delta) + 1e-300;
      double o = 0, omag = 0;
      for (int i = 0; i < S; ++i) {
        const double kd = double(k[static_cast<size_t>(i)]) * delta;
        const double x = sd[static_cast<size_t>(i)] + kd;
        const double xe = err[static_cast<size_t>(i)] + std::fabs(k[static_cast<size_t>(i)]) * delta_err +
                          kU * (std::fabs(x) + 1e-300);
        INFO("S " << S << " row " << j << " col " << i);
        CHECK(std::fabs(s_out[static_cast<size_t>(j * S + i)] - x) <= xe);
        o += x * q[static_cast<size_t>(i)];
        omag += (std::fabs(x) + xe) * std::fabs(q[static_cast<size_t>(i)]);
      }
      const double oe = (gamma(S + 1) * omag) * scale + kU * std::fabs(o * scale);
      CHECK(std::fabs(out[static_cast<size_t>(j)] - o * scale) <= oe);
    }
  }
}

TEST_CASE("SIMD ssm_conv, l2_norm and rms_norm_gated equal the scalar reference bit for bit", "[linear_attn]") {
  const KernelTable* s = kernel_table(KernelTier::scalar);
  std::mt19937 rng(4);
  for (const KernelTable* t : simd_tables()) {
    INFO(kernel_tier_name(t->tier));
    for (int d_conv : {1, 2, 4, 5, 9}) {
      for (int64_t C : {1, 3, 4, 8, 15, 16, 17, 33, 512}) {
        for (int64_t n : {1, 2, 17}) {
          INFO("d_conv " << d_conv << " channels " << C << " n " << n);
          auto x = randn(rng, static_cast<size_t>((d_conv - 1 + n) * C));
          if (C > 2) x[1] = -0.0f;  // a negative zero product: fma(-0, w, +0) is +0
          const auto w = randn(rng, static_cast<size_t>(C * d_conv));
          std::vector<float> a(static_cast<size_t>(n * C) + 1, NAN), b(a);
          s->ops.ssm_conv(x.data(), n, C, w.data(), d_conv, a.data());
          t->ops.ssm_conv(x.data(), n, C, w.data(), d_conv, b.data());
          CHECK(same_bits(a, b));
          CHECK(std::isnan(b.back()));
        }
      }
    }
    for (int64_t n : {1, 3, 4, 7, 8, 15, 16, 17, 31, 63, 64, 65, 128, 130}) {
      INFO("n " << n);
      const auto x = randn(rng, static_cast<size_t>(n), 2.0f), w = randn(rng, static_cast<size_t>(n)),
                 z = randn(rng, static_cast<size_t>(n), 40.0f);  // exp's under/overflow range too
      std::vector<float> a(static_cast<size_t>(n) + 1, NAN), b(a);
      s->ops.l2_norm(x.data(), n, 1e-6f, a.data());
      t->ops.l2_norm(x.data(), n, 1e-6f, b.data());
      CHECK(same_bits(a, b));
      CHECK(std::isnan(b.back()));
      s->ops.rms_norm_gated(x.data(), w.data(), z.data(), n, 1e-6f, a.data());
      t->ops.rms_norm_gated(x.data(), w.data(), z.data(), n, 1e-6f, b.data());
      CHECK(same_bits(a, b));
      CHECK(std::isnan(b.back()));
      // in place over x, and eps larger than the norm (all zeros)
      std::vector<float> xa(x), xb(x);
      s->ops.rms_norm_gated(xa.data(), w.data(), z.data(), n, 1e-6f, xa.data());
      t->ops.rms_norm_gated(xb.data(), w.data(), z.data(), n, 1e-6f, xb.data());
      CHECK(same_bits(xa, xb));
      std::vector<float> zeros(static_cast<size_t>(n), 0.0f), za(zeros), zb(zeros);
      s->ops.l2_norm(zeros.data(), n, 1e-6f, za.data());
      t->ops.l2_norm(zeros.data(), n, 1e-6f, zb.data());
      CHECK(same_bits(za, zb));
    }
  }
}

TEST_CASE("SIMD delta_rule equals the scalar reference bit for bit", "[linear_attn]") {
  const KernelTable* s = kernel_table(KernelTier::scalar);
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> ud(0.0f, 1.0f);
  for (const KernelTable* t : simd_tables()) {
    INFO(kernel_tier_name(t->tier));
    for (int S : {1, 5, 16, 63, 64, 65, 128, 130}) {
      for (int64_t n : {0, 1, 2, 7}) {
        for (int mode = 0; mode < 3; ++mode) {  // 0: out of place, 1: in place, 2: in place without output
          INFO("S " << S << " n " << n << " mode " << mode);
          const int64_t qk_stride = S + 3, v_stride = 2 * S + 1, gate_stride = 3, out_stride = S + 2;
          const auto q = randn(rng, static_cast<size_t>(std::max<int64_t>(n, 1) * qk_stride));
          const auto k = randn(rng, q.size(), 0.3f);
          const auto v = randn(rng, static_cast<size_t>(std::max<int64_t>(n, 1) * v_stride));
          std::vector<float> decay(static_cast<size_t>(std::max<int64_t>(n, 1) * gate_stride)), beta(decay.size());
          for (float& d : decay) d = ud(rng);
          for (float& b : beta) b = ud(rng);
          const auto state = randn(rng, static_cast<size_t>(S) * S);
          auto run = [&](const KernelTable* tab, std::vector<float>& st, std::vector<float>& out) {
            std::vector<float> scratch(static_cast<size_t>(S), NAN);
            std::vector<float> in(state);
            st.assign(static_cast<size_t>(S) * S + 1, NAN);
            if (mode > 0) std::copy(state.begin(), state.end(), st.begin());
            out.assign(static_cast<size_t>(std::max<int64_t>(n, 1) * out_stride), NAN);
            DeltaRuleArgs a;
            a.n_tokens = n;
            a.head_dim = S;
            a.state_in = mode > 0 ? st.data() : in.data();
            a.state_out = st.data();
            a.q = q.data();
            a.k = k.data();
            a.qk_stride = qk_stride;
            a.v = v.data();
            a.v_stride = v_stride;
            a.decay = decay.data();
            a.beta = beta.data();
            a.gate_stride = gate_stride;
            a.scale = 1.0f / std::sqrt(float(S));
            a.out = mode == 2 ? nullptr : out.data();
            a.out_stride = out_stride;
            a.scratch = scratch.data();
            tab->ops.delta_rule(a);
            CHECK(std::equal(in.begin(), in.end(), state.begin()));  // state_in only read
          };
          std::vector<float> sa, oa, sb, ob;
          run(s, sa, oa);
          run(t, sb, ob);
          CHECK(same_bits(sa, sb));
          CHECK(same_bits(oa, ob));
          CHECK(std::isnan(sb.back()));
        }
      }
    }
  }
}

TEST_CASE("silu_row, sigmoid and softplus follow ggml's formulas", "[linear_attn]") {
  std::mt19937 rng(6);
  for (int64_t n : {1, 16, 21, 64}) {
    const auto x = randn(rng, static_cast<size_t>(n), 5.0f);
    std::vector<float> y(static_cast<size_t>(n));
    ops::silu_row(x.data(), n, y.data());
    for (int64_t i = 0; i < n; ++i) {
      const double xi = x[static_cast<size_t>(i)], e = xi / (1 + std::exp(-xi));
      CHECK(std::fabs(y[static_cast<size_t>(i)] - e) <= gamma(4) * std::fabs(e));
      if (i >= n / 16 * 16) CHECK(y[static_cast<size_t>(i)] == ops::silu(x[static_cast<size_t>(i)]));
    }
  }
  for (float v : {-30.0f, -1.0f, 0.0f, 0.5f, 19.9f, 20.0f, 20.5f, 100.0f}) {
    CHECK(ops::sigmoid(v) == 1.0f / (1.0f + std::exp(-v)));
    const double sp = v > 20 ? v : std::log1p(std::exp(double(v)));
    CHECK(std::fabs(ops::softplus(v) - sp) <= gamma(4) * std::fabs(sp) + 1e-7);
  }
  CHECK(ops::softplus(25.0f) == 25.0f);
}

TEST_CASE("rope_imrope: text positions equal NEOX rope; the 4th component rotates by its own position",
          "[linear_attn]") {
  std::mt19937 rng(7);
  const int n_heads = 3, head_dim = 128, n_rot = 32;
  const auto x = randn(rng, static_cast<size_t>(n_heads * head_dim));
  for (int64_t p : {0, 1, 7, 500}) {
    std::vector<float> a(x), b(x);
    const int64_t pos[4] = {p, p, p, 0};
    const int sections[4] = {6, 5, 5, 0};  // qwen35moe fixture: every sector maps to t, h or w
    ops::rope_imrope(a.data(), n_heads, head_dim, n_rot, pos, sections, ops::RopeScaling::plain(1e7f));
    ops::rope(b.data(), n_heads, head_dim, n_rot, p, ops::RopeScaling::plain(1e7f), ops::RopeType::neox);
    CHECK(std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0);
  }
  // sections {1, 1, 1, 3}: of each 6 pairs, sectors 0, 1, 2 take t, h, w and
  // sectors 3, 4, 5 fall through to the 4th component, whose position 0 leaves
  // them unrotated.
  std::vector<float> a(x);
  const int64_t pos[4] = {9, 9, 9, 0};
  const int sections[4] = {1, 1, 1, 3};
  ops::rope_imrope(a.data(), n_heads, head_dim, n_rot, pos, sections, ops::RopeScaling::plain(1e4f));
  for (int h = 0; h < n_heads; ++h)
    for (int i = 0; i < n_rot / 2; ++i) {
      const size_t k0 = static_cast<size_t>(h * head_dim + i), k1 = k0 + n_rot / 2;
      if (i % 6 >= 3) {  // component e (position 0)
        CHECK(a[k0] == x[k0]);
        CHECK(a[k1] == x[k1]);
      } else {
        CHECK(a[k0] != x[k0]);
      }
    }
  for (int h = 0; h < n_heads; ++h)
    for (int d = n_rot; d < head_dim; ++d) CHECK(a[static_cast<size_t>(h * head_dim + d)] == x[static_cast<size_t>(h * head_dim + d)]);
}
