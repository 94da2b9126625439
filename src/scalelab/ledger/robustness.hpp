// ledger/robustness: does a claim's verdict survive its own seeds' noise (docs/ledger.md, rule 6)?
//
// The claim is evaluated twice more on the same results, with every per-seed value its criteria
// decide on (stats.hpp, decide_by_seeds) moved by those values' own spread (max - min over seeds):
// once down, once up (SeedShift). A verdict whose kind or condition changes either way is
// marginal: the record says so, with what it would read.
//
// Decisions not made from seeds are not moved: closed forms checked against a Monte Carlo
// standard error (E1, A1), exact evaluations (E2's rows), single computed values.
#pragma once
#include "scalelab/ledger/claim.hpp"

namespace scalelab::ledger {

struct Robustness {
  Verdict original, moved_down, moved_up;
  bool flips = false;

  Json to_json() const;
  // " Marginal: with every seed moved up by its own spread, it reads "does not hold"." (each
  // direction that changes it) when it flips, "" otherwise.
  std::string sentence() const;
};

// `unevaluated`: the claim's run with its results delivered, before evaluate() (copied here, so
// the record built by the real evaluation is not touched). `verdict`: what that evaluation gave.
// `any_marginal_decision`: whether that evaluation made a marginal decision (stats.hpp,
// marginal_decisions_so_far); without one no decision can change, and the claim is not evaluated
// again (the moved verdicts are the verdict itself).
Robustness under_seed_noise(const Claim& claim, const ClaimRun& unevaluated, const Verdict& verdict,
                            bool any_marginal_decision = true);

}  // namespace scalelab::ledger
