// Independent checks of kernels/layernorm: fast vs _ref in float, known answers, accumulation
// semantics, and finite-difference checks of the backward (x, gamma, beta) in double.
#include "scalelab/kernels/layernorm.hpp"

#include <cmath>
#include <iostream>
#include <limits>
#include <ostream>
#include <vector>

#include <gtest/gtest.h>

#include "support/finite_difference.hpp"
#include "support/numerics.hpp"

namespace scalelab {
namespace {

using testing::normals;

// Test-local LayerNorm in long double from the header's formulas; returns y, dx, dgamma, dbeta.
struct Oracle {
  std::vector<double> y, dx, dgamma, dbeta;
};
template <class T>
Oracle layernorm_oracle(const NormShape& s, const std::vector<T>& x, const std::vector<T>& gamma,
                        const std::vector<T>& beta, const std::vector<T>& dy) {
  Oracle o;
  o.y.resize(x.size());
  o.dx.resize(x.size());
  o.dgamma.assign(s.cols, 0.0);
  o.dbeta.assign(s.cols, 0.0);
  using L = long double;
  for (int64_t r = 0; r < s.rows; ++r) {
    const T* xr = x.data() + r * s.cols;
    const T* dyr = dy.data() + r * s.cols;
    L mu = 0, var = 0;
    for (int64_t j = 0; j < s.cols; ++j) mu += xr[j];
    mu /= s.cols;
    for (int64_t j = 0; j < s.cols; ++j) var += (xr[j] - mu) * (xr[j] - mu);
    var /= s.cols;
    const L rstd = 1 / std::sqrt(var + static_cast<L>(s.eps));
    L mg = 0, mgx = 0;
    std::vector<L> xhat(s.cols);
    for (int64_t j = 0; j < s.cols; ++j) {
      xhat[j] = (xr[j] - mu) * rstd;
      o.y[r * s.cols + j] = static_cast<double>(gamma[j] * xhat[j] + beta[j]);
      const L g = static_cast<L>(dyr[j]) * gamma[j];
      mg += g;
      mgx += g * xhat[j];
      o.dgamma[j] += static_cast<double>(dyr[j] * xhat[j]);
      o.dbeta[j] += dyr[j];
    }
    mg /= s.cols;
    mgx /= s.cols;
    for (int64_t j = 0; j < s.cols; ++j) {
      const L g = static_cast<L>(dyr[j]) * gamma[j];
      o.dx[r * s.cols + j] = static_cast<double>(rstd * (g - mg - xhat[j] * mgx));
    }
  }
  return o;
}

double max_abs(const std::vector<double>& v) {
  double m = 0;
  for (double x : v) m = std::max(m, std::abs(x));
  return m;
}

// ---- fast vs reference, float ---------------------------------------------------------------

struct FastCase {
  int64_t rows, cols;
  double x_mean;  // rows have this mean (tests the cancellation-safe statistics)
  double tol;     // max |fast - oracle| / max|oracle| per output, float
  friend std::ostream& operator<<(std::ostream& o, const FastCase& c) {
    return o << c.rows << "x" << c.cols << " mean " << c.x_mean << " tol " << c.tol;
  }
};

class LayerNormFastVsRef : public ::testing::TestWithParam<FastCase> {};

TEST_P(LayerNormFastVsRef, MatchesRefAndOracle) {
  const auto c = GetParam();
  const NormShape s{c.rows, c.cols, 1e-5};
  const int64_t n = c.rows * c.cols;
  const auto x = normals<float>(n, 10 + n, 1.0, c.x_mean);
  const auto gamma = normals<float>(c.cols, 20 + n, 0.3, 1.0);
  const auto beta = normals<float>(c.cols, 30 + n, 0.3);
  const auto dy = normals<float>(n, 40 + n);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> y(n, nan), y_ref(n, nan), mean(c.rows, nan), mean_ref(c.rows, nan),
      rstd(c.rows, nan), rstd_ref(c.rows, nan), dx(n, nan), dx_ref(n, nan);
  std::vector<float> dgamma(c.cols, 0.f), dgamma_ref(c.cols, 0.f), dbeta(c.cols, 0.f),
      dbeta_ref(c.cols, 0.f);
  layernorm_forward(s, x.data(), gamma.data(), beta.data(), y.data(), mean.data(), rstd.data());
  layernorm_forward_ref(s, x.data(), gamma.data(), beta.data(), y_ref.data(), mean_ref.data(),
                        rstd_ref.data());
  layernorm_backward(s, dy.data(), x.data(), gamma.data(), mean.data(), rstd.data(), dx.data(),
                     dgamma.data(), dbeta.data());
  layernorm_backward_ref(s, dy.data(), x.data(), gamma.data(), mean_ref.data(), rstd_ref.data(),
                         dx_ref.data(), dgamma_ref.data(), dbeta_ref.data());
  // Same row math, vectorised: the double sums differ only in order (relative ~1e-16), so a rounded
  // float intermediate (mean, rstd, xhat) is equal or one ulp away; y = xhat·gamma + beta and dx
  // may cancel, so their bound is a few ulps of the largest value rather than of each value.
  auto expect_close = [](const std::vector<float>& got, const std::vector<float>& want, double ulps_of_max,
                         const char* what) {
    double largest = 0;
    for (float w : want) largest = std::max(largest, std::abs(double(w)));
    const double bound = ulps_of_max * std::numeric_limits<float>::epsilon() * largest;
    for (size_t i = 0; i < want.size(); ++i)
      ASSERT_LE(std::abs(double(got[i]) - want[i]), std::max(bound, 1.01 * std::abs(double(std::nextafter(want[i], INFINITY)) - want[i])))
          << what << " at " << i << ": " << got[i] << " vs " << want[i];
  };
  expect_close(y, y_ref, 2, "y");
  expect_close(mean, mean_ref, 0, "mean");
  expect_close(rstd, rstd_ref, 0, "rstd");
  expect_close(dx, dx_ref, 2, "dx");
  for (int64_t j = 0; j < c.cols; ++j) {
    EXPECT_NEAR(dgamma[j], dgamma_ref[j], 1e-5 * std::sqrt(double(c.rows))) << j;
    EXPECT_NEAR(dbeta[j], dbeta_ref[j], 1e-5 * std::sqrt(double(c.rows))) << j;
  }
  // Against the long-double oracle.
  const Oracle o = layernorm_oracle(s, x, gamma, beta, dy);
  auto check = [&](const std::vector<float>& got, const std::vector<double>& want, const char* what) {
    const double scale = std::max(max_abs(want), 1e-30);
    double worst = 0;
    int64_t at = -1;
    for (size_t i = 0; i < want.size(); ++i) {
      const double e = std::abs(got[i] - want[i]) / scale;
      if (!(e <= worst)) worst = e, at = static_cast<int64_t>(i);
    }
    EXPECT_LE(worst, c.tol) << what << ": worst normalised error at " << at << " got "
                            << (at >= 0 ? got[at] : 0.f) << " want " << (at >= 0 ? want[at] : 0.0);
  };
  check(y, o.y, "y");
  check(dx, o.dx, "dx");
  check(dgamma, o.dgamma, "dgamma");
  check(dbeta, o.dbeta, "dbeta");
}

INSTANTIATE_TEST_SUITE_P(Grid, LayerNormFastVsRef,
                         ::testing::Values(FastCase{1, 1, 0.0, 1e-6}, FastCase{1, 7, 0.0, 1e-6},
                                           FastCase{3, 5, 0.0, 1e-6}, FastCase{37, 64, 0.0, 1e-6},
                                           FastCase{300, 129, 0.0, 1e-5},
                                           FastCase{16, 48, 100.0, 1e-4}));

// A float row with a large mean: the forward's statistics are accumulated in double precisely
// so that such rows keep their variance. The backward should be as accurate as the forward; the
// tolerance is set from the float input quantum relative to the row's spread.
TEST(LayerNormPrecision, LargeMeanRowsBackwardAsAccurateAsForward) {
  const NormShape s{8, 64, 1e-5};
  const int64_t n = s.rows * s.cols;
  const auto x = normals<float>(n, 5, 1.0, 1000.0);  // ulp(1000) = 6e-5 relative to std 1
  const std::vector<float> gamma(s.cols, 1.f), beta(s.cols, 0.f);
  const auto dy = normals<float>(n, 6);
  std::vector<float> y(n), mean(s.rows), rstd(s.rows), dx(n), dgamma(s.cols, 0.f),
      dbeta(s.cols, 0.f);
  layernorm_forward(s, x.data(), gamma.data(), beta.data(), y.data(), mean.data(), rstd.data());
  layernorm_backward(s, dy.data(), x.data(), gamma.data(), mean.data(), rstd.data(), dx.data(),
                     dgamma.data(), dbeta.data());
  const Oracle o = layernorm_oracle(s, x, gamma, beta, dy);  // exact math on the same float x
  double err_y = 0, err_dgamma = 0;
  for (int64_t i = 0; i < n; ++i) err_y = std::max(err_y, std::abs(y[i] - o.y[i]));
  for (int64_t j = 0; j < s.cols; ++j)
    err_dgamma = std::max(err_dgamma, std::abs(dgamma[j] - o.dgamma[j]) / max_abs(o.dgamma));
  EXPECT_LT(err_y, 1e-6) << "forward y error on large-mean rows";
  EXPECT_LT(err_dgamma, 1e-5)
      << "dgamma error on large-mean rows (forward y error is " << err_y << ")";
}

// ---- known answers --------------------------------------------------------------------------

TEST(LayerNormKnown, UnitGammaZeroBetaGivesMeanZeroVarianceOne) {
  const NormShape s{4, 50, 1e-5};
  const auto x = normals<double>(s.rows * s.cols, 3, 3.0, 5.0);
  const std::vector<double> gamma(s.cols, 1.0), beta(s.cols, 0.0);
  std::vector<double> y(x.size()), mean(s.rows), rstd(s.rows);
  layernorm_forward(s, x.data(), gamma.data(), beta.data(), y.data(), mean.data(), rstd.data());
  for (int64_t r = 0; r < s.rows; ++r) {
    double m = 0, v = 0, xm = 0, xv = 0;
    for (int64_t j = 0; j < s.cols; ++j) m += y[r * s.cols + j], xm += x[r * s.cols + j];
    m /= s.cols, xm /= s.cols;
    for (int64_t j = 0; j < s.cols; ++j) {
      v += (y[r * s.cols + j] - m) * (y[r * s.cols + j] - m);
      xv += (x[r * s.cols + j] - xm) * (x[r * s.cols + j] - xm);
    }
    v /= s.cols, xv /= s.cols;
    EXPECT_NEAR(m, 0.0, 1e-14) << r;
    EXPECT_NEAR(v, xv / (xv + s.eps), 1e-13) << r;  // = 1 up to eps / var
    EXPECT_NEAR(v, 1.0, 1e-5) << r;
    EXPECT_NEAR(mean[r], xm, 1e-13) << r;
    EXPECT_NEAR(rstd[r], 1.0 / std::sqrt(xv + s.eps), 1e-13) << r;
  }
}

TEST(LayerNormKnown, AffineAndConstantRow) {
  const NormShape s{1, 4, 0.5};
  const double x[4] = {1, 2, 3, 4};  // mean 2.5, var 1.25, rstd 1/sqrt(1.75)
  const double gamma[4] = {2, -1, 0.5, 0};
  const double beta[4] = {0.1, 0.2, 0.3, 0.4};
  double y[4], mean, rstd;
  layernorm_forward(s, x, gamma, beta, y, &mean, &rstd);
  const double r = 1 / std::sqrt(1.75);
  EXPECT_DOUBLE_EQ(mean, 2.5);
  EXPECT_NEAR(rstd, r, 1e-15);
  for (int j = 0; j < 4; ++j) EXPECT_NEAR(y[j], gamma[j] * (x[j] - 2.5) * r + beta[j], 1e-15) << j;

  const double c[3] = {7, 7, 7}, g3[3] = {1, 1, 1}, b3[3] = {0.5, -1, 2};
  double yc[3], mc, rc, dyc[3] = {1, 2, 3}, dxc[3], dg[3] = {0, 0, 0}, db[3] = {0, 0, 0};
  const NormShape s3{1, 3, 1e-5};
  layernorm_forward(s3, c, g3, b3, yc, &mc, &rc);
  for (int j = 0; j < 3; ++j) EXPECT_EQ(yc[j], b3[j]) << "constant row gives beta";
  layernorm_backward(s3, dyc, c, g3, &mc, &rc, dxc, dg, db);
  // xhat = 0: dx = rstd (g - mean g) with rstd = 1/sqrt(eps).
  for (int j = 0; j < 3; ++j) {
    EXPECT_NEAR(dxc[j], (dyc[j] - 2.0) / std::sqrt(1e-5), 1e-9) << j;
    EXPECT_EQ(dg[j], 0.0);
    EXPECT_EQ(db[j], dyc[j]);
  }
}

TEST(LayerNormKnown, BackwardAccumulatesParamGradsAndOverwritesDx) {
  for (bool fast : {true, false}) {
    const NormShape s{40, 6, 1e-5};  // more rows than threads, so partial buffers are used
    const int64_t n = s.rows * s.cols;
    const auto x = normals<double>(n, 1);
    const auto gamma = normals<double>(s.cols, 2, 0.2, 1.0);
    const auto beta = normals<double>(s.cols, 3);
    const auto dy = normals<double>(n, 4);
    std::vector<double> y(n), mean(s.rows), rstd(s.rows);
    layernorm_forward(s, x.data(), gamma.data(), beta.data(), y.data(), mean.data(), rstd.data());
    std::vector<double> dx0(n, 0.0), dg0(s.cols, 0.0), db0(s.cols, 0.0);
    std::vector<double> dx1(n, std::numeric_limits<double>::quiet_NaN()), dg1(s.cols, 10.0),
        db1(s.cols, -3.0);
    auto run = fast ? layernorm_backward<double> : layernorm_backward_ref<double>;
    run(s, dy.data(), x.data(), gamma.data(), mean.data(), rstd.data(), dx0.data(), dg0.data(),
        db0.data());
    run(s, dy.data(), x.data(), gamma.data(), mean.data(), rstd.data(), dx1.data(), dg1.data(),
        db1.data());
    for (int64_t i = 0; i < n; ++i) EXPECT_EQ(dx0[i], dx1[i]) << "dx must be overwritten";
    for (int64_t j = 0; j < s.cols; ++j) {
      EXPECT_NEAR(dg1[j], 10.0 + dg0[j], 1e-12) << (fast ? "fast" : "ref");
      EXPECT_NEAR(db1[j], -3.0 + db0[j], 1e-12) << (fast ? "fast" : "ref");
    }
  }
}

// ---- finite differences, double -------------------------------------------------------------

struct FdCase {
  int64_t rows, cols;
  double eps;  // the LayerNorm epsilon
  bool fast;   // layernorm_backward (true) or layernorm_backward_ref
  double tol;
  friend std::ostream& operator<<(std::ostream& o, const FdCase& c) {
    return o << c.rows << "x" << c.cols << " eps " << c.eps << (c.fast ? " fast" : " ref")
             << " tol " << c.tol;
  }
};

class LayerNormFd : public ::testing::TestWithParam<FdCase> {};

TEST_P(LayerNormFd, BackwardMatchesCentralDifferencesForXGammaBeta) {
  const testing::ScopedThreads one_thread(1);
  const auto c = GetParam();
  const NormShape s{c.rows, c.cols, c.eps};
  const int64_t n = c.rows * c.cols;
  auto x = normals<double>(n, 100 + n, 1.5, 0.5);
  auto gamma = normals<double>(c.cols, 200 + n, 0.5, 1.0);
  auto beta = normals<double>(c.cols, 300 + n);
  const auto w = normals<double>(n, 400 + n);
  std::vector<double> y(n), mean(c.rows), rstd(c.rows);
  auto loss = [&] {
    layernorm_forward(s, x.data(), gamma.data(), beta.data(), y.data(), mean.data(), rstd.data());
    return testing::weighted_sum(w.data(), y.data(), n);
  };
  loss();
  std::vector<double> dx(n), dgamma(c.cols, 0.0), dbeta(c.cols, 0.0);
  (c.fast ? layernorm_backward<double> : layernorm_backward_ref<double>)(
      s, w.data(), x.data(), gamma.data(), mean.data(), rstd.data(), dx.data(), dgamma.data(),
      dbeta.data());
  const auto r = testing::check_gradients(loss, {{x.data(), n, "x", dx.data()},
                                                 {gamma.data(), c.cols, "gamma", dgamma.data()},
                                                 {beta.data(), c.cols, "beta", dbeta.data()}});
  EXPECT_LT(r.worst_rel_error, c.tol) << r;
  std::cout << "[ fd       ] " << c << ": " << r << "\n";
}

INSTANTIATE_TEST_SUITE_P(Grid, LayerNormFd,
                         ::testing::Values(FdCase{1, 2, 1e-5, true, 1e-6},
                                           FdCase{1, 7, 1e-5, true, 1e-6},
                                           FdCase{5, 8, 1e-5, true, 1e-6},
                                           FdCase{5, 8, 1e-5, false, 1e-6},
                                           FdCase{3, 6, 0.3, true, 1e-6},
                                           FdCase{9, 3, 1e-12, false, 1e-6}));

}  // namespace
}  // namespace scalelab
