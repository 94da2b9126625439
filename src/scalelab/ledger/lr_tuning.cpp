#include "scalelab/ledger/lr_tuning.hpp"

#include <cmath>

#include "scalelab/core/error.hpp"
#include "scalelab/ledger/stats.hpp"

namespace scalelab::ledger {

std::vector<double> lr_grid(double shared, bool quick) {
  SL_CHECK(shared > 0 && std::isfinite(shared), "lr_grid: shared rate ", shared, " is not positive");
  if (quick) return {shared / kLrStep, shared, shared * kLrStep};
  // Full mode starts where the arms' best rates fell in the full run of 2026-12-04: at 2x or 4x
  // the shared rate for 36 of its 53 tuned arms. The grid still grows past an edge, so the choice
  // does not depend on where it starts; starting there costs 208 sweep runs instead of 276.
  return {shared, shared * kLrStep, shared * kLrStep * kLrStep};
}

LrChoice choose_lr(const std::map<double, double>& loss, int extensions) {
  SL_CHECK(!loss.empty(), "choose_lr: no rate was tried");
  LrChoice c;
  double best_loss = INFINITY;
  bool any = false;
  for (const auto& [rate, l] : loss) {  // ascending rate: a tie keeps the lower rate
    const double v = failed_as_worst(l);
    if (!any || v < best_loss) c.best = rate, best_loss = v, any = true;
  }
  const bool lowest = c.best == loss.begin()->first, highest = c.best == loss.rbegin()->first;
  // Every rate diverged: no optimum to speak of; try lower ones.
  const bool all_failed = !std::isfinite(best_loss);
  c.interior = !lowest && !highest && !all_failed;
  if (c.interior || extensions >= kMaxExtensions) return c;
  const double next = (lowest || all_failed) ? loss.begin()->first / kLrStep : loss.rbegin()->first * kLrStep;
  if (next >= kMinLr && next <= kMaxLr) c.extend = next;
  return c;
}

}  // namespace scalelab::ledger
