// ledger/criteria, the claims that train (E7-E12, A3, A4, A6, A7, A11, A12, B1-B4; A8 is a claim
// file judged by the format's criteria: builtin_claim_files_test.cpp): every criterion on
// synthetic per-seed measurements on both sides of each threshold (the named constants nudged by
// a relative 1e-6), and the rules of docs/ledger.md for each claim: data refuting it on every case
// give "does not hold" (never "holds only if"); data holding on exactly one case give "holds only
// if <that case>"; a failed baseline never makes a claim hold; seeds that disagree leave a case
// undecided ("not testable here").
#include "criteria_test_support.hpp"

namespace scalelab::ledger {
namespace {

using namespace criteria;
using namespace criteria_test;

// Three paired seeds whose test arm is `ratio` times the baseline's 2.0.
PairedRuns times(double ratio) { return {{2.0 * ratio, 2.0 * ratio, 2.0 * ratio}, {2.0, 2.0, 2.0}}; }
std::vector<double> three(double x) { return {x, x, x}; }

// ---- the paired helpers ------------------------------------------------------------------------

TEST(Paired, FailedTestIsInfiniteAndFailedBaselineIsNaN) {
  const PairedRuns p{{3.0, kNaN, 2.0, kNaN}, {2.0, 2.0, kInf, kNaN}};
  const auto r = paired_ratios(p);
  EXPECT_DOUBLE_EQ(r[0], 1.5);
  EXPECT_EQ(r[1], kInf);
  EXPECT_TRUE(std::isnan(r[2]));
  EXPECT_TRUE(std::isnan(r[3]));  // both failed: nothing can be shown against this baseline
  EXPECT_NEAR(paired_gaps({{2.1}, {2.0}})[0], 0.05, 1e-12);
  EXPECT_DOUBLE_EQ(paired_differences({{1.5}, {2.0}})[0], -0.5);
  EXPECT_THROW(paired_ratios({{1.0}, {1.0, 2.0}}), scalelab::Error);
}

TEST(Paired, TextNamesMedianRangeAndFailures) {
  const std::string t = per_seed_text({1.0, 2.0, kInf, kNaN});
  EXPECT_TRUE(contains(t, "over 4 seeds")) << t;
  EXPECT_TRUE(contains(t, "1 failed")) << t;
  EXPECT_TRUE(contains(t, "1 without a baseline")) << t;
}

TEST(SeedCase, SaysMarginalWhenTheSeedsOwnSpreadWouldChangeTheOutcome) {
  auto at_least_1_5 = [](double x) { return x >= 1.5; };
  // Decided (every seed >= 1.5) but the seeds spread 0.2 and the lowest sits 0.05 above.
  const Case near = seed_case("d_k = 64", {1.55, 1.75, 1.6}, at_least_1_5, "ratio");
  EXPECT_EQ(near.outcome, Outcome::yes);
  EXPECT_TRUE(contains(near.detail, "marginal")) << near.detail;
  // Far from the threshold: not marginal.
  const Case far = seed_case("d_k = 256", {3.0, 3.1, 3.2}, at_least_1_5, "ratio");
  EXPECT_EQ(far.outcome, Outcome::yes);
  EXPECT_FALSE(contains(far.detail, "marginal")) << far.detail;
  // The word reaches the claim's sentence.
  const Case within_3_percent = seed_case("d_k = 2", paired_gaps({{2.0, 2.0, 2.05}, {2.0, 2.0, 2.0}}),
                                          [](double g) { return g <= 0.03; }, "|final loss with / without - 1|", "%");
  EXPECT_TRUE(contains(from_cases({within_3_percent}, "Little difference", "d_k").sentence, "marginal"));
}

// ---- E7 ----------------------------------------------------------------------------------------

LearnedArm learned(const std::string& name, double loss_minus_fixed, double steps_ratio) {
  return {name, {three(3.0 + loss_minus_fixed), three(3.0)}, three(steps_ratio)};
}

TEST(LearnableScale, NotBetterAndSlowerOnEveryArmHolds) {
  const Verdict v = learnable_scale({learned("a", 0.0, above(kSlowerFactor)), learned("b", -below(kBetterMargin), 2.0)});
  EXPECT_EQ(v.kind, VerdictKind::holds) << v.sentence;
  ASSERT_EQ(v.parts.size(), 2u);
}

TEST(LearnableScale, BetterByMoreThanTheMarginDoesNotHold) {
  const Verdict v = learnable_scale({learned("a", -above(kBetterMargin), 2.0)});
  EXPECT_EQ(v.kind, VerdictKind::does_not_hold);
}

TEST(LearnableScale, SlowerOnOneArmOnlyHoldsOnlyIfThatArm) {
  const Verdict v = learnable_scale({learned("starts at sqrt(d)", 0.0, below(kSlowerFactor)), learned("starts at 1", 0.0, 1.5)});
  EXPECT_EQ(v.kind, VerdictKind::holds_only_if);
  EXPECT_EQ(v.condition, "starts at 1");
}

TEST(LearnableScale, NeverReachingTheTargetIsSlowerAndAFixedArmThatNeverDidCannotTime) {
  EXPECT_EQ(learnable_scale({learned("a", 0.0, kInf)}).kind, VerdictKind::holds);
  const Verdict v = learnable_scale({learned("a", 0.0, kNaN)});  // the fixed arm never reached its target
  EXPECT_EQ(v.kind, VerdictKind::does_not_hold) << v.sentence;
}

TEST(LearnableScale, SeedsThatDisagreeAreNotTestable) {
  LearnedArm a = learned("a", 0.0, 2.0);
  a.steps_ratio = {2.0, 1.0, 2.0};
  EXPECT_EQ(learnable_scale({a}).kind, VerdictKind::not_testable);
}

TEST(LearnableScale, ThrowsWithoutLearnedArms) { EXPECT_THROW(learnable_scale({}), scalelab::Error); }

// ---- E8, A11 -----------------------------------------------------------------------------------

Equivalence eq(const std::string& s, double init, double gap) { return {s, three(init), three(gap)}; }

TEST(Reparametrisation, BothJustInsideHolds) {
  EXPECT_EQ(reparametrisation({eq("Adam", kInitEqualRel, kTrainEqualRel)}, "X").kind, VerdictKind::holds);
}

TEST(Reparametrisation, TrainingGapJustAboveEverywhereDoesNotHold) {
  const Verdict v = reparametrisation({eq("Adam", 0.0, above(kTrainEqualRel)), eq("SGD", 0.0, 0.1)}, "X");
  EXPECT_EQ(v.kind, VerdictKind::does_not_hold);
}

TEST(Reparametrisation, EquivalentInOneSettingHoldsOnlyIfThatSetting) {
  const Verdict v = reparametrisation({eq("Adam", 0.0, 0.01), eq("SGD", 0.0, 0.1)}, "X");
  EXPECT_EQ(v.kind, VerdictKind::holds_only_if);
  EXPECT_EQ(v.condition, "Adam");
}

TEST(Reparametrisation, InitMismatchInOneSettingAndTrainingInTheOtherMeetNowhere) {
  const Verdict v = reparametrisation({eq("Adam", above(kInitEqualRel), 0.0), eq("SGD", 0.0, 0.1)}, "X");
  EXPECT_EQ(v.kind, VerdictKind::does_not_hold) << v.sentence;
}

TEST(Reparametrisation, AFailedRunIsNotEquivalent) {
  Equivalence e = eq("Adam", 0.0, 0.0);
  e.train_gap = {kInf, kInf, kInf};
  EXPECT_EQ(reparametrisation({e}, "X").kind, VerdictKind::does_not_hold);
}

TEST(Reparametrisation, ThrowsWithoutSettings) { EXPECT_THROW(reparametrisation({}, "X"), scalelab::Error); }

// ---- E9 ----------------------------------------------------------------------------------------

TEST(LayernormAbsorbs, HoldsOnlyWithoutAddedPositions) {
  const Verdict v = layernorm_absorbs({{"RoPE", three(below(kAbsorbedRel)), three(0.0)},
                                       {"sinusoidal added", three(0.3), three(0.05)}});
  EXPECT_EQ(v.kind, VerdictKind::holds_only_if);
  EXPECT_EQ(v.condition, "RoPE");
  EXPECT_EQ(layernorm_absorbs({{"RoPE", three(above(kAbsorbedRel)), three(0.0)}}).kind, VerdictKind::does_not_hold);
  EXPECT_EQ(layernorm_absorbs({{"RoPE", three(0.0), three(0.0)}}).kind, VerdictKind::holds);
}

// ---- E10 ---------------------------------------------------------------------------------------

TEST(RemovalOscillates, BothPartsMustHold) {
  EXPECT_EQ(removal_oscillates("m", three(kGradRatio), three(kRoughnessRatio)).kind, VerdictKind::holds);
  const Verdict grads_only = removal_oscillates("m", three(kGradRatio), three(below(kRoughnessRatio)));
  EXPECT_EQ(grads_only.kind, VerdictKind::does_not_hold);  // no "one reads it as" condition any more
  EXPECT_TRUE(contains(grads_only.sentence, "The part that fails: oscillation")) << grads_only.sentence;
  EXPECT_EQ(removal_oscillates("m", three(below(kGradRatio)), three(2.0)).kind, VerdictKind::does_not_hold);
  EXPECT_EQ(removal_oscillates("m", {3.5, 1.0, 3.5}, three(2.0)).kind, VerdictKind::not_testable);
}

// ---- E11 ---------------------------------------------------------------------------------------

TEST(RopeRmsnormInvariance, HoldsOnlyIfAtTheScalesWhereTheVarianceDidNotMove) {
  const Verdict v = rope_rmsnorm_invariance({{"s = 1/d", three(0.5)}, {"s = sqrt(d)", three(1.0 + below(kInvariantRel))}},
                                            "train", three(0.0));
  EXPECT_EQ(v.kind, VerdictKind::holds_only_if);
  EXPECT_EQ(v.condition, "s = sqrt(d)");
  EXPECT_EQ(rope_rmsnorm_invariance({{"s = 1/d", three(0.5)}}, "train", three(0.0)).kind, VerdictKind::does_not_hold);
}

TEST(RopeRmsnormInvariance, TheTrainingArmsAreJudged) {
  const Verdict v = rope_rmsnorm_invariance({{"s = sqrt(d)", three(1.0)}}, "train", three(above(kTrainEqualRel)));
  EXPECT_EQ(v.kind, VerdictKind::does_not_hold);
  ASSERT_EQ(v.parts.size(), 2u);
  EXPECT_EQ(v.parts[1].verdict.kind, VerdictKind::does_not_hold);
}

// ---- E12 ---------------------------------------------------------------------------------------

TEST(ExtremeScales, EachClauseIsAPart) {
  EXPECT_EQ(extreme_scales(times(kBrokenFactor), times(2.0)).kind, VerdictKind::holds);
  const Verdict one = extreme_scales(times(kBrokenFactor), times(below(kBrokenFactor)));
  EXPECT_EQ(one.kind, VerdictKind::does_not_hold);
  EXPECT_TRUE(contains(one.sentence, "÷d")) << one.sentence;
}

TEST(ExtremeScales, ADivergedArmIsBrokenButADivergedBaselineShowsNothing) {
  EXPECT_EQ(extreme_scales({three(kNaN), three(2.0)}, times(2.0)).kind, VerdictKind::holds);
  EXPECT_EQ(extreme_scales({three(kNaN), three(kNaN)}, times(2.0)).kind, VerdictKind::does_not_hold);
}

// ---- A3 ----------------------------------------------------------------------------------------

DkCase dk_case(int64_t dk, double entropy, double ratio) { return {dk, three(entropy), times(ratio)}; }

TEST(InvDkUnusable, UniformAndBrokenAtEveryDkHolds) {
  EXPECT_EQ(inv_dk_unusable({dk_case(16, kNearUniformEntropy, kBrokenFactor)}).kind, VerdictKind::holds);
}

TEST(InvDkUnusable, UsableEverywhereDoesNotHoldNamingTheRange) {
  const Verdict v = inv_dk_unusable({dk_case(16, 0.95, 1.06), dk_case(64, 0.97, 0.9)});
  EXPECT_EQ(v.kind, VerdictKind::does_not_hold);
  EXPECT_TRUE(contains(v.sentence, "d_k = 16 and d_k = 64")) << v.sentence;
}

TEST(InvDkUnusable, BrokenAtOneDkHoldsOnlyIfThatDk) {
  const Verdict v = inv_dk_unusable({dk_case(16, 0.95, 1.0), dk_case(256, 0.99, above(kBrokenFactor))});
  EXPECT_EQ(v.kind, VerdictKind::holds_only_if);
  EXPECT_EQ(v.condition, "d_k = 256");
}

TEST(InvDkUnusable, NotUniformAtInitFailsTheFirstClause) {
  EXPECT_EQ(inv_dk_unusable({dk_case(16, below(kNearUniformEntropy), 2.0)}).kind, VerdictKind::does_not_hold);
}

TEST(InvDkUnusable, ABaselineThatDivergedNeverMakesItHold) {
  DkCase c = dk_case(16, 0.95, 2.0);
  c.loss.base = three(kNaN);
  EXPECT_EQ(inv_dk_unusable({c}).kind, VerdictKind::does_not_hold);
  c.loss.base = {kNaN, 2.0, 2.0};  // one of three: that seed votes against
  EXPECT_EQ(inv_dk_unusable({c}).kind, VerdictKind::not_testable);
}

// ---- A4 ----------------------------------------------------------------------------------------

SaturationCase sat(int64_t dk, double share, double jac, double ratio) { return {dk, three(share), three(jac), times(ratio)}; }

TEST(NoScaleSaturates, AllThreePartsAtOneDkOnly) {
  const Verdict v = no_scale_saturates({sat(16, 0.1, 0.8, 1.0), sat(256, kSaturatedShare, 1.0 / kVanishFactor, kBrokenFactor)});
  EXPECT_EQ(v.kind, VerdictKind::holds_only_if);
  EXPECT_EQ(v.condition, "d_k = 256");
  ASSERT_EQ(v.parts.size(), 3u);
}

TEST(NoScaleSaturates, SaturatedButTrainingFineDoesNotHold) {
  EXPECT_EQ(no_scale_saturates({sat(256, 0.9, 0.01, below(kBrokenFactor))}).kind, VerdictKind::does_not_hold);
}

TEST(NoScaleSaturates, PartsHoldingAtDifferentDkMeetNowhere) {
  const Verdict v = no_scale_saturates({sat(16, 0.9, 0.01, 1.0), sat(64, 0.1, 0.01, 2.0)});
  EXPECT_EQ(v.kind, VerdictKind::does_not_hold) << v.sentence;
}

TEST(NoScaleSaturates, GradientsThatDoNotVanishFailThatPart) {
  const Verdict v = no_scale_saturates({sat(256, 0.9, above(1.0 / kVanishFactor), 2.0)});
  EXPECT_EQ(v.kind, VerdictKind::does_not_hold);
  EXPECT_EQ(v.parts[1].verdict.kind, VerdictKind::does_not_hold);
}

// ---- A6 ----------------------------------------------------------------------------------------

TEST(GradientDrop, BothPartsAndTheDirectionIsSaid) {
  EXPECT_EQ(gradient_drop({{64, three(kDropFactor), three(kNoFallFraction)}}).kind, VerdictKind::holds);
  const Verdict larger = gradient_drop({{64, three(1.0 / 5.8), three(0.5)}});
  EXPECT_EQ(larger.kind, VerdictKind::does_not_hold);
  EXPECT_TRUE(contains(larger.sentence, "5.8x larger, not smaller")) << larger.sentence;
}

TEST(GradientDrop, HoldsOnlyIfAtTheDkWhereBothHeld) {
  const Verdict v = gradient_drop({{16, three(2.0), three(0.5)}, {256, three(20.0), three(0.95)}});
  EXPECT_EQ(v.kind, VerdictKind::holds_only_if);
  EXPECT_EQ(v.condition, "d_k = 256");
}

// ---- A7 ----------------------------------------------------------------------------------------

TEST(WrongScaleFails, BrokenOrRoughAndTheBaselineMustHaveTrained) {
  EXPECT_EQ(wrong_scale_fails("d_k 256", times(kBrokenFactor), three(1.0)).kind, VerdictKind::holds);
  EXPECT_EQ(wrong_scale_fails("d_k 256", times(1.0), three(kRougherFactor)).kind, VerdictKind::holds);
  EXPECT_EQ(wrong_scale_fails("d_k 256", times(below(kBrokenFactor)), three(below(kRougherFactor))).kind,
            VerdictKind::does_not_hold);
  // "A7 holds when the baseline diverges" was the old reading: now those seeds vote against.
  EXPECT_EQ(wrong_scale_fails("d_k 256", {three(kNaN), three(kNaN)}, three(kNaN)).kind, VerdictKind::does_not_hold);
  EXPECT_THROW(wrong_scale_fails("x", times(1.0), {1.0}), scalelab::Error);
}

// ---- A12 ---------------------------------------------------------------------------------------

TEST(SlowerTraining, AlwaysNotTestableWithTheRatioOrNever) {
  EXPECT_EQ(slower_training(2.4, 64).kind, VerdictKind::not_testable);
  EXPECT_TRUE(contains(slower_training(kInf, 64).sentence, "never reached"));
  EXPECT_TRUE(contains(slower_training(2.4, 64).sentence, "2.4x"));
}

// ---- B1 ----------------------------------------------------------------------------------------

TEST(WarmupNeeded, ThreePartsEachJudged) {
  WarmupRuns r{times(kNeedsWarmup), times(below(kNeedsWarmup)), three(1.0)};
  EXPECT_EQ(warmup_needed(r).kind, VerdictKind::holds);
  r.pre = times(kNeedsWarmup);
  EXPECT_EQ(warmup_needed(r).kind, VerdictKind::does_not_hold);  // Pre-LN needed it too
  r = {times(below(kNeedsWarmup)), times(1.0), three(1.0)};
  const Verdict neither = warmup_needed(r);
  EXPECT_EQ(neither.kind, VerdictKind::does_not_hold);  // no "at a higher learning rate" guess
  EXPECT_TRUE(neither.condition.empty());
  r = {times(2.0), times(1.0), {1.0, 0.0, 1.0}};
  EXPECT_EQ(warmup_needed(r).kind, VerdictKind::not_testable);
}

TEST(WarmupNeeded, ADivergedRunWithoutWarmupNeedsIt) {
  WarmupRuns r{{three(kNaN), three(2.0)}, times(1.0), three(1.0)};
  EXPECT_EQ(warmup_needed(r).kind, VerdictKind::holds);
}

// ---- B2 ----------------------------------------------------------------------------------------

TEST(LogitGrowth, GrowthOnlyAtTheHigherRateIsItsCondition) {
  const Verdict v = logit_growth({{"lr = 5x", three(below(kGrowth))}, {"lr = 10x", three(kGrowth)}},
                                 {{"QK-norm", three(0.2)}});
  EXPECT_EQ(v.kind, VerdictKind::holds_only_if);
  EXPECT_EQ(v.condition, "lr = 10x");
}

TEST(LogitGrowth, NoGrowthAnywhereDoesNotHold) {
  const Verdict v = logit_growth({{"lr = 5x", three(1.2)}}, {{"QK-norm", three(0.2)}});
  EXPECT_EQ(v.kind, VerdictKind::does_not_hold);
  EXPECT_TRUE(v.condition.empty());
}

TEST(LogitGrowth, ControlsAreCases) {
  const Verdict v = logit_growth({{"lr = 5x", three(4.0)}}, {{"QK-norm", three(kBounded)}, {"soft-cap", three(above(kBounded))}});
  EXPECT_EQ(v.kind, VerdictKind::holds_only_if);
  EXPECT_EQ(v.condition, "QK-norm");
  EXPECT_EQ(logit_growth({{"lr = 5x", three(kInf)}}, {{"QK-norm", three(0.1)}}).kind, VerdictKind::holds);
}

// ---- B3 ----------------------------------------------------------------------------------------

TEST(MupTransfer, SpanIsInX2Steps) {
  EXPECT_DOUBLE_EQ(lr_span_steps({1e-3, 4e-3, 2e-3}), 2.0);
  EXPECT_DOUBLE_EQ(lr_span_steps({1e-3}), 0.0);
}

TEST(MupTransfer, HoldsOnlyIfInTheSettingWhereMupStaysAndSpMoves) {
  const Verdict v = mup_transfer({{"d_k fixed", {1e-3, 1e-3}, {1e-3, 1e-3}, true},
                                  {"d_k grows", {2e-3, 4e-3}, {4e-3, 1e-3}, true}});
  EXPECT_EQ(v.kind, VerdictKind::holds_only_if);
  EXPECT_EQ(v.condition, "d_k grows");
}

TEST(MupTransfer, AnOptimumOnTheGridsEdgeIsUndecided) {
  EXPECT_EQ(mup_transfer({{"d_k grows", {1e-2, 1e-2}, {4e-3, 1e-3}, false}}).kind, VerdictKind::not_testable);
}

TEST(MupTransfer, MupMovingDoesNotHold) {
  EXPECT_EQ(mup_transfer({{"x", {1e-3, 4e-3}, {1e-3, 8e-3}, true}}).kind, VerdictKind::does_not_hold);
}

// ---- B4 ----------------------------------------------------------------------------------------

TEST(LossScalingNeeded, BothPartsAndFailures) {
  EXPECT_EQ(loss_scaling_needed("m", times(1.0 + kFp16Tolerance + 1e-9), times(1.0)).kind, VerdictKind::holds);
  const Verdict without_it_fine = loss_scaling_needed("m", times(1.01), times(1.0));
  EXPECT_EQ(without_it_fine.kind, VerdictKind::does_not_hold);  // no "gradients are small enough" guess
  EXPECT_TRUE(without_it_fine.condition.empty());
  EXPECT_EQ(loss_scaling_needed("m", {three(kNaN), three(2.0)}, times(1.0)).kind, VerdictKind::holds);
  EXPECT_EQ(loss_scaling_needed("m", times(1.2), {three(kNaN), three(2.0)}).kind, VerdictKind::does_not_hold);
}

}  // namespace
}  // namespace scalelab::ledger
