// tests/support/numerics: random test inputs and the error measure the kernel tests compare with,
// written once here instead of once per test file.
//
//   const auto x = normals<float>(n, 10 + n, 3.0);        // n draws of N(0, 3²), seed 10 + n
//   const auto gamma = normals<float>(cols, 20, 0.3, 1.0);  // N(1, 0.3²): stddev, then mean
//   EXPECT_LE(rel_error(out, ref), 1e-5);                 // max|out - ref| / max|ref|
//
// normals draws from core/rng's Rng, so a (count, seed) pair gives the same values on every
// machine and every standard library.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <ranges>
#include <vector>

#include "scalelab/core/rng.hpp"

namespace scalelab::testing {

// n draws of N(mean, stddev²) from a fresh Rng(seed), each drawn in double and then converted to T
// (so normals<float>(n, s) is normals<double>(n, s) rounded to float). The arguments come in the
// order stddev, mean: most inputs are zero-mean with some scale. One seed per tensor: two calls
// with the same seed return the same values (the shorter one a prefix of the longer).
template <class T>
std::vector<T> normals(int64_t n, uint64_t seed, double stddev = 1.0, double mean = 0.0) {
  Rng rng(seed);
  std::vector<T> v(n);
  for (auto& x : v) x = static_cast<T>(rng.normal(mean, stddev));
  return v;
}

// max_i |a_i - ref_i| / max_i |ref_i|, computed in double: the error of a whole tensor relative to
// its largest reference value (so near-zero elements do not dominate it). When ref is all zero
// (or empty) the absolute error max_i |a_i - ref_i| is returned instead of a division by zero.
// a and ref: std::vector, Tensor, or any random-access range of float or double (e.g. a float
// result against a double reference), of the same length; a length mismatch returns +infinity.
// A NaN or infinity on either side returns +infinity, so no tolerance check passes on it.
template <std::ranges::random_access_range A, std::ranges::random_access_range R>
double rel_error(const A& a, const R& ref) {
  const auto n = std::ranges::distance(a);
  if (n != std::ranges::distance(ref)) return std::numeric_limits<double>::infinity();
  const auto ia = std::ranges::begin(a);
  const auto ir = std::ranges::begin(ref);
  double err = 0, mag = 0;
  for (std::ranges::range_difference_t<const A> i = 0; i < n; ++i) {
    const double r = static_cast<double>(ir[i]);
    const double x = static_cast<double>(ia[i]);
    if (!std::isfinite(r) || !std::isfinite(x)) return std::numeric_limits<double>::infinity();
    err = std::max(err, std::abs(x - r));
    mag = std::max(mag, std::abs(r));
  }
  return mag > 0 ? err / mag : err;
}

}  // namespace scalelab::testing
