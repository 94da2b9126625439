#include "scalelab/ledger/eta.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace scalelab::ledger {

void Eta::planned(RunKind kind, double units) {
  PerKind& k = of(kind);
  k.todo_units += units;
  k.later_units = std::max(0.0, k.later_units - units);
}

void Eta::expect_later(RunKind kind, double units) { of(kind).later_units += units; }

void Eta::done(RunKind kind, double units, double seconds) {
  PerKind& k = of(kind);
  k.done_units += units;
  k.done_seconds += seconds;
  k.todo_units = std::max(0.0, k.todo_units - units);
}

double Eta::remaining_seconds(int64_t jobs) const {
  // Seconds per unit of each kind; a kind with no run done yet borrows the other's rate.
  double rate[2];
  double any_units = 0, any_seconds = 0;
  for (const PerKind& k : kinds_) any_units += k.done_units, any_seconds += k.done_seconds;
  if (any_units <= 0) return std::numeric_limits<double>::quiet_NaN();
  for (int i = 0; i < 2; ++i)
    rate[i] = kinds_[i].done_units > 0 ? kinds_[i].done_seconds / kinds_[i].done_units : any_seconds / any_units;
  double seconds = 0;
  for (int i = 0; i < 2; ++i) seconds += (kinds_[i].todo_units + kinds_[i].later_units) * rate[i];
  return seconds / double(std::max<int64_t>(1, jobs));
}

}  // namespace scalelab::ledger
