// tests/support/planned_claim: plans a claim in quick mode and delivers every run it asks for
// (every round of learning-rate tuning, as the runner would) from a function of the arm and the
// run's spec, so that a test can evaluate a real claim on synthetic results.
#pragma once
#include <functional>

#include "scalelab/ledger/claim.hpp"

namespace scalelab::ledger::testing {

inline ClaimRun planned_and_delivered(const Claim& claim,
                                      const std::function<Json(const Arm&, const RunSpec&)>& result_of) {
  LedgerMode mode;
  mode.quick = true;
  ClaimRun run(claim.info, mode);
  claim.plan(run);
  for (Arm& arm : run.arms())
    for (int round = 0; round < 40; ++round) {
      const std::vector<RunSlot> want = arm.next_runs(true);
      if (want.empty()) break;
      for (const RunSlot& s : want) arm.deliver(s, result_of(arm, arm.spec_at(s)));
    }
  return run;
}

}  // namespace scalelab::ledger::testing
