// tests/support/finite_difference: central-difference gradient checks for explicit backwards.
//
// Usage (double precision):
//   auto loss = [&] { forward(...); return sum(dy_random * y); };    // reads the inputs afresh
//   backward(...) -> dx, dgamma, ...                                  // the analytic gradients
//   FdReport r = check_gradients(loss, {{x.data(), x.size(), "x", dx.data()},
//                                       {gamma.data(), gamma.size(), "gamma", dgamma.data()}});
//   EXPECT_LT(r.worst_rel_error, 1e-6) << r;
//
// For every scalar input x_i the numeric derivative is (L(x_i + e) - L(x_i - e)) / (2e) and the
// relative error is |analytic - numeric| / max(|analytic|, |numeric|, floor). The floor keeps
// gradients that are (correctly) zero from turning round-off noise of L into a huge "relative"
// error; it defaults to 1e-3 times the largest analytic gradient magnitude (at least 1e-8).
// Inputs are restored bit-exactly after each perturbation.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <limits>
#include <ostream>
#include <sstream>
#include <string>
#include <vector>

#include "scalelab/core/parallel.hpp"

namespace scalelab::testing {

// Sets the OpenMP thread count for a scope. A finite-difference check runs the forward twice per
// scalar on tiny tensors; with several threads on a loaded machine each parallel region can cost
// a scheduler quantum, so the checks run single-threaded (threading is covered by fast-vs-ref
// tests on larger shapes).
class ScopedThreads {
 public:
  explicit ScopedThreads(int n) : saved_(num_threads()) { set_num_threads(n); }
  ~ScopedThreads() { set_num_threads(saved_); }
  ScopedThreads(const ScopedThreads&) = delete;
  ScopedThreads& operator=(const ScopedThreads&) = delete;

 private:
  int saved_;
};

// One input tensor: where it lives, how many scalars, its name, and its analytic gradient.
struct FdInput {
  double* data = nullptr;
  int64_t count = 0;
  std::string name;
  const double* grad = nullptr;  // dL/d data, same count
};

struct FdOptions {
  double eps = 1e-6;
  double floor = -1;      // < 0: 1e-3 * max |analytic gradient| (at least 1e-8)
  bool print_all = false; // print one line per scalar (debugging)
};

struct FdReport {
  double worst_rel_error = 0;  // over all checked scalars
  double worst_abs_error = 0;
  std::string worst_name;      // input holding the worst scalar
  int64_t worst_index = -1;    // its flat index
  double worst_analytic = 0, worst_numeric = 0;
  int64_t checked = 0;         // number of scalars checked
  double floor = 0;            // denominator floor actually used
  bool finite = true;          // false if any loss or gradient was not finite

  std::string str() const {
    std::ostringstream out;
    out.precision(10);
    out << "finite differences: " << checked << " scalars, worst relative error " << worst_rel_error
        << " at " << worst_name << "[" << worst_index << "] (analytic " << worst_analytic
        << ", numeric " << worst_numeric << ", abs error " << worst_abs_error << ", floor " << floor
        << (finite ? "" : ", NON-FINITE values seen") << ")";
    return out.str();
  }
  friend std::ostream& operator<<(std::ostream& out, const FdReport& r) { return out << r.str(); }
};

// Checks every scalar of every input. The loss must recompute everything from the inputs.
inline FdReport check_gradients(const std::function<double()>& loss,
                                const std::vector<FdInput>& inputs, FdOptions opt = {}) {
  FdReport report;
  double max_grad = 0;
  for (const FdInput& in : inputs)
    for (int64_t i = 0; i < in.count; ++i) max_grad = std::max(max_grad, std::abs(in.grad[i]));
  report.floor = opt.floor >= 0 ? opt.floor : std::max(1e-3 * max_grad, 1e-8);
  for (const FdInput& in : inputs) {
    for (int64_t i = 0; i < in.count; ++i) {
      const double saved = in.data[i];
      in.data[i] = saved + opt.eps;
      const double plus = loss();
      in.data[i] = saved - opt.eps;
      const double minus = loss();
      in.data[i] = saved;
      const double numeric = (plus - minus) / (2 * opt.eps);
      const double analytic = in.grad[i];
      const double abs_err = std::abs(analytic - numeric);
      const double denom = std::max({std::abs(analytic), std::abs(numeric), report.floor});
      const double rel = abs_err / denom;
      ++report.checked;
      if (!std::isfinite(plus) || !std::isfinite(minus) || !std::isfinite(analytic)) {
        report.finite = false;
      }
      if (opt.print_all) {
        std::printf("  %s[%lld]: analytic %.12g numeric %.12g rel %.3g\n", in.name.c_str(),
                    static_cast<long long>(i), analytic, numeric, rel);
      }
      // NaN compares false, so a non-finite error always becomes the worst.
      if (report.worst_index < 0 || !(rel <= report.worst_rel_error)) {
        report.worst_rel_error = std::isfinite(rel) ? rel : std::numeric_limits<double>::infinity();
        report.worst_abs_error = abs_err;
        report.worst_name = in.name;
        report.worst_index = i;
        report.worst_analytic = analytic;
        report.worst_numeric = numeric;
      }
    }
  }
  if (!report.finite) report.worst_rel_error = std::numeric_limits<double>::infinity();
  return report;
}

// The usual random loss L = sum_i w_i y_i with fixed weights w (the "dy" fed to the backward).
inline double weighted_sum(const double* w, const double* y, int64_t n) {
  double acc = 0;
  for (int64_t i = 0; i < n; ++i) acc += w[i] * y[i];
  return acc;
}

}  // namespace scalelab::testing
