// Tests of the shared test numerics: the error measure must pass an exact match, scale with the
// reference, and fail on a wrong length or a non-finite value (a tolerance check built on it
// would otherwise prove nothing); normals must repeat per seed and have the asked-for moments.
#include "support/numerics.hpp"

#include <cmath>
#include <limits>
#include <vector>

#include <gtest/gtest.h>

namespace scalelab::testing {
namespace {

TEST(RelError, ZeroForEqualInputsOfEitherPrecision) {
  const std::vector<double> ref{1.0, -2.0, 0.5};
  EXPECT_EQ(rel_error(ref, ref), 0.0);
  EXPECT_EQ(rel_error(std::vector<float>{1.0f, -2.0f, 0.5f}, ref), 0.0);
}

TEST(RelError, LargestErrorOverLargestReference) {
  const std::vector<double> ref{1.0, -4.0, 0.5};
  const std::vector<double> a{1.1, -4.0, 0.3};  // worst |error| 0.2, largest |ref| 4
  EXPECT_DOUBLE_EQ(rel_error(a, ref), 0.2 / 4.0);
}

TEST(RelError, AbsoluteErrorAgainstAnAllZeroReference) {
  EXPECT_DOUBLE_EQ(rel_error(std::vector<double>{0.0, 0.25}, std::vector<double>{0.0, 0.0}), 0.25);
}

TEST(RelError, InfiniteOnLengthMismatchOrNonFiniteValues) {
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const std::vector<double> ref{1.0, 2.0};
  EXPECT_EQ(rel_error(std::vector<double>{1.0}, ref), inf);
  EXPECT_EQ(rel_error(std::vector<double>{1.0, nan}, ref), inf);
  EXPECT_EQ(rel_error(ref, std::vector<double>{nan, 2.0}), inf);
  EXPECT_EQ(rel_error(std::vector<double>{inf, 2.0}, ref), inf);
}

TEST(Normals, SameSeedSameValuesAndTheAskedForMoments) {
  const auto a = normals<double>(20000, 7, 3.0, -2.0);
  EXPECT_EQ(a, normals<double>(20000, 7, 3.0, -2.0));
  EXPECT_NE(a, normals<double>(20000, 8, 3.0, -2.0));
  double mean = 0, var = 0;
  for (double x : a) mean += x / a.size();
  for (double x : a) var += (x - mean) * (x - mean) / a.size();
  EXPECT_NEAR(mean, -2.0, 0.1);         // standard error 3 / sqrt(20000) = 0.02
  EXPECT_NEAR(std::sqrt(var), 3.0, 0.1);
  const auto f = normals<float>(100, 7, 3.0, -2.0);  // the doubles, rounded
  for (size_t i = 0; i < f.size(); ++i) EXPECT_EQ(f[i], static_cast<float>(a[i]));
}

}  // namespace
}  // namespace scalelab::testing
