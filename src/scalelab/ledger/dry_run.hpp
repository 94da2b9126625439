// ledger/dry_run: `scalelab check --dry-run`: the runs the selected claims would do, counted as
// the runner counts them (one per distinct run), and an estimated time, writing nothing. The time
// is each run's size (eta.hpp, run_units) times what a unit costs on this CPU, measured by a few
// short runs in memory (a second or a few).
//
// Arms at a fixed setting and the first round of every learning-rate sweep are known exactly. A
// tuned arm's later runs depend on the rate its sweep picks (lr_tuning.hpp): every other seed at
// the chosen rate and at the shared rate, one set when they coincide, so the total is a range;
// a sweep whose best rate is on the grid's edge grows the grid and adds runs beyond it.
#pragma once
#include <cstdint>
#include <iosfwd>

#include "scalelab/ledger/check.hpp"

namespace scalelab::ledger {

struct DryRun {
  int64_t claims = 0;
  int64_t first_round = 0;          // distinct runs known before any result
  int64_t first_round_cached = 0;   // of which already in --out's cache
  int64_t later_min = 0, later_max = 0;  // the tuned arms' runs at their chosen and shared rates
  double seconds_min = 0, seconds_max = 0;  // estimated, at `jobs` runs side by side
  int64_t jobs = 1;
};

// Plans the selected claims (user claim files validated: Error as run_check) and counts their
// runs; prints one line per arm and a total to `out`.
DryRun dry_run(const CheckOptions& options, std::ostream& out);

}  // namespace scalelab::ledger
