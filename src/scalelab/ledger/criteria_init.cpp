#include "scalelab/ledger/criteria_init.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>

#include "scalelab/core/error.hpp"

namespace scalelab::ledger::criteria {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

std::string pct(double share) { return fmt(100.0 * share) + " %"; }

int64_t failed_count(const std::vector<double>& v) {
  return std::count_if(v.begin(), v.end(), [](double x) { return !std::isfinite(x); });
}

// "3.82 (3.6 to 4.1 over 8 seeds, 1 failed)": median and range; failed values rank as the worst
// (+inf) and are counted.
std::string values_text(const std::vector<double>& v, const std::string& unit = "") {
  if (v.empty()) return "no seeds";
  const Spread s = spread_of(v);
  auto num = [&](double x) { return unit == "%" ? pct(x) : fmt(x) + unit; };
  std::string t = num(s.median);
  if (v.size() > 1) t += " (" + num(s.min) + " to " + num(s.max) + " over " + std::to_string(v.size()) + " seeds)";
  if (const int64_t f = failed_count(v)) t += ", " + std::to_string(f) + " of " + std::to_string(v.size()) + " failed";
  return t;
}

// A case decided by every seed meeting `meets`. A failed (non-finite) value never meets it,
// whichever side the threshold is on: it is counted and said in the detail.
Case init_case(const std::string& condition, const std::vector<double>& per_seed,
               const std::function<bool(double)>& meets, const std::string& what, const std::string& unit = "",
               double threshold = kNaN) {
  std::vector<double> finite_only;
  for (double x : per_seed) finite_only.push_back(std::isfinite(x) ? x : kNaN);
  const SeedDecision d = decide_by_seeds(finite_only, meets);
  std::string detail = what + " " + values_text(per_seed, unit) + "; " + d.vote.text() + " meet it";
  if (d.marginal) detail += " (" + marginal_text(d) + threshold_distance(per_seed, threshold) + ")";
  return Case{condition, d.vote.outcome, detail};
}

Case single_case(const std::string& condition, bool yes, const std::string& detail) {
  return Case{condition, yes ? Outcome::yes : Outcome::no, detail};
}

Part part(const std::string& name, const std::string& statement, Verdict v, std::vector<std::string> arms = {}) {
  if (arms.empty()) arms = v.tested;
  return Part{name, statement, std::move(v), std::move(arms)};
}

bool within_factor(double x, double factor) { return x >= 1.0 / factor && x <= factor; }

std::string length_d(int64_t length, int64_t d) {
  return "L = " + std::to_string(length) + ", d = " + std::to_string(d);
}

std::string init_words(const std::string& init) {
  if (init == "normal") return "N(0,1)";
  if (init == "normal_inv_d") return "N(0,1/d)";
  if (init == "xavier_uniform") return "Xavier uniform";
  return init;
}

std::string scale_words(const std::string& scale) {
  if (scale == "sqrt_d") return "sqrt(d)";
  if (scale == "inv_d") return "1/d";
  return scale;
}

}  // namespace

std::string threshold_distance(const std::vector<double>& per_seed, double threshold) {
  const Spread s = spread_of(per_seed);
  if (!std::isfinite(threshold) || threshold == 0 || !std::isfinite(s.median)) return "";
  const double rel = (s.median - threshold) / std::abs(threshold);
  return "; the median " + fmt(s.median) + " is " + pct(std::abs(rel)) + (rel < 0 ? " below" : " above") +
         " the threshold " + fmt(threshold);
}

// ---- E1, A1 -------------------------------------------------------------------------------

