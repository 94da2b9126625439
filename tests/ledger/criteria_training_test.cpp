// ledger/criteria, the claims that train (E7-E12, A3, A4, A6-A8, A11, A12, B1-B4): every criterion evaluated on synthetic
// measurements on both sides of every threshold it uses (the named constants, nudged by a relative
// 1e-6), and every verdict a function can return reached at least once.
#include "criteria_test_support.hpp"

namespace scalelab::ledger {
namespace {

using namespace criteria;
using namespace criteria_test;
const ConvergenceArm kFixed{"fixed", 3.0, 1000.0};

TEST(LearnableScale, BetterByMoreThanTheMarginDoesNotHold) {
  const Verdict v = learnable_scale(kFixed, {{"learned", kFixed.final_loss - above(kBetterMargin), 2000.0}});
  EXPECT_EQ(v.kind, VerdictKind::does_not_hold);
}

TEST(LearnableScale, BetterByLessThanTheMarginAndNotSlowerHoldsOnlyIf) {
  const Verdict v = learnable_scale(kFixed, {{"learned", kFixed.final_loss - below(kBetterMargin), 1000.0}});
  EXPECT_EQ(v.kind, VerdictKind::holds_only_if);
  EXPECT_FALSE(v.condition.empty());
}

TEST(LearnableScale, SlowerFactorBothSides) {
  const double steps = kFixed.steps_to_target;
  EXPECT_EQ(learnable_scale(kFixed, {{"learned", 3.0, above(kSlowerFactor) * steps}}).kind, VerdictKind::holds);
  EXPECT_EQ(learnable_scale(kFixed, {{"learned", 3.0, below(kSlowerFactor) * steps}}).kind,
            VerdictKind::holds_only_if);
}

TEST(LearnableScale, NeverReachingTheTargetIsSlower) {
  const Verdict v = learnable_scale(kFixed, {{"learned", 3.0, 1000.0}, {"learned-per-layer", 3.05, -1.0}});
  EXPECT_EQ(v.kind, VerdictKind::holds);
  EXPECT_TRUE(contains(v.sentence, "learned-per-layer: final loss " + fmt(3.05) + ", steps to target never"))
      << v.sentence;
}

TEST(LearnableScale, SlowerIsUndefinedWhenTheFixedArmNeverReachesItsTarget) {
  const ConvergenceArm never{"fixed", 3.0, -1.0};
  // Neither a learned arm that never reaches it nor one that reaches it late counts as slower.
  const Verdict both_never = learnable_scale(never, {{"learned", 3.0, -1.0}});
  EXPECT_EQ(both_never.kind, VerdictKind::holds_only_if);
  EXPECT_TRUE(contains(both_never.sentence, "Fixed sqrt(d): final loss " + fmt(3.0) + ", steps to target never"))
      << both_never.sentence;
  EXPECT_EQ(learnable_scale(never, {{"learned", 3.0, 5000.0}}).kind, VerdictKind::holds_only_if);
  // "Better" is still decided.
  EXPECT_EQ(learnable_scale(never, {{"learned", 3.0 - above(kBetterMargin), -1.0}}).kind,
            VerdictKind::does_not_hold);
}

TEST(LearnableScale, SlowerIsExactlyAtTheFactorAndFasterIsNot) {
  EXPECT_EQ(learnable_scale(kFixed, {{"learned", 3.0, kSlowerFactor * kFixed.steps_to_target}}).kind,
            VerdictKind::holds);
  EXPECT_EQ(learnable_scale(kFixed, {{"learned", 3.0, 500.0}}).kind, VerdictKind::holds_only_if);
}

TEST(LearnableScale, ThrowsWithoutLearnedArms) { EXPECT_THROW(learnable_scale(kFixed, {}), scalelab::Error); }

TEST(LearnableScale, BetterWinsOverSlower) {
  EXPECT_EQ(learnable_scale(kFixed, {{"learned", 2.5, -1.0}}).kind, VerdictKind::does_not_hold);
}

TEST(Reparametrisation, HoldsWhenBothDiffsJustInside) {
  const Verdict v = reparametrisation({{"Adam, untied", below(kInitEqualRel), below(kTrainEqualRel)},
                                       {"SGD, tied", 0.0, 0.0}},
                                      "Scaling W_E");
  EXPECT_EQ(v.kind, VerdictKind::holds);
  EXPECT_TRUE(contains(v.sentence, "Scaling W_E")) << v.sentence;
}

TEST(Reparametrisation, InitDiffJustAboveDoesNotHold) {
  EXPECT_EQ(reparametrisation({{"Adam", above(kInitEqualRel), 0.0}}, "X").kind, VerdictKind::does_not_hold);
}

TEST(Reparametrisation, TrainDiffJustAboveHoldsOnlyAtInit) {
  const Verdict v = reparametrisation({{"Adam", 0.0, above(kTrainEqualRel)}}, "X");
  EXPECT_EQ(v.kind, VerdictKind::holds_only_if);
  EXPECT_TRUE(contains(v.condition, "at initialisation")) << v.condition;
}

TEST(Reparametrisation, SomeSettingsEquivalentHoldsOnlyIfThoseSettings) {
  const Verdict v = reparametrisation({{"SGD, tied", 0.0, 0.001}, {"Adam, untied", 0.0, 0.2}}, "X");
  EXPECT_EQ(v.kind, VerdictKind::holds_only_if);
  EXPECT_TRUE(contains(v.condition, "SGD, tied")) << v.condition;
  EXPECT_FALSE(contains(v.condition, "Adam")) << v.condition;
}

TEST(Reparametrisation, InitDiffExactlyAtThresholdIsEqual) {
  EXPECT_EQ(reparametrisation({{"Adam", kInitEqualRel, kTrainEqualRel}}, "X").kind, VerdictKind::holds);
}

TEST(Reparametrisation, ThrowsWithoutSettings) { EXPECT_THROW(reparametrisation({}, "X"), scalelab::Error); }

TEST(LayernormAbsorbs, HoldsJustInsideBothThresholds) {
  EXPECT_EQ(layernorm_absorbs({{"none", below(kAbsorbedRel), below(kTrainEqualRel)}}).kind, VerdictKind::holds);
  EXPECT_EQ(layernorm_absorbs({{"none", kAbsorbedRel, kTrainEqualRel}}).kind, VerdictKind::holds);
}

TEST(LayernormAbsorbs, InitBoundIsTheAbsorbedBoundNotExactEquality) {
  static_assert(kAbsorbedRel == 1e-3);
  // 1e-4 is far above kInitEqualRel (1e-5) but within the norm's eps allowance.
  EXPECT_EQ(layernorm_absorbs({{"rope", 1e-4, 0.0}}).kind, VerdictKind::holds);
  EXPECT_EQ(layernorm_absorbs({{"rope", above(kInitEqualRel), 0.0}}).kind, VerdictKind::holds);
}

TEST(LayernormAbsorbs, EitherDiffJustAboveDoesNotHold) {
  EXPECT_EQ(layernorm_absorbs({{"none", above(kAbsorbedRel), 0.0}}).kind, VerdictKind::does_not_hold);
  EXPECT_EQ(layernorm_absorbs({{"none", 0.0, above(kTrainEqualRel)}}).kind, VerdictKind::does_not_hold);
}

TEST(LayernormAbsorbs, ThrowsWithoutCases) { EXPECT_THROW(layernorm_absorbs({}), scalelab::Error); }

TEST(LayernormAbsorbs, HoldsOnlyIfWithoutAddedPositions) {
  const Verdict v = layernorm_absorbs({{"none", 0.0, 0.001}, {"sinusoidal", 0.3, 0.05}});
  EXPECT_EQ(v.kind, VerdictKind::holds_only_if);
  EXPECT_TRUE(contains(v.condition, "none positions")) << v.condition;
  EXPECT_TRUE(contains(v.sentence, "sinusoidal positions")) << v.sentence;
}

TEST(RemovalOscillates, AllFourBranchesAndBothThresholds) {
  const double g_in = above(kGradRatio), g_out = below(kGradRatio);
  const double r_in = above(kRoughnessRatio), r_out = below(kRoughnessRatio);
  EXPECT_EQ(removal_oscillates(g_in, r_in).kind, VerdictKind::holds);
  const Verdict grads_only = removal_oscillates(g_in, r_out);
  EXPECT_EQ(grads_only.kind, VerdictKind::holds_only_if);
  EXPECT_TRUE(contains(grads_only.condition, "gradient norms only")) << grads_only.condition;
  const Verdict rough_only = removal_oscillates(g_out, r_in);
  EXPECT_EQ(rough_only.kind, VerdictKind::holds_only_if);
  EXPECT_TRUE(contains(rough_only.condition, "oscillation only")) << rough_only.condition;
  EXPECT_EQ(removal_oscillates(g_out, r_out).kind, VerdictKind::does_not_hold);
  EXPECT_EQ(removal_oscillates(kGradRatio, kRoughnessRatio).kind, VerdictKind::holds);
}

TEST(RemovalOscillates, SentenceCarriesBothRatios) {
  const Verdict v = removal_oscillates(12.5, 0.8);
  EXPECT_NE(v.sentence.find(fmt(12.5) + "x"), std::string::npos) << v.sentence;
  EXPECT_NE(v.sentence.find(fmt(0.8) + "x"), std::string::npos) << v.sentence;
}

TEST(RopeRmsnormInvariance, HoldsJustInsideThreshold) {
  EXPECT_EQ(rope_rmsnorm_invariance({{"1", 0.0, 1.0}, {"sqrt_d", below(kInvariantRel), 8.0}}, 1e-6).kind,
            VerdictKind::holds);
}

TEST(RopeRmsnormInvariance, HoldsOnlyIfWhenASmallScaleIsJustOutside) {
  const Verdict v = rope_rmsnorm_invariance({{"1", 0.0, 1.0}, {"1/d", above(kInvariantRel), 0.002}}, 1e-5);
  EXPECT_EQ(v.kind, VerdictKind::holds_only_if);
  EXPECT_TRUE(contains(v.condition, fmt(1e-5))) << v.condition;
  EXPECT_TRUE(contains(v.sentence, "s = 1/d")) << v.sentence;
}

TEST(RopeRmsnormInvariance, DoesNotHoldWhenNoScaleIsInvariant) {
  EXPECT_EQ(rope_rmsnorm_invariance({{"1/d", above(kInvariantRel), 0.002}}, 1e-5).kind, VerdictKind::does_not_hold);
}

TEST(RopeRmsnormInvariance, ExactlyAtThresholdIsInvariant) {
  EXPECT_EQ(rope_rmsnorm_invariance({{"sqrt_d", kInvariantRel, 8.0}}, 1e-6).kind, VerdictKind::holds);
}

TEST(RopeRmsnormInvariance, ThrowsWithoutCases) {
  EXPECT_THROW(rope_rmsnorm_invariance({}, 1e-6), scalelab::Error);
}

TEST(Broken, LossFactorBothSidesAndDivergence) {
  EXPECT_FALSE(broken(below(kBrokenFactor) * 2.0, 2.0, false));
  EXPECT_TRUE(broken(above(kBrokenFactor) * 2.0, 2.0, false));
  EXPECT_TRUE(broken(kBrokenFactor * 2.0, 2.0, false));
  EXPECT_TRUE(broken(1.0, 2.0, true));
  EXPECT_TRUE(broken(kNaN, 2.0, false));
  EXPECT_TRUE(broken(kInf, 2.0, false));
}

TEST(ExtremeScales, AllFourBranches) {
  EXPECT_EQ(extreme_scales(true, 2.0, true, 1.8).kind, VerdictKind::holds);
  const Verdict times_d = extreme_scales(true, 2.0, false, 1.01);
  EXPECT_EQ(times_d.kind, VerdictKind::holds_only_if);
  EXPECT_TRUE(contains(times_d.condition, "for ×d only")) << times_d.condition;
  const Verdict over_d = extreme_scales(false, 1.01, true, 2.0);
  EXPECT_EQ(over_d.kind, VerdictKind::holds_only_if);
  EXPECT_TRUE(contains(over_d.condition, "for ÷d only")) << over_d.condition;
  const Verdict none = extreme_scales(false, 1.01, false, 1.02);
  EXPECT_EQ(none.kind, VerdictKind::does_not_hold);
  EXPECT_NE(none.sentence.find(fmt(1.01) + "x (trains)"), std::string::npos) << none.sentence;
}

}  // namespace




TEST(InvDkUnusable, ThreeBranches) {
  EXPECT_EQ(inv_dk_unusable({{64, 0.99, 1.6, true}, {256, 0.999, 2.0, true}}).kind, VerdictKind::holds);
  const Verdict v = inv_dk_unusable({{16, 0.9, 1.1, false}, {256, 0.999, 2.0, true}, {64, 0.99, 1.7, true}});
  EXPECT_EQ(v.kind, VerdictKind::holds_only_if);
  // The values where the case held, in the order given (not a >= bound).
  EXPECT_EQ(v.condition, "d_k is 256 and 64");
  EXPECT_TRUE(contains(v.sentence, "Usable at d_k 16")) << v.sentence;
  EXPECT_EQ(inv_dk_unusable({{64, 0.99, 1.05, false}}).kind, VerdictKind::does_not_hold);
}

TEST(InvDkUnusable, ConditionListsNonMonotoneValues) {
  // Broken at 16 and 256 but not at 64: the condition names exactly those, not "d_k >= 16".
  const Verdict v = inv_dk_unusable({{16, 0.5, 1.6, true}, {64, 0.9, 1.1, false}, {256, 0.99, 2.0, true}});
  EXPECT_EQ(v.kind, VerdictKind::holds_only_if);
  EXPECT_EQ(v.condition, "d_k is 16 and 256");
  const Verdict three = inv_dk_unusable({{8, 0.5, 1.6, true}, {16, 0.5, 1.6, true}, {32, 0.5, 1.6, true},
                                         {64, 0.9, 1.1, false}});
  EXPECT_EQ(three.condition, "d_k is 8, 16 and 32");
  const Verdict one = inv_dk_unusable({{64, 0.9, 1.1, false}, {256, 0.99, 2.0, true}});
  EXPECT_EQ(one.condition, "d_k is 256");
}

TEST(InvDkUnusable, DecidedByBrokenOnlyNotByEntropy) {
  // A near-uniform entropy at init does not make a case unusable, nor a low one usable.
  EXPECT_EQ(inv_dk_unusable({{256, 0.9999, 1.01, false}}).kind, VerdictKind::does_not_hold);
  EXPECT_EQ(inv_dk_unusable({{256, 0.1, 2.0, true}}).kind, VerdictKind::holds);
  EXPECT_EQ(inv_dk_unusable({{256, 1.0, 1.0, false}, {512, 0.0, 1.0, true}}).condition, "d_k is 512");
}

TEST(InvDkUnusable, ThrowsWithoutCases) { EXPECT_THROW(inv_dk_unusable({}), scalelab::Error); }

TEST(InvDkUnusable, BrokenFlagFollowsBrokenFactor) {
  // The case's flag is meant to be broken(loss, baseline, diverged): both sides of kBrokenFactor.
  const double out = above(kBrokenFactor), in = below(kBrokenFactor);
  EXPECT_EQ(inv_dk_unusable({{64, 0.99, out, broken(out, 1.0, false)}}).kind, VerdictKind::holds);
  EXPECT_EQ(inv_dk_unusable({{64, 0.99, in, broken(in, 1.0, false)}}).kind, VerdictKind::does_not_hold);
}

TEST(NoScaleSaturates, SaturatedShareBothSides) {
  EXPECT_EQ(no_scale_saturates({{256, above(kSaturatedShare), 2.0, true}}).kind, VerdictKind::holds);
  EXPECT_EQ(no_scale_saturates({{256, kSaturatedShare, 2.0, true}}).kind, VerdictKind::holds);
  EXPECT_EQ(no_scale_saturates({{256, below(kSaturatedShare), 2.0, true}}).kind, VerdictKind::does_not_hold);
}

TEST(NoScaleSaturates, SaturatedButTrainingIsNotEnough) {
  EXPECT_EQ(no_scale_saturates({{256, 0.9, 1.1, false}}).kind, VerdictKind::does_not_hold);
}

TEST(NoScaleSaturates, HoldsOnlyIfFromTheSmallestSaturatingDk) {
  const Verdict v = no_scale_saturates({{16, 0.1, 1.0, false}, {512, 0.95, 3.0, true}, {128, 0.7, 1.9, true}});
  EXPECT_EQ(v.kind, VerdictKind::holds_only_if);
  EXPECT_EQ(v.condition, "d_k is 512 and 128");
  EXPECT_TRUE(contains(v.sentence, "not at d_k 16")) << v.sentence;
}

TEST(NoScaleSaturates, ConditionListsTheValuesWhereItHeld) {
  const Verdict v = no_scale_saturates({{16, 0.9, 2.0, true}, {64, 0.2, 2.0, true}, {256, 0.95, 3.0, true}});
  EXPECT_EQ(v.kind, VerdictKind::holds_only_if);
  EXPECT_EQ(v.condition, "d_k is 16 and 256");
  EXPECT_EQ(no_scale_saturates({{16, 0.1, 1.0, false}, {32, kSaturatedShare, 1.6, true}}).condition, "d_k is 32");
}

TEST(NoScaleSaturates, ThrowsWithoutCases) { EXPECT_THROW(no_scale_saturates({}), scalelab::Error); }

TEST(GradientDrop, AllFourBranchesAndBothThresholds) {
  const double d_in = above(kDropFactor), d_out = below(kDropFactor);
  const double s_in = above(kNoFallFraction), s_out = below(kNoFallFraction);
  EXPECT_EQ(gradient_drop(d_in, s_in).kind, VerdictKind::holds);
  const Verdict drop = gradient_drop(d_in, s_out);
  EXPECT_EQ(drop.kind, VerdictKind::holds_only_if);
  EXPECT_TRUE(contains(drop.condition, "gradient norm")) << drop.condition;
  const Verdict stuck = gradient_drop(d_out, s_in);
  EXPECT_EQ(stuck.kind, VerdictKind::holds_only_if);
  EXPECT_TRUE(contains(stuck.condition, "for the loss")) << stuck.condition;
  EXPECT_EQ(gradient_drop(d_out, s_out).kind, VerdictKind::does_not_hold);
}

TEST(GradientDrop, SentenceCarriesTheNumbers) {
  const Verdict v = gradient_drop(37.5, 0.973);
  EXPECT_NE(v.sentence.find(fmt(37.5) + "x"), std::string::npos) << v.sentence;
  EXPECT_NE(v.sentence.find(fmt(0.973)), std::string::npos) << v.sentence;
}

TEST(WrongScaleFails, LossRatioBothSidesOfBrokenFactor) {
  EXPECT_EQ(wrong_scale_fails(above(kBrokenFactor), false, 1.0).kind, VerdictKind::holds);
  EXPECT_EQ(wrong_scale_fails(below(kBrokenFactor), false, 1.0).kind, VerdictKind::does_not_hold);
}

TEST(WrongScaleFails, RoughnessBothSidesOfRougherFactor) {
  EXPECT_EQ(wrong_scale_fails(1.0, false, above(kRougherFactor)).kind, VerdictKind::holds);
  EXPECT_EQ(wrong_scale_fails(1.0, false, below(kRougherFactor)).kind, VerdictKind::does_not_hold);
}

TEST(WrongScaleFails, DivergenceFailsAndIsNamed) {
  const Verdict v = wrong_scale_fails(1.0, true, 1.0);
  EXPECT_EQ(v.kind, VerdictKind::holds);
  EXPECT_TRUE(contains(v.sentence, "diverged")) << v.sentence;
}

TEST(TinyDk, ThreeBranchesAndThreshold) {
  EXPECT_EQ(tiny_dk({{2, below(kLittleDifference)}, {4, 0.0}}).kind, VerdictKind::holds);
  const Verdict v = tiny_dk({{2, below(kLittleDifference)}, {8, 0.01}, {16, above(kLittleDifference)}});
  EXPECT_EQ(v.kind, VerdictKind::holds_only_if);
  EXPECT_EQ(v.condition, "d_k is 2 and 8");
  EXPECT_TRUE(contains(v.sentence, "d_k 16")) << v.sentence;
  EXPECT_EQ(tiny_dk({{16, above(kLittleDifference)}}).kind, VerdictKind::does_not_hold);
}

TEST(TinyDk, ConditionListsTheValuesWhereItHeldAndThresholdIsInclusive) {
  const Verdict v = tiny_dk({{2, kLittleDifference}, {4, 0.1}, {8, 0.0}, {16, 0.05}});
  EXPECT_EQ(v.kind, VerdictKind::holds_only_if);
  EXPECT_EQ(v.condition, "d_k is 2 and 8");
  EXPECT_EQ(tiny_dk({{2, 0.2}, {4, 0.0}}).condition, "d_k is 4");
}

TEST(TinyDk, ThrowsWithoutCases) { EXPECT_THROW(tiny_dk({}), scalelab::Error); }

TEST(SlowerTraining, AlwaysNotTestableWithTheRatio) {
  const Verdict v = slower_training(2.5, 64);
  EXPECT_EQ(v.kind, VerdictKind::not_testable);
  EXPECT_FALSE(v.reason.empty());
  EXPECT_TRUE(contains(v.sentence, "d_k = 64: " + fmt(2.5) + "x")) << v.sentence;
  const Verdict never = slower_training(-1.0, 64);
  EXPECT_EQ(never.kind, VerdictKind::not_testable);
  EXPECT_TRUE(contains(never.sentence, "never reached")) << never.sentence;
}

TEST(WarmupNeeded, AllFourBranchesAndThreshold) {
  const double in = above(kNeedsWarmup), out = below(kNeedsWarmup);
  EXPECT_EQ(warmup_needed(in, false, out, false).kind, VerdictKind::holds);
  const Verdict both = warmup_needed(in, false, in, false);
  EXPECT_EQ(both.kind, VerdictKind::holds_only_if);
  EXPECT_TRUE(contains(both.condition, "Pre-LN also needed")) << both.condition;
  const Verdict neither = warmup_needed(out, false, out, false);
  EXPECT_EQ(neither.kind, VerdictKind::holds_only_if);
  EXPECT_TRUE(contains(neither.condition, "neither needed")) << neither.condition;
  EXPECT_EQ(warmup_needed(out, false, in, false).kind, VerdictKind::does_not_hold);
}

TEST(WarmupNeeded, DivergenceCountsAsNeedingWarmup) {
  const Verdict v = warmup_needed(1.0, true, 1.0, false);
  EXPECT_EQ(v.kind, VerdictKind::holds);
  EXPECT_TRUE(contains(v.sentence, "Post-LN diverged")) << v.sentence;
  EXPECT_EQ(warmup_needed(1.0, false, 1.0, true).kind, VerdictKind::does_not_hold);
}

TEST(LogitGrowth, GrowthJustBelowThresholdHoldsOnlyIf) {
  const Verdict v = logit_growth(below(kGrowth), {{"qk-norm", 0.1}});
  EXPECT_EQ(v.kind, VerdictKind::holds_only_if);
  EXPECT_TRUE(contains(v.condition, "grew less than 3x")) << v.condition;
}

TEST(LogitGrowth, BoundedThresholdBothSides) {
  EXPECT_EQ(logit_growth(above(kGrowth), {{"qk-norm", below(kBounded)}, {"z-loss", kBounded}}).kind,
            VerdictKind::holds);
  EXPECT_EQ(logit_growth(above(kGrowth), {{"qk-norm", above(kBounded)}}).kind, VerdictKind::does_not_hold);
}

TEST(LogitGrowth, GrowthExactlyAtThresholdCounts) {
  EXPECT_EQ(logit_growth(kGrowth, {{"qk-norm", 0.1}}).kind, VerdictKind::holds);
}

TEST(LogitGrowth, ThrowsWithoutControls) {
  EXPECT_THROW(logit_growth(5.0, {}), scalelab::Error);
  EXPECT_THROW(logit_growth(1.0, {}), scalelab::Error);
}

TEST(LogitGrowth, SomeControlsBoundHoldsOnlyIfWithThem) {
  const Verdict v = logit_growth(5.0, {{"qk-norm", 0.2}, {"z-loss", 0.9}});
  EXPECT_EQ(v.kind, VerdictKind::holds_only_if);
  EXPECT_TRUE(contains(v.condition, "with qk-norm " + fmt(0.2) + "x")) << v.condition;
  EXPECT_FALSE(contains(v.condition, "z-loss")) << v.condition;
  EXPECT_TRUE(contains(v.sentence, "grew " + fmt(5.0) + "x")) << v.sentence;
}

TEST(MupTransfer, ThreeBranchesAndBothShiftThresholds) {
  EXPECT_EQ(mup_transfer(0, 1).kind, VerdictKind::holds);
  EXPECT_EQ(mup_transfer(0, 3).kind, VerdictKind::holds);
  const Verdict still = mup_transfer(0, 0);
  EXPECT_EQ(still.kind, VerdictKind::holds_only_if);
  EXPECT_FALSE(still.condition.empty());
  EXPECT_EQ(mup_transfer(1, 2).kind, VerdictKind::does_not_hold);
  EXPECT_EQ(mup_transfer(1, 0).kind, VerdictKind::does_not_hold);
  EXPECT_TRUE(contains(mup_transfer(1, 2).sentence, "moved by 1 grid step(s) across widths under muP, 2 under SP"));
}

TEST(MupTransfer, ShiftsAreTakenInAbsoluteValue) {
  // A shift down the grid is as much a move as one up.
  EXPECT_EQ(mup_transfer(0, -1).kind, VerdictKind::holds);
  EXPECT_EQ(mup_transfer(-1, 2).kind, VerdictKind::does_not_hold);
  EXPECT_EQ(mup_transfer(-1, 0).kind, VerdictKind::does_not_hold);
  const Verdict v = mup_transfer(-2, -3);
  EXPECT_EQ(v.kind, VerdictKind::does_not_hold);
  EXPECT_TRUE(contains(v.sentence, "moved by 2 grid step(s) across widths under muP, 3 under SP")) << v.sentence;
}

TEST(LossScalingNeeded, ThreeBranchesAndBothSidesOfTolerance) {
  const double in = below(kFp16Tolerance), out = above(kFp16Tolerance);
  EXPECT_EQ(loss_scaling_needed(out, false, in, false).kind, VerdictKind::holds);
  EXPECT_EQ(loss_scaling_needed(kFp16Tolerance, false, in, false).kind, VerdictKind::holds);
  const Verdict fine = loss_scaling_needed(in, false, in, false);
  EXPECT_EQ(fine.kind, VerdictKind::holds_only_if);
  EXPECT_FALSE(fine.condition.empty());
  EXPECT_EQ(loss_scaling_needed(out, false, out, false).kind, VerdictKind::does_not_hold);
  EXPECT_EQ(loss_scaling_needed(out, false, kFp16Tolerance, false).kind, VerdictKind::does_not_hold);
}

TEST(LossScalingNeeded, DivergenceFlags) {
  const Verdict v = loss_scaling_needed(0.0, true, 0.01, false);
  EXPECT_EQ(v.kind, VerdictKind::holds);
  EXPECT_TRUE(contains(v.sentence, "without loss scaling diverged")) << v.sentence;
  EXPECT_EQ(loss_scaling_needed(0.2, false, 0.0, true).kind, VerdictKind::does_not_hold);
}

TEST(LossScalingNeeded, SentencePrintsSignedPercentages) {
  const Verdict v = loss_scaling_needed(0.125, false, -0.0225, false);
  EXPECT_EQ(v.kind, VerdictKind::holds);
  EXPECT_TRUE(contains(v.sentence, "without loss scaling +" + fmt(12.5) + " %")) << v.sentence;
  EXPECT_TRUE(contains(v.sentence, "with dynamic loss scaling " + fmt(-2.25) + " %")) << v.sentence;
  EXPECT_TRUE(contains(v.sentence, "-2.25 %")) << v.sentence;
  EXPECT_TRUE(contains(loss_scaling_needed(0.0, false, 0.0, false).sentence, "+0 %"));
  // A loss below f32's by more than the tolerance is not "needs scaling" (negative is fine).
  EXPECT_EQ(loss_scaling_needed(-0.2, false, 0.0, false).kind, VerdictKind::holds_only_if);
}

}  // namespace

}  // namespace
}  // namespace scalelab::ledger
