// Flash attention vs the naive reference: outputs and dq, dk, dv (and dbias, dhead_scales) over a
// grid of shapes, masks and scale modes; every compiled SIMD target vs the plain twin; edge cases
// (rows with no visible key, strided tokens); online probes vs probes from p.
#include <gtest/gtest.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include "scalelab/core/rng.hpp"
#include "scalelab/kernels/attention_flash.hpp"
#include "scalelab/kernels/attention_flash_simd.hpp"
#include "scalelab/kernels/simd_dispatch.hpp"
#include "scalelab/kernels/simd_fma_peak.hpp"
#include "support/numerics.hpp"

namespace scalelab {
namespace {

using testing::rel_error;

// Tolerance on max|a - b| / max|b| per tensor, per dtype.
template <class T>
constexpr double kRelTol = 1e-5;  // float: flash vs naive
template <>
constexpr double kRelTol<double> = 1e-12;

enum class Mask { none, causal, padding, causal_padding };
enum class Mode { inv_sqrt_d, inv_d, one, head_scales, softcap, alibi, bias, everything };

const char* mask_name(Mask m) {
  const char* names[] = {"none", "causal", "padding", "causal_padding"};
  return names[static_cast<int>(m)];
}
const char* mode_name(Mode m) {
  const char* names[] = {"inv_sqrt_d", "inv_d", "one", "head_scales", "softcap", "alibi", "bias",
                         "everything"};
  return names[static_cast<int>(m)];
}

template <class T>
std::vector<double> as_double(const std::vector<T>& x) {
  return std::vector<double>(x.begin(), x.end());
}

// One attention problem with all its inputs, in type T.
template <class T>
struct Problem {
  AttentionShape shape;
  AttentionOptions<T> opt;
  std::vector<T> q, k, v, dout, head_scales, bias, slopes;
  std::vector<int32_t> key_lengths;

  Problem() = default;
  // The same problem in another type (values converted exactly when widening).
  template <class U>
  explicit Problem(const Problem<U>& o)
      : shape(o.shape), q(o.q.begin(), o.q.end()), k(o.k.begin(), o.k.end()),
        v(o.v.begin(), o.v.end()), dout(o.dout.begin(), o.dout.end()),
        head_scales(o.head_scales.begin(), o.head_scales.end()),
        bias(o.bias.begin(), o.bias.end()), slopes(o.slopes.begin(), o.slopes.end()),
        key_lengths(o.key_lengths) {
    opt.scale = o.opt.scale, opt.causal = o.opt.causal, opt.softcap = o.opt.softcap;
    opt.head_scales = head_scales.empty() ? nullptr : head_scales.data();
    opt.bias = bias.empty() ? nullptr : bias.data();
    opt.alibi_slopes = slopes.empty() ? nullptr : slopes.data();
    opt.key_lengths = key_lengths.empty() ? nullptr : key_lengths.data();
  }