Verdict matches_closed_form(const std::vector<double>& ratios, const std::vector<double>& rel_se,
                            const std::string& what, const std::vector<std::string>& conditions) {
  SL_CHECK(!ratios.empty() && ratios.size() == rel_se.size(), "matches_closed_form: ",
           ratios.size(), " ratios, ", rel_se.size(), " standard errors");
  SL_CHECK(conditions.empty() || conditions.size() == ratios.size(), "matches_closed_form: ",
           conditions.size(), " conditions for ", ratios.size(), " ratios");
  std::vector<Case> cases;
  double worst = 0, worst_sigma = -1;
  for (size_t i = 0; i < ratios.size(); ++i) {
    double sigmas = std::abs(ratios[i] - 1.0) / rel_se[i];
    if (!std::isfinite(sigmas)) sigmas = INFINITY;  // a failed estimate or a zero SE never passes
    if (sigmas > worst_sigma) worst_sigma = sigmas, worst = ratios[i];
    const std::string name = conditions.empty() ? "estimate " + std::to_string(i + 1) : conditions[i];
    const std::string dir = !std::isfinite(ratios[i]) ? "failed (non-finite)"
                            : ratios[i] >= 1          ? "above 1"
                                                      : "below 1";
    cases.push_back(single_case(name, sigmas <= kMonteCarloSigmas,
                                "ratio " + fmt(ratios[i]) + ", " + dir + " by " + fmt(sigmas) + " standard errors"));
  }
  Verdict v = from_cases(cases, what + ": the Monte Carlo estimate over the closed form is within 5 standard errors of 1",
                         "estimate");
  v.sentence += " At worst " + fmt(worst_sigma) + " standard errors (ratio " + fmt(worst) + ").";
  return v;
}

// ---- E2 -----------------------------------------------------------------------------------

Verdict pe_variance(const std::vector<PeCase>& cases) {
  SL_CHECK(!cases.empty(), "pe_variance: no cases");
  std::vector<Case> rows, dims;
  for (const PeCase& c : cases) {
    const std::string name = length_d(c.length, c.d_model);
    const double dev = std::abs(c.worst_row_mean_square - 0.5);
    rows.push_back(single_case(name, std::isfinite(dev) && dev <= kRowMeanSquareTolerance,
                               "the row furthest from 0.5 has mean square " + fmt(c.worst_row_mean_square)));
    const bool ok = std::isfinite(c.dims_near_half) && c.dims_near_half >= kPeDimShare;
    dims.push_back(single_case(name, ok,
                               pct(c.dims_near_half) + " of the dimensions in [0.4, 0.6]" +
                                   (ok ? "" : "; the low-frequency dimensions, whose period is not much shorter than L, vary less")));
  }
  return from_parts(
      {part("per position", "each position's row of the encoding has mean square 0.5",
            from_cases(rows, "Every position's row has mean square 0.5 (within 1e-6)", "(L, d)")),
       part("per dimension", "each dimension's entries have variance about 0.5 over the positions",
            from_cases(dims, "Per dimension, the variance over positions is near 0.5 (>= 90 % of dimensions in [0.4, 0.6])",
                       "(L, d)"))});
}

// ---- E3, E4 -------------------------------------------------------------------------------

std::string embed_arm_condition(const EmbedArm& a) {
  return "init " + init_words(a.init) + " × " + scale_words(a.scale);
}

Verdict unscaled_dominates(const std::vector<EmbedArm>& arms) {
  const EmbedArm* unscaled = nullptr;
  std::string context;
  for (const EmbedArm& a : arms) {
    if (a.init == "normal" && a.scale == "1") unscaled = &a;
    else
      context += (context.empty() ? "" : ", ") + embed_arm_condition(a) + " " + fmt(median_of(a.ratio));
  }
  SL_CHECK(unscaled != nullptr, "unscaled_dominates: no arm with init normal, scale 1");
  const std::string name = embed_arm_condition(*unscaled);
  const Case dominates = init_case(name, unscaled->ratio, [](double r) { return r > kDominatesRatio; },
                                   "Var(token)/Var(PE)", "", kDominatesRatio);
  const Case drowned = init_case(name, unscaled->position_r2, [](double r2) { return r2 < kDrownedR2; },
                                 "held-out position R²", "", kDrownedR2);
  Verdict v = from_parts(
      {part("dominates", "unscaled N(0,1) token embeddings dominate the sum with the positional encoding",
            from_cases({dominates}, "The token part dominates the encoder input (Var(token)/Var(PE) > 4)", "arm")),
       part("drowns position", "so that the position information is drowned",
            from_cases({drowned}, "The position is drowned (a linear probe on the layer-0 input recovers R² < 0.5 of it)",
                       "arm"))});
  const double r = median_of(unscaled->ratio), r2 = median_of(unscaled->position_r2);
  v.sentence += " Unscaled, the token part's variance is " + fmt(r) + "x the position part's" +
                (std::isfinite(r) && r > 1 ? " (larger)" : " (not larger)") + " and a linear probe recovers " +
                (std::isfinite(r2) ? pct(std::max(r2, 0.0)) : std::string("n/a")) + " of the position encoding.";
  if (!context.empty()) v.sentence += " Other arms, as context (not conditions): " + context + ".";
  return v;
}

