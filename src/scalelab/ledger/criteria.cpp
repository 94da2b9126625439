#include "scalelab/ledger/criteria.hpp"

#include <algorithm>
#include <cmath>

#include "scalelab/core/error.hpp"

namespace scalelab::ledger::criteria {
namespace {

std::string pct(double share) { return fmt(100.0 * share) + " %"; }
std::string signed_pct(double share) { return (share >= 0 ? "+" : "") + pct(share); }

// "a, b and c" of the values where a case held (the data need not be monotone in them).
std::string list_values(const std::vector<int64_t>& v) {
  std::string out;
  for (size_t i = 0; i < v.size(); ++i)
    out += (i == 0 ? "" : i + 1 == v.size() ? " and " : ", ") + std::to_string(v[i]);
  return out;
}

}  // namespace

Verdict matches_closed_form(const std::vector<double>& ratios, const std::vector<double>& rel_se,
                            const std::string& what) {
  SL_CHECK(!ratios.empty() && ratios.size() == rel_se.size(), "matches_closed_form: ",
           ratios.size(), " ratios, ", rel_se.size(), " standard errors");
  double worst = 0, worst_sigma = 0;
  for (size_t i = 0; i < ratios.size(); ++i) {
    double sigmas = std::abs(ratios[i] - 1.0) / rel_se[i];
    if (!std::isfinite(sigmas)) sigmas = INFINITY;  // a NaN estimate or a zero SE never passes
    if (sigmas > worst_sigma) worst_sigma = sigmas, worst = ratios[i];
  }
  const std::string s = what + ": the Monte Carlo estimate over closed form is within " +
                        fmt(worst_sigma) + " standard errors of 1 at worst (ratio " + fmt(worst) + ")";
  return worst_sigma <= kMonteCarloSigmas ? Verdict::holds(s + ".") : Verdict::does_not_hold(s + ".");
}

Verdict pe_variance(const std::vector<PeCase>& cases) {
  SL_CHECK(!cases.empty(), "pe_variance: no cases");
  bool rows_half = true;
  const PeCase* worst = &cases.front();
  for (const PeCase& c : cases) {
    rows_half = rows_half && std::abs(c.row_mean_square - 0.5) <= 1e-6;
    if (c.dims_near_half < worst->dims_near_half) worst = &c;
  }
  const std::string tail = "; at L = " + std::to_string(worst->length) + ", d = " +
                           std::to_string(worst->d_model) + " only " + pct(worst->dims_near_half) +
                           " of the dimensions have a variance over positions in [0.4, 0.6]";
  if (!rows_half)
    return Verdict::does_not_hold("The per-position mean square is not 0.5" + tail + ".");
  if (worst->dims_near_half >= kPeDimShare)
    return Verdict::holds("Every position's mean square is 0.5 and >= 90 % of dimensions have a variance near 0.5 in every case (worst: L = " +
                          std::to_string(worst->length) + ", d = " + std::to_string(worst->d_model) + ", " + pct(worst->dims_near_half) + ").");
  return Verdict::holds_only_if(
      "it means the mean square of each position's row (exactly 0.5), or dimensions whose period is much shorter than L",
      "Each position's row has mean square 0.5 exactly (sin² + cos² = 1), but per dimension the variance over positions falls towards 0 for the low-frequency dimensions" + tail + ".");
}

Verdict unscaled_dominates(const std::vector<EmbedArm>& arms) {
  const EmbedArm* unscaled = nullptr;
  std::vector<const EmbedArm*> dominating;
  for (const EmbedArm& a : arms) {
    if (a.init == "normal" && a.scale == "1") unscaled = &a;
    if (a.ratio >= kDominatesRatio && a.position_r2 < kDrownedR2) dominating.push_back(&a);
  }
  SL_CHECK(unscaled != nullptr, "unscaled_dominates: no arm with init normal, scale 1");
  const std::string base = "Unscaled N(0,1): Var(token)/Var(PE) = " + fmt(unscaled->ratio) +
                           " per entry, position R² = " + fmt(unscaled->position_r2);
  if (unscaled->ratio >= kDominatesRatio && unscaled->position_r2 < kDrownedR2)
    return Verdict::holds(base + ": the token part dominates and the position is drowned.");
  if (!dominating.empty()) {
    std::string which;
    for (const EmbedArm* a : dominating)
      which += (which.empty() ? "" : ", ") + a->init + " × " + a->scale + " (ratio " + fmt(a->ratio) +
               ", R² " + fmt(a->position_r2) + ")";
    return Verdict::holds_only_if(
        "the embedding is scaled up (" + which + "); unscaled N(0,1) is only " + fmt(unscaled->ratio) + "x the PE",
        base + "; the seed compares the vector's total variance (d) with one entry's (1).");
  }
  return Verdict::does_not_hold(base + "; no arm reaches a 10x ratio with R² < 0.5.");
}

Verdict scaled_matches(const std::vector<EmbedArm>& arms) {
  SL_CHECK(!arms.empty(), "scaled_matches: no arms");
  std::string matched, unmatched;
  for (const EmbedArm& a : arms) {
    const bool ok = a.ratio <= kMatchedFactor && a.ratio >= 1.0 / kMatchedFactor;
    (ok ? matched : unmatched) += std::string((ok ? matched : unmatched).empty() ? "" : ", ") +
                                  a.init + " (ratio " + fmt(a.ratio) + ")";
  }
  if (unmatched.empty()) return Verdict::holds("After ×sqrt(d) every init is within 4x of the PE: " + matched + ".");
  if (matched.empty()) return Verdict::does_not_hold("After ×sqrt(d) no init is within 4x of the PE: " + unmatched + ".");
  return Verdict::holds_only_if("the embedding is initialised with std about d^-1/2: " + matched,
                                "Within 4x of the PE: " + matched + "; not: " + unmatched + ".");
}

Verdict logit_variance_exponents(const Exponents& e) {
  const std::string fitted = "fitted exponents " + fmt(e.scale_1) + " / " + fmt(e.scale_sqrt_d) +
                             " / " + fmt(e.scale_d) + " for scales 1 / sqrt(d) / d (Post-LN, N(0,1), fixed d_k); Pre-LN at most |" +
                             fmt(e.pre_ln_max_abs) + "|";
  auto near = [](double x, double target) { return std::abs(x - target) <= kExponentTolerance; };
  if (near(e.scale_1, 2) && near(e.scale_d, 4)) return Verdict::holds("As claimed: " + fitted + ".");
  if (near(e.scale_sqrt_d, 2) && near(e.scale_d, 4))
    return Verdict::holds_only_if(
        "the d² belongs to ×sqrt(d), not to no scale (Post-LN, N(0,1) init): the seed is one level off",
        "Not as stated: " + fitted + ".");
  return Verdict::does_not_hold("Not as stated: " + fitted + ".");
}

std::string first_overflowing_op(const OverflowByOp& ops) {
  std::string best;
  double most = 0;
  for (const auto& [op, n] : ops.overflow)
    if (n > most) most = n, best = op;
  return best;
}

Verdict embedding_overflows_f16(const OverflowByOp& ops, int64_t d_model) {
  auto get = [](const std::map<std::string, double>& m, const std::string& k) {
    auto it = m.find(k);
    return it == m.end() ? 0.0 : it->second;
  };
  const double emb = get(ops.overflow, "embedding_scale");
  const std::string first = first_overflowing_op(ops);
  const std::string where = first.empty() ? "no op overflows"
                                          : "the op with most overflows is " + first + " (" +
                                                fmt(get(ops.overflow, first)) + " results)";
  const std::string s = "At d = " + std::to_string(d_model) + " the ×sqrt(d) embedding's largest value is " +
                        fmt(get(ops.max_abs, "embedding_scale")) + " (f16 max 65504); " + where + ".";
  if (emb > 0) return Verdict::holds(s);
  if (!first.empty())
    return Verdict::does_not_hold(s + " The embedding itself stays in range; another op overflows first.");
  return Verdict::does_not_hold(s);
}

Verdict learnable_scale(const ConvergenceArm& fixed, const std::vector<ConvergenceArm>& learned) {
  SL_CHECK(!learned.empty(), "learnable_scale: no learned arms");
  bool better = false, slower = false;
  std::string detail;
  for (const ConvergenceArm& a : learned) {
    better = better || a.final_loss < fixed.final_loss - kBetterMargin;
    // Slower is only defined when the fixed arm reaches its own target.
    const bool s = fixed.steps_to_target > 0 &&
                   (a.steps_to_target < 0 || a.steps_to_target >= kSlowerFactor * fixed.steps_to_target);
    slower = slower || s;
    detail += "; " + a.name + ": final loss " + fmt(a.final_loss) + ", steps to target " +
              (a.steps_to_target < 0 ? std::string("never") : fmt(a.steps_to_target));
  }
  const std::string s = "Fixed sqrt(d): final loss " + fmt(fixed.final_loss) + ", steps to target " +
                        (fixed.steps_to_target < 0 ? std::string("never") : fmt(fixed.steps_to_target)) + detail + ".";
  if (better) return Verdict::does_not_hold("A learned scale is better by more than 0.01 nats. " + s);
  if (slower) return Verdict::holds(s);
  return Verdict::holds_only_if("one reads \"can slow\" as a possibility: no learned arm was 1.2x slower here",
                                "Not better, and not slower either. " + s);
}

Verdict reparametrisation(const std::vector<Equivalence>& settings, const std::string& what) {
  SL_CHECK(!settings.empty(), "reparametrisation: no settings");
  std::string equal, unequal;
  for (const Equivalence& e : settings) {
    const bool init = e.init_rel_diff <= kInitEqualRel;
    const bool train = e.train_rel_diff <= kTrainEqualRel;
    const std::string d = e.setting + " (init " + fmt(e.init_rel_diff) + ", trained " +
                          pct(e.train_rel_diff) + ")";
    (init && train ? equal : unequal) += std::string((init && train ? equal : unequal).empty() ? "" : "; ") + d;
  }
  bool any_init = false;
  for (const Equivalence& e : settings) any_init = any_init || e.init_rel_diff <= kInitEqualRel;
  if (unequal.empty()) return Verdict::holds(what + " is equivalent in every setting: " + equal + ".");
  if (!equal.empty())
    return Verdict::holds_only_if(equal, what + ": equivalent in " + equal + "; not in " + unequal + ".");
  if (any_init)
    return Verdict::holds_only_if("at initialisation (exactly); training differs under every optimiser tried",
                                  what + ": " + unequal + ".");
  return Verdict::does_not_hold(what + ": " + unequal + ".");
}

Verdict layernorm_absorbs(const std::vector<Absorption>& cases) {
  SL_CHECK(!cases.empty(), "layernorm_absorbs: no cases");
  std::string yes, no;
  for (const Absorption& c : cases) {
    const bool ok = c.init_rel_diff <= kAbsorbedRel && c.train_rel_diff <= kTrainEqualRel;
    (ok ? yes : no) += std::string((ok ? yes : no).empty() ? "" : "; ") + c.positions +
                       " positions (init diff " + fmt(c.init_rel_diff) + ", trained " + pct(c.train_rel_diff) + ")";
  }
  if (no.empty()) return Verdict::holds("The embedding LayerNorm removes the scale: " + yes + ".");
  if (!yes.empty())
    return Verdict::holds_only_if("nothing is added to the embedding before the LayerNorm: " + yes,
                                  "With added positions the LayerNorm sees s·E + P, whose direction depends on s: " + no + ".");
  return Verdict::does_not_hold("The scale changes the model even with the LayerNorm: " + no + ".");
}

Verdict removal_oscillates(double grad_norm_ratio, double roughness_ratio) {
  const bool grads = grad_norm_ratio >= kGradRatio, rough = roughness_ratio >= kRoughnessRatio;
  const std::string s = "Gradient norm with / without ×sqrt(d): " + fmt(grad_norm_ratio) +
                        "x; loss roughness without / with: " + fmt(roughness_ratio) + "x.";
  if (grads && rough) return Verdict::holds(s);
  if (grads) return Verdict::holds_only_if("one reads it as a statement about gradient norms only; the loss does not oscillate more", s);
  if (rough) return Verdict::holds_only_if("one reads it as a statement about oscillation only; the gradient norm does not drop 3x", s);
  return Verdict::does_not_hold(s);
}

Verdict rope_rmsnorm_invariance(const std::vector<ScaleCase>& cases, double norm_eps) {
  SL_CHECK(!cases.empty(), "rope_rmsnorm_invariance: no cases");
  std::string yes, no;
  for (const ScaleCase& c : cases) {
    const bool ok = c.rel_change <= kInvariantRel;
    (ok ? yes : no) += std::string((ok ? yes : no).empty() ? "" : ", ") + "s = " + c.scale +
                       " (change " + pct(c.rel_change) + ", (s·σ)² = " + fmt(c.input_rms * c.input_rms) + ")";
  }
  const std::string eps = "norm eps " + fmt(norm_eps);
  if (no.empty()) return Verdict::holds("Layer 0 is invariant to the embedding scale: " + yes + ".");
  if (!yes.empty())
    return Verdict::holds_only_if("(s·σ)² is well above the norm's eps (" + eps + "): invariant for " + yes,
                                  "Not invariant for " + no + ".");
  return Verdict::does_not_hold("Not invariant: " + no + ".");
}

bool broken(double final_loss, double baseline_loss, bool diverged) {
  return diverged || !std::isfinite(final_loss) || final_loss >= kBrokenFactor * baseline_loss;
}

Verdict extreme_scales(bool times_d_broken, double times_d_ratio, bool over_d_broken, double over_d_ratio) {
  const std::string s = "Final valid loss over the ×sqrt(d) baseline: ×d " + fmt(times_d_ratio) +
                        "x (" + (times_d_broken ? "broken" : "trains") + "), ÷d " + fmt(over_d_ratio) +
                        "x (" + (over_d_broken ? "broken" : "trains") + ").";
  if (times_d_broken && over_d_broken) return Verdict::holds(s);
  if (times_d_broken) return Verdict::holds_only_if("for ×d only: ÷d still trains", s);
  if (over_d_broken) return Verdict::holds_only_if("for ÷d only: ×d still trains", s);
  return Verdict::does_not_hold(s);
}

Verdict logits_within_range(const std::vector<WithinCase>& cases) {
  SL_CHECK(!cases.empty(), "logits_within_range: no cases");
  std::string yes, no;
  for (const WithinCase& c : cases) {
    const bool ok = c.share >= kWithinShare;
    (ok ? yes : no) += std::string((ok ? yes : no).empty() ? "" : ", ") + c.where + " " + pct(c.share);
  }
  if (no.empty()) return Verdict::holds("Share of logits within [-3, 3]: " + yes + ".");
  if (!yes.empty()) return Verdict::holds_only_if("q and k have unit-variance iid components (" + yes + ")",
                                                  "Share within [-3, 3] below 99 %: " + no + ".");
  return Verdict::does_not_hold("Share within [-3, 3]: " + no + ".");
}

Verdict inv_dk_unusable(const std::vector<DkCase>& cases) {
  SL_CHECK(!cases.empty(), "inv_dk_unusable: no cases");
  std::string yes, no;
  std::vector<int64_t> where;
  for (const DkCase& c : cases) {
    const std::string d = "d_k " + std::to_string(c.d_k) + " (entropy at init " + fmt(c.entropy) + ", loss " + fmt(c.loss_ratio) + "x)";
    (c.broken ? yes : no) += std::string((c.broken ? yes : no).empty() ? "" : ", ") + d;
    if (c.broken) where.push_back(c.d_k);
  }
  if (no.empty()) return Verdict::holds("1/d_k is unusable (loss >= 1.5x): " + yes + ".");
  if (!yes.empty()) return Verdict::holds_only_if("d_k is " + list_values(where), "Usable at " + no + "; unusable at " + yes + ".");
  return Verdict::does_not_hold("1/d_k trains (loss < 1.5x the 1/sqrt(d_k) baseline): " + no + ".");
}

Verdict no_scale_saturates(const std::vector<SaturationCase>& cases) {
  SL_CHECK(!cases.empty(), "no_scale_saturates: no cases");
  std::string yes, no;
  std::vector<int64_t> where;
  for (const SaturationCase& c : cases) {
    const bool ok = c.saturated_share >= kSaturatedShare && c.broken;
    const std::string d = "d_k " + std::to_string(c.d_k) + " (saturated " + pct(c.saturated_share) + ", loss " + fmt(c.loss_ratio) + "x)";
    (ok ? yes : no) += std::string((ok ? yes : no).empty() ? "" : ", ") + d;
    if (ok) where.push_back(c.d_k);
  }
  if (no.empty()) return Verdict::holds("Saturated and not converging: " + yes + ".");
  if (!yes.empty()) return Verdict::holds_only_if("d_k is " + list_values(where), "Holds at " + yes + "; not at " + no + ".");
  return Verdict::does_not_hold("At no d_k are >= 50 % of rows saturated at init while training breaks: " + no + ".");
}
Verdict softmax_derivative_range(const std::vector<RowCase>& cases) {
  SL_CHECK(!cases.empty(), "softmax_derivative_range: no cases");
  std::string yes, no;
  std::vector<int64_t> where;
  for (const RowCase& c : cases) {
    const bool ok = c.mean_pp >= kPpLo && c.mean_pp <= kPpHi;
    (ok ? yes : no) += std::string((ok ? yes : no).empty() ? "" : ", ") + "n = " + std::to_string(c.n) + ": " + fmt(c.mean_pp);
    if (ok) where.push_back(c.n);
  }
  const std::string s = "Mean p(1-p) for unit-variance logits: in [0.05, 0.25] at " + (yes.empty() ? "none" : yes) +
                        "; outside at " + (no.empty() ? "none" : no) + ".";
  if (no.empty()) return Verdict::holds(s);
  if (!yes.empty()) return Verdict::holds_only_if("the row has n = " + list_values(where) + " keys", s);
  return Verdict::does_not_hold(s);
}

Verdict gradient_drop(double ratio, double loss_fraction) {
  const bool drop = ratio >= kDropFactor, stuck = loss_fraction >= kNoFallFraction;
  const std::string s = "Layer-0 gradient norm scaled / unscaled: " + fmt(ratio) + "x; unscaled final / first loss: " + fmt(loss_fraction) + ".";
  if (drop && stuck) return Verdict::holds(s);
  if (drop) return Verdict::holds_only_if("for the gradient norm: the loss still falls", s);
  if (stuck) return Verdict::holds_only_if("for the loss: the gradient norm drops less than 10x", s);
  return Verdict::does_not_hold(s);
}

Verdict wrong_scale_fails(double loss_ratio, bool diverged, double roughness_ratio) {
  const bool fails = broken(loss_ratio, 1.0, diverged) || roughness_ratio >= kRougherFactor;
  const std::string s = "d_k = 256 with 1/sqrt(64) vs 1/16: final loss " + fmt(loss_ratio) + "x, roughness " +
                        fmt(roughness_ratio) + "x" + (diverged ? ", diverged" : "") + ".";
  return fails ? Verdict::holds(s) : Verdict::does_not_hold(s);
}

Verdict tiny_dk(const std::vector<TinyDk>& cases) {
  SL_CHECK(!cases.empty(), "tiny_dk: no cases");
  std::string yes, no;
  std::vector<int64_t> where;
  for (const TinyDk& c : cases) {
    const bool ok = c.rel_diff <= kLittleDifference;
    (ok ? yes : no) += std::string((ok ? yes : no).empty() ? "" : ", ") + "d_k " + std::to_string(c.d_k) + ": " + pct(c.rel_diff);
    if (ok) where.push_back(c.d_k);
  }
  const std::string s = "Final loss difference with / without scale: " + yes + (yes.empty() || no.empty() ? "" : "; ") + no + ".";
  if (no.empty()) return Verdict::holds(s);
  if (!yes.empty()) return Verdict::holds_only_if("d_k is " + list_values(where), s);
  return Verdict::does_not_hold(s);
}

Verdict scaled_logits_overflow(const std::vector<AttentionOverflow>& cases) {
  std::string with_max, without_max;
  for (const AttentionOverflow& c : cases) {
    if (c.overflow <= 0) continue;
    std::string& out = c.subtract_max ? with_max : without_max;
    out += (out.empty() ? "" : ", ") + c.format + " " + c.order + " (" + fmt(c.overflow) + ")";
  }
  if (!with_max.empty()) return Verdict::holds("inf arises even with max subtraction: " + with_max + ".");
  if (!without_max.empty())
    return Verdict::holds_only_if("the softmax skips the max subtraction (e^x overflows f16 above x = 11.1)",
                                  "Overflows only without max subtraction: " + without_max + ".");
  return Verdict::does_not_hold("No configuration overflowed.");
}

Verdict flash_is_safe(const std::vector<FlashCase>& cases) {
  bool has_f32 = false;
  for (const FlashCase& c : cases) has_f32 = has_f32 || c.format == "f32";
  SL_CHECK(has_f32, "flash_is_safe: no f32 case");
  bool same = true, safe = true;
  std::string s;
  for (const FlashCase& c : cases) {
    if (c.format == "f32") same = same && c.flash_error <= kSameResultRel;
    else safe = safe && c.overflow <= 0 && c.flash_error <= kSafeErrorFactor * std::max(c.naive_error, 1e-12);
    s += (s.empty() ? "" : "; ") + c.format + ": flash " + fmt(c.flash_error) + ", naive " + fmt(c.naive_error);
  }
  if (same && safe) return Verdict::holds("Relative error against the reference: " + s + ".");
  if (same) return Verdict::holds_only_if("in f32: reduced formats lose more with tiling", s + ".");
  return Verdict::does_not_hold(s + ".");
}

Verdict slower_training(double steps_ratio, int64_t d_k) {
  return Verdict::not_testable(
      "which implementation, model and data the seed's 2-3x refers to is unknown; only the speed ratio is measurable",
      "Steps to the target loss, 1/d_k over 1/sqrt(d_k), at d_k = " + std::to_string(d_k) + ": " +
          (steps_ratio < 0 ? std::string("never reached") : fmt(steps_ratio) + "x") + ".");
}

double uniform_threshold(int64_t n) {
  SL_CHECK(n >= 2, "uniform_threshold: n = ", n, " (needs >= 2 keys)");
  return 1.0 - 0.25 / std::log(double(n));
}

Verdict uniform_flag(const std::vector<FlagCase>& cases) {
  SL_CHECK(!cases.empty(), "uniform_flag: no cases");
  bool fires_inv_dk = true, quiet_inv_sqrt = true;
  std::string s;
  for (const FlagCase& c : cases) {
    fires_inv_dk = fires_inv_dk && c.share_inv_dk >= kFlagShare;
    quiet_inv_sqrt = quiet_inv_sqrt && c.share_inv_sqrt_dk < kFlagShare;
    s += (s.empty() ? "" : "; ") + std::string("n = ") + std::to_string(c.n) + ": 1/d_k " +
         pct(c.share_inv_dk) + ", 1/sqrt(d_k) " + pct(c.share_inv_sqrt_dk);
  }
  s = "Rows above tau(n) = 1 - 0.25/ln n: " + s + ".";
  if (fires_inv_dk && quiet_inv_sqrt) return Verdict::holds(s);
  if (fires_inv_dk) return Verdict::holds_only_if("the threshold is set per row length", s);
  return Verdict::does_not_hold(s);
}

Verdict warmup_needed(double post_ratio, bool post_diverged, double pre_ratio, bool pre_diverged) {
  const bool post_needs = post_diverged || post_ratio >= kNeedsWarmup;
  const bool pre_needs = pre_diverged || pre_ratio >= kNeedsWarmup;
  const std::string s = "Final loss without / with warm-up: Post-LN " +
                        (post_diverged ? std::string("diverged") : fmt(post_ratio) + "x") + ", Pre-LN " +
                        (pre_diverged ? std::string("diverged") : fmt(pre_ratio) + "x") + ".";
  if (post_needs && !pre_needs) return Verdict::holds(s);
  if (post_needs) return Verdict::holds_only_if("for Post-LN; Pre-LN also needed warm-up here", s);
  if (!pre_needs) return Verdict::holds_only_if("at a higher learning rate: neither needed warm-up here", s);
  return Verdict::does_not_hold(s);
}

Verdict logit_growth(double baseline_growth, const std::vector<GrowthCase>& controls) {
  SL_CHECK(!controls.empty(), "logit_growth: no controls");
  std::string bounded, not_bounded;
  for (const GrowthCase& c : controls) {
    const bool ok = c.end_over_baseline <= kBounded;
    (ok ? bounded : not_bounded) += std::string((ok ? bounded : not_bounded).empty() ? "" : ", ") +
                                    c.name + " " + fmt(c.end_over_baseline) + "x";
  }
  const std::string s = "Baseline max |logit| grew " + fmt(baseline_growth) + "x; end value over the baseline's: " +
                        bounded + (bounded.empty() || not_bounded.empty() ? "" : ", ") + not_bounded + ".";
  if (baseline_growth < kGrowth) return Verdict::holds_only_if("the learning rate or the run is long enough for the logits to grow: they grew less than 3x here", s);
  if (not_bounded.empty()) return Verdict::holds(s);
  if (!bounded.empty()) return Verdict::holds_only_if("with " + bounded, s);
  return Verdict::does_not_hold(s);
}

Verdict mup_transfer(int64_t mup_shift, int64_t sp_shift) {
  mup_shift = std::abs(mup_shift), sp_shift = std::abs(sp_shift);
  const std::string s = "Best learning rate moved by " + std::to_string(mup_shift) +
                        " grid step(s) across widths under muP, " + std::to_string(sp_shift) + " under SP.";
  if (mup_shift == 0 && sp_shift >= 1) return Verdict::holds(s);
  if (mup_shift == 0) return Verdict::holds_only_if("one reads it as muP's optimum being stable: SP's did not move either at these widths", s);
  return Verdict::does_not_hold(s);
}

Verdict loss_scaling_needed(double no_scale_rel, bool no_scale_diverged, double scaled_rel, bool scaled_diverged) {
  const bool no_scale_bad = no_scale_diverged || no_scale_rel >= kFp16Tolerance;
  const bool scaled_ok = !scaled_diverged && scaled_rel < kFp16Tolerance;
  const std::string s = "Final loss over f32: f16 without loss scaling " +
                        (no_scale_diverged ? std::string("diverged") : signed_pct(no_scale_rel)) +
                        ", with dynamic loss scaling " + (scaled_diverged ? std::string("diverged") : signed_pct(scaled_rel)) + ".";
  if (no_scale_bad && scaled_ok) return Verdict::holds(s);
  if (scaled_ok) return Verdict::holds_only_if("gradients are small enough to underflow: here f16 trained without it too", s);
  return Verdict::does_not_hold(s);
}

}  // namespace scalelab::ledger::criteria
