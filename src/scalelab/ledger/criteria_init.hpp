// ledger/criteria_init: the criteria of the claims measured at initialisation or without training
// (E1-E6, A1, A2, A5, A9, A10, A13), as pure functions from measurements to a verdict.
//
// The thresholds are fixed here, before any run, and copied into each claim's JSON; the tests
// (tests/ledger/criteria_init_test.cpp) evaluate each function on synthetic measurements on both
// sides of every threshold. The rules (docs/ledger.md, "Rules"), as for the training claims:
//   - each arm or swept value is a case (verdict.hpp, from_cases), named by its own condition
//     ("d_k = 64", "L = 16, d = 512"): a "holds only if" names the cases where the claim held;
//   - each clause of a claim is a part (from_parts), judged on its own cases;
//   - where seeds are measured, a case is decided only when every seed agrees (stats.hpp, vote);
//     a failed (NaN or infinite) value never supports the claim and is counted in the sentence;
//   - a decided case that moving every seed by the seeds' own spread would change says "marginal"
//     (stats.hpp, decide_by_seeds), with the median's distance to its threshold where it has one.
#pragma once
#include <string>
#include <vector>

#include "scalelab/ledger/verdict.hpp"

namespace scalelab::ledger::criteria {

// "; the median 3.82 is 4.5 % below the threshold 4" (failed values ranked +inf); "" without a
// finite, non-zero threshold or a finite median. Said beside a marginal case.
std::string threshold_distance(const std::vector<double>& per_seed, double threshold);

// E1, A1: a Monte Carlo mean agrees with its closed form when |estimate/expected − 1| is within
// `sigmas` standard errors (rel_se: the relative standard error of the estimate). One case per
// estimate; `conditions` names them ("Monte Carlo, d = 64"), "estimate <i>" when empty.
inline constexpr double kMonteCarloSigmas = 5.0;
Verdict matches_closed_form(const std::vector<double>& ratios, const std::vector<double>& rel_se,
                            const std::string& what, const std::vector<std::string>& conditions = {});

// E2: two readings, each a part judged on every (L, d): each position's row has mean square 0.5
// (sin²+cos² = 1; every row within 1e-6), and per dimension the variance over positions is near
// 0.5 (>= 90 % of the dimensions within [0.4, 0.6]).
inline constexpr double kRowMeanSquareTolerance = 1e-6;
inline constexpr double kPeDimLo = 0.4, kPeDimHi = 0.6, kPeDimShare = 0.9;
struct PeCase {
  int64_t length = 0, d_model = 0;
  double worst_row_mean_square = 0;  // over every position p, the mean_i PE[p,i]² furthest from 0.5
  double dims_near_half = 0;         // share of dimensions with variance over positions in [lo, hi]
};
Verdict pe_variance(const std::vector<PeCase>& cases);

// E3, E4 read one tensor, Var(token part) / Var(position part) per entry of the encoder input at
// init, by one rule: the two parts are "matched in magnitude" when the ratio is within a factor
// of 4 of 1, and the token part "dominates" when it is larger than that (ratio > 4).
inline constexpr double kMatchedFactor = 4.0;
inline constexpr double kDominatesRatio = kMatchedFactor;
// E3: the position is "drowned" when a least-squares probe fitted on the model's own layer-0
// input recovers less than half of the position encoding's variance on held-out rows (R² < 0.5).
inline constexpr double kDrownedR2 = 0.5;
struct EmbedArm {
  std::string init, scale;           // "normal", "1"
  std::vector<double> ratio;         // per seed, Var(token) / Var(position)
  std::vector<double> position_r2;   // per seed, held-out R² (E3 only)
};
std::string embed_arm_condition(const EmbedArm& arm);  // "init N(0,1) × 1"
// Judges the unscaled N(0,1) arm only (the claim's premise); the others are context.
Verdict unscaled_dominates(const std::vector<EmbedArm>& arms);
// Judges the ×sqrt(d) arms, one case per init.
Verdict scaled_matches(const std::vector<EmbedArm>& arms);

// E5: the seed's exponents (QKᵀ variance ∝ d^2 unscaled, d^4 with ×d), each accepted within
// ±0.5, each a part; the norm placements are the cases. ×sqrt(d) is reported beside them.
inline constexpr double kExponentTolerance = 0.5;
struct ExponentCase {
  std::string condition;                            // "Post-LN"
  std::vector<double> scale_1, scale_sqrt_d, scale_d;  // per seed, the fitted exponent
};
Verdict logit_variance_exponents(const std::vector<ExponentCase>& cases);

// E6: the claim holds for an arm when the ×sqrt(d) embedding op itself overflows f16 on every
// seed. The first op that overflows in forward order and the op with the most overflows are
// reported separately.
struct OpOverflow {
  std::string op;        // "encoder layer 0 self_attn: qk_matmul"
  double overflow = 0;   // overflowing results
};
// The first op with overflow > 0 in the given (forward) order; "" if none.
std::string first_in_forward_order(const std::vector<OpOverflow>& ordered);
// The op with the most overflows; "" if none.
std::string most_overflowing_op(const std::vector<OpOverflow>& ops);
struct OverflowArm {
  std::string condition;                    // "N(0,1) init, d = 4096"
  std::vector<double> embedding_overflow;   // per seed, overflowing results of the embedding scale
  double embedding_max_abs = 0;             // largest |value| of the scaled embedding
  std::string first_op;                     // first overflowing op in forward order ("" none)
  std::string most_op;                      // the op with most overflows ("" none)
  double most_count = 0;
};
Verdict embedding_overflows_f16(const std::vector<OverflowArm>& arms);

// A1's second part: in the model at init, Var(q_i) and Var(k_i) meet the premise (variance 1)
// when both lie within a factor of 2 of 1 on every seed.
inline constexpr double kUnitVarianceFactor = 2.0;
struct PremiseCase {
  std::string condition;           // "the model at init (N(0,1/d)·sqrt(d) embeddings, Xavier)"
  std::vector<double> q_var, k_var;  // per seed
};
Verdict unit_variance_premise(const std::vector<PremiseCase>& cases);

// A2: two parts on the same cases: "unit variance" = Var(scaled logits) within a factor of 2 of
// 1; "almost all within [-3, 3]" = share >= 99 %; every seed.
inline constexpr double kWithinShare = 0.99;
struct WithinCase {
  std::string where;           // "synthetic", "the model at init", "the model after training"
  std::vector<double> share;   // per seed, share of logits within [-3, 3]
  std::vector<double> var;     // per seed, Var(scaled logits)
};
Verdict logits_within_range(const std::vector<WithinCase>& cases);

// A5: two parts on the same row lengths n. "About 0.05-0.25 in [-3, 3]": mean p(1−p) over the
// entries of unit-variance rows (σ = 1) in [0.05, 0.25]. "Near 0 at extreme inputs": for rows
// with logit std σ = 10, the mean over rows of the row's largest p(1−p) (the gradient a
// saturated row keeps) <= 0.01.
inline constexpr double kPpLo = 0.05, kPpHi = 0.25, kNearZeroPp = 0.01;
inline constexpr double kExtremeSigma = 10.0;
struct RowCase {
  int64_t n = 0;
  std::vector<double> mean_pp;       // per seed, σ = 1: mean over entries of p(1−p)
  std::vector<double> extreme_max_pp;  // per seed, σ = 10: mean over rows of max_j p_j(1−p_j)
};
Verdict softmax_derivative_range(const std::vector<RowCase>& cases);

// A9: each configuration a case; it holds where every seed gives an overflowing or NaN result.
struct AttentionOverflow {
  std::string condition;         // "f16, scale after QKᵀ, no max subtraction"
  std::vector<double> overflow;  // per seed, overflowing or NaN results over every op
};
Verdict scaled_logits_overflow(const std::vector<AttentionOverflow>& cases);

// A10: two parts, on the logit spreads (std of the scaled logits) tried. "Same result" = in f32
// max |flash − reference| <= 1e-5 · max |reference|; "numerically safe" = in f16 and bf16 the
// flash error is <= 2x the naive kernel's and the flash kernel has no overflowing or NaN result.
inline constexpr double kSameResultRel = 1e-5, kSafeErrorFactor = 2.0;
struct FlashCase {
  std::string format;                       // "f32", "f16", "bf16"
  double spread = 1;                        // std of the scaled logits
  std::vector<double> flash_error, naive_error;  // per seed, relative to max |reference|
  std::vector<double> flash_overflow;       // per seed, the flash kernel's overflow + NaN results
};
Verdict flash_is_safe(const std::vector<FlashCase>& cases);

// A13: the flag fires for a configuration when >= 50 % of rows exceed the row-length threshold
// tau(n) = 1 − 0.25 / ln n (halfway between unit-variance logits, 1 − 1/(2 ln n), and uniform),
// fixed before the run. Two parts on the row lengths n: it fires for 1/d_k, and it stays quiet
// for 1/sqrt(d_k); every seed.
inline constexpr double kFlagShare = 0.5;
double uniform_threshold(int64_t n);
struct FlagCase {
  int64_t n = 0;
  std::vector<double> share_inv_dk, share_inv_sqrt_dk;  // per seed, rows above tau(n)
};
Verdict uniform_flag(const std::vector<FlagCase>& cases);

}  // namespace scalelab::ledger::criteria