Verdict scaled_matches(const std::vector<EmbedArm>& arms) {
  SL_CHECK(!arms.empty(), "scaled_matches: no arms");
  std::vector<Case> cases;
  for (const EmbedArm& a : arms) {
    const double m = median_of(a.ratio);
    Case c = init_case(embed_arm_condition(a), a.ratio, [](double r) { return within_factor(r, kMatchedFactor); },
                       "Var(token)/Var(PE)", "", m > 1 ? kMatchedFactor : 1.0 / kMatchedFactor);
    if (std::isfinite(m)) c.detail += m > 1 ? ", the token part larger" : ", the token part smaller";
    cases.push_back(c);
  }
  return from_cases(cases, "After ×sqrt(d) the token part is within 4x of the position part (Var(token)/Var(PE) in [1/4, 4])",
                    "init");
}

// ---- E5 -----------------------------------------------------------------------------------

Verdict logit_variance_exponents(const std::vector<ExponentCase>& cases) {
  SL_CHECK(!cases.empty(), "logit_variance_exponents: no cases");
  std::vector<Case> unscaled, times_d;
  std::string context;
  auto near = [](double target) {
    return [target](double k) { return std::abs(k - target) <= kExponentTolerance; };
  };
  for (const ExponentCase& c : cases) {
    unscaled.push_back(init_case(c.condition, c.scale_1, near(2), "fitted exponent"));
    times_d.push_back(init_case(c.condition, c.scale_d, near(4), "fitted exponent"));
    context += (context.empty() ? "" : "; ") + c.condition + ": " + values_text(c.scale_1) + " / " +
               values_text(c.scale_sqrt_d) + " / " + values_text(c.scale_d);
  }
  Verdict v = from_parts(
      {part("unscaled: d²", "unscaled, the QKᵀ variance grows like d_model²",
            from_cases(unscaled, "Unscaled (×1) the logit variance grows like d² (exponent 2 ± 0.5)", "norm placement")),
       part("×d: d⁴", "with ×d_model it grows like d_model⁴ and explodes",
            from_cases(times_d, "With ×d the logit variance grows like d⁴ (exponent 4 ± 0.5)", "norm placement"))});
  v.sentence += " Fitted exponents for scales 1 / sqrt(d) / d (N(0,1) init, d_k fixed): " + context + ".";
  return v;
}

// ---- E6 -----------------------------------------------------------------------------------

std::string first_in_forward_order(const std::vector<OpOverflow>& ordered) {
  for (const OpOverflow& o : ordered)
    if (o.overflow > 0) return o.op;
  return "";
}

std::string most_overflowing_op(const std::vector<OpOverflow>& ops) {
  std::string best;
  double most = 0;
  for (const OpOverflow& o : ops)
    if (o.overflow > most) most = o.overflow, best = o.op;
  return best;
}

Verdict embedding_overflows_f16(const std::vector<OverflowArm>& arms) {
  SL_CHECK(!arms.empty(), "embedding_overflows_f16: no arms");
  std::vector<Case> cases;
  std::string where;
  for (const OverflowArm& a : arms) {
    Case c = init_case(a.condition, a.embedding_overflow, [](double n) { return n > 0; },
                       "overflowing results of the ×sqrt(d) embedding");
    c.detail += ", largest |value| " + fmt(a.embedding_max_abs) + " (f16 max 65504)";
    cases.push_back(c);
    where += " " + a.condition + ": " +
             (a.first_op.empty() ? "no op overflows"
                                 : "the first op to overflow in forward order is " + a.first_op +
                                       "; the op with the most overflows is " + a.most_op + " (" + fmt(a.most_count) + ")") +
             ".";
  }
  Verdict v = from_cases(cases, "The ×sqrt(d) embedding itself overflows f16 on every seed", "arm");
  v.sentence += where;
  return v;
}

