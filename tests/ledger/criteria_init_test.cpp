// ledger/criteria, the claims measured at initialisation (E1-E6, A1, A2, A5, A9, A10, A13): every
// criterion evaluated on synthetic measurements on both sides of every threshold it uses (the
// named constants, nudged by a relative 1e-6), and, for each claim, the verdict rules
// (docs/ledger.md, "Rules"): data refuting it on every case give "does not hold" (never "holds
// only if"); data holding on exactly one case give "holds only if <that case>"; a failed (NaN or
// infinite) value never makes it hold.
#include "criteria_test_support.hpp"

namespace scalelab::ledger {
namespace {

using namespace criteria;
using namespace criteria_test;

// n seeds of the same value.
std::vector<double> seeds(double x, size_t n = 3) { return std::vector<double>(n, x); }

void expect_only_if(const Verdict& v, const std::string& held_case) {
  EXPECT_EQ(v.kind, VerdictKind::holds_only_if) << v.sentence;
  EXPECT_EQ(v.condition, held_case) << v.sentence;
}

void expect_refuted(const Verdict& v) {
  EXPECT_EQ(v.kind, VerdictKind::does_not_hold) << v.sentence;
  EXPECT_TRUE(v.condition.empty()) << v.condition;
}

// ---- E1, A1: closed form ------------------------------------------------------------------

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

TEST(MatchesClosedForm, OneBadEstimateAmongGoodOnesHoldsOnlyOnTheGoodOnes) {
  const double se = 0.01;
  const Verdict v = matches_closed_form({1.0, 1.0 + above(kMonteCarloSigmas) * se, 1.001}, {se, se, se}, "E",
                                        {"d = 64", "d = 256", "d = 1024"});
  EXPECT_EQ(v.kind, VerdictKind::holds_only_if);
  EXPECT_EQ(v.condition, "d = 64 or d = 1024");
  EXPECT_TRUE(contains(v.sentence, "d = 256 (ratio")) << v.sentence;
}

TEST(MatchesClosedForm, SentenceNamesTheWorstSigmaAndItsRatio) {
  // sigmas: 0.03 / 0.01 = 3 (worst), 0.1 / 0.05 = 2.
  const Verdict v = matches_closed_form({1.03, 0.9}, {0.01, 0.05}, "E[|x|]");
  EXPECT_EQ(v.kind, VerdictKind::holds);
  EXPECT_NE(v.sentence.find("E[|x|]"), std::string::npos) << v.sentence;
  EXPECT_NE(v.sentence.find(fmt(3.0) + " standard errors"), std::string::npos) << v.sentence;
  EXPECT_NE(v.sentence.find("ratio " + fmt(1.03)), std::string::npos) << v.sentence;
  EXPECT_TRUE(contains(v.sentence, "above 1")) << v.sentence;
  EXPECT_TRUE(contains(v.sentence, "below 1")) << v.sentence;
}

TEST(MatchesClosedForm, NaNRatioNeverHolds) {
  const Verdict last = matches_closed_form({1.0, kNaN}, {0.01, 0.01}, "E", {"a", "b"});
  expect_only_if(last, "a");
  EXPECT_TRUE(contains(last.sentence, "failed")) << last.sentence;
  expect_only_if(matches_closed_form({kNaN, 1.0}, {0.01, 0.01}, "E", {"a", "b"}), "b");
  EXPECT_EQ(matches_closed_form({kNaN}, {0.01}, "E").kind, VerdictKind::does_not_hold);
}

TEST(MatchesClosedForm, ZeroStandardErrorNeverPasses) {
  // 0/0 (an exact ratio of 1 with SE 0) and x/0 both count as infinitely many standard errors.
  EXPECT_EQ(matches_closed_form({1.0}, {0.0}, "E").kind, VerdictKind::does_not_hold);
  EXPECT_EQ(matches_closed_form({1.001}, {0.0}, "E").kind, VerdictKind::does_not_hold);
  expect_only_if(matches_closed_form({1.0, 1.0}, {0.0, 0.01}, "E", {"a", "b"}), "b");
}

TEST(MatchesClosedForm, InfiniteRatioNeverHolds) {
  expect_only_if(matches_closed_form({kInf, 1.0}, {0.01, 0.01}, "E", {"a", "b"}), "b");
  EXPECT_EQ(matches_closed_form({kInf}, {0.01}, "E").kind, VerdictKind::does_not_hold);
}

TEST(MatchesClosedForm, RefutedEverywhereDoesNotHoldAndNamesTheRange) {
  const Verdict v = matches_closed_form({1.5, 0.5}, {0.01, 0.01}, "E", {"d_k = 1", "d_k = 4"});
  expect_refuted(v);
  EXPECT_TRUE(contains(v.sentence, "d_k = 1 and d_k = 4 tested")) << v.sentence;
}

TEST(MatchesClosedForm, ThrowsOnMismatchedOrEmptyInput) {
  EXPECT_THROW(matches_closed_form({1.0, 1.0}, {0.01}, "E"), scalelab::Error);
  EXPECT_THROW(matches_closed_form({1.0}, {0.01, 0.01}, "E"), scalelab::Error);
  EXPECT_THROW(matches_closed_form({}, {}, "E"), scalelab::Error);
  EXPECT_THROW(matches_closed_form({1.0}, {0.01}, "E", {"a", "b"}), scalelab::Error);
}

TEST(UnitVariancePremise, FactorTwoBothSidesEverySeed) {
  const std::string m = "the model at init";
  EXPECT_EQ(unit_variance_premise({{m, seeds(below(kUnitVarianceFactor)), seeds(1.0 / below(kUnitVarianceFactor))}}).kind,
            VerdictKind::holds);
  expect_refuted(unit_variance_premise({{m, seeds(above(kUnitVarianceFactor)), seeds(1.0)}}));
  expect_refuted(unit_variance_premise({{m, seeds(1.0), seeds(1.0 / above(kUnitVarianceFactor))}}));
  // Seeds on both sides: undecided, not "holds".
  EXPECT_EQ(unit_variance_premise({{m, {1.0, 1.0, 3.0}, seeds(1.0)}}).kind, VerdictKind::not_testable);
}

TEST(UnitVariancePremise, HoldsOnExactlyOneModelAndSaysWhichWayTheOthersAre) {
  const Verdict v = unit_variance_premise({{"Post-LN", seeds(1.2), seeds(1.1)}, {"Pre-LN", seeds(0.3), seeds(0.3)}});
  expect_only_if(v, "Post-LN");
  EXPECT_TRUE(contains(v.sentence, "(below 1)")) << v.sentence;
}

TEST(UnitVariancePremise, AFailedSeedNeverHolds) {
  const Verdict v = unit_variance_premise({{"m", {1.0, kNaN, 1.0}, seeds(1.0)}});
  EXPECT_NE(v.kind, VerdictKind::holds);
  EXPECT_TRUE(contains(v.sentence, "1 of 3 failed")) << v.sentence;
}

// ---- E2 -----------------------------------------------------------------------------------

TEST(PeVariance, HoldsWhenShareOfDimensionsIsAtOrAboveThreshold) {
  EXPECT_EQ(pe_variance({{64, 32, 0.5, above(kPeDimShare)}}).kind, VerdictKind::holds);
  EXPECT_EQ(pe_variance({{64, 32, 0.5, kPeDimShare}}).kind, VerdictKind::holds);
}

TEST(PeVariance, HoldsOnlyIfWhenShareJustBelowThreshold) {
  const Verdict v = pe_variance({{64, 32, 0.5, 1.0}, {1024, 64, 0.5, below(kPeDimShare)}});
  expect_only_if(v, "L = 64, d = 32");
  // The failing case is named in the sentence.
  EXPECT_TRUE(contains(v.sentence, "L = 1024, d = 64")) << v.sentence;
  ASSERT_EQ(v.parts.size(), 2u);
  EXPECT_EQ(v.parts[0].verdict.kind, VerdictKind::holds);
  EXPECT_EQ(v.parts[1].verdict.kind, VerdictKind::holds_only_if);
}

TEST(PeVariance, RowMeanSquareToleranceIsOneInAMillion) {
  EXPECT_EQ(pe_variance({{64, 32, 0.5 + 0.5e-6, 1.0}}).kind, VerdictKind::holds);
  EXPECT_EQ(pe_variance({{64, 32, 0.5 - 0.5e-6, 1.0}}).kind, VerdictKind::holds);
  EXPECT_EQ(pe_variance({{64, 32, 0.5 + 2e-6, 1.0}}).kind, VerdictKind::does_not_hold);
  EXPECT_EQ(pe_variance({{64, 32, 0.5 - 2e-6, 1.0}}).kind, VerdictKind::does_not_hold);
}

TEST(PeVariance, ARowMeanSquareOffLimitsTheClaimToTheOtherCases) {
  expect_only_if(pe_variance({{64, 32, 0.5, 1.0}, {128, 32, 0.45, 1.0}}), "L = 64, d = 32");
}

TEST(PeVariance, RefutedEverywhereDoesNotHold) {
  const Verdict v = pe_variance({{16, 64, 0.5, 0.2}, {64, 512, 0.5, 0.5}});
  expect_refuted(v);
  EXPECT_TRUE(contains(v.sentence, "L = 16, d = 64 and L = 64, d = 512 tested")) << v.sentence;
}

TEST(PeVariance, FailedValuesNeverHold) {
  EXPECT_EQ(pe_variance({{64, 32, kNaN, 1.0}}).kind, VerdictKind::does_not_hold);
  EXPECT_EQ(pe_variance({{64, 32, 0.5, kNaN}}).kind, VerdictKind::does_not_hold);
}

TEST(PeVariance, ThrowsWithoutCases) { EXPECT_THROW(pe_variance({}), scalelab::Error); }

// ---- E3, E4 -------------------------------------------------------------------------------

EmbedArm arm(const std::string& init, const std::string& scale, double ratio, double r2 = kNaN) {
  return {init, scale, seeds(ratio), seeds(r2)};
}

TEST(UnscaledDominates, HoldsAboveTheRatioWithR2BelowThreshold) {
  EXPECT_EQ(unscaled_dominates({arm("normal", "1", above(kDominatesRatio), below(kDrownedR2))}).kind,
            VerdictKind::holds);
  EXPECT_EQ(unscaled_dominates({arm("normal", "1", 100.0, 0.0)}).kind, VerdictKind::holds);
}

TEST(UnscaledDominates, RatioAtOrJustBelowThresholdDoesNotHold) {
  // One rule with E4: a ratio of 4 is "matched", so not dominating.
  expect_refuted(unscaled_dominates({arm("normal", "1", kDominatesRatio, 0.1)}));
  expect_refuted(unscaled_dominates({arm("normal", "1", below(kDominatesRatio), 0.1)}));
}

TEST(UnscaledDominates, R2AtOrJustAboveThresholdDoesNotHold) {
  expect_refuted(unscaled_dominates({arm("normal", "1", 50.0, above(kDrownedR2))}));
  expect_refuted(unscaled_dominates({arm("normal", "1", 50.0, kDrownedR2)}));
}

// The premise is the unscaled N(0,1) arm: another arm that dominates is context, never a condition.
TEST(UnscaledDominates, OtherArmsAreNeverConditions) {
  const Verdict v = unscaled_dominates({arm("normal", "1", 1.0, 0.95), arm("normal", "sqrt_d", 100.0, 0.1),
                                        arm("xavier_uniform", "sqrt_d", 1.0, 0.1)});
  expect_refuted(v);
  EXPECT_TRUE(contains(v.sentence, "context")) << v.sentence;
  EXPECT_TRUE(contains(v.sentence, "init N(0,1) × sqrt(d)")) << v.sentence;
}

TEST(UnscaledDominates, SentenceCarriesTheUnscaledNumbersAndTheDirection) {
  const Verdict v = unscaled_dominates({arm("normal", "1", 1.25, 0.875)});
  EXPECT_NE(v.sentence.find(fmt(1.25)), std::string::npos) << v.sentence;
  EXPECT_NE(v.sentence.find(fmt(87.5) + " %"), std::string::npos) << v.sentence;
  EXPECT_TRUE(contains(v.sentence, "(larger)")) << v.sentence;
}

TEST(UnscaledDominates, SaysMarginalWhenTheSeedsSpanTheThresholdDistance) {
  // All seeds below 4, the median 3.82 within the seeds' spread of it.
  const Verdict v = unscaled_dominates({{"normal", "1", {3.6, 3.82, 3.95}, seeds(0.9)}});
  expect_refuted(v);
  EXPECT_TRUE(contains(v.sentence, "marginal: moving every seed by the seeds' own spread")) << v.sentence;
  EXPECT_TRUE(contains(v.sentence, "the median " + fmt(3.82) + " is")) << v.sentence;
  EXPECT_TRUE(contains(v.sentence, "below the threshold 4")) << v.sentence;
}

TEST(UnscaledDominates, FailedSeedsNeverHold) {
  const Verdict v = unscaled_dominates({{"normal", "1", {100.0, kInf, 100.0}, seeds(0.1)}});
  EXPECT_NE(v.kind, VerdictKind::holds);
  EXPECT_TRUE(contains(v.sentence, "1 of 3 failed")) << v.sentence;
  EXPECT_NE(unscaled_dominates({{"normal", "1", seeds(100.0), {0.1, kNaN, 0.1}}}).kind, VerdictKind::holds);
}

TEST(UnscaledDominates, ThrowsWithoutTheNormalScaleOneArm) {
  EXPECT_THROW(unscaled_dominates({arm("normal", "sqrt_d", 100.0, 0.0), arm("xavier", "1", 100.0, 0.0)}),
               scalelab::Error);
  EXPECT_THROW(unscaled_dominates({}), scalelab::Error);
}

TEST(ScaledMatches, HoldsWhenEveryArmIsWithinTheFactorInclusive) {
  EXPECT_EQ(scaled_matches({arm("normal", "sqrt_d", below(kMatchedFactor)), arm("xavier", "sqrt_d", above(1.0 / kMatchedFactor))}).kind,
            VerdictKind::holds);
  EXPECT_EQ(scaled_matches({arm("a", "sqrt_d", kMatchedFactor), arm("b", "sqrt_d", 1.0 / kMatchedFactor)}).kind,
            VerdictKind::holds);
}

TEST(ScaledMatches, HoldsOnlyIfOnTheOneArmThatMatches) {
  const Verdict hi = scaled_matches({arm("xavier_uniform", "sqrt_d", 1.0), arm("normal", "sqrt_d", above(kMatchedFactor))});
  expect_only_if(hi, "init Xavier uniform × sqrt(d)");
  EXPECT_TRUE(contains(hi.sentence, "fails at init N(0,1) × sqrt(d)")) << hi.sentence;
  EXPECT_TRUE(contains(hi.sentence, "the token part larger")) << hi.sentence;
  const Verdict lo = scaled_matches({arm("xavier_uniform", "sqrt_d", 1.0), arm("small", "sqrt_d", below(1.0 / kMatchedFactor))});
  expect_only_if(lo, "init Xavier uniform × sqrt(d)");
  EXPECT_TRUE(contains(lo.sentence, "the token part smaller")) << lo.sentence;
}

TEST(ScaledMatches, DoesNotHoldWhenNoArmMatches) {
  const Verdict v = scaled_matches({arm("normal", "sqrt_d", 64.0), arm("tiny", "sqrt_d", 0.01)});
  expect_refuted(v);
  EXPECT_NE(v.sentence.find(fmt(64.0)), std::string::npos) << v.sentence;
}

TEST(ScaledMatches, SaysMarginalNearTheFactor) {
  const Verdict v = scaled_matches({{"normal_inv_d", "sqrt_d", {3.6, 3.82, 3.95}, {}}});
  EXPECT_EQ(v.kind, VerdictKind::holds);
  EXPECT_TRUE(contains(v.sentence, "marginal")) << v.sentence;
}

TEST(ScaledMatches, FailedSeedsNeverHold) {
  const Verdict v = scaled_matches({{"normal_inv_d", "sqrt_d", {1.0, kNaN, 1.0}, {}}});
  EXPECT_NE(v.kind, VerdictKind::holds);
  EXPECT_TRUE(contains(v.sentence, "1 of 3 failed")) << v.sentence;
}

TEST(ScaledMatches, ThrowsWithoutArms) { EXPECT_THROW(scaled_matches({}), scalelab::Error); }

// ---- E5 -----------------------------------------------------------------------------------

ExponentCase exps(const std::string& condition, double k1, double k_sqrt, double kd) {
  return {condition, seeds(k1), seeds(k_sqrt), seeds(kd)};
}

TEST(LogitVarianceExponents, HoldsWithinToleranceOnBothSides) {
  const double in = below(kExponentTolerance);
  EXPECT_EQ(logit_variance_exponents({exps("Post-LN", 2 + in, 3, 4 - in)}).kind, VerdictKind::holds);
  EXPECT_EQ(logit_variance_exponents({exps("Post-LN", 2 - in, 3, 4 + in)}).kind, VerdictKind::holds);
}

TEST(LogitVarianceExponents, ScaleOneJustOutsideToleranceDoesNotHold) {
  const double out = above(kExponentTolerance);
  expect_refuted(logit_variance_exponents({exps("Post-LN", 2 + out, 3, 4)}));
  expect_refuted(logit_variance_exponents({exps("Post-LN", 2 - out, 3, 4)}));
}

TEST(LogitVarianceExponents, ScaleDJustOutsideToleranceDoesNotHold) {
  const double out = above(kExponentTolerance);
  expect_refuted(logit_variance_exponents({exps("Post-LN", 2, 2, 4 + out)}));
  expect_refuted(logit_variance_exponents({exps("Post-LN", 2, 2, 4 - out)}));
}

// The seed one level off (×sqrt(d) gives d²) is reported, never a condition.
TEST(LogitVarianceExponents, OneLevelOffDoesNotHold) {
  const Verdict v = logit_variance_exponents({exps("Post-LN", 0.0, 2.0, 4.0), exps("Pre-LN", 0.0, 0.0, 0.0)});
  expect_refuted(v);
  EXPECT_TRUE(contains(v.sentence, "The part that fails: unscaled: d²")) << v.sentence;
}

TEST(LogitVarianceExponents, HoldsOnlyIfOnTheOneNormPlacementWhereBothExponentsMatch) {
  const Verdict v = logit_variance_exponents({exps("Post-LN", 2.0, 3.0, 4.0), exps("Pre-LN", 0.0, 0.0, 0.0)});
  expect_only_if(v, "Post-LN");
}

TEST(LogitVarianceExponents, SentenceCarriesEveryFittedExponent) {
  const Verdict v = logit_variance_exponents({exps("Post-LN", 1.97, 2.04, 3.88), exps("Pre-LN", 0.0123, 0.0, 0.0)});
  for (double x : {1.97, 2.04, 3.88, 0.0123})
    EXPECT_NE(v.sentence.find(fmt(x)), std::string::npos) << fmt(x) << " in " << v.sentence;
}

TEST(LogitVarianceExponents, FailedSeedsNeverHold) {
  const Verdict v = logit_variance_exponents({{"Post-LN", {2.0, kNaN, 2.0}, seeds(3.0), seeds(4.0)}});
  EXPECT_NE(v.kind, VerdictKind::holds);
  EXPECT_TRUE(contains(v.sentence, "1 of 3 failed")) << v.sentence;
}

// ---- E6 -----------------------------------------------------------------------------------

TEST(EmbeddingOverflowsF16, HoldsWhenTheEmbeddingItselfOverflows) {
  const Verdict v = embedding_overflows_f16({{"N(0,1) init × sqrt(d), d = 4096", seeds(1.0), 7.0e4,
                                              "encoder embedding: embedding_scale", "encoder embedding: embedding_scale", 3.0}});
  EXPECT_EQ(v.kind, VerdictKind::holds);
  EXPECT_TRUE(contains(v.sentence, "d = 4096")) << v.sentence;
  EXPECT_NE(v.sentence.find(fmt(7.0e4)), std::string::npos) << v.sentence;
}

TEST(EmbeddingOverflowsF16, ZeroEmbeddingOverflowDoesNotHoldAndNamesTheFirstAndTheMost) {
  const Verdict v = embedding_overflows_f16({{"N(0,1) init × sqrt(d), d = 512", seeds(0.0), 900.0,
                                              "encoder layer 0 self_attn: qk_matmul",
                                              "encoder layer 0 self_attn: layernorm_var", 40.0}});
  expect_refuted(v);
  EXPECT_TRUE(contains(v.sentence, "first op to overflow in forward order is encoder layer 0 self_attn: qk_matmul"))
      << v.sentence;
  EXPECT_TRUE(contains(v.sentence, "most overflows is encoder layer 0 self_attn: layernorm_var (" + fmt(40.0) + ")"))
      << v.sentence;
}

TEST(EmbeddingOverflowsF16, NothingOverflowsDoesNotHold) {
  const Verdict v = embedding_overflows_f16({{"a", seeds(0.0), 22.6, "", "", 0.0}, {"b", seeds(0.0), 1.0, "", "", 0.0}});
  expect_refuted(v);
  EXPECT_TRUE(contains(v.sentence, "no op overflows")) << v.sentence;
}

TEST(EmbeddingOverflowsF16, HoldsOnlyIfOnTheOneInitThatOverflows) {
  expect_only_if(embedding_overflows_f16({{"N(0,1) init", seeds(2.0), 7e4, "x", "x", 2.0},
                                          {"N(0,1/d) init", seeds(0.0), 80.0, "", "", 0.0}}),
                 "N(0,1) init");
}

TEST(EmbeddingOverflowsF16, FailedCountsNeverHold) {
  EXPECT_NE(embedding_overflows_f16({{"a", {1.0, kNaN, 1.0}, 7e4, "", "", 0.0}}).kind, VerdictKind::holds);
  EXPECT_NE(embedding_overflows_f16({{"a", seeds(kNaN), 7e4, "", "", 0.0}}).kind, VerdictKind::holds);
}

TEST(FirstInForwardOrder, IsTheFirstNotTheMost) {
  EXPECT_EQ(first_in_forward_order({}), "");
  EXPECT_EQ(first_in_forward_order({{"a", 0.0}, {"b", 0.0}}), "");
  EXPECT_EQ(first_in_forward_order({{"a", 0.0}, {"b", 3.0}, {"c", 7.0}}), "b");
}

TEST(MostOverflowingOp, PicksTheMostOverflowsAndEmptyWhenNone) {
  EXPECT_EQ(most_overflowing_op({}), "");
  EXPECT_EQ(most_overflowing_op({{"a", 0.0}, {"b", 0.0}}), "");
  EXPECT_EQ(most_overflowing_op({{"a", 3.0}, {"b", 7.0}, {"c", 5.0}}), "b");
}

// ---- A2 -----------------------------------------------------------------------------------

WithinCase within(const std::string& where, double share, double var = 1.0) { return {where, seeds(share), seeds(var)}; }

TEST(LogitsWithinRange, BranchesAndThreshold) {
  EXPECT_EQ(logits_within_range({within("synthetic", above(kWithinShare)), within("model at init", kWithinShare)}).kind,
            VerdictKind::holds);
  const Verdict some = logits_within_range({within("synthetic", above(kWithinShare)), within("after training", below(kWithinShare))});
  expect_only_if(some, "synthetic");
  EXPECT_TRUE(contains(some.sentence, "after training")) << some.sentence;
  expect_refuted(logits_within_range({within("after training", below(kWithinShare))}));
}

TEST(LogitsWithinRange, UnitVarianceIsAPart) {
  // Within [-3, 3] everywhere, but the trained logits have variance 0.3: holds only at init.
  const Verdict v = logits_within_range({within("the model at init", 1.0, 1.1), within("after training", 1.0, 0.3)});
  expect_only_if(v, "the model at init");
  EXPECT_TRUE(contains(v.sentence, "below 1")) << v.sentence;
  expect_refuted(logits_within_range({within("a", 1.0, above(kUnitVarianceFactor)), within("b", 1.0, 0.1)}));
}

TEST(LogitsWithinRange, FailedSeedsNeverHold) {
  const Verdict v = logits_within_range({{"after training", {1.0, kNaN, 1.0}, seeds(1.0)}});
  EXPECT_NE(v.kind, VerdictKind::holds);
  EXPECT_TRUE(contains(v.sentence, "1 of 3 failed")) << v.sentence;
}

TEST(LogitsWithinRange, ThrowsWithoutCases) { EXPECT_THROW(logits_within_range({}), scalelab::Error); }

// ---- A5 -----------------------------------------------------------------------------------

RowCase rows(int64_t n, double pp, double extreme = 0.001) { return {n, seeds(pp), seeds(extreme)}; }

TEST(SoftmaxDerivativeRange, BothBoundsBothSides) {
  EXPECT_EQ(softmax_derivative_range({rows(2, below(kPpHi)), rows(64, above(kPpLo))}).kind, VerdictKind::holds);
  EXPECT_EQ(softmax_derivative_range({rows(2, kPpHi), rows(64, kPpLo)}).kind, VerdictKind::holds);
  expect_refuted(softmax_derivative_range({rows(2, above(kPpHi))}));
  expect_refuted(softmax_derivative_range({rows(1024, below(kPpLo))}));
}

TEST(SoftmaxDerivativeRange, ExtremeInputsNearZeroBothSides) {
  EXPECT_EQ(softmax_derivative_range({rows(10, 0.1, kNearZeroPp)}).kind, VerdictKind::holds);
  expect_refuted(softmax_derivative_range({rows(10, 0.1, above(kNearZeroPp))}));
}

TEST(SoftmaxDerivativeRange, HoldsOnlyIfForShortRows) {
  const Verdict v = softmax_derivative_range({rows(4, 0.2), rows(16, 0.06), rows(1024, 0.001)});
  EXPECT_EQ(v.kind, VerdictKind::holds_only_if);
  EXPECT_EQ(v.condition, "n = 4 or n = 16");
  EXPECT_TRUE(contains(v.sentence, "n = 1024 (mean p(1-p) " + fmt(0.001))) << v.sentence;
  EXPECT_TRUE(contains(v.sentence, "below the range")) << v.sentence;
}

TEST(SoftmaxDerivativeRange, ConditionListsOnlyTheValueWhereBothPartsHeld) {
  // Outside at n = 2 (too high) and n = 1024 (too low), inside at 10: only n = 10 is named.
  expect_only_if(softmax_derivative_range({rows(2, above(kPpHi)), rows(10, 0.09), rows(1024, below(kPpLo))}), "n = 10");
  // In range at 2 and 10, but at 10 extreme rows keep gradient: only n = 2.
  expect_only_if(softmax_derivative_range({rows(2, 0.2), rows(10, 0.09, 0.05), rows(1024, below(kPpLo))}), "n = 2");
}

TEST(SoftmaxDerivativeRange, RefutedOnEveryRowLengthDoesNotHold) {
  const Verdict v = softmax_derivative_range({rows(64, 0.01, 0.05), rows(256, 0.004, 0.05)});
  expect_refuted(v);
  EXPECT_TRUE(contains(v.sentence, "n = 64 and n = 256 tested")) << v.sentence;
}

TEST(SoftmaxDerivativeRange, FailedSeedsNeverHold) {
  EXPECT_NE(softmax_derivative_range({{2, {0.2, kNaN, 0.2}, seeds(0.001)}}).kind, VerdictKind::holds);
  EXPECT_NE(softmax_derivative_range({{2, seeds(0.2), {0.001, kInf, 0.001}}}).kind, VerdictKind::holds);
}

TEST(SoftmaxDerivativeRange, ThrowsWithoutCases) { EXPECT_THROW(softmax_derivative_range({}), scalelab::Error); }

// ---- A9 -----------------------------------------------------------------------------------

TEST(ScaledLogitsOverflow, Branches) {
  EXPECT_EQ(scaled_logits_overflow({{"f16, max subtracted", seeds(4.0)}, {"bf16, max subtracted", seeds(1.0)}}).kind,
            VerdictKind::holds);
  const Verdict without = scaled_logits_overflow({{"f16, scale after QKᵀ, no max subtraction", seeds(1.0)},
                                                  {"f16, q pre-scaled, max subtracted", seeds(0.0)}});
  expect_only_if(without, "f16, scale after QKᵀ, no max subtraction");
  expect_refuted(scaled_logits_overflow({{"f16, no max subtraction", seeds(0.0)}, {"bf16, max subtracted", seeds(0.0)}}));
}

TEST(ScaledLogitsOverflow, SentenceGivesTheMedianOverSeeds) {
  const Verdict v = scaled_logits_overflow({{"f16, no max subtraction", {2.0, 4.0, 6.0}}});
  EXPECT_TRUE(contains(v.sentence, fmt(4.0) + " (" + fmt(2.0) + " to " + fmt(6.0) + " over 3 seeds)")) << v.sentence;
}

TEST(ScaledLogitsOverflow, SeedsThatDisagreeOrFailedNeverHold) {
  EXPECT_EQ(scaled_logits_overflow({{"f16", {0.0, 4.0, 0.0}}}).kind, VerdictKind::not_testable);
  EXPECT_NE(scaled_logits_overflow({{"f16", {kNaN, 4.0, 4.0}}}).kind, VerdictKind::holds);
}

// ---- A10 ----------------------------------------------------------------------------------

FlashCase flash(const std::string& format, double spread, double flash_error, double naive_error, double overflow = 0) {
  return {format, spread, seeds(flash_error), seeds(naive_error), seeds(overflow)};
}

TEST(FlashIsSafe, HoldsJustInsideBothThresholds) {
  EXPECT_EQ(flash_is_safe({flash("f32", 1, below(kSameResultRel), 1e-7), flash("f16", 1, below(kSafeErrorFactor) * 1e-3, 1e-3)}).kind,
            VerdictKind::holds);
}

TEST(FlashIsSafe, F32JustAboveDoesNotHold) {
  expect_refuted(flash_is_safe({flash("f32", 1, above(kSameResultRel), 1e-7), flash("f16", 1, 1e-3, 1e-3)}));
}

TEST(FlashIsSafe, ReducedFormatJustAboveFactorOrOverflowHoldsOnlyOnTheSafeCases) {
  const Verdict err = flash_is_safe({flash("f32", 1, 1e-7, 1e-7), flash("bf16", 1, 1e-3, 1e-3),
                                     flash("bf16", 30, above(kSafeErrorFactor) * 1e-2, 1e-2)});
  expect_only_if(err, "bf16, logit std 1");
  const Verdict of = flash_is_safe({flash("f32", 1, 1e-7, 1e-7), flash("f16", 1, 1e-3, 1e-3), flash("f16", 30, 1e-3, 1e-3, 1.0)});
  expect_only_if(of, "f16, logit std 1");
}

TEST(FlashIsSafe, UnsafeEverywhereDoesNotHold) {
  expect_refuted(flash_is_safe({flash("f32", 1, 1e-7, 1e-7), flash("f16", 1, 1e-3, 1e-3, 2.0), flash("bf16", 10, 1e-1, 1e-3)}));
}

TEST(FlashIsSafe, ThresholdsAreInclusive) {
  EXPECT_EQ(flash_is_safe({flash("f32", 1, kSameResultRel, 1e-7)}).kind, VerdictKind::holds);
  EXPECT_EQ(flash_is_safe({flash("f32", 1, 1e-7, 1e-7), flash("f16", 1, kSafeErrorFactor * 1e-3, 1e-3)}).kind,
            VerdictKind::holds);
}

TEST(FlashIsSafe, SentenceCarriesTheErrors) {
  const Verdict v = flash_is_safe({flash("f32", 1, 1e-7, 2e-7), flash("f16", 10, 0.00125, 0.0025)});
  EXPECT_TRUE(contains(v.sentence, "f16, logit std 10")) << v.sentence;
  EXPECT_TRUE(contains(v.sentence, "flash " + fmt(0.00125) + " (" + fmt(0.00125))) << v.sentence;
  EXPECT_TRUE(contains(v.sentence, "naive " + fmt(0.0025))) << v.sentence;
}

TEST(FlashIsSafe, FailedErrorsNeverHold) {
  EXPECT_NE(flash_is_safe({{"f32", 1, {1e-7, kNaN, 1e-7}, seeds(1e-7), seeds(0)}}).kind, VerdictKind::holds);
  EXPECT_NE(flash_is_safe({flash("f32", 1, 1e-7, 1e-7), {"f16", 1, {1e-3, kInf, 1e-3}, seeds(1e-3), seeds(0)}}).kind,
            VerdictKind::holds);
}

TEST(FlashIsSafe, ThrowsWithoutAnF32Case) {
  EXPECT_THROW(flash_is_safe({}), scalelab::Error);
  EXPECT_THROW(flash_is_safe({flash("f16", 1, 0.00125, 0.0025)}), scalelab::Error);
}

// ---- A13 ----------------------------------------------------------------------------------

FlagCase flag(int64_t n, double inv_dk, double inv_sqrt) { return {n, seeds(inv_dk), seeds(inv_sqrt)}; }

TEST(UniformThreshold, ValuesAndDomain) {
  EXPECT_DOUBLE_EQ(uniform_threshold(2), 1.0 - 0.25 / std::log(2.0));
  EXPECT_DOUBLE_EQ(uniform_threshold(1024), 1.0 - 0.25 / std::log(1024.0));
  EXPECT_LT(uniform_threshold(16), uniform_threshold(1024));
  EXPECT_LT(uniform_threshold(1024), 1.0);
  EXPECT_THROW(uniform_threshold(1), scalelab::Error);
  EXPECT_THROW(uniform_threshold(0), scalelab::Error);
  EXPECT_THROW(uniform_threshold(-4), scalelab::Error);
}

TEST(UniformFlag, BranchesAndBothShareThresholds) {
  EXPECT_EQ(uniform_flag({flag(16, above(kFlagShare), below(kFlagShare)), flag(256, kFlagShare, 0.0)}).kind,
            VerdictKind::holds);
  expect_refuted(uniform_flag({flag(16, 0.9, kFlagShare)}));
  expect_refuted(uniform_flag({flag(16, 0.9, above(kFlagShare))}));
  expect_refuted(uniform_flag({flag(16, below(kFlagShare), 0.0)}));
}

TEST(UniformFlag, HoldsOnlyIfOnTheOneRowLengthWhereItWorks) {
  const Verdict v = uniform_flag({flag(10, 0.9, 0.0), flag(150, 0.9, 0.8), flag(1024, below(kFlagShare), 0.0)});
  expect_only_if(v, "n = 10");
  EXPECT_FALSE(contains(v.condition, "threshold")) << v.condition;
}

TEST(UniformFlag, FailedSeedsNeverHold) {
  EXPECT_NE(uniform_flag({{16, {0.9, kNaN, 0.9}, seeds(0.0)}}).kind, VerdictKind::holds);
  EXPECT_NE(uniform_flag({{16, seeds(0.9), {0.0, kNaN, 0.0}}}).kind, VerdictKind::holds);
}

TEST(UniformFlag, ThrowsWithoutCases) { EXPECT_THROW(uniform_flag({}), scalelab::Error); }

TEST(UniformFlag, SentenceCarriesTheShares) {
  const Verdict v = uniform_flag({flag(128, 0.875, 0.125)});
  EXPECT_TRUE(contains(v.sentence, "n = 128 (rows flagged under 1/d_k " + fmt(87.5) + " %")) << v.sentence;
  EXPECT_TRUE(contains(v.sentence, "rows flagged under 1/sqrt(d_k) " + fmt(12.5) + " %")) << v.sentence;
}

// ---- marginal cases: the seeds moved by their own spread -------------------------------------

TEST(DecideBySeeds, MarginalOnlyWhenMovingTheSeedsByTheirSpreadChangesTheOutcome) {
  const auto below4 = [](double x) { return x < 4.0; };
  EXPECT_FALSE(decide_by_seeds({3.0, 3.1, 3.2}, below4).marginal);  // 0.2 of spread, 0.8 away
  const SeedDecision near = decide_by_seeds({3.6, 3.82, 3.95}, below4);
  EXPECT_EQ(near.vote.outcome, Outcome::yes);
  EXPECT_TRUE(near.marginal);
  EXPECT_NEAR(near.spread, 0.35, 1e-12);
  EXPECT_FALSE(decide_by_seeds({3.9}, below4).marginal);  // one seed: no spread
  EXPECT_EQ(decide_by_seeds({3.0, 3.5, 3.9}, below4).vote.outcome, Outcome::yes);
  EXPECT_TRUE(decide_by_seeds({3.0, 3.5, 3.9}, below4).marginal);
  EXPECT_EQ(decide_by_seeds({3.9, kNaN, 4.1}, below4).vote.outcome, Outcome::undecided);
  EXPECT_FALSE(decide_by_seeds({3.9, kNaN, 4.1}, below4).marginal);  // undecided is never marginal
}

TEST(DecideBySeeds, SeedShiftMovesEveryFiniteValueByTheSpread) {
  const auto below4 = [](double x) { return x < 4.0; };
  const std::vector<double> near = {3.6, 3.82, 3.95}, far = {1.0, 1.1, 1.2};
  EXPECT_EQ(SeedShift::direction(), 0);
  {
    SeedShift up(+1);
    EXPECT_EQ(SeedShift::direction(), 1);
    EXPECT_EQ(decide_by_seeds(near, below4).vote.outcome, Outcome::undecided);  // 3.95, 4.17, 4.30
    EXPECT_EQ(decide_by_seeds(far, below4).vote.outcome, Outcome::yes);
    SeedShift down(-1);
    EXPECT_EQ(decide_by_seeds({3.9, 4.0, 4.2}, below4).vote.outcome, Outcome::yes);  // 3.6, 3.7, 3.9
  }
  EXPECT_EQ(SeedShift::direction(), 0);
  EXPECT_THROW(SeedShift(0), scalelab::Error);
}

TEST(ThresholdDistance, SaysHowFarTheMedianIs) {
  EXPECT_TRUE(contains(threshold_distance({3.6, 3.82, 4.1}, 4.0), "4.5 % below the threshold 4"))
      << threshold_distance({3.6, 3.82, 4.1}, 4.0);
  EXPECT_TRUE(contains(threshold_distance({4.1, 4.2, 4.3}, 4.0), "above the threshold 4"));
  EXPECT_EQ(threshold_distance({3.9, 4.1}, kNaN), "");
  EXPECT_EQ(threshold_distance({3.9, 4.1}, 0.0), "");
}

}  // namespace
}  // namespace scalelab::ledger
