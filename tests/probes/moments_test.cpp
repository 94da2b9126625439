// Running moments: Welford against the two-pass result in long double, exact merging in any
// grouping, block adds, and the range share.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "scalelab/core/error.hpp"
#include "scalelab/probes/moments.hpp"
#include "support/numerics.hpp"

namespace scalelab::probes {
namespace {

using testing::normals;

struct TwoPass {
  long double mean = 0, var = 0;
};
TwoPass two_pass(const std::vector<double>& x) {
  TwoPass r;
  for (double v : x) r.mean += v;
  r.mean /= x.size();
  for (double v : x) r.var += (v - r.mean) * (v - r.mean);
  r.var /= x.size();
  return r;
}

TEST(RunningMoments, WelfordMatchesTwoPassEvenWithALargeOffset) {
  // A large mean with a small spread is where the naive sum-of-squares formula fails.
  const std::vector<double> x = normals<double>(10000, 1, 0.5, 1e6);
  RunningMoments m;
  for (double v : x) m.add(v);
  const TwoPass t = two_pass(x);
  EXPECT_EQ(m.count, 10000);
  EXPECT_NEAR(m.mean, static_cast<double>(t.mean), 1e-14 * 1e6);  // relative to the mean
  EXPECT_NEAR(m.variance() / static_cast<double>(t.var), 1.0, 1e-9);
  EXPECT_NEAR(m.sample_variance(), static_cast<double>(t.var) * 10000 / 9999, 1e-9);
}

TEST(RunningMoments, MergeEqualsTwoPassOverTheConcatenation) {
  const std::vector<double> a = normals<double>(1000, 2, 2.0, 3.0),
                            b = normals<double>(37, 3, 0.1, -5.0);
  RunningMoments ma, mb, mall;
  for (double v : a) ma.add(v);
  for (double v : b) mb.add(v);
  std::vector<double> all = a;
  all.insert(all.end(), b.begin(), b.end());
  for (double v : all) mall.add(v);
  RunningMoments merged = ma;
  merged.merge(mb);
  const TwoPass t = two_pass(all);
  EXPECT_EQ(merged.count, 1037);
  EXPECT_NEAR(merged.mean, static_cast<double>(t.mean), 1e-12);
  EXPECT_NEAR(merged.variance(), static_cast<double>(t.var), 1e-11);
  EXPECT_NEAR(merged.variance(), mall.variance(), 1e-11);
  EXPECT_EQ(merged.min, mall.min);
  EXPECT_EQ(merged.max, mall.max);
  // Merging with an empty side is the identity, on either side.
  RunningMoments empty, left = empty;
  left.merge(ma);
  ma.merge(empty);
  EXPECT_EQ(left.count, ma.count);
  EXPECT_EQ(left.mean, ma.mean);
  EXPECT_EQ(left.m2, ma.m2);
}

TEST(RunningMoments, BlockAddEqualsElementwiseAdd) {
  const std::vector<double> x = normals<double>(513, 4, 3.0, 0.25);
  std::vector<float> xf(x.begin(), x.end());
  RunningMoments one, block;
  for (float v : xf) one.add(v);
  block.add_values(xf.data(), 200);
  block.add_values(xf.data() + 200, 313);
  EXPECT_EQ(block.count, one.count);
  EXPECT_NEAR(block.mean, one.mean, 1e-12);
  EXPECT_NEAR(block.variance(), one.variance(), 1e-11);
  EXPECT_EQ(block.max_abs(), one.max_abs());
}

TEST(RunningMoments, EmptyAndSingleValues) {
  RunningMoments m;
  EXPECT_TRUE(std::isnan(m.variance()));
  EXPECT_TRUE(std::isnan(m.max_abs()));
  m.add(-7.0);
  EXPECT_EQ(m.variance(), 0.0);
  EXPECT_TRUE(std::isnan(m.sample_variance()));
  EXPECT_EQ(m.max_abs(), 7.0);
}

TEST(RangeMoments, ShareWithinTheClosedRange) {
  RangeMoments r;  // [-3, 3]
  for (double v : {-3.0, 3.0, 0.0, 3.5, -10.0}) r.add(v);
  EXPECT_EQ(r.within, 3);
  EXPECT_DOUBLE_EQ(r.within_share(), 0.6);
  RangeMoments other;
  other.add(1.0);
  r.merge(other);
  EXPECT_DOUBLE_EQ(r.within_share(), 4.0 / 6.0);
  RangeMoments wide;
  wide.lo = -5;
  EXPECT_THROW(r.merge(wide), Error);
}

}  // namespace
}  // namespace scalelab::probes
