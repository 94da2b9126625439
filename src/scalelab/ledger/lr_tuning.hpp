// ledger/lr_tuning: every training arm compared at its own best learning rate (docs/ledger.md,
// "Learning rates").
//
// Changing a scale changes the learning rate that works, so a comparison at one shared rate
// measures learning-rate sensitivity as much as the scale. A tuned arm therefore:
//   1. trains seed 1 at each rate of a geometric grid around the ledger's shared rate r0:
//      full {r0, 2 r0, 4 r0}, quick {r0/2, r0, 2 r0} (x2 steps);
//   2. takes the rate with the lowest final valid loss (a diverged run ranks +inf; ties go to the
//      lower rate). A best rate on the grid's edge is not an optimum: the grid grows one x2 step
//      past that edge, up to kMaxExtensions times and within [kMinLr, kMaxLr]; where it cannot, the
//      choice is recorded as not interior and the claims read such an arm as "not testable here";
//   3. trains every seed at the chosen rate (the arm's results) and at the shared rate (the
//      "sensitivity" record, the comparison as it was before tuning).
// The arms' runs are ordinary runs (their config carries the rate), so the cache keeps them all.
#pragma once
#include <map>
#include <optional>
#include <vector>

namespace scalelab::ledger {

inline constexpr double kLrStep = 2.0;
inline constexpr int kMaxExtensions = 3;
inline constexpr double kMinLr = 1e-5, kMaxLr = 10.0;  // SGD arms start at 0.1

// The starting grid around `shared` (sorted ascending; contains `shared`).
std::vector<double> lr_grid(double shared, bool quick);

struct LrChoice {
  double best = 0;        // the rate with the lowest loss so far
  bool interior = false;  // a rate below and above it were tried and are worse
  std::optional<double> extend;  // the next rate to try (best is on an edge and the grid may grow)
};
// `loss` holds one loss per tried rate (non-finite = diverged, ranks worst); `extensions` is how
// many rates were already added to the starting grid. Throws Error when `loss` is empty.
LrChoice choose_lr(const std::map<double, double>& loss, int extensions);

}  // namespace scalelab::ledger
