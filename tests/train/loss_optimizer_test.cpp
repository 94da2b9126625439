#include <gtest/gtest.h>

#include <cmath>

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

}  // namespace
}  // namespace scalelab
