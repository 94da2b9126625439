// ledger/criteria, the embedding claims (E1–E12): every criterion evaluated on synthetic measurements on both sides of
// every threshold it uses (the named constants of criteria.hpp, nudged by a relative 1e-6), and
// every verdict a function can return reached at least once.
#include "criteria_test_support.hpp"

namespace scalelab::ledger {
namespace {

using namespace criteria;
using namespace criteria_test;

// ---------------------------------------------------------------------------------------------
// matches_closed_form (E1, A1)

TEST(MatchesClosedForm, HoldsJustInsideTheSigmaBand) {
  const double se = 0.01;
  const Verdict v = matches_closed_form({1.0 + below(kMonteCarloSigmas) * se}, {se}, "E[x]");
  EXPECT_EQ(v.kind, VerdictKind::holds);
  const Verdict lo = matches_closed_form({1.0 - below(kMonteCarloSigmas) * se}, {se}, "E[x]");
  EXPECT_EQ(lo.kind, VerdictKind::holds);
}

TEST(MatchesClosedForm, DoesNotHoldJustOutsideTheSigmaBandOnEitherSide) {
  const double se = 0.01;
  EXPECT_EQ(matches_closed_form({1.0 + above(kMonteCarloSigmas) * se}, {se}, "E[x]").kind,
            VerdictKind::does_not_hold);
  EXPECT_EQ(matches_closed_form({1.0 - above(kMonteCarloSigmas) * se}, {se}, "E[x]").kind,
            VerdictKind::does_not_hold);
}

TEST(MatchesClosedForm, OneBadEstimateAmongGoodOnesFails) {
  const double se = 0.01;
  EXPECT_EQ(matches_closed_form({1.0, 1.0 + above(kMonteCarloSigmas) * se, 1.001}, {se, se, se}, "E").kind,
            VerdictKind::does_not_hold);
}

TEST(MatchesClosedForm, SentenceNamesTheWorstSigmaAndItsRatio) {
  // sigmas: 0.03 / 0.01 = 3 (worst), 0.1 / 0.05 = 2.
  const Verdict v = matches_closed_form({1.03, 0.9}, {0.01, 0.05}, "E[|x|]");
  EXPECT_EQ(v.kind, VerdictKind::holds);
  EXPECT_NE(v.sentence.find("E[|x|]"), std::string::npos) << v.sentence;
  EXPECT_NE(v.sentence.find(fmt(3.0) + " standard errors"), std::string::npos) << v.sentence;
  EXPECT_NE(v.sentence.find("ratio " + fmt(1.03)), std::string::npos) << v.sentence;
}

TEST(MatchesClosedForm, NaNRatioAtTheEndDoesNotHold) {
  EXPECT_EQ(matches_closed_form({1.0, kNaN}, {0.01, 0.01}, "E").kind, VerdictKind::does_not_hold);
}

// A NaN ratio anywhere (not only last) must not be forgotten by a later finite one.
TEST(MatchesClosedForm, NaNRatioAnywhereDoesNotHold) {
  EXPECT_EQ(matches_closed_form({kNaN, 1.0}, {0.01, 0.01}, "E").kind, VerdictKind::does_not_hold);
  EXPECT_EQ(matches_closed_form({1.0, kNaN, 1.0}, {0.01, 0.01, 0.01}, "E").kind, VerdictKind::does_not_hold);
  EXPECT_EQ(matches_closed_form({kNaN}, {0.01}, "E").kind, VerdictKind::does_not_hold);
}

TEST(MatchesClosedForm, ZeroStandardErrorNeverPasses) {
  // 0/0 (an exact ratio of 1 with SE 0) and x/0 both count as infinitely many standard errors.
  EXPECT_EQ(matches_closed_form({1.0}, {0.0}, "E").kind, VerdictKind::does_not_hold);
  EXPECT_EQ(matches_closed_form({1.001}, {0.0}, "E").kind, VerdictKind::does_not_hold);
  EXPECT_EQ(matches_closed_form({1.0, 1.0}, {0.0, 0.01}, "E").kind, VerdictKind::does_not_hold);
  EXPECT_EQ(matches_closed_form({1.0, 1.0}, {0.01, 0.0}, "E").kind, VerdictKind::does_not_hold);
}

TEST(MatchesClosedForm, InfiniteRatioDoesNotHold) {
  EXPECT_EQ(matches_closed_form({kInf, 1.0}, {0.01, 0.01}, "E").kind, VerdictKind::does_not_hold);
}

TEST(MatchesClosedForm, ThrowsOnMismatchedOrEmptyInput) {
  EXPECT_THROW(matches_closed_form({1.0, 1.0}, {0.01}, "E"), scalelab::Error);
  EXPECT_THROW(matches_closed_form({1.0}, {0.01, 0.01}, "E"), scalelab::Error);
  EXPECT_THROW(matches_closed_form({}, {}, "E"), scalelab::Error);
}

// ---------------------------------------------------------------------------------------------
// pe_variance (E2)

TEST(PeVariance, HoldsWhenShareOfDimensionsIsAtOrAboveThreshold) {
  EXPECT_EQ(pe_variance({{64, 32, 0.5, above(kPeDimShare)}}).kind, VerdictKind::holds);
  EXPECT_EQ(pe_variance({{64, 32, 0.5, kPeDimShare}}).kind, VerdictKind::holds);
}

TEST(PeVariance, HoldsOnlyIfWhenShareJustBelowThreshold) {
  const Verdict v = pe_variance({{64, 32, 0.5, 1.0}, {1024, 64, 0.5, below(kPeDimShare)}});
  EXPECT_EQ(v.kind, VerdictKind::holds_only_if);
  EXPECT_FALSE(v.condition.empty());
  // The worst case is the one named in the sentence.
  EXPECT_TRUE(contains(v.sentence, "L = 1024, d = 64")) << v.sentence;
}

TEST(PeVariance, RowMeanSquareToleranceIsOneInAMillion) {
  EXPECT_EQ(pe_variance({{64, 32, 0.5 + 0.5e-6, 1.0}}).kind, VerdictKind::holds);
  EXPECT_EQ(pe_variance({{64, 32, 0.5 - 0.5e-6, 1.0}}).kind, VerdictKind::holds);
  EXPECT_EQ(pe_variance({{64, 32, 0.5 + 2e-6, 1.0}}).kind, VerdictKind::does_not_hold);
  EXPECT_EQ(pe_variance({{64, 32, 0.5 - 2e-6, 1.0}}).kind, VerdictKind::does_not_hold);
}

TEST(PeVariance, DoesNotHoldWhenAnyRowMeanSquareIsOff) {
  const Verdict v = pe_variance({{64, 32, 0.5, 1.0}, {128, 32, 0.45, 1.0}});
  EXPECT_EQ(v.kind, VerdictKind::does_not_hold);
}

TEST(PeVariance, ThrowsWithoutCases) { EXPECT_THROW(pe_variance({}), scalelab::Error); }

// ---------------------------------------------------------------------------------------------
// unscaled_dominates (E3)

TEST(UnscaledDominates, HoldsAtAndAboveTheRatioWithR2BelowThreshold) {
  EXPECT_EQ(unscaled_dominates({{"normal", "1", above(kDominatesRatio), below(kDrownedR2)}}).kind,
            VerdictKind::holds);
  EXPECT_EQ(unscaled_dominates({{"normal", "1", kDominatesRatio, 0.0}}).kind, VerdictKind::holds);
}

TEST(UnscaledDominates, RatioJustBelowThresholdDoesNotHold) {
  const Verdict v = unscaled_dominates({{"normal", "1", below(kDominatesRatio), 0.1}});
  EXPECT_EQ(v.kind, VerdictKind::does_not_hold);
}

TEST(UnscaledDominates, R2AtOrJustAboveThresholdDoesNotHold) {
  EXPECT_EQ(unscaled_dominates({{"normal", "1", 50.0, above(kDrownedR2)}}).kind, VerdictKind::does_not_hold);
  EXPECT_EQ(unscaled_dominates({{"normal", "1", 50.0, kDrownedR2}}).kind, VerdictKind::does_not_hold);
}

TEST(UnscaledDominates, HoldsOnlyIfAnotherArmDominates) {
  const Verdict v = unscaled_dominates({{"normal", "1", 1.0, 0.95},
                                        {"normal", "sqrt_d", above(kDominatesRatio), below(kDrownedR2)},
                                        {"xavier", "sqrt_d", below(kDominatesRatio), 0.1}});
  EXPECT_EQ(v.kind, VerdictKind::holds_only_if);
  EXPECT_TRUE(contains(v.condition, "normal × sqrt_d")) << v.condition;
  EXPECT_FALSE(contains(v.condition, "xavier")) << v.condition;
}

TEST(UnscaledDominates, OtherArmJustMissingEitherThresholdDoesNotCount) {
  EXPECT_EQ(unscaled_dominates({{"normal", "1", 1.0, 0.95}, {"normal", "d", below(kDominatesRatio), 0.0}}).kind,
            VerdictKind::does_not_hold);
  EXPECT_EQ(unscaled_dominates({{"normal", "1", 1.0, 0.95}, {"normal", "d", 100.0, above(kDrownedR2)}}).kind,
            VerdictKind::does_not_hold);
}

TEST(UnscaledDominates, SentenceCarriesTheUnscaledNumbers) {
  const Verdict v = unscaled_dominates({{"normal", "1", 1.25, 0.875}});
  EXPECT_NE(v.sentence.find(fmt(1.25)), std::string::npos) << v.sentence;
  EXPECT_NE(v.sentence.find(fmt(0.875)), std::string::npos) << v.sentence;
}

TEST(UnscaledDominates, ThrowsWithoutTheNormalScaleOneArm) {
  EXPECT_THROW(unscaled_dominates({{"normal", "sqrt_d", 100.0, 0.0}, {"xavier", "1", 100.0, 0.0}}),
               scalelab::Error);
  EXPECT_THROW(unscaled_dominates({}), scalelab::Error);
}

// ---------------------------------------------------------------------------------------------
// scaled_matches (E4)

TEST(ScaledMatches, HoldsWhenEveryArmIsWithinTheFactorInclusive) {
  EXPECT_EQ(scaled_matches({{"normal", "sqrt_d", below(kMatchedFactor), 0},
                            {"xavier", "sqrt_d", above(1.0 / kMatchedFactor), 0}})
                .kind,
            VerdictKind::holds);
  EXPECT_EQ(scaled_matches({{"a", "sqrt_d", kMatchedFactor, 0}, {"b", "sqrt_d", 1.0 / kMatchedFactor, 0}}).kind,
            VerdictKind::holds);
}

TEST(ScaledMatches, HoldsOnlyIfOneArmIsJustOutsideEitherBound) {
  const Verdict hi = scaled_matches({{"xavier", "sqrt_d", 1.0, 0}, {"normal", "sqrt_d", above(kMatchedFactor), 0}});
  EXPECT_EQ(hi.kind, VerdictKind::holds_only_if);
  EXPECT_TRUE(contains(hi.condition, "xavier")) << hi.condition;
  EXPECT_TRUE(contains(hi.sentence, "not: normal")) << hi.sentence;
  const Verdict lo = scaled_matches({{"xavier", "sqrt_d", 1.0, 0}, {"small", "sqrt_d", below(1.0 / kMatchedFactor), 0}});
  EXPECT_EQ(lo.kind, VerdictKind::holds_only_if);
}

TEST(ScaledMatches, DoesNotHoldWhenNoArmMatches) {
  const Verdict v = scaled_matches({{"normal", "sqrt_d", 64.0, 0}, {"tiny", "sqrt_d", 0.01, 0}});
  EXPECT_EQ(v.kind, VerdictKind::does_not_hold);
  EXPECT_NE(v.sentence.find(fmt(64.0)), std::string::npos) << v.sentence;
}

TEST(ScaledMatches, ThrowsWithoutArms) { EXPECT_THROW(scaled_matches({}), scalelab::Error); }

// ---------------------------------------------------------------------------------------------
// logit_variance_exponents (E5)

Exponents exps(double s1, double ssqrt, double sd) { return {s1, ssqrt, sd, 0.01}; }

TEST(LogitVarianceExponents, HoldsWithinToleranceOnBothSides) {
  const double in = below(kExponentTolerance);
  EXPECT_EQ(logit_variance_exponents(exps(2 + in, 3, 4 - in)).kind, VerdictKind::holds);
  EXPECT_EQ(logit_variance_exponents(exps(2 - in, 3, 4 + in)).kind, VerdictKind::holds);
}

TEST(LogitVarianceExponents, ScaleOneJustOutsideToleranceIsNotHolds) {
  const double out = above(kExponentTolerance);
  // scale_sqrt_d far from 2, so the fallback is does_not_hold.
  EXPECT_EQ(logit_variance_exponents(exps(2 + out, 3, 4)).kind, VerdictKind::does_not_hold);
  EXPECT_EQ(logit_variance_exponents(exps(2 - out, 3, 4)).kind, VerdictKind::does_not_hold);
}

TEST(LogitVarianceExponents, ScaleDJustOutsideToleranceDoesNotHold) {
  const double out = above(kExponentTolerance);
  EXPECT_EQ(logit_variance_exponents(exps(2, 2, 4 + out)).kind, VerdictKind::does_not_hold);
  EXPECT_EQ(logit_variance_exponents(exps(2, 2, 4 - out)).kind, VerdictKind::does_not_hold);
}

TEST(LogitVarianceExponents, HoldsOnlyIfTheSquareBelongsToSqrtD) {
  const double in = below(kExponentTolerance), out = above(kExponentTolerance);
  const Verdict v = logit_variance_exponents(exps(0.0, 2 + in, 4));
  EXPECT_EQ(v.kind, VerdictKind::holds_only_if);
  EXPECT_FALSE(v.condition.empty());
  EXPECT_EQ(logit_variance_exponents(exps(0.0, 2 - in, 4)).kind, VerdictKind::holds_only_if);
  EXPECT_EQ(logit_variance_exponents(exps(0.0, 2 + out, 4)).kind, VerdictKind::does_not_hold);
  EXPECT_EQ(logit_variance_exponents(exps(0.0, 2 - out, 4)).kind, VerdictKind::does_not_hold);
}

TEST(LogitVarianceExponents, SentenceCarriesEveryFittedExponent) {
  const Verdict v = logit_variance_exponents({1.97, 2.04, 3.88, 0.0123});
  for (double x : {1.97, 2.04, 3.88, 0.0123})
    EXPECT_NE(v.sentence.find(fmt(x)), std::string::npos) << fmt(x) << " in " << v.sentence;
}

// ---------------------------------------------------------------------------------------------
// embedding_overflows_f16 (E6), first_overflowing_op

TEST(EmbeddingOverflowsF16, HoldsWhenTheEmbeddingItselfOverflows) {
  OverflowByOp ops;
  ops.overflow = {{"embedding_scale", 1.0}, {"softmax", 0.0}};
  ops.max_abs = {{"embedding_scale", 7.0e4}};
  const Verdict v = embedding_overflows_f16(ops, 4096);
  EXPECT_EQ(v.kind, VerdictKind::holds);
  EXPECT_TRUE(contains(v.sentence, "d = 4096")) << v.sentence;
  EXPECT_NE(v.sentence.find(fmt(7.0e4)), std::string::npos) << v.sentence;
}

TEST(EmbeddingOverflowsF16, ZeroEmbeddingOverflowDoesNotHoldAndNamesTheOpThatDoes) {
  OverflowByOp ops;
  ops.overflow = {{"embedding_scale", 0.0}, {"qk_matmul", 12.0}};
  ops.max_abs = {{"embedding_scale", 900.0}};
  const Verdict v = embedding_overflows_f16(ops, 512);
  EXPECT_EQ(v.kind, VerdictKind::does_not_hold);
  EXPECT_TRUE(contains(v.sentence, "qk_matmul")) << v.sentence;
  EXPECT_TRUE(contains(v.sentence, "another op overflows first")) << v.sentence;
}

TEST(EmbeddingOverflowsF16, NothingOverflowsDoesNotHold) {
  OverflowByOp ops;
  ops.max_abs = {{"embedding_scale", 22.6}};
  const Verdict v = embedding_overflows_f16(ops, 512);
  EXPECT_EQ(v.kind, VerdictKind::does_not_hold);
  EXPECT_TRUE(contains(v.sentence, "no op overflows")) << v.sentence;
}

TEST(FirstOverflowingOp, PicksTheMostOverflowsAndEmptyWhenNone) {
  OverflowByOp ops;
  EXPECT_EQ(first_overflowing_op(ops), "");
  ops.overflow = {{"a", 0.0}, {"b", 0.0}};
  EXPECT_EQ(first_overflowing_op(ops), "");
  ops.overflow = {{"a", 3.0}, {"b", 7.0}, {"c", 5.0}};
  EXPECT_EQ(first_overflowing_op(ops), "b");
}

// ---------------------------------------------------------------------------------------------
// learnable_scale (E7)

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

// ---------------------------------------------------------------------------------------------
// reparametrisation (E8, A11)

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

// ---------------------------------------------------------------------------------------------
// layernorm_absorbs (E9): the init bound is kAbsorbedRel (1e-3, the norm's eps), not kInitEqualRel.

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

// ---------------------------------------------------------------------------------------------
// removal_oscillates (E10)

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

// ---------------------------------------------------------------------------------------------
// rope_rmsnorm_invariance (E11)

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

// ---------------------------------------------------------------------------------------------
// broken, extreme_scales (E12)

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
}  // namespace scalelab::ledger
