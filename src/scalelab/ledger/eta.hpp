// ledger/eta: how long a check has left, calibrated from the runs it has done.
//
// A run's size is estimated in units (multiply-adds of its model and steps, check.cpp); what one
// unit costs in seconds differs by orders of magnitude between a training run and a probe run at
// initialisation (weights drawn, one batch), so the rate is measured per kind of run from the runs
// done so far, and applied to that kind's work still to do. Work not yet planned (the later rounds
// of learning-rate tuning) is added as an expectation and replaced by the real runs as they are
// planned.
#pragma once
#include <array>
#include <cstdint>
#include <vector>

#include "scalelab/ledger/runs.hpp"

namespace scalelab::ledger {

// A run's size in units (multiply-adds: forward and backward over its tokens for a training run,
// ×4 in an emulated 16-bit format; a probe's forward passes and initialisation). Only the ratio
// between two runs of one kind means anything: a unit's cost in seconds is measured (Eta, and the
// dry run's calibration).
double run_units(const RunSpec& spec);

// The order to run a round's runs in, as positions into `runs` (kind and units of each):
// within each kind the largest first (list scheduling, longest first: the round does not end on
// one long run while the other jobs idle), then training and probe runs alternating so that the
// ETA has measured both kinds' rates early. Runs of equal units keep their plan order.
struct RunSize {
  RunKind kind = RunKind::train;
  double units = 0;
};
std::vector<size_t> run_order(const std::vector<RunSize>& runs);

class Eta {
 public:
  // A run planned for this check (to do, not from the cache). `later_round`: a run of a round
  // after the first, which replaces part of the expected later work; the first round's runs do
  // not (they were never part of it, whenever expect_later is called).
  void planned(RunKind kind, double units, bool later_round);
  // Work expected in later rounds, not yet planned; each run planned in a later round draws it down.
  void expect_later(RunKind kind, double units);
  void done(RunKind kind, double units, double seconds);
  // Seconds left with `jobs` runs side by side; NaN before the first run is done.
  double remaining_seconds(int64_t jobs) const;

 private:
  struct PerKind {
    double done_units = 0, done_seconds = 0, todo_units = 0, later_units = 0;
  };
  std::array<PerKind, 2> kinds_{};  // RunKind::train, RunKind::probe
  PerKind& of(RunKind k) { return kinds_[k == RunKind::train ? 0 : 1]; }
};

}  // namespace scalelab::ledger
