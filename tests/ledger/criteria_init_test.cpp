// ledger/criteria, the claims measured at initialisation (E1-E6, A1, A2, A5, A9, A10, A13): every criterion evaluated on synthetic
// measurements on both sides of every threshold it uses (the named constants, nudged by a relative
// 1e-6), and every verdict a function can return reached at least once.
#include "criteria_test_support.hpp"

namespace scalelab::ledger {
namespace {

using namespace criteria;
using namespace criteria_test;
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

}  // namespace
}  // namespace scalelab::ledger
