// ledger/robustness: a claim evaluated again with its seeds moved by their own spread. A verdict
// whose deciding values sit within that spread of a threshold flips and says "Marginal"; one far
// from it does not; the real evaluation's record is not touched by the moved evaluations.
#include "scalelab/ledger/robustness.hpp"

#include <gtest/gtest.h>

namespace scalelab::ledger {
namespace {

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// Arm a is judged by its seeds (below 4 meets the claim); arm b never meets it.
Claim claim_over(std::vector<double> arm_a) {
  Claim c;
  c.info = {"T1", "test", "a statement", "an experiment", "below 4"};
  c.plan = [](ClaimRun&) {};
  c.evaluate = [arm_a](ClaimRun& run) {
    run.fact("evaluated", true);
    const SeedDecision d = decide_by_seeds(arm_a, [](double x) { return x < 4.0; });
    return from_cases({Case{"arm a", d.vote.outcome, "a"}, Case{"arm b", Outcome::no, "b"}}, "Below 4", "arm");
  };
  return c;
}

Verdict evaluate(const Claim& c, ClaimRun& run) { return run.checked_for_lr_edges(c.evaluate(run)); }

TEST(Robustness, NearTheThresholdTheVerdictFlipsAndSaysMarginal) {
  const Claim c = claim_over({3.6, 3.82, 3.95});  // spread 0.35: moved up, 3.95 -> 4.30
  ClaimRun run(c.info, LedgerMode{});
  const ClaimRun unevaluated = run;
  const Verdict v = evaluate(c, run);
  ASSERT_EQ(v.kind, VerdictKind::holds_only_if);
  const Robustness r = under_seed_noise(c, unevaluated, v);
  EXPECT_TRUE(r.flips);
  EXPECT_EQ(r.moved_down.kind, VerdictKind::holds_only_if);  // further from the threshold: the same
  EXPECT_EQ(r.moved_up.kind, VerdictKind::does_not_hold);    // arm a's seeds disagree; b fails
  EXPECT_TRUE(contains(r.sentence(), "Marginal: with every seed moved up by its own spread, it reads \"does not hold\""))
      << r.sentence();
  EXPECT_FALSE(contains(r.sentence(), "moved down")) << r.sentence();
  EXPECT_EQ(r.to_json()["flips"], true);
  EXPECT_EQ(r.to_json()["moved_up"]["verdict"], "does not hold");
}

TEST(Robustness, FarFromTheThresholdNothingFlips) {
  const Claim c = claim_over({1.0, 1.1, 1.2});
  ClaimRun run(c.info, LedgerMode{});
  const ClaimRun unevaluated = run;
  const Verdict v = evaluate(c, run);
  const Robustness r = under_seed_noise(c, unevaluated, v);
  EXPECT_FALSE(r.flips);
  EXPECT_EQ(r.sentence(), "");
  EXPECT_EQ(r.moved_down.condition, v.condition);
  EXPECT_EQ(r.moved_up.condition, v.condition);
}

TEST(Robustness, MovedEvaluationsLeaveTheRecordAlone) {
  const Claim c = claim_over({3.6, 3.82, 3.95});
  ClaimRun run(c.info, LedgerMode{});
  const ClaimRun unevaluated = run;
  const Verdict v = evaluate(c, run);
  const Json before = run.to_json(v, 0.0);
  (void)under_seed_noise(c, unevaluated, v);
  EXPECT_EQ(run.to_json(v, 0.0), before);
  EXPECT_EQ(SeedShift::direction(), 0);  // no shift left behind
}

TEST(Robustness, AnEvaluationWithoutMarginalDecisionsIsNotRepeatedAndCannotFlip) {
  const Claim near = claim_over({3.6, 3.82, 3.95}), far = claim_over({1.0, 1.1, 1.2});
  for (const Claim* c : {&near, &far}) {
    ClaimRun run(c->info, LedgerMode{});
    const ClaimRun unevaluated = run;
    const int64_t before = marginal_decisions_so_far();
    const Verdict v = evaluate(*c, run);
    const bool any = marginal_decisions_so_far() > before;
    EXPECT_EQ(any, c == &near);
    // The shortcut gives what the full check gives.
    EXPECT_EQ(under_seed_noise(*c, unevaluated, v, any).flips, under_seed_noise(*c, unevaluated, v, true).flips);
  }
}

}  // namespace
}  // namespace scalelab::ledger
