// ledger/criteria, the attention and beyond claims (A1–A13, B1–B4): every criterion evaluated on synthetic measurements on both sides of
// every threshold it uses (the named constants of criteria.hpp, nudged by a relative 1e-6), and
// every verdict a function can return reached at least once.
#include "criteria_test_support.hpp"

namespace scalelab::ledger {
namespace {

using namespace criteria;
using namespace criteria_test;

// ---------------------------------------------------------------------------------------------
// logits_within_range (A2)

TEST(LogitsWithinRange, ThreeBranchesAndThreshold) {
  EXPECT_EQ(logits_within_range({{"synthetic", above(kWithinShare)}, {"model at init", kWithinShare}}).kind,
            VerdictKind::holds);
  const Verdict some = logits_within_range({{"synthetic", above(kWithinShare)}, {"after training", below(kWithinShare)}});
  EXPECT_EQ(some.kind, VerdictKind::holds_only_if);
  EXPECT_TRUE(contains(some.condition, "synthetic")) << some.condition;
  EXPECT_TRUE(contains(some.sentence, "after training")) << some.sentence;
  EXPECT_EQ(logits_within_range({{"after training", below(kWithinShare)}}).kind, VerdictKind::does_not_hold);
}

TEST(LogitsWithinRange, ThrowsWithoutCases) { EXPECT_THROW(logits_within_range({}), scalelab::Error); }

// ---------------------------------------------------------------------------------------------
// inv_dk_unusable (A3)

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

// ---------------------------------------------------------------------------------------------
// no_scale_saturates (A4)

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

// ---------------------------------------------------------------------------------------------
// softmax_derivative_range (A5)

TEST(SoftmaxDerivativeRange, BothBoundsBothSides) {
  EXPECT_EQ(softmax_derivative_range({{2, below(kPpHi)}, {64, above(kPpLo)}}).kind, VerdictKind::holds);
  EXPECT_EQ(softmax_derivative_range({{2, kPpHi}, {64, kPpLo}}).kind, VerdictKind::holds);
  EXPECT_EQ(softmax_derivative_range({{2, above(kPpHi)}}).kind, VerdictKind::does_not_hold);
  EXPECT_EQ(softmax_derivative_range({{1024, below(kPpLo)}}).kind, VerdictKind::does_not_hold);
}

TEST(SoftmaxDerivativeRange, HoldsOnlyIfForShortRows) {
  const Verdict v = softmax_derivative_range({{4, 0.2}, {16, 0.06}, {1024, 0.001}});
  EXPECT_EQ(v.kind, VerdictKind::holds_only_if);
  EXPECT_EQ(v.condition, "the row has n = 4 and 16 keys");
  EXPECT_NE(v.sentence.find("n = 1024: " + fmt(0.001)), std::string::npos) << v.sentence;
}

TEST(SoftmaxDerivativeRange, ConditionListsTheValuesWhereItHeld) {
  // Outside at n = 2 (too high) and n = 1024 (too low), inside at 10: only n = 10 is named.
  const Verdict v = softmax_derivative_range({{2, above(kPpHi)}, {10, 0.09}, {1024, below(kPpLo)}});
  EXPECT_EQ(v.kind, VerdictKind::holds_only_if);
  EXPECT_EQ(v.condition, "the row has n = 10 keys");
  const Verdict two = softmax_derivative_range({{2, kPpHi}, {10, 0.09}, {1024, below(kPpLo)}});
  EXPECT_EQ(two.condition, "the row has n = 2 and 10 keys");
  EXPECT_TRUE(contains(two.sentence, "outside at n = 1024")) << two.sentence;
  EXPECT_TRUE(contains(softmax_derivative_range({{2, 0.2}}).sentence, "outside at none"));
  EXPECT_TRUE(contains(softmax_derivative_range({{2, 0.3}}).sentence, "in [0.05, 0.25] at none"));
}

TEST(SoftmaxDerivativeRange, ThrowsWithoutCases) { EXPECT_THROW(softmax_derivative_range({}), scalelab::Error); }

// ---------------------------------------------------------------------------------------------
// gradient_drop (A6)

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

// ---------------------------------------------------------------------------------------------
// wrong_scale_fails (A7)

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

// ---------------------------------------------------------------------------------------------
// tiny_dk (A8)

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

// ---------------------------------------------------------------------------------------------
// scaled_logits_overflow (A9)

TEST(ScaledLogitsOverflow, ThreeBranches) {
  const Verdict with = scaled_logits_overflow({{"f16", "scale after QKᵀ", true, 4.0}, {"bf16", "q pre-scaled", true, 0.0}});
  EXPECT_EQ(with.kind, VerdictKind::holds);
  EXPECT_TRUE(contains(with.sentence, "f16 scale after QKᵀ (" + fmt(4.0) + ")")) << with.sentence;
  EXPECT_FALSE(contains(with.sentence, "bf16")) << with.sentence;
  const Verdict without = scaled_logits_overflow({{"f16", "scale after QKᵀ", false, 1.0}, {"f16", "q pre-scaled", true, 0.0}});
  EXPECT_EQ(without.kind, VerdictKind::holds_only_if);
  EXPECT_FALSE(without.condition.empty());
  EXPECT_EQ(scaled_logits_overflow({{"f16", "q pre-scaled", false, 0.0}, {"bf16", "q pre-scaled", true, 0.0}}).kind,
            VerdictKind::does_not_hold);
}

// ---------------------------------------------------------------------------------------------
// flash_is_safe (A10)

TEST(FlashIsSafe, HoldsJustInsideBothThresholds) {
  const Verdict v = flash_is_safe({{"f32", below(kSameResultRel), 1e-7, 0.0},
                                   {"f16", below(kSafeErrorFactor) * 1e-3, 1e-3, 0.0}});
  EXPECT_EQ(v.kind, VerdictKind::holds);
}

TEST(FlashIsSafe, F32JustAboveDoesNotHold) {
  EXPECT_EQ(flash_is_safe({{"f32", above(kSameResultRel), 1e-7, 0.0}, {"f16", 1e-3, 1e-3, 0.0}}).kind,
            VerdictKind::does_not_hold);
}

TEST(FlashIsSafe, ReducedFormatJustAboveFactorOrOverflowHoldsOnlyIfF32) {
  const Verdict err = flash_is_safe({{"f32", 1e-7, 1e-7, 0.0}, {"bf16", above(kSafeErrorFactor) * 1e-2, 1e-2, 0.0}});
  EXPECT_EQ(err.kind, VerdictKind::holds_only_if);
  EXPECT_TRUE(contains(err.condition, "in f32")) << err.condition;
  EXPECT_EQ(flash_is_safe({{"f32", 1e-7, 1e-7, 0.0}, {"f16", 1e-3, 1e-3, 1.0}}).kind, VerdictKind::holds_only_if);
}

TEST(FlashIsSafe, F32ExactlyAtThresholdIsTheSame) {
  EXPECT_EQ(flash_is_safe({{"f32", kSameResultRel, 1e-7, 0.0}}).kind, VerdictKind::holds);
  EXPECT_EQ(flash_is_safe({{"f32", 1e-7, 1e-7, 0.0}, {"f16", kSafeErrorFactor * 1e-3, 1e-3, 0.0}}).kind,
            VerdictKind::holds);
}

TEST(FlashIsSafe, SentenceCarriesTheErrors) {
  const Verdict v = flash_is_safe({{"f32", 1e-7, 2e-7, 0.0}, {"f16", 0.00125, 0.0025, 0.0}});
  EXPECT_NE(v.sentence.find("f16: flash " + fmt(0.00125) + ", naive " + fmt(0.0025)), std::string::npos)
      << v.sentence;
  EXPECT_NE(v.sentence.find("f32: flash " + fmt(1e-7) + ", naive " + fmt(2e-7)), std::string::npos) << v.sentence;
}

TEST(FlashIsSafe, ThrowsWithoutAnF32Case) {
  EXPECT_THROW(flash_is_safe({}), scalelab::Error);
  EXPECT_THROW(flash_is_safe({{"f16", 0.00125, 0.0025, 0.0}}), scalelab::Error);
  EXPECT_THROW(flash_is_safe({{"bf16", 1e-2, 1e-2, 0.0}, {"f16", 1e-3, 1e-3, 0.0}}), scalelab::Error);
}

// ---------------------------------------------------------------------------------------------
// slower_training (A12)

TEST(SlowerTraining, AlwaysNotTestableWithTheRatio) {
  const Verdict v = slower_training(2.5, 64);
  EXPECT_EQ(v.kind, VerdictKind::not_testable);
  EXPECT_FALSE(v.reason.empty());
  EXPECT_TRUE(contains(v.sentence, "d_k = 64: " + fmt(2.5) + "x")) << v.sentence;
  const Verdict never = slower_training(-1.0, 64);
  EXPECT_EQ(never.kind, VerdictKind::not_testable);
  EXPECT_TRUE(contains(never.sentence, "never reached")) << never.sentence;
}

// ---------------------------------------------------------------------------------------------
// uniform_threshold, uniform_flag (A13)

TEST(UniformThreshold, ValuesAndDomain) {
  EXPECT_DOUBLE_EQ(uniform_threshold(2), 1.0 - 0.25 / std::log(2.0));
  EXPECT_DOUBLE_EQ(uniform_threshold(1024), 1.0 - 0.25 / std::log(1024.0));
  EXPECT_LT(uniform_threshold(16), uniform_threshold(1024));
  EXPECT_LT(uniform_threshold(1024), 1.0);
  EXPECT_THROW(uniform_threshold(1), scalelab::Error);
  EXPECT_THROW(uniform_threshold(0), scalelab::Error);
  EXPECT_THROW(uniform_threshold(-4), scalelab::Error);
}

TEST(UniformFlag, ThreeBranchesAndBothShareThresholds) {
  EXPECT_EQ(uniform_flag({{16, above(kFlagShare), below(kFlagShare)}, {256, kFlagShare, 0.0}}).kind,
            VerdictKind::holds);
  const Verdict both = uniform_flag({{16, 0.9, kFlagShare}});
  EXPECT_EQ(both.kind, VerdictKind::holds_only_if);
  EXPECT_EQ(uniform_flag({{16, 0.9, above(kFlagShare)}}).kind, VerdictKind::holds_only_if);
  EXPECT_EQ(uniform_flag({{16, below(kFlagShare), 0.0}}).kind, VerdictKind::does_not_hold);
  EXPECT_EQ(uniform_flag({{16, 0.9, 0.0}, {1024, below(kFlagShare), 0.0}}).kind, VerdictKind::does_not_hold);
}

TEST(UniformFlag, ThrowsWithoutCases) { EXPECT_THROW(uniform_flag({}), scalelab::Error); }

TEST(UniformFlag, SentenceCarriesTheShares) {
  const Verdict v = uniform_flag({{128, 0.875, 0.125}});
  EXPECT_TRUE(contains(v.sentence, "n = 128: 1/d_k " + fmt(87.5) + " %, 1/sqrt(d_k) " + fmt(12.5) + " %"))
      << v.sentence;
}

// ---------------------------------------------------------------------------------------------
// warmup_needed (B1)

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

// ---------------------------------------------------------------------------------------------
// logit_growth (B2)

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

// ---------------------------------------------------------------------------------------------
// mup_transfer (B3)

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

// ---------------------------------------------------------------------------------------------
// loss_scaling_needed (B4)

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
}  // namespace scalelab::ledger