// ---- A1 -----------------------------------------------------------------------------------

Verdict unit_variance_premise(const std::vector<PremiseCase>& cases) {
  SL_CHECK(!cases.empty(), "unit_variance_premise: no cases");
  std::vector<Case> out;
  for (const PremiseCase& c : cases) {
    SL_CHECK(c.q_var.size() == c.k_var.size(), "unit_variance_premise: ", c.q_var.size(), " Var(q) seeds, ",
             c.k_var.size(), " Var(k) seeds");
    // Per seed, the further of the two from 1 in ratio (a failed one: NaN, never meets it).
    std::vector<double> worst;
    for (size_t i = 0; i < c.q_var.size(); ++i) {
      const double q = c.q_var[i], k = c.k_var[i];
      if (!std::isfinite(q) || !std::isfinite(k) || q <= 0 || k <= 0) { worst.push_back(kNaN); continue; }
      const double fq = std::max(q, 1.0 / q), fk = std::max(k, 1.0 / k);
      worst.push_back(std::max(fq, fk));
    }
    Case k = init_case(c.condition, worst, [](double f) { return f <= kUnitVarianceFactor; },
                       "larger factor from 1 of Var(q_i), Var(k_i):", "x");
    const double mq = median_of(c.q_var), mk = median_of(c.k_var);
    k.detail += "; Var(q_i) " + values_text(c.q_var) + (mq > 1 ? " (above 1)" : " (below 1)") + ", Var(k_i) " +
                values_text(c.k_var) + (mk > 1 ? " (above 1)" : " (below 1)");
    out.push_back(k);
  }
  return from_cases(out, "The model's q and k entries have about unit variance at init (within 2x of 1)", "model");
}

// ---- A2 -----------------------------------------------------------------------------------

Verdict logits_within_range(const std::vector<WithinCase>& cases) {
  SL_CHECK(!cases.empty(), "logits_within_range: no cases");
  std::vector<Case> unit, within;
  for (const WithinCase& c : cases) {
    Case u = init_case(c.where, c.var, [](double v) { return within_factor(v, kUnitVarianceFactor); },
                       "Var(scaled logits)");
    const double m = median_of(c.var);
    if (std::isfinite(m)) u.detail += m > 1 ? ", above 1" : ", below 1";
    unit.push_back(u);
    within.push_back(init_case(c.where, c.share, [](double s) { return s >= kWithinShare; }, "share within [-3, 3]", "%",
                               kWithinShare));
  }
  return from_parts({part("unit variance", "dividing by sqrt(d_k) gives unit-variance logits",
                          from_cases(unit, "The scaled logits have unit variance (within 2x of 1)", "case")),
                     part("within [-3, 3]", "almost all within [-3, 3]",
                          from_cases(within, "Almost all scaled logits lie within [-3, 3] (>= 99 %)", "case"))});
}

// ---- A5 -----------------------------------------------------------------------------------

Verdict softmax_derivative_range(const std::vector<RowCase>& cases) {
  SL_CHECK(!cases.empty(), "softmax_derivative_range: no cases");
  std::vector<Case> moderate, extreme;
  for (const RowCase& c : cases) {
    const std::string name = "n = " + std::to_string(c.n);
    Case m = init_case(name, c.mean_pp, [](double pp) { return pp >= kPpLo && pp <= kPpHi; }, "mean p(1-p)");
    const double med = median_of(c.mean_pp);
    if (std::isfinite(med)) m.detail += med < kPpLo ? ", below the range" : med > kPpHi ? ", above the range" : "";
    moderate.push_back(m);
    extreme.push_back(init_case(name, c.extreme_max_pp, [](double pp) { return pp <= kNearZeroPp; },
                                "mean of each row's largest p(1-p)", "", kNearZeroPp));
  }
  return from_parts(
      {part("extreme inputs", "p(1−p) is near 0 at extreme inputs",
            from_cases(extreme, "At extreme inputs (logit std 10) the largest p(1-p) of a row is near 0 (<= 0.01)", "n")),
       part("inputs in [-3, 3]", "p(1−p) is about 0.05–0.25 for inputs in [-3, 3]",
            from_cases(moderate, "For unit-variance logits the mean p(1-p) is in [0.05, 0.25]", "n"))});
}

