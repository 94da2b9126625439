// Histograms with caller-given edges (boundaries, out-of-range, NaN, merge, JSON) and quantiles
// (numpy's default, type 7, on known samples).
#include <gtest/gtest.h>

#include <cmath>

#include "scalelab/core/error.hpp"
#include "scalelab/probes/histogram.hpp"

namespace scalelab::probes {
namespace {

TEST(Histogram, BinsAreHalfOpenExceptTheLast) {
  Histogram h({0.0, 1.0, 2.0, 4.0});
  for (double v : {0.0, 0.5, 1.0, 1.999, 2.0, 4.0, -0.001, 4.001, std::nan("")}) h.add(v);
  EXPECT_EQ(h.counts(), (std::vector<int64_t>{2, 2, 2}));
  EXPECT_EQ(h.below(), 1);
  EXPECT_EQ(h.above(), 1);
  EXPECT_EQ(h.nan(), 1);
  EXPECT_EQ(h.total(), 9);
}

TEST(Histogram, UniformMergeAndJsonRoundTrip) {
  Histogram a = Histogram::uniform(-3, 3, 6), b = Histogram::uniform(-3, 3, 6);
  ASSERT_EQ(a.edges().size(), 7u);
  EXPECT_EQ(a.edges()[3], 0.0);
  a.add(-2.5);
  b.add(2.5, 3);
  a.merge(b);
  EXPECT_EQ(a.counts(), (std::vector<int64_t>{1, 0, 0, 0, 0, 3}));
  const Histogram c = Histogram::from_json(a.to_json());
  EXPECT_EQ(c.edges(), a.edges());
  EXPECT_EQ(c.counts(), a.counts());
  EXPECT_THROW(a.merge(Histogram::uniform(-3, 3, 5)), Error);
}

TEST(Histogram, BadEdgesAreErrors) {
  EXPECT_THROW(Histogram({1.0}), Error);
  EXPECT_THROW(Histogram({0.0, 0.0}), Error);
  EXPECT_THROW(Histogram({0.0, INFINITY}), Error);
  EXPECT_THROW(Histogram::uniform(1, 1, 3), Error);
  EXPECT_THROW(Histogram::uniform(0, 1, 0), Error);
}

TEST(Quantiles, MatchNumpyLinearInterpolation) {
  // numpy.quantile([1, 2, 3, 4, 10], [0, .1, .5, .75, 1]) = [1, 1.4, 3, 4, 10]
  const std::vector<double> q = quantiles({10, 2, 4, 1, 3, std::nan("")}, {0, 0.1, 0.5, 0.75, 1});
  const std::vector<double> want{1, 1.4, 3, 4, 10};
  for (size_t i = 0; i < q.size(); ++i) EXPECT_NEAR(q[i], want[i], 1e-12) << i;
  EXPECT_THROW(quantiles({}, {0.5}), Error);
  EXPECT_THROW(quantiles({1.0}, {1.5}), Error);
}

TEST(Quantiles, EdgesGiveEqualCountBins) {
  std::vector<double> v;
  for (int i = 0; i < 100; ++i) v.push_back(i * i);  // skewed
  Histogram h(quantile_edges(v, 4));
  for (double x : v) h.add(x);
  EXPECT_EQ(h.counts(), (std::vector<int64_t>{25, 25, 25, 25}));
  EXPECT_EQ(h.below() + h.above(), 0);
  // Ties collapse; a constant sample still gets one bin holding everything.
  Histogram c(quantile_edges({2.0, 2.0, 2.0}, 5));
  EXPECT_EQ(c.bins(), 1);
  for (double x : {2.0, 2.0, 2.0}) c.add(x);
  EXPECT_EQ(c.counts()[0], 3);
}

}  // namespace
}  // namespace scalelab::probes
