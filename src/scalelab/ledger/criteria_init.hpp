// ledger/criteria_init: the criteria of the claims measured at initialisation or without training
// (E1-E6, A1, A2, A5, A9, A10, A13), as pure functions from measurements to a verdict.
//
// The thresholds are fixed here, before any run, and copied into each claim's JSON; the tests
// (tests/ledger/criteria_init_test.cpp) evaluate each function on synthetic measurements on both
// sides of every threshold. Conditions are never text: a "holds only if" comes from from_cases /
// from_parts (verdict.hpp) over the cases measured.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "scalelab/ledger/verdict.hpp"

namespace scalelab::ledger::criteria {

// E1, A1: a Monte Carlo mean agrees with its closed form when every |estimate/expected − 1| is
// within `sigmas` standard errors (rel_se: the relative standard error of each estimate).
inline constexpr double kMonteCarloSigmas = 5.0;
Verdict matches_closed_form(const std::vector<double>& ratios, const std::vector<double>& rel_se,
                            const std::string& what);

// E2: per-position mean square (exactly 0.5 by sin²+cos²) vs per-dimension variance over positions.
// "Variance about 0.5" holds per dimension for a (L, d) when >= 90 % of the dimensions have a
// variance within [0.4, 0.6].
inline constexpr double kPeDimLo = 0.4, kPeDimHi = 0.6, kPeDimShare = 0.9;
struct PeCase {
  int64_t length = 0, d_model = 0;
  double row_mean_square = 0;  // mean over positions of mean_i PE[p,i]²
  double dims_near_half = 0;   // share of dimensions with variance over positions in [lo, hi]
};
Verdict pe_variance(const std::vector<PeCase>& cases);

// E3: "dominates" = the token part's variance is >= 10x the position part's, per entry, and a
// least-squares probe recovers less than half of the position signal (R² < 0.5).
inline constexpr double kDominatesRatio = 10.0, kDrownedR2 = 0.5;
struct EmbedArm {
  std::string init, scale;
  double ratio = 0;        // Var(token) / Var(position), per entry
  double position_r2 = 0;  // held-out R² of the position encoding from the layer-0 input
};
Verdict unscaled_dominates(const std::vector<EmbedArm>& arms);  // arms include {normal, 1}

// E4: "matched in magnitude" = ratio within a factor of 4 of 1.
inline constexpr double kMatchedFactor = 4.0;
Verdict scaled_matches(const std::vector<EmbedArm>& arms);  // the sqrt_d arms

// E5: the seed's exponents (QKᵀ variance ∝ d^2 unscaled, d^4 with ×d) are accepted within ±0.5.
inline constexpr double kExponentTolerance = 0.5;
struct Exponents {
  double scale_1 = 0, scale_sqrt_d = 0, scale_d = 0;  // Post-LN, N(0,1), fixed d_k
  double pre_ln_max_abs = 0;                          // largest |exponent| under Pre-LN
};
Verdict logit_variance_exponents(const Exponents& e);

// E6: the claim holds when the ×sqrt(d) embedding itself overflows f16 (count > 0).
struct OverflowByOp {
  std::map<std::string, double> overflow;  // op -> overflowing results (summed over seeds)
  std::map<std::string, double> max_abs;   // op -> largest |value|
};
Verdict embedding_overflows_f16(const OverflowByOp& ops, int64_t d_model);
std::string first_overflowing_op(const OverflowByOp& ops);  // most overflows; "" if none

// A2: "almost all within [-3, 3]" = share >= 0.99.
inline constexpr double kWithinShare = 0.99;
struct WithinCase {
  std::string where;  // "synthetic", "model at init", "after training"
  double share = 0;
};
Verdict logits_within_range(const std::vector<WithinCase>& cases);

// A5: the seed's range: mean p(1−p) in [0.05, 0.25] for unit-variance logits.
inline constexpr double kPpLo = 0.05, kPpHi = 0.25;
struct RowCase {
  int64_t n = 0;
  double mean_pp = 0;  // mean over entries of p(1−p), unit-variance logits
};
Verdict softmax_derivative_range(const std::vector<RowCase>& cases);

// A9: where inf arises in emulated f16/bf16 attention.
struct AttentionOverflow {
  std::string format, order;  // "f16"/"bf16"; "scale after QKᵀ" | "q pre-scaled"
  bool subtract_max = true;
  double overflow = 0;        // non-finite results in any op
};
Verdict scaled_logits_overflow(const std::vector<AttentionOverflow>& cases);

// A10: "same result" = max |flash − naive| <= 1e-5 · max |naive| in f32; "numerically safe" = in
// f16/bf16 the flash error against the f64 reference is <= 2x the naive's and nothing overflows.
inline constexpr double kSameResultRel = 1e-5, kSafeErrorFactor = 2.0;
struct FlashCase {
  std::string format;
  double flash_error = 0, naive_error = 0;  // relative to max |reference|
  double overflow = 0;
};
Verdict flash_is_safe(const std::vector<FlashCase>& cases);

// A13: the flag fires for a configuration when >= 50 % of rows exceed the row-length threshold
// tau(n) = 1 − 0.25 / ln n (halfway between unit-variance logits, 1 − 1/(2 ln n), and uniform).
inline constexpr double kFlagShare = 0.5;
double uniform_threshold(int64_t n);
struct FlagCase {
  int64_t n = 0;
  double share_inv_dk = 0, share_inv_sqrt_dk = 0;  // rows above tau(n)
};
Verdict uniform_flag(const std::vector<FlagCase>& cases);

}  // namespace scalelab::ledger::criteria