// ---- A9 -----------------------------------------------------------------------------------

Verdict scaled_logits_overflow(const std::vector<AttentionOverflow>& cases) {
  SL_CHECK(!cases.empty(), "scaled_logits_overflow: no cases");
  std::vector<Case> out;
  for (const AttentionOverflow& c : cases)
    out.push_back(init_case(c.condition, c.overflow, [](double n) { return n > 0; },
                            "overflowing or NaN results per seed, median"));
  return from_cases(out, "Scaled logits (std 10, about ±30) give inf or NaN in the attention on every seed",
                    "configuration");
}

// ---- A10 ----------------------------------------------------------------------------------

Verdict flash_is_safe(const std::vector<FlashCase>& cases) {
  std::vector<Case> same, safe;
  for (const FlashCase& c : cases) {
    const std::string name = c.format + ", logit std " + fmt(c.spread);
    if (c.format == "f32") {
      same.push_back(init_case(name, c.flash_error, [](double e) { return e <= kSameResultRel; },
                               "flash error / max |reference|", "", kSameResultRel));
      continue;
    }
    SL_CHECK(c.flash_error.size() == c.naive_error.size() && c.flash_error.size() == c.flash_overflow.size(),
             "flash_is_safe: per-seed sizes differ for ", name);
    // Per seed: flash error over naive error, +inf when the flash kernel overflowed.
    std::vector<double> ratio;
    for (size_t i = 0; i < c.flash_error.size(); ++i)
      ratio.push_back(c.flash_overflow[i] > 0 || !std::isfinite(c.flash_overflow[i])
                          ? INFINITY
                          : c.flash_error[i] / std::max(c.naive_error[i], 1e-12));
    Case k = init_case(name, ratio, [](double r) { return r <= kSafeErrorFactor; }, "flash error over naive error", "x",
                       kSafeErrorFactor);
    k.detail += "; flash " + values_text(c.flash_error) + ", naive " + values_text(c.naive_error) +
                "; flash overflow or NaN results " + values_text(c.flash_overflow);
    safe.push_back(k);
  }
  SL_CHECK(!same.empty(), "flash_is_safe: no f32 case");
  std::vector<Part> parts = {part("same result", "tiled attention with an online softmax computes the same result",
                                  from_cases(same, "In f32 the flash kernel matches the reference (error <= 1e-5)",
                                             "format and logit spread"))};
  if (!safe.empty())
    parts.push_back(part("numerically safe", "and is numerically safe",
                         from_cases(safe, "In f16/bf16 flash is as safe as naive (error <= 2x naive's, no overflow)",
                                    "format and logit spread")));
  return from_parts(parts);
}

// ---- A13 ----------------------------------------------------------------------------------

double uniform_threshold(int64_t n) {
  SL_CHECK(n >= 2, "uniform_threshold: n = ", n, " (needs >= 2 keys)");
  return 1.0 - 0.25 / std::log(double(n));
}

Verdict uniform_flag(const std::vector<FlagCase>& cases) {
  SL_CHECK(!cases.empty(), "uniform_flag: no cases");
  std::vector<Case> fires, quiet;
  for (const FlagCase& c : cases) {
    const std::string name = "n = " + std::to_string(c.n);
    fires.push_back(init_case(name, c.share_inv_dk, [](double s) { return s >= kFlagShare; },
                              "rows flagged under 1/d_k", "%", kFlagShare));
    quiet.push_back(init_case(name, c.share_inv_sqrt_dk, [](double s) { return s < kFlagShare; },
                              "rows flagged under 1/sqrt(d_k)", "%", kFlagShare));
  }
  return from_parts(
      {part("fires when too strong", "near-uniform weights (all near 1/n) flag a scaling that is too strong (1/d_k)",
            from_cases(fires, "The flag (>= 50 % of rows above tau(n) = 1 - 0.25/ln n) fires for 1/d_k", "n")),
       part("quiet otherwise", "and do not flag the right scaling (1/sqrt(d_k))",
            from_cases(quiet, "The flag stays quiet for 1/sqrt(d_k)", "n"))});
}

}  // namespace scalelab::ledger::criteria
