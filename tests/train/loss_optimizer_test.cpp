#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "scalelab/core/parallel.hpp"
#include "scalelab/core/rng.hpp"
#include "scalelab/train/loss.hpp"
#include "scalelab/train/optimizer.hpp"
#include "support/finite_difference.hpp"

namespace scalelab {
namespace {

TEST(CrossEntropy, KnownAnswerWithoutSmoothing) {
  // logits (0, ln 3): p = (1/4, 3/4); target 1 -> loss -ln(3/4); the pad row is ignored.
  const double logits[4] = {0.0, std::log(3.0), 5.0, -5.0};
  const int32_t targets[2] = {1, 0};
  double d[4];
  const LossResult r = cross_entropy<double>(logits, targets, 2, 2, 0.0, /*pad_id=*/0, d);
  EXPECT_EQ(r.tokens, 1);
  EXPECT_NEAR(r.loss, -std::log(0.75), 1e-15);
  EXPECT_NEAR(d[0], 0.25, 1e-15);
  EXPECT_NEAR(d[1], -0.25, 1e-15);
  EXPECT_EQ(d[2], 0.0);
  EXPECT_EQ(r.correct, 1);
}

TEST(CrossEntropy, SmoothingMatchesTheDefinitionAndFiniteDifferences) {
  Rng rng(3);
  const int64_t rows = 5, V = 6;
  std::vector<double> z(rows * V), dz(rows * V);
  for (double& v : z) v = rng.normal(0, 2);
  const std::vector<int32_t> t{1, 4, 0, 5, 3};
  const double e = 0.1;
  const LossResult r = cross_entropy<double>(z.data(), t.data(), rows, V, e, 0, dz.data());
  double expected = 0;
  for (int64_t i = 0; i < rows; ++i) {
    if (t[i] == 0) continue;
    double norm = 0;
    for (int64_t j = 0; j < V; ++j) norm += std::exp(z[i * V + j]);
    for (int64_t j = 0; j < V; ++j) {
      const double q = (j == t[i] ? 1 - e : 0) + e / V;
      expected -= q * (z[i * V + j] - std::log(norm));
    }
  }
  EXPECT_NEAR(r.loss, expected / 4, 1e-12);
  auto loss = [&] { return cross_entropy<double>(z.data(), t.data(), rows, V, e, 0, nullptr).loss; };
  const auto report = testing::check_gradients(loss, {{z.data(), rows * V, "logits", dz.data()}});
  EXPECT_LT(report.worst_rel_error, 1e-6) << report;  // double, eps 1e-6
}

TEST(Schedule, NoamPeaksAtWarmup) {
  const ScheduleOptions s{.kind = ScheduleKind::noam, .lr = 2.0, .warmup = 100, .d_model = 64};
  EXPECT_NEAR(learning_rate(s, 100), 2.0 / 8.0 / 10.0, 1e-12);          // 2 · 64^-0.5 · 100^-0.5
  EXPECT_NEAR(learning_rate(s, 1), 2.0 / 8.0 * 1.0 / 1000.0, 1e-12);    // t · warmup^-1.5
  EXPECT_NEAR(learning_rate(s, 400), 2.0 / 8.0 / 20.0, 1e-12);
  EXPECT_LT(learning_rate(s, 99), learning_rate(s, 100));
  EXPECT_LT(learning_rate(s, 101), learning_rate(s, 100));
}

TEST(Schedule, WarmupCosineEndsAtTheFloor) {
  const ScheduleOptions s{.kind = ScheduleKind::warmup_cosine, .lr = 1e-3, .warmup = 10,
                          .total_steps = 110, .min_lr = 1e-5};
  EXPECT_NEAR(learning_rate(s, 5), 5e-4, 1e-15);
  EXPECT_NEAR(learning_rate(s, 10), 1e-3, 1e-15);
  EXPECT_NEAR(learning_rate(s, 60), 1e-5 + (1e-3 - 1e-5) * 0.5, 1e-12);
  EXPECT_NEAR(learning_rate(s, 110), 1e-5, 1e-15);
}

TEST(Clipping, ScalesToTheMaximumNorm) {
  Parameter<double> a("a", {2}), b("b", {1});
  a.grad[0] = 3;
  a.grad[1] = 0;
  b.grad[0] = 4;
  ParameterRefs<double> ps{&a, &b};
  EXPECT_DOUBLE_EQ(clip_grad_norm(ps, 1.0), 5.0);
  EXPECT_NEAR(a.grad[0], 0.6, 1e-9);
  EXPECT_NEAR(b.grad[0], 0.8, 1e-9);
  EXPECT_NEAR(clip_grad_norm(ps, 0.0), 1.0, 1e-9);  // 0: measure only
}

TEST(Adam, FirstStepMovesByLrTimesSign) {
  // With bias correction, step 1 gives m̂ = g, v̂ = g², so the update is lr · g/(|g| + eps).
  Parameter<double> p("w", {3});
  p.value.fill(1.0);
  p.grad[0] = 0.5;
  p.grad[1] = -2.0;
  p.grad[2] = 0.0;
  Optimizer<double> opt({&p}, {.kind = OptimizerKind::adam, .eps = 1e-12});
  opt.step(0.1);
  EXPECT_NEAR(p.value[0], 0.9, 1e-9);
  EXPECT_NEAR(p.value[1], 1.1, 1e-9);
  EXPECT_NEAR(p.value[2], 1.0, 1e-12);
}

TEST(AdamW, DecaysDecoupledFromTheGradient) {
  Parameter<double> p("w", {1});
  p.value[0] = 2.0;
  p.grad[0] = 0.0;
  Optimizer<double> opt({&p}, {.kind = OptimizerKind::adamw, .weight_decay = 0.1});
  opt.step(0.5);
  EXPECT_NEAR(p.value[0], 2.0 - 0.5 * 0.1 * 2.0, 1e-12);  // no gradient: decay only
  Parameter<double> bias("b", {1}, ParamRole::bias);
  bias.value[0] = 2.0;
  Optimizer<double> opt2({&bias}, {.kind = OptimizerKind::adamw, .weight_decay = 0.1});
  opt2.step(0.5);
  EXPECT_EQ(bias.value[0], 2.0);
}

// Parameters of mixed sizes (one spanning several of the optimizer's pieces, several far smaller
// than one) with mixed roles (weight decay on the linear maps only) and muP learning-rate
// multipliers: two Adam steps give every element the value of the per-element formula, computed
// here in double, and the same bits at 1 and 2 threads.
TEST(Adam, EveryPieceOfEveryParameterFollowsTheFormulaOnAnyThreadCount) {
  const std::vector<std::pair<int64_t, ParamRole>> specs = {
      {40000, ParamRole::weight}, {7, ParamRole::bias}, {16384, ParamRole::readout_weight},
      {1, ParamRole::embedding_scale}, {300, ParamRole::norm_gain}};
  const OptimizerOptions options{.kind = OptimizerKind::adamw, .weight_decay = 0.01,
                                 .mup_base_width = 64, .mup_width = 256};
  auto run = [&](int threads) {
    const ScopedNumThreads scoped(threads);
    std::vector<Parameter<float>> params;
    for (size_t i = 0; i < specs.size(); ++i)
      params.emplace_back("p" + std::to_string(i), std::vector<int64_t>{specs[i].first},
                          specs[i].second);
    ParameterRefs<float> refs;
    for (auto& p : params) refs.push_back(&p);
    Optimizer<float> opt(refs, options);
    Rng rng(5);
    for (int step = 0; step < 2; ++step) {
      for (auto& p : params)
        for (int64_t j = 0; j < p.value.numel(); ++j) {
          if (step == 0) p.value[j] = static_cast<float>(rng.normal());
          p.grad[j] = static_cast<float>(rng.normal());
        }
      opt.step(1e-2);
    }
    std::vector<std::vector<float>> values;
    for (auto& p : params) values.emplace_back(p.value.data(), p.value.data() + p.value.numel());
    return values;
  };
  const auto one = run(1), two = run(2);
  EXPECT_EQ(one, two);
  // The formula, from the same draws (same order), in double.
  Rng rng(5);
  std::vector<std::vector<double>> w(specs.size()), m(specs.size()), v(specs.size());
  for (size_t i = 0; i < specs.size(); ++i)
    w[i].resize(specs[i].first), m[i].assign(specs[i].first, 0.0), v[i].assign(specs[i].first, 0.0);
  for (int step = 1; step <= 2; ++step) {
    std::vector<std::vector<double>> g(specs.size());
    for (size_t i = 0; i < specs.size(); ++i)
      for (int64_t j = 0; j < specs[i].first; ++j) {
        if (step == 1) w[i][j] = static_cast<float>(rng.normal());
        g[i].push_back(static_cast<float>(rng.normal()));
      }
    const double c1 = 1 - std::pow(0.9, step), c2 = 1 - std::pow(0.98, step);
    for (size_t i = 0; i < specs.size(); ++i) {
      const double lr = 1e-2 * (is_linear_map(specs[i].second) ? 64.0 / 256.0 : 1.0);
      const double wd = takes_weight_decay(specs[i].second) ? 0.01 : 0.0;
      for (int64_t j = 0; j < specs[i].first; ++j) {
        m[i][j] = 0.9 * m[i][j] + 0.1 * g[i][j];
        v[i][j] = 0.98 * v[i][j] + 0.02 * g[i][j] * g[i][j];
        w[i][j] -= lr / c1 * m[i][j] / (std::sqrt(v[i][j] / c2) + 1e-9) + lr * wd * w[i][j];
      }
    }
  }
  for (size_t i = 0; i < specs.size(); ++i)
    for (int64_t j = 0; j < specs[i].first; ++j)
      ASSERT_NEAR(one[i][j], w[i][j], 1e-5 * (1 + std::fabs(w[i][j]))) << "parameter " << i << ", element " << j;
}

// SGD over the same kind of mixed parameters: w -= lr (g + wd w), per element, any thread count.
TEST(Sgd, EveryParameterStepsByTheGradient) {
  for (int threads : {1, 2}) {
    const ScopedNumThreads scoped(threads);
    Parameter<double> big("w", {20000}), small("b", {3}, ParamRole::bias);
    big.value.fill(1.0), big.grad.fill(0.5), small.value.fill(2.0), small.grad.fill(-1.0);
    Optimizer<double> opt({&big, &small}, {.kind = OptimizerKind::sgd, .weight_decay = 0.1});
    opt.step(0.1);
    for (int64_t j = 0; j < 20000; ++j) ASSERT_DOUBLE_EQ(big.value[j], 1.0 - 0.1 * (0.5 + 0.1));
    for (int64_t j = 0; j < 3; ++j) ASSERT_DOUBLE_EQ(small.value[j], 2.0 + 0.1);
  }
}

}  // namespace
}  // namespace scalelab
