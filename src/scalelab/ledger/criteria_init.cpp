#include "scalelab/ledger/criteria_init.hpp"

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
  return Verdict::legacy_holds_only_if(
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
    return Verdict::legacy_holds_only_if(
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
  return Verdict::legacy_holds_only_if("the embedding is initialised with std about d^-1/2: " + matched,
                                "Within 4x of the PE: " + matched + "; not: " + unmatched + ".");
}

Verdict logit_variance_exponents(const Exponents& e) {
  const std::string fitted = "fitted exponents " + fmt(e.scale_1) + " / " + fmt(e.scale_sqrt_d) +
                             " / " + fmt(e.scale_d) + " for scales 1 / sqrt(d) / d (Post-LN, N(0,1), fixed d_k); Pre-LN at most |" +
                             fmt(e.pre_ln_max_abs) + "|";
  auto near = [](double x, double target) { return std::abs(x - target) <= kExponentTolerance; };
  if (near(e.scale_1, 2) && near(e.scale_d, 4)) return Verdict::holds("As claimed: " + fitted + ".");
  if (near(e.scale_sqrt_d, 2) && near(e.scale_d, 4))
    return Verdict::legacy_holds_only_if(
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

Verdict logits_within_range(const std::vector<WithinCase>& cases) {
  SL_CHECK(!cases.empty(), "logits_within_range: no cases");
  std::string yes, no;
  for (const WithinCase& c : cases) {
    const bool ok = c.share >= kWithinShare;
    (ok ? yes : no) += std::string((ok ? yes : no).empty() ? "" : ", ") + c.where + " " + pct(c.share);
  }
  if (no.empty()) return Verdict::holds("Share of logits within [-3, 3]: " + yes + ".");
  if (!yes.empty()) return Verdict::legacy_holds_only_if("q and k have unit-variance iid components (" + yes + ")",
                                                  "Share within [-3, 3] below 99 %: " + no + ".");
  return Verdict::does_not_hold("Share within [-3, 3]: " + no + ".");
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
  if (!yes.empty()) return Verdict::legacy_holds_only_if("the row has n = " + list_values(where) + " keys", s);
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
    return Verdict::legacy_holds_only_if("the softmax skips the max subtraction (e^x overflows f16 above x = 11.1)",
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
  if (same) return Verdict::legacy_holds_only_if("in f32: reduced formats lose more with tiling", s + ".");
  return Verdict::does_not_hold(s + ".");
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
  if (fires_inv_dk) return Verdict::legacy_holds_only_if("the threshold is set per row length", s);
  return Verdict::does_not_hold(s);
}

}  // namespace scalelab::ledger::criteria
