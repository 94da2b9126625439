// ledger/stats: exact values on small hand-computed inputs.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "scalelab/core/error.hpp"
#include "scalelab/ledger/stats.hpp"

namespace scalelab::ledger {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

// ---------------------------------------------------------------------------------------------
// median_of, spread_of

TEST(MedianOf, OddCountIsTheMiddleValue) {
  EXPECT_EQ(median_of({3.0, 1.0, 2.0}), 2.0);
  EXPECT_EQ(median_of({7.5}), 7.5);
  EXPECT_EQ(median_of({5.0, -1.0, 9.0, 2.0, 4.0}), 4.0);
}

TEST(MedianOf, EvenCountIsTheMeanOfTheMiddleTwo) {
  EXPECT_EQ(median_of({4.0, 1.0, 3.0, 2.0}), 2.5);
  EXPECT_EQ(median_of({10.0, -2.0}), 4.0);
}

TEST(MedianOf, EmptyIsNaN) { EXPECT_TRUE(std::isnan(median_of({}))); }

TEST(SpreadOf, FailedValuesRankAsTheWorstAndAreCounted) {
  // Rule 3 of docs/ledger.md: a diverged seed is a data point, the worst value (+inf), never dropped.
  const Spread s = spread_of({1.0, kNaN, 5.0, kInf, 3.0, -kInf});
  EXPECT_EQ(s.n, 6);
  EXPECT_EQ(s.failed, 3);
  EXPECT_EQ(s.median, kInf);  // sorted: 1, 3, 5, inf, inf, inf
  EXPECT_EQ(s.min, 1.0);
  EXPECT_EQ(s.max, kInf);
  const Spread one = spread_of({2.0, kNaN, 4.0});
  EXPECT_EQ(one.failed, 1);
  EXPECT_EQ(one.median, 4.0);  // 2, 4, inf: the failure moves the median up, not out
}

TEST(MedianOf, NaNIsTheWorstValueNotUndefinedBehaviour) {
  EXPECT_EQ(median_of({kNaN, 1.0, 2.0}), 2.0);
  EXPECT_EQ(median_of({kNaN, kNaN, 1.0}), kInf);
  EXPECT_EQ(failed_as_worst(kNaN), kInf);
  EXPECT_EQ(failed_as_worst(-kInf), kInf);
  EXPECT_EQ(failed_as_worst(-2.0), -2.0);
}

TEST(RelativeSpread, IsRangeOverMedianAndInfiniteWithAFailure) {
  EXPECT_DOUBLE_EQ(relative_spread({1.0, 1.1, 0.9}), 0.2);
  EXPECT_EQ(relative_spread({1.0}), 0.0);
  EXPECT_EQ(relative_spread({1.0, kNaN, 1.0}), kInf);
}

TEST(Vote, EverySeedMustAgreeForADecision) {
  auto at_least_1_5 = [](double x) { return x >= 1.5; };
  EXPECT_EQ(vote({1.6, 2.0, 1.5}, at_least_1_5).outcome, Outcome::yes);
  EXPECT_EQ(vote({1.0, 1.2, 1.4}, at_least_1_5).outcome, Outcome::no);
  const Vote split = vote({1.0, 2.0, 1.4}, at_least_1_5);
  EXPECT_EQ(split.outcome, Outcome::undecided);
  EXPECT_EQ(split.text(), "1 of 3 seeds");
  // A diverged seed of the arm under test is +inf: on the "broken" side of a loss ratio.
  EXPECT_EQ(vote({kInf, 1.6, 1.7}, at_least_1_5).outcome, Outcome::yes);
  // A NaN (a failed baseline) never supports the claim, whichever side the criterion is on.
  EXPECT_EQ(vote({kNaN, 1.6, 1.7}, at_least_1_5).outcome, Outcome::undecided);
  EXPECT_EQ(vote({kNaN, 1.0, 1.2}, [](double x) { return x < 1.5; }).outcome, Outcome::undecided);
  EXPECT_EQ(vote({kNaN}, at_least_1_5).outcome, Outcome::no);
}

TEST(SpreadOf, EvenCountMedian) {
  const Spread s = spread_of({2.0, 8.0, 4.0, 6.0});
  EXPECT_EQ(s.n, 4);
  EXPECT_EQ(s.failed, 0);
  EXPECT_EQ(s.median, 5.0);
  EXPECT_EQ(s.min, 2.0);
  EXPECT_EQ(s.max, 8.0);
}

TEST(SpreadOf, AllFailedIsInfiniteAndOnlyEmptyIsNaN) {
  const Spread all_nan = spread_of({kNaN, kNaN});
  EXPECT_EQ(all_nan.n, 2);
  EXPECT_EQ(all_nan.failed, 2);
  EXPECT_EQ(all_nan.median, kInf);
  EXPECT_EQ(all_nan.min, kInf);
  EXPECT_EQ(all_nan.max, kInf);
  const Spread empty = spread_of({});
  EXPECT_EQ(empty.n, 0);
  EXPECT_EQ(empty.failed, 0);
  EXPECT_TRUE(std::isnan(empty.median));
  EXPECT_TRUE(std::isnan(empty.min));
  EXPECT_TRUE(std::isnan(empty.max));
}

// ---------------------------------------------------------------------------------------------
// linear_fit, slope_loglog

TEST(LinearFit, ExactLine) {
  const auto [a, b] = linear_fit({0.0, 1.0, 2.0, 3.0}, {1.0, 3.0, 5.0, 7.0});
  EXPECT_DOUBLE_EQ(a, 1.0);
  EXPECT_DOUBLE_EQ(b, 2.0);
}

TEST(LinearFit, LeastSquaresByHand) {
  // mean x = 1, mean y = 2, Sxy = 1, Sxx = 2: b = 0.5, a = 2 - 0.5 = 1.5.
  const auto [a, b] = linear_fit({0.0, 1.0, 2.0}, {1.0, 3.0, 2.0});
  EXPECT_DOUBLE_EQ(a, 1.5);
  EXPECT_DOUBLE_EQ(b, 0.5);
}

TEST(LinearFit, ThrowsOnBadInput) {
  EXPECT_THROW(linear_fit({1.0, 2.0}, {1.0}), scalelab::Error);
  EXPECT_THROW(linear_fit({1.0}, {1.0}), scalelab::Error);
  EXPECT_THROW(linear_fit({}, {}), scalelab::Error);
  EXPECT_THROW(linear_fit({2.0, 2.0, 2.0}, {1.0, 2.0, 3.0}), scalelab::Error);
}

TEST(SlopeLoglog, PowerLawExponent) {
  const std::vector<double> x{1.0, 2.0, 4.0, 8.0, 16.0};
  std::vector<double> y2, yinv;
  for (double v : x) y2.push_back(3.0 * v * v), yinv.push_back(5.0 / v);
  EXPECT_NEAR(slope_loglog(x, y2), 2.0, 1e-12);
  EXPECT_NEAR(slope_loglog(x, yinv), -1.0, 1e-12);
  EXPECT_NEAR(slope_loglog({64.0, 256.0}, {7.0, 7.0}), 0.0, 1e-12);
}

TEST(SlopeLoglog, ThrowsOnNonPositivePoint) {
  EXPECT_THROW(slope_loglog({1.0, 0.0, 4.0}, {1.0, 2.0, 3.0}), scalelab::Error);
  EXPECT_THROW(slope_loglog({1.0, 2.0, 4.0}, {1.0, -2.0, 3.0}), scalelab::Error);
  EXPECT_THROW(slope_loglog({-1.0, 2.0}, {1.0, 2.0}), scalelab::Error);
}

TEST(SlopeLoglog, ThrowsOnMismatchedSizes) {
  EXPECT_THROW(slope_loglog({1.0, 2.0, 4.0}, {1.0, 2.0}), scalelab::Error);
  EXPECT_THROW(slope_loglog({1.0, 2.0}, {1.0, 2.0, 4.0}), scalelab::Error);
  EXPECT_THROW(slope_loglog({1.0, 2.0}, {}), scalelab::Error);
}

TEST(SlopeLoglog, ThrowsWithFewerThanTwoPoints) {
  EXPECT_THROW(slope_loglog({2.0}, {3.0}), scalelab::Error);
  EXPECT_THROW(slope_loglog({}, {}), scalelab::Error);
  EXPECT_THROW(slope_loglog({2.0, 2.0}, {3.0, 5.0}), scalelab::Error);
}

// ---------------------------------------------------------------------------------------------
// roughness

TEST(Roughness, StraightLineIsZero) {
  EXPECT_EQ(roughness({{0, 1.0}, {1, 2.0}, {2, 3.0}, {3, 4.0}}), 0.0);
  EXPECT_EQ(roughness({{0, 5.0}, {10, 4.0}, {20, 3.0}}), 0.0);
  EXPECT_EQ(roughness({{0, 2.0}, {1, 2.0}, {2, 2.0}}), 0.0);
}

TEST(Roughness, ZigZagIsPositiveAndExact) {
  // Second differences |1 - 6 + 1| = 4 and |3 - 2 + 3| = 4: mean 4; mean |level| = 2: 4 / 2 = 2.
  const double r = roughness({{0, 1.0}, {1, 3.0}, {2, 1.0}, {3, 3.0}});
  EXPECT_GT(r, 0.0);
  EXPECT_DOUBLE_EQ(r, 2.0);
}

TEST(Roughness, IsRelativeToTheLevel) {
  const double r1 = roughness({{0, 1.0}, {1, 3.0}, {2, 1.0}, {3, 3.0}});
  const double r10 = roughness({{0, 10.0}, {1, 30.0}, {2, 10.0}, {3, 30.0}});
  EXPECT_DOUBLE_EQ(r1, r10);
}

TEST(Roughness, DegenerateCurvesAreZero) {
  EXPECT_EQ(roughness({}), 0.0);
  EXPECT_EQ(roughness({{0, 1.0}, {1, 5.0}}), 0.0);
  EXPECT_EQ(roughness({{0, 0.0}, {1, 0.0}, {2, 0.0}}), 0.0);
}

// ---------------------------------------------------------------------------------------------
// steps_to

const Curve kFalling{{10, 4.0}, {20, 3.0}, {30, 2.0}, {40, 1.0}};

TEST(StepsTo, UnsmoothedReturnsTheFirstStepAtOrBelowTarget) {
  EXPECT_EQ(steps_to(kFalling, 2.5, 1), 30);
  EXPECT_EQ(steps_to(kFalling, 2.0, 1), 30);  // <= target
  EXPECT_EQ(steps_to(kFalling, 4.0, 1), 10);
}

TEST(StepsTo, SmoothingDelaysTheCrossing) {
  // Window 2 means: 4, 3.5, 2.5, 1.5. Window 3 means: 4, 3.5, 3, 2.
  EXPECT_EQ(steps_to(kFalling, 2.5, 2), 30);
  EXPECT_EQ(steps_to(kFalling, 2.5, 3), 40);
  EXPECT_EQ(steps_to(kFalling, 2.5), 40);  // default window 3
}

TEST(StepsTo, NonPositiveWindowActsAsOne) {
  EXPECT_EQ(steps_to(kFalling, 2.5, 0), 30);
  EXPECT_EQ(steps_to(kFalling, 2.5, -5), 30);
}

TEST(StepsTo, NeverReachedIsMinusOne) {
  EXPECT_EQ(steps_to(kFalling, 0.5, 1), -1);
  EXPECT_EQ(steps_to({}, 1.0), -1);
}

TEST(StepsTo, NonFiniteWindowsAreSkipped) {
  const Curve c{{1, kNaN}, {2, 0.5}, {3, 0.5}, {4, 0.5}};
  EXPECT_EQ(steps_to(c, 1.0, 1), 2);
  EXPECT_EQ(steps_to(c, 1.0, 2), 3);  // the window ending at step 2 contains the NaN
  EXPECT_EQ(steps_to({{1, kInf}, {2, kNaN}}, 1.0, 1), -1);
}

// ---------------------------------------------------------------------------------------------
// tail_mean

Curve one_to(int n) {
  Curve c;
  for (int i = 1; i <= n; ++i) c.push_back({double(i), double(i)});
  return c;
}

TEST(TailMean, MeanOverTheLastFraction) {
  EXPECT_DOUBLE_EQ(tail_mean(one_to(10)), 9.5);        // default 0.2: last 2 points
  EXPECT_DOUBLE_EQ(tail_mean(one_to(10), 0.5), 8.0);   // 6..10
  EXPECT_DOUBLE_EQ(tail_mean(one_to(10), 1.0), 5.5);   // all
  EXPECT_DOUBLE_EQ(tail_mean(one_to(5), 0.3), 4.5);    // ceil(1.5) = 2 points: 4, 5
}

TEST(TailMean, AtLeastOnePoint) {
  EXPECT_DOUBLE_EQ(tail_mean(one_to(3), 0.01), 3.0);
  EXPECT_DOUBLE_EQ(tail_mean(one_to(10), 1e-9), 10.0);
  EXPECT_DOUBLE_EQ(tail_mean({{7, 2.5}}), 2.5);
  EXPECT_DOUBLE_EQ(tail_mean({{7, 2.5}}, 1.0), 2.5);
}

TEST(TailMean, ThrowsUnlessFractionIsInZeroOne) {
  EXPECT_THROW(tail_mean(one_to(10), 0.0), scalelab::Error);
  EXPECT_THROW(tail_mean(one_to(10), -0.2), scalelab::Error);
  EXPECT_THROW(tail_mean(one_to(10), 1.0 + 1e-9), scalelab::Error);
  EXPECT_THROW(tail_mean(one_to(10), 2.0), scalelab::Error);
  EXPECT_THROW(tail_mean(one_to(10), kNaN), scalelab::Error);
  EXPECT_THROW(tail_mean({}, 0.0), scalelab::Error);  // the fraction is checked before emptiness
  EXPECT_NO_THROW(tail_mean(one_to(10), 1.0));
}

TEST(TailMean, EmptyIsNaN) {
  EXPECT_TRUE(std::isnan(tail_mean({})));
  EXPECT_TRUE(std::isnan(tail_mean({}, 1.0)));
}

}  // namespace
}  // namespace scalelab::ledger
