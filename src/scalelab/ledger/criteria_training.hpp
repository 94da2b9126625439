// ledger/criteria_training: the criteria of the claims that train (E7-E12, A3, A4, A6, A7, A11, A12,
// B1-B4), as pure functions from per-seed measurements to a verdict.
//
// The thresholds are fixed here, before any run, and copied into each claim's JSON; the tests
// (tests/ledger/criteria_training_test.cpp) evaluate each function on synthetic measurements on
// both sides of every threshold. The rules (docs/ledger.md, "Rules"):
//   - every comparison is paired by seed (the arms of a claim share seeds, so init and data order);
//   - a failed run of the arm under test is its worst value (+inf); a seed whose baseline failed
//     cannot support the claim (NaN: it votes against it);
//   - a case is decided only when every paired seed agrees (stats.hpp, vote): otherwise the effect
//     is within the seeds' noise and the case is undecided;
//   - each clause of a claim is a part (verdict.hpp, from_parts), each arm or swept value a case
//     (from_cases): no condition is text, every condition is an arm where the claim held.
// Inputs name their cases with `condition`, the arm in words ("d_k = 256").
#pragma once
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "scalelab/ledger/verdict.hpp"

namespace scalelab::ledger::criteria {

// Per-seed values of an arm under test and of its baseline (NaN or inf: that seed's run failed).
struct PairedRuns {
  std::vector<double> test, base;
};
// Per seed: test / base, test - base and |test - base| / |base|. A failed test run gives +inf, a
// failed baseline NaN (so it never supports a claim). Throws Error when the sizes differ.
std::vector<double> paired_ratios(const PairedRuns& p);
std::vector<double> paired_differences(const PairedRuns& p);
std::vector<double> paired_gaps(const PairedRuns& p);
// "2.1x (1.8-2.4 over 3 seeds)": the median and range of per-seed values, with failures named.
std::string per_seed_text(const std::vector<double>& per_seed, const std::string& unit = "x");

// A case decided by every seed meeting `meets`; its detail is the values and the vote, and says
// "marginal" when moving every seed by the seeds' own spread would change the outcome.
Case seed_case(const std::string& condition, const std::vector<double>& per_seed,
               const std::function<bool(double)>& meets, const std::string& what,
               const std::string& unit = "x");

// ---- thresholds -------------------------------------------------------------------------------

// E12, A3, A4, A7: a training arm is "broken" (explodes / loses the information / unusable /
// fails to converge) when it diverges or its final valid loss is >= 1.5x the baseline's.
inline constexpr double kBrokenFactor = 1.5;
// E7: "not better" = the learned arm ends no more than 0.01 nats below the fixed one; "slows
// convergence" = steps to the target loss >= 1.2x the fixed arm's (or never reaching it).
inline constexpr double kBetterMargin = 0.01, kSlowerFactor = 1.2;
// E8, E9, E11, A11: equal at init when the logits' (or layer-0 input's) relative difference is
// <= 1e-5; equivalent in training when, paired by seed, the training loss at >= 5 points of the
// curve and the final valid loss differ by <= 2 %.
inline constexpr double kInitEqualRel = 1e-5, kTrainEqualRel = 0.02;
inline constexpr int kCurvePoints = 5;
// E9: a norm removes a scale exactly only up to its eps: LN(s·x) differs from LN(x) by about
// eps / Var(s·x), 3e-4 for N(0,1/d) rows at d = 32 and eps 1e-5; 1e-3 allows that, while a changed
// direction gives differences near 1.
inline constexpr double kAbsorbedRel = 1e-3;
// E10: grad norm(scaled) / grad norm(unscaled) >= 3 ("100+ to about 10" is 10x; 3x keeps the
// direction and most of the size), and roughness(unscaled) >= 1.5x roughness(scaled).
inline constexpr double kGradRatio = 3.0, kRoughnessRatio = 1.5;
// E11: layer 0 is invariant when Var(logits) changes by <= 1 % against scale 1.
inline constexpr double kInvariantRel = 0.01;
// A3: attention is "nearly uniform" when its normalised entropy H / ln n >= 0.9.
inline constexpr double kNearUniformEntropy = 0.9;
// A4: saturated at init = share of rows with max p > 0.99 >= 0.5; "gradients vanish" = the
// softmax Jacobian norm without the scale <= 1/10 of the one with it.
inline constexpr double kSaturatedShare = 0.5, kVanishFactor = 10.0;
// A6: "drops more than 10x" = layer-0 grad norm ratio (scaled / unscaled) >= 10; "the loss does
// not fall" = the unscaled run's final training loss >= 0.9x its first.
inline constexpr double kDropFactor = 10.0, kNoFallFraction = 0.9;
// A7: the wrong scale fails when broken or its loss curve is >= 2x as rough as the right scale's.
inline constexpr double kRougherFactor = 2.0;
// B1: "needs warm-up" = without it the run diverges or ends >= 1.2x the final loss with it.
inline constexpr double kNeedsWarmup = 1.2;
// B2: the logits grow when max |logit| at the end is >= 3x at step 1; a control bounds them
// when its end value is <= 0.5x the baseline's.
inline constexpr double kGrowth = 3.0, kBounded = 0.5;
// B3: the best learning rate "stays put" when it spans at most one x2 grid step across widths (one
// seed's argmax on a x2 grid moves one step from noise alone); "unlike SP" = SP's spans >= 2.
inline constexpr double kStaysPutSteps = 1.0, kMovesSteps = 2.0;
// B4: f16 matches f32 when its final valid loss is within 5 % of f32's.
inline constexpr double kFp16Tolerance = 0.05;

bool broken(double final_loss, double baseline_loss, bool diverged);

// ---- E7 ---------------------------------------------------------------------------------------
struct LearnedArm {
  std::string condition;           // "the learned scale starts at 1"
  PairedRuns final_loss;           // learned vs fixed, final valid loss
  std::vector<double> steps_ratio; // steps to the target, learned / fixed (inf: never; NaN: the
                                   // fixed arm never reached its own target)
};
Verdict learnable_scale(const std::vector<LearnedArm>& learned);

// ---- E8, A11: reparametrisation equivalence ---------------------------------------------------
struct Equivalence {
  std::string setting;                // "Adam, untied"
  std::vector<double> init_rel_diff;  // per seed, max |Δ logits| / max |logits| at step 0
  std::vector<double> train_gap;      // per seed, the largest relative gap over the curve points
                                      // and the final valid loss (inf: one failed)
};
Verdict reparametrisation(const std::vector<Equivalence>& settings, const std::string& what);

// ---- E9 ---------------------------------------------------------------------------------------
struct Absorption {
  std::string condition;              // "RoPE (nothing added before the norm)"
  std::vector<double> init_rel_diff;  // layer-0 input, scale 1 vs sqrt(d), per seed
  std::vector<double> train_gap;      // as Equivalence::train_gap
};
Verdict layernorm_absorbs(const std::vector<Absorption>& cases);

// ---- E10 --------------------------------------------------------------------------------------
Verdict removal_oscillates(const std::string& condition, const std::vector<double>& grad_norm_ratio,
                           const std::vector<double>& roughness_ratio);

// ---- E11 --------------------------------------------------------------------------------------
struct ScaleCase {
  std::string condition;         // "s = 1/d ((s·σ)² = 1.6e-07, norm eps 1e-05)"
  std::vector<double> var_ratio; // per seed, Var(logits at s) / Var(logits at scale 1)
};
Verdict rope_rmsnorm_invariance(const std::vector<ScaleCase>& init_cases, const std::string& train_condition,
                                const std::vector<double>& train_gap);

// ---- E12 --------------------------------------------------------------------------------------
Verdict extreme_scales(const PairedRuns& times_d, const PairedRuns& over_d);

// ---- A3 ---------------------------------------------------------------------------------------
struct DkCase {
  int64_t d_k = 0;
  std::vector<double> entropy;  // per init seed: normalised entropy of the 1/d_k arm
  PairedRuns loss;              // 1/d_k vs 1/sqrt(d_k), final valid loss
};
Verdict inv_dk_unusable(const std::vector<DkCase>& cases);

// ---- A4 ---------------------------------------------------------------------------------------
struct SaturationCase {
  int64_t d_k = 0;
  std::vector<double> saturated_share;  // per init seed, no scale
  std::vector<double> jacobian_ratio;   // per init seed, ‖J‖ no scale / ‖J‖ with 1/sqrt(d_k)
  PairedRuns loss;                      // no scale vs 1/sqrt(d_k)
};
Verdict no_scale_saturates(const std::vector<SaturationCase>& cases);

// ---- A6 ---------------------------------------------------------------------------------------
struct DropCase {
  int64_t d_k = 0;
  std::vector<double> grad_ratio;     // per seed, layer-0 grad norm at step 1, scaled / unscaled
  std::vector<double> loss_fraction;  // per seed, unscaled final / first training loss
};
Verdict gradient_drop(const std::vector<DropCase>& cases);

// ---- A7 ---------------------------------------------------------------------------------------
Verdict wrong_scale_fails(const std::string& condition, const PairedRuns& loss,
                          const std::vector<double>& roughness_ratio);

// ---- A12 --------------------------------------------------------------------------------------
// The attribution is not testable; the measured speed ratio is reported (inf: never reached).
Verdict slower_training(double steps_ratio, int64_t d_k);

// ---- B1 ---------------------------------------------------------------------------------------
struct WarmupRuns {
  PairedRuns post, pre;               // final valid loss without (test) vs with (base) warm-up
  std::vector<double> post_last_is_largest;  // per seed: 1 if Post-LN's last decoder layer has the
                                             // largest gradient norm at step 1, else 0
};
Verdict warmup_needed(const WarmupRuns& runs);

// ---- B2 ---------------------------------------------------------------------------------------
struct GrowthCase {
  std::string condition;         // "lr = 5x the base"
  std::vector<double> growth;    // per seed, max |logit| at the end / at step 1
};
struct BoundCase {
  std::string condition;                 // "QK-norm"
  std::vector<double> end_over_baseline; // per seed
};
Verdict logit_growth(const std::vector<GrowthCase>& growth, const std::vector<BoundCase>& controls);

// ---- B3 ---------------------------------------------------------------------------------------
struct TransferCase {
  std::string condition;                        // "d_k fixed at 16 (heads grow with width)"
  std::vector<double> mup_best_lr, sp_best_lr;  // per width, the chosen rate
  bool interior = true;                         // every chosen rate an interior optimum
};
// Span of the best rates in x2 grid steps: log2(max / min).
double lr_span_steps(const std::vector<double>& best_lrs);
Verdict mup_transfer(const std::vector<TransferCase>& cases);

// ---- B4 ---------------------------------------------------------------------------------------
Verdict loss_scaling_needed(const std::string& condition, const PairedRuns& no_scaling,
                            const PairedRuns& dynamic_scaling);

}  // namespace scalelab::ledger::criteria
