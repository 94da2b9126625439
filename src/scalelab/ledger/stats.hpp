// ledger/stats: the few statistics the ledger's criteria use, over per-seed values.
//
//   Spread:        median, min, max (and n) of per-seed values. A failed value (a diverged run, a
//                  NaN or infinite measurement) is data: it ranks as the worst, +inf, and is counted
//   relative_spread: the seeds' own spread, (max - min) / |median|: the noise a difference is judged by
//   vote:          how many paired seeds are on the claim's side of a threshold
//   slope_loglog:  least-squares slope of log y on log x (the exponent of y ∝ x^k)
//   roughness:     mean |Δ² loss| of a curve, relative to its mean level: how much a loss curve
//                  oscillates beyond its trend (0 for a straight line)
//   steps_to:      the first step at which a curve reaches a target (-1 if never)
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace scalelab::ledger {

// The ledger ranks losses, steps and ratios where lower or higher may be worse, so a failed value
// is not guessed a side: it is +inf ("never reached", "diverged"), which every criterion reads as
// the failing side (criteria.hpp says so per threshold).
double failed_as_worst(double x);  // x if finite, +inf otherwise

struct Spread {
  double median = 0, min = 0, max = 0;  // over every value, failed ones as +inf
  int64_t n = 0;                        // values summarised (all of them)
  int64_t failed = 0;                   // non-finite values among them
};
Spread spread_of(const std::vector<double>& values);  // NaN summary only when empty
double median_of(std::vector<double> values);          // failed values as +inf; NaN when empty

// (max - min) / |median| of the values: the relative between-seed spread. +inf when a value failed
// or the median is 0; 0 for fewer than two values.
double relative_spread(const std::vector<double>& values);

// Paired seeds judged one by one against a criterion: `yes` when every seed meets it, `no` when
// none does, `undecided` when the seeds disagree (the effect is within the seeds' noise).
enum class Outcome { yes, no, undecided };
struct Vote {
  int64_t yes = 0, no = 0;
  Outcome outcome = Outcome::undecided;
  std::string text() const;  // "3 of 3 seeds"
};
// `meets` sees each value with infinities as +inf (a failed run of the arm under test: the worst
// value). A NaN is a seed that cannot support the claim (e.g. its baseline failed, so nothing can
// be shown relative to it): it counts as not meeting the criterion, whatever the criterion is.
Vote vote(const std::vector<double>& per_seed, const std::function<bool(double)>& meets);

// A case decided by its seeds (every criterion's per-seed decisions go through this): the vote, the
// seeds' own spread r (max - min of the finite values) and whether it is marginal, i.e. whether
// moving every finite value by -r or +r changes the outcome (the threshold is within the noise).
// Under a SeedShift (below) the values are first moved by direction * r.
struct SeedDecision {
  Vote vote;
  double spread = 0;
  bool marginal = false;
};
SeedDecision decide_by_seeds(const std::vector<double>& per_seed, const std::function<bool(double)>& meets);
// How many marginal decisions decide_by_seeds has made on this thread (never reset; compare before
// and after an evaluation). None in an evaluation means moving the seeds changes none of its
// decisions, so the moved evaluations would give the same verdict and need not run.
int64_t marginal_decisions_so_far();

// The perturbation check (docs/ledger.md, rule 6): while one is alive on this thread, every
// decide_by_seeds moves its values by direction (-1 or +1) times their own spread, so a claim
// evaluated again under it shows whether its verdict survives its seeds' noise.
class SeedShift {
 public:
  explicit SeedShift(int direction);
  ~SeedShift();
  SeedShift(const SeedShift&) = delete;
  SeedShift& operator=(const SeedShift&) = delete;
  static int direction();  // 0 when none is alive

 private:
  int previous_;
};

// Requires >= 2 points with x > 0, y > 0; throws Error otherwise.
double slope_loglog(const std::vector<double>& x, const std::vector<double>& y);
// Ordinary least squares y = a + b x: returns {a, b}.
std::pair<double, double> linear_fit(const std::vector<double>& x, const std::vector<double>& y);

// Curve points (step, value), in step order.
using Curve = std::vector<std::pair<double, double>>;
double roughness(const Curve& curve);
// First step whose value is <= target (after smoothing over `window` points); -1 if never.
double steps_to(const Curve& curve, double target, int64_t window = 3);
// Mean of the values over the last `fraction` of the curve's points (at least one point).
double tail_mean(const Curve& curve, double fraction = 0.2);

}  // namespace scalelab::ledger