  Problem(int64_t batch, int64_t heads, int64_t q_len, int64_t k_len, int64_t d, Mask mask,
          Mode mode, uint64_t seed, int64_t extra_stride = 0) {
    shape = {batch, heads, q_len, k_len, d};
    const int64_t stride = heads * d + extra_stride;
    if (extra_stride) shape.q_stride = shape.k_stride = shape.v_stride = shape.o_stride = stride;
    Rng rng(seed);
    auto fill = [&](std::vector<T>& x, int64_t n, double sd) {
      x.resize(n);
      for (auto& e : x) e = static_cast<T>(rng.normal(0, sd));
    };
    fill(q, batch * q_len * stride, 1.0);
    fill(k, batch * k_len * stride, 1.0);
    fill(v, batch * k_len * stride, 1.0);
    fill(dout, batch * q_len * stride, 1.0);
    opt.scale = 1.0 / std::sqrt(double(d));
    if (mode == Mode::inv_d) opt.scale = 1.0 / d;
    if (mode == Mode::one) opt.scale = 1.0;
    if (mode == Mode::head_scales || mode == Mode::everything) {
      fill(head_scales, heads, 0.3);
      for (auto& e : head_scales) e += T(0.5);
      opt.head_scales = head_scales.data();
    }
    if (mode == Mode::softcap || mode == Mode::everything) {
      opt.scale = 1.0;  // large logits, so that the cap matters
      opt.softcap = 2.0;
    }
    if (mode == Mode::alibi || mode == Mode::everything) {
      for (int64_t h = 0; h < heads; ++h) slopes.push_back(static_cast<T>(std::pow(2.0, -(h + 1))));
      opt.alibi_slopes = slopes.data();
    }
    if (mode == Mode::bias || mode == Mode::everything) {
      fill(bias, heads * q_len * k_len, 1.0);
      opt.bias = bias.data();
    }
    if (mask == Mask::causal || mask == Mask::causal_padding) opt.causal = true;
    if (mask == Mask::padding || mask == Mask::causal_padding) {
      for (int64_t b = 0; b < batch; ++b)
        key_lengths.push_back(static_cast<int32_t>(std::max<int64_t>(1, k_len - 3 * b - b * k_len / 3)));
      opt.key_lengths = key_lengths.data();
    }
  }
  bool has_bias() const { return !bias.empty(); }
  bool has_head_scales() const { return !head_scales.empty(); }
};

// Outputs of a forward + backward.
struct Result {
  std::vector<double> out, dq, dk, dv, dbias, dscales;
};

enum class Kernel { naive, flash, flash_ref };

template <class T>
Result run(Problem<T>& p, Kernel kernel) {
  const AttentionShape& s = p.shape;
  std::vector<T> out(p.dout.size(), T(0)), dq(p.q.size(), T(0)), dk(p.k.size(), T(0)),
      dv(p.v.size(), T(0)), dbias(p.bias.size(), T(0)), dscales(p.head_scales.size(), T(0));
  AttentionSaved<T> saved;
  AttentionExtraGrads<T> extra;
  if (p.has_bias()) extra.dbias = dbias.data();
  if (p.has_head_scales()) extra.dhead_scales = dscales.data();
  if (kernel == Kernel::naive) {
    attention_naive_forward(s, p.opt, p.q.data(), p.k.data(), p.v.data(), out.data(), saved);
    attention_naive_backward(s, p.opt, p.q.data(), p.k.data(), p.v.data(), p.dout.data(), saved,
                             dq.data(), dk.data(), dv.data(), extra);
  } else if (kernel == Kernel::flash) {
    attention_flash_forward(s, p.opt, p.q.data(), p.k.data(), p.v.data(), out.data(), saved);
    attention_flash_backward(s, p.opt, p.q.data(), p.k.data(), p.v.data(), out.data(),
                             p.dout.data(), saved, dq.data(), dk.data(), dv.data(), extra);
  } else {
    attention_flash_forward_ref(s, p.opt, p.q.data(), p.k.data(), p.v.data(), out.data(), saved);
    attention_flash_backward_ref(s, p.opt, p.q.data(), p.k.data(), p.v.data(), out.data(),
                                 p.dout.data(), saved, dq.data(), dk.data(), dv.data(), extra);
  }
  return {as_double(out), as_double(dq), as_double(dk), as_double(dv), as_double(dbias),
          as_double(dscales)};
}

// Largest relative error seen by expect_close since the last reset (reported by the grid tests).
double g_worst_error = 0;

void expect_close(const Result& a, const Result& ref, double tol, const std::string& what) {
  for (auto [x, y, name] : {std::tuple{&a.out, &ref.out, "out"}, {&a.dq, &ref.dq, "dq"},
                            {&a.dk, &ref.dk, "dk"}, {&a.dv, &ref.dv, "dv"},
                            {&a.dbias, &ref.dbias, "dbias"}, {&a.dscales, &ref.dscales, "dscales"}}) {
    ASSERT_EQ(x->size(), y->size());
    for (double e : *x) ASSERT_TRUE(std::isfinite(e)) << what << " " << name;
    EXPECT_LE(rel_error(*x, *y), tol) << what << " " << name;
    g_worst_error = std::max(g_worst_error, rel_error(*x, *y));
  }
}

// sum over batch, i, j of |g_ij raw_ij| per head: the scale of the terms of dhead_scales
// (attention.hpp: g = ds through the soft-cap, raw = q_i·k_j), computed from naive p in double.
std::vector<double> dscale_condition(Problem<double>& p) {
  const AttentionShape& s = p.shape;
  const int64_t D = s.head_dim, HD = s.heads * D;
  std::vector<double> out(p.dout.size());
  AttentionSaved<double> saved;
  attention_naive_forward(s, p.opt, p.q.data(), p.k.data(), p.v.data(), out.data(), saved);
  std::vector<double> cond(s.heads, 0.0);
  for (int64_t b = 0; b < s.batch; ++b)
    for (int64_t h = 0; h < s.heads; ++h)
      for (int64_t i = 0; i < s.q_len; ++i) {
        const double* pr = saved.probs.data() + ((b * s.heads + h) * s.q_len + i) * s.k_len;
        const double* qi = p.q.data() + (b * s.q_len + i) * HD + h * D;
        const double* doi = p.dout.data() + (b * s.q_len + i) * HD + h * D;
        std::vector<double> dp(s.k_len, 0.0), raw(s.k_len, 0.0);
        double delta = 0;
        for (int64_t j = 0; j < s.k_len; ++j) {
          for (int64_t e = 0; e < D; ++e) {
            dp[j] += doi[e] * p.v[(b * s.k_len + j) * HD + h * D + e];
            raw[j] += qi[e] * p.k[(b * s.k_len + j) * HD + h * D + e];
          }
          delta += pr[j] * dp[j];
        }
        for (int64_t j = 0; j < s.k_len; ++j) {
          double g = pr[j] * (dp[j] - delta);
          if (p.opt.softcap > 0) {
            const double t = std::tanh(p.head_scales[h] * raw[j] / p.opt.softcap);
            g *= 1 - t * t;
          }
          cond[h] += std::abs(g * raw[j]);
        }
      }
  return cond;
}

struct GridShape {
  int64_t batch, heads, q_len, k_len, d;
};
// Lengths that are not multiples of any tile (16, 48, 64), cross-attention (q_len != k_len), and
// every head dimension of the issue; head dimensions and key counts that are an odd number of
// vectors (16 and 48 on AVX-512, 24 on AVX2), whose last vector the one-vector micro-tile computes,
// and the small model's 16 × 16 heads.
const GridShape kShapes[] = {{1, 1, 1, 1, 1},      {2, 2, 5, 7, 2},     {1, 3, 49, 65, 16},
                             {2, 1, 100, 37, 64},  {1, 2, 130, 131, 128}, {1, 1, 53, 97, 256},
                             {3, 2, 64, 64, 64},   {4, 2, 16, 16, 16},  {1, 2, 33, 48, 48},
                             {2, 1, 20, 24, 24}};

std::string case_name(const GridShape& g, Mask m, Mode mode) {
  return "b" + std::to_string(g.batch) + " h" + std::to_string(g.heads) + " q" +
         std::to_string(g.q_len) + " k" + std::to_string(g.k_len) + " d" + std::to_string(g.d) +
         " " + mask_name(m) + " " + mode_name(mode);
}

template <class T>
void check_grid() {
  g_worst_error = 0;
  uint64_t seed = 1;
  for (const GridShape& g : kShapes) {
    if (std::is_same_v<T, double> && g.d >= 128) continue;  // the plain path: float covers them
    for (Mask m : {Mask::none, Mask::causal, Mask::padding, Mask::causal_padding})
      for (Mode mode : {Mode::inv_sqrt_d, Mode::inv_d, Mode::one, Mode::head_scales,
                        Mode::softcap, Mode::alibi, Mode::bias, Mode::everything}) {
        const bool wide = g.d >= 128;  // the widest heads: fewer modes, to keep the test fast
        if (wide && mode != Mode::inv_sqrt_d && mode != Mode::everything) continue;
        Problem<T> p(g.batch, g.heads, g.q_len, g.k_len, g.d, m, mode, seed++);
        Result naive = run(p, Kernel::naive);
        const Result flash = run(p, Kernel::flash);
        if (!p.head_scales.empty() && std::is_same_v<T, float>) {
          // dhead_scales[h] = sum_ij g_ij raw_ij sums terms that cancel (each row of ds sums to
          // 0), so float rounding of the terms moves it by ~1e-7 of sum_ij |g_ij raw_ij|: judge it
          // against the exact (double) value relative to that sum, the sum's condition.
          Problem<double> exact_p(p);
          const Result exact = run(exact_p, Kernel::naive);
          const std::vector<double> cond = dscale_condition(exact_p);
          for (size_t h = 0; h < cond.size(); ++h)
            EXPECT_LE(std::abs(flash.dscales[h] - exact.dscales[h]), kRelTol<T> * cond[h])
                << case_name(g, m, mode) << " dhead_scales[" << h << "]";
          naive.dscales = flash.dscales;  // checked above
        }
        expect_close(flash, naive, kRelTol<T>, case_name(g, m, mode));
      }
  }
}

TEST(AttentionFlash, MatchesNaiveFloatOverGrid) {
  check_grid<float>();
  RecordProperty("worst_relative_error", std::to_string(g_worst_error * 1e9) + "e-9");
}
TEST(AttentionFlash, MatchesNaiveDoubleOverGrid) {
  check_grid<double>();
  RecordProperty("worst_relative_error", std::to_string(g_worst_error * 1e15) + "e-15");
}

// The float SIMD kernel on every compiled target agrees with its plain twin. d = 24 and 20 with 90
// keys: the repacking transpose (kernels/transpose_block-inl.hpp) takes whole register blocks
// (8 or 16) plus an edge of columns (8 or 4), and rows past the last whole block.
TEST(AttentionFlash, EverySimdTargetMatchesPlainTwin) {
  const std::vector<std::string> targets = simd_targets();
  ASSERT_FALSE(targets.empty());
  for (const std::string& target : targets) {
    force_simd_target(target);
    EXPECT_EQ(simd_target(), target);
    for (int64_t d : {24, 20})
      for (Mode mode : {Mode::inv_sqrt_d, Mode::everything}) {
        Problem<float> p(2, 2, 77, 90, d, Mask::causal_padding, mode, 99);
        expect_close(run(p, Kernel::flash), run(p, Kernel::flash_ref), 1e-5,
                     target + " d " + std::to_string(d) + " " + mode_name(mode));
      }
  }
  force_simd_target("");
  EXPECT_EQ(simd_target(), targets.front());
}

// The short-key path (kernels/attention_short-inl.hpp: a tile of query rows in the vector lanes)
// on every compiled target against the plain twin: whole and partial tiles of rows, cross-attention,
// causal with q_len < k_len and q_len > k_len, a batch whose keys are all padding, per-head scales
// (dhead_scales), strided tokens, and one head split into query ranges; then the calls it leaves to
// the row path.
TEST(AttentionFlash, ShortKeyPathMatchesPlainTwinOnEveryTarget) {
  struct Case {
    int64_t batch, heads, q_len, k_len, d;
    Mask mask;
    Mode mode;
    int64_t extra_stride;
  };
  const Case cases[] = {{8, 2, 16, 16, 16, Mask::none, Mode::inv_sqrt_d, 0},
                        {4, 2, 21, 37, 32, Mask::causal_padding, Mode::head_scales, 0},
                        {4, 2, 5, 64, 16, Mask::causal, Mode::inv_d, 0},
                        {4, 2, 40, 9, 16, Mask::padding, Mode::one, 3},
                        {1, 1, 100, 30, 16, Mask::causal, Mode::inv_sqrt_d, 0}};
  const std::vector<std::string> targets = simd_targets();
  for (const std::string& target : targets) {
    force_simd_target(target);
    uint64_t seed = 40;
    for (const Case& c : cases) {
      Problem<float> p(c.batch, c.heads, c.q_len, c.k_len, c.d, c.mask, c.mode, seed++,
                       c.extra_stride);
      if (c.mask == Mask::padding) {  // batch 1 sees no key at all
        p.key_lengths[1] = 0;
        p.opt.key_lengths = p.key_lengths.data();
      }
      const std::string name = target + " q" + std::to_string(c.q_len) + " k" +
                               std::to_string(c.k_len) + " d" + std::to_string(c.d) + " " +
                               mask_name(c.mask) + " " + mode_name(c.mode);
      ASSERT_TRUE(detail::flash_short_path_applies(p.shape, p.opt, false)) << name;
      expect_close(run(p, Kernel::flash), run(p, Kernel::flash_ref), 1e-5, name);
    }
    // Left to the row path: more keys than kShortMaxKeys, a soft-cap, probes, and a head
    // dimension that is not a whole number of vectors (18: on every target wider than a lane).
    const Problem<float> longer(2, 2, 16, 65, 16, Mask::none, Mode::inv_sqrt_d, 1);
    EXPECT_FALSE(detail::flash_short_path_applies(longer.shape, longer.opt, false)) << target;
    const Problem<float> capped(2, 2, 16, 16, 16, Mask::none, Mode::softcap, 1);
    EXPECT_FALSE(detail::flash_short_path_applies(capped.shape, capped.opt, false)) << target;
    const Problem<float> plain(2, 2, 16, 16, 16, Mask::none, Mode::inv_sqrt_d, 1);
    EXPECT_FALSE(detail::flash_short_path_applies(plain.shape, plain.opt, true)) << target;
    const Problem<float> odd(2, 2, 16, 16, 18, Mask::none, Mode::inv_sqrt_d, 1);
    EXPECT_EQ(detail::flash_short_path_applies(odd.shape, odd.opt, false),
              18 % simd_fma_peak_lanes() == 0)
        << target;
  }
  force_simd_target("");
}

// One long head: the kernel splits it into query ranges (forward) and key ranges (backward) so
// that two threads share it. The split depends on the shape only: the results are bit-identical at
// 1 and 2 threads, and match the naive kernel.
TEST(AttentionFlash, OneLongHeadIsSharedByThreadsAndStaysExact) {
  for (Mode mode : {Mode::inv_sqrt_d, Mode::everything}) {
    for (Mask mask : {Mask::none, Mask::causal}) {
      Problem<float> p(1, 1, 700, 700, 32, mask, mode, 11);
      const std::string name = std::string(mask_name(mask)) + " " + mode_name(mode);
      const int threads_before = omp_get_max_threads();
      omp_set_num_threads(1);
      const Result one = run(p, Kernel::flash);
      omp_set_num_threads(2);
      const Result two = run(p, Kernel::flash);
      omp_set_num_threads(threads_before);
      EXPECT_EQ(one.out, two.out) << name;
      EXPECT_EQ(one.dq, two.dq) << name;
      EXPECT_EQ(one.dk, two.dk) << name;
      EXPECT_EQ(one.dv, two.dv) << name;
      EXPECT_EQ(one.dbias, two.dbias) << name;
      EXPECT_EQ(one.dscales, two.dscales) << name;
      Result naive = run(p, Kernel::naive), twin = run(p, Kernel::flash_ref);
      if (p.has_head_scales()) {  // a sum of cancelling terms: judged as in check_grid
        Problem<double> exact_p(p);
        const Result exact = run(exact_p, Kernel::naive);
        const std::vector<double> cond = dscale_condition(exact_p);
        for (size_t h = 0; h < cond.size(); ++h)
          EXPECT_LE(std::abs(two.dscales[h] - exact.dscales[h]), kRelTol<float> * cond[h]) << name;
        naive.dscales = twin.dscales = two.dscales;  // checked above
      }
      expect_close(two, naive, kRelTol<float>, name);
      expect_close(two, twin, 1e-5, name + " vs the plain twin");
    }
  }
}

TEST(AttentionFlash, StridedTokensAreReadInPlace) {
  // q, k, v, out as slices of wider rows (e.g. a fused qkv projection): stride > heads*head_dim.
  Problem<float> p(2, 3, 33, 41, 8, Mask::padding, Mode::alibi, 7, /*extra_stride=*/5);
  expect_close(run(p, Kernel::flash), run(p, Kernel::naive), kRelTol<float>, "strided");
}

TEST(AttentionFlash, RowsWithoutVisibleKeysGiveZeros) {
  // Batch 1 has key length 0 and causal cross-attention with q_len > k_len hides every key from
  // the first rows: their outputs and gradients are 0, and lse is -inf, with no NaN anywhere.
  Problem<float> p(2, 1, 20, 6, 4, Mask::causal, Mode::inv_sqrt_d, 3);
  p.key_lengths = {6, 0};
  p.opt.key_lengths = p.key_lengths.data();
  const Result flash = run(p, Kernel::flash), naive = run(p, Kernel::naive);
  expect_close(flash, naive, kRelTol<float>, "no visible keys");
  for (int64_t i = 0; i < 20 * 4; ++i) EXPECT_EQ(flash.out[20 * 4 + i], 0.0);  // batch 1
  for (int64_t i = 0; i < 14 * 4; ++i) EXPECT_EQ(flash.out[i], 0.0);  // rows 0..13 of batch 0
  AttentionSaved<float> saved;
  std::vector<float> out(p.dout.size());
  attention_flash_forward(p.shape, p.opt, p.q.data(), p.k.data(), p.v.data(), out.data(), saved);
  EXPECT_EQ(saved.lse[0], -std::numeric_limits<float>::infinity());
  EXPECT_TRUE(std::isfinite(saved.lse[19]));
}

TEST(AttentionFlash, LseIsLogSumExpOfLogits) {
  Problem<double> p(1, 1, 3, 5, 2, Mask::none, Mode::one, 5);
  AttentionSaved<double> saved;
  std::vector<double> out(p.dout.size());
  attention_flash_forward(p.shape, p.opt, p.q.data(), p.k.data(), p.v.data(), out.data(), saved);
  for (int i = 0; i < 3; ++i) {
    double sum = 0;
    for (int j = 0; j < 5; ++j)
      sum += std::exp(p.q[i * 2] * p.k[j * 2] + p.q[i * 2 + 1] * p.k[j * 2 + 1]);
    EXPECT_NEAR(saved.lse[i], std::log(sum), 1e-12);
  }
}

TEST(AttentionFlash, OnlineProbesMatchProbesFromP) {
  for (Mode mode : {Mode::inv_sqrt_d, Mode::one, Mode::everything}) {
    Problem<float> p(2, 3, 70, 90, 16, Mask::causal_padding, mode, 11);
    AttentionProbeStats online, from_p;
    online.saturation_threshold = from_p.saturation_threshold = 0.5;
    online.uniform_threshold = from_p.uniform_threshold = 0.8;
    std::vector<float> out(p.dout.size());
    AttentionSaved<float> saved;
    attention_forward(AttentionKernel::flash, p.shape, p.opt, p.q.data(), p.k.data(), p.v.data(),
                      out.data(), saved, &online);
    attention_forward(AttentionKernel::naive, p.shape, p.opt, p.q.data(), p.k.data(), p.v.data(),
                      out.data(), saved, &from_p);
    for (int h = 0; h < 3; ++h) {
      EXPECT_EQ(online.rows[h], from_p.rows[h]);
      EXPECT_EQ(online.rows[h], 2 * 70);  // every row sees a key (k_len > q_len, lengths >= 57)
      EXPECT_EQ(online.normalized_rows[h], from_p.normalized_rows[h]);
      EXPECT_NEAR(online.entropy_sum[h], from_p.entropy_sum[h], 1e-4 * online.rows[h]);
      EXPECT_NEAR(online.normalized_entropy_sum[h], from_p.normalized_entropy_sum[h],
                  1e-4 * online.rows[h]);
      EXPECT_NEAR(online.max_prob_sum[h], from_p.max_prob_sum[h], 1e-5 * online.rows[h]);
      // Counts may differ only for rows within rounding of the threshold: allow one.
      EXPECT_NEAR(online.saturated_rows[h], from_p.saturated_rows[h], 1);
      EXPECT_NEAR(online.uniform_rows[h], from_p.uniform_rows[h], 1);
    }
    if (mode == Mode::one) {  // unscaled logits at d = 16 saturate many rows
      EXPECT_GT(online.saturated_rows[0], 0);
    }
  }
}

TEST(AttentionFlash, UniformKeysGiveMaximalEntropy) {
  // Identical keys: p is uniform over the n visible keys, so H = log n and max p = 1/n.
  Problem<double> p(1, 1, 4, 10, 3, Mask::none, Mode::inv_sqrt_d, 2);
  for (int j = 0; j < 10; ++j)
    for (int e = 0; e < 3; ++e) p.k[j * 3 + e] = p.k[e];
  for (int i = 0; i < 4; ++i)
    for (int e = 0; e < 3; ++e) p.q[i * 3 + e] = 0;
  AttentionProbeStats probes;
  std::vector<double> out(p.dout.size());
  AttentionSaved<double> saved;
  attention_flash_forward(p.shape, p.opt, p.q.data(), p.k.data(), p.v.data(), out.data(), saved,
                          &probes);
  EXPECT_NEAR(probes.entropy_sum[0], 4 * std::log(10.0), 1e-12);
  EXPECT_NEAR(probes.normalized_entropy_sum[0], 4.0, 1e-12);
  EXPECT_NEAR(probes.max_prob_sum[0], 0.4, 1e-12);
  EXPECT_EQ(probes.uniform_rows[0], 4);
  EXPECT_EQ(probes.saturated_rows[0], 0);
}

TEST(AttentionFlash, GradientsMatchFiniteDifferences) {
  // L = sum(dout ⊙ out) with every option on; central differences in double.
  Problem<double> p(1, 2, 6, 7, 3, Mask::causal_padding, Mode::everything, 21);
  const Result g = run(p, Kernel::flash);
  auto loss = [&]() {
    std::vector<double> out(p.dout.size());
    AttentionSaved<double> saved;
    attention_flash_forward(p.shape, p.opt, p.q.data(), p.k.data(), p.v.data(), out.data(),
                            saved);
    double l = 0;
    for (size_t i = 0; i < out.size(); ++i) l += out[i] * p.dout[i];
    return l;
  };
  const double h = 1e-6;
  auto check = [&](std::vector<double>& x, const std::vector<double>& grad, const char* name) {
    for (size_t i = 0; i < x.size(); i += 3) {
      const double keep = x[i];
      x[i] = keep + h;
      const double up = loss();
      x[i] = keep - h;
      const double down = loss();
      x[i] = keep;
      EXPECT_NEAR(grad[i], (up - down) / (2 * h), 1e-6) << name << "[" << i << "]";
    }
  };
  check(p.q, g.dq, "q");
  check(p.k, g.dk, "k");
  check(p.v, g.dv, "v");
  check(p.bias, g.dbias, "bias");
  check(p.head_scales, g.dscales, "head_scales");
}

// ---- Cases for the PyTorch oracle (tests/kernels/test_attention_torch.sh) ----
// Written only when SCALELAB_ORACLE_DIR is set: per case, the inputs and the flash kernel's
// outputs as .npy files, and cases.json with the options; attention_torch_oracle.py recomputes
// everything with PyTorch autograd from its own formulation of the math.

// A minimal .npy (format 1.0) writer: little-endian f4 or i4, C order.
template <class T>
void write_npy(const std::string& path, const std::vector<T>& data, const std::vector<int64_t>& shape) {
  std::string header = std::string("{'descr': '") + (std::is_same_v<T, float> ? "<f4" : "<i4") +
                       "', 'fortran_order': False, 'shape': (";
  for (int64_t dim : shape) header += std::to_string(dim) + ", ";
  header += "), }";
  while ((10 + header.size() + 1) % 64 != 0) header += ' ';
  header += '\n';
  std::ofstream out(path, std::ios::binary);
  out.write("\x93NUMPY\x01\x00", 8);
  const uint16_t len = static_cast<uint16_t>(header.size());
  out.write(reinterpret_cast<const char*>(&len), 2);
  out << header;
  out.write(reinterpret_cast<const char*>(data.data()), data.size() * sizeof(T));
  ASSERT_TRUE(out.good()) << path;
}

TEST(AttentionFlashOracle, DumpCasesForPyTorch) {
  const char* dir_env = std::getenv("SCALELAB_ORACLE_DIR");
  if (!dir_env) GTEST_SKIP() << "SCALELAB_ORACLE_DIR not set (run by test_attention_torch.sh)";
  const std::string dir = dir_env;
  struct Case {
    const char* name;
    GridShape g;
    Mask mask;
    Mode mode;
  };
  const Case cases[] = {
      {"plain_d64", {2, 2, 70, 70, 64}, Mask::none, Mode::inv_sqrt_d},
      {"causal_cross_d16", {2, 3, 37, 133, 16}, Mask::causal, Mode::inv_d},
      {"padding_d128", {3, 1, 50, 61, 128}, Mask::padding, Mode::one},
      {"softcap_d2", {1, 2, 29, 150, 2}, Mask::causal_padding, Mode::softcap},
      {"alibi_d1", {2, 2, 130, 45, 1}, Mask::causal, Mode::alibi},
      {"bias_d256", {1, 2, 33, 70, 256}, Mask::padding, Mode::bias},
      {"head_scales_d16", {2, 4, 64, 64, 16}, Mask::none, Mode::head_scales},
      {"everything_d32", {2, 2, 97, 113, 32}, Mask::causal_padding, Mode::everything},
  };
  std::ofstream json(dir + "/cases.json");
  json << "[\n";
  uint64_t seed = 500;
  for (const Case& c : cases) {
    Problem<float> p(c.g.batch, c.g.heads, c.g.q_len, c.g.k_len, c.g.d, c.mask, c.mode, seed++);
    const Result r = run(p, Kernel::flash);
    const std::string base = dir + "/" + c.name + "_";
    const int64_t B = c.g.batch, H = c.g.heads, Q = c.g.q_len, K = c.g.k_len, D = c.g.d;
    auto to_float = [](const std::vector<double>& x) { return std::vector<float>(x.begin(), x.end()); };
    write_npy(base + "q.npy", p.q, {B, Q, H, D});
    write_npy(base + "k.npy", p.k, {B, K, H, D});
    write_npy(base + "v.npy", p.v, {B, K, H, D});
    write_npy(base + "dout.npy", p.dout, {B, Q, H, D});
    write_npy(base + "out.npy", to_float(r.out), {B, Q, H, D});
    write_npy(base + "dq.npy", to_float(r.dq), {B, Q, H, D});
    write_npy(base + "dk.npy", to_float(r.dk), {B, K, H, D});
    write_npy(base + "dv.npy", to_float(r.dv), {B, K, H, D});
    if (p.has_bias()) {
      write_npy(base + "bias.npy", p.bias, {H, Q, K});
      write_npy(base + "dbias.npy", to_float(r.dbias), {H, Q, K});
    }
    if (p.has_head_scales()) {
      write_npy(base + "head_scales.npy", p.head_scales, {H});
      write_npy(base + "dhead_scales.npy", to_float(r.dscales), {H});
    }
    if (!p.slopes.empty()) write_npy(base + "alibi_slopes.npy", p.slopes, {H});
    if (!p.key_lengths.empty()) write_npy(base + "key_lengths.npy", p.key_lengths, {B});
    char line[256];
    std::snprintf(line, sizeof line,
                  "  {\"name\": \"%s\", \"scale\": %.17g, \"causal\": %s, \"softcap\": %.17g}%s\n",
                  c.name, p.opt.scale, p.opt.causal ? "true" : "false", p.opt.softcap,
                  &c == &cases[std::size(cases) - 1] ? "" : ",");
    json << line;
  }
  json << "]\n";
}

TEST(AttentionFlash, KernelSelectorParsesAndRejects) {
  EXPECT_EQ(parse_attention_kernel("flash"), AttentionKernel::flash);
  EXPECT_EQ(parse_attention_kernel("naive"), AttentionKernel::naive);
  EXPECT_STREQ(attention_kernel_name(AttentionKernel::flash), "flash");
  try {
    parse_attention_kernel("fast");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("\"fast\""), std::string::npos);
  }
}

TEST(AttentionFlash, BackwardWithoutFlashForwardIsAnError) {
  Problem<float> p(1, 1, 4, 4, 2, Mask::none, Mode::one, 1);
  AttentionSaved<float> saved;  // no lse
  std::vector<float> g(p.q.size());
  EXPECT_THROW(attention_flash_backward(p.shape, p.opt, p.q.data(), p.k.data(), p.v.data(),
                                        p.dout.data(), p.dout.data(), saved, g.data(), g.data(),
                                        g.data()),
               Error);
  p.key_lengths = {5};
  p.opt.key_lengths = p.key_lengths.data();
  std::vector<float> out(p.dout.size());
  EXPECT_THROW(attention_flash_forward(p.shape, p.opt, p.q.data(), p.k.data(), p.v.data(),
                                       out.data(), saved),
               Error);
}

}  // namespace
}  // namespace scalelab
