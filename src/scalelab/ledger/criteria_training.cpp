#include "scalelab/ledger/criteria_training.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "scalelab/core/error.hpp"

namespace scalelab::ledger::criteria {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

std::string pct(double share) { return fmt(100.0 * share) + " %"; }

// Per seed f(test, base) with the failure rules of PairedRuns.
template <class F>
std::vector<double> paired(const PairedRuns& p, F f) {
  SL_CHECK(p.test.size() == p.base.size(), "paired runs: ", p.test.size(), " test seeds against ",
           p.base.size(), " baseline seeds");
  std::vector<double> out;
  for (size_t i = 0; i < p.test.size(); ++i) {
    if (!std::isfinite(p.base[i])) out.push_back(kNaN);
    else if (!std::isfinite(p.test[i])) out.push_back(kInf);
    else out.push_back(f(p.test[i], p.base[i]));
  }
  return out;
}

// "; the baseline failed on 1 of 3 seeds; the arm failed on 2" when any did.
std::string failures(const PairedRuns& p) {
  int64_t base = 0, test = 0;
  for (double x : p.base) base += !std::isfinite(x);
  for (size_t i = 0; i < p.test.size(); ++i) test += std::isfinite(p.base[i]) && !std::isfinite(p.test[i]);
  std::string s;
  if (test) s += "; " + std::to_string(test) + " of " + std::to_string(p.test.size()) + " seeds diverged or failed";
  if (base) s += "; the baseline failed on " + std::to_string(base) + " of " + std::to_string(p.base.size()) + " seeds";
  return s;
}

Part part(const std::string& name, const std::string& statement, Verdict v, std::vector<std::string> arms = {}) {
  return Part{name, statement, std::move(v), std::move(arms)};
}

}  // namespace

std::vector<double> paired_ratios(const PairedRuns& p) {
  return paired(p, [](double t, double b) { return t / b; });
}
std::vector<double> paired_differences(const PairedRuns& p) {
  return paired(p, [](double t, double b) { return t - b; });
}
std::vector<double> paired_gaps(const PairedRuns& p) {
  return paired(p, [](double t, double b) { return std::abs(t - b) / std::abs(b); });
}

std::string per_seed_text(const std::vector<double>& v, const std::string& unit) {
  if (v.empty()) return "no seeds";
  int64_t nan = 0, inf = 0;
  for (double x : v) nan += std::isnan(x), inf += std::isinf(x);
  const Spread s = spread_of(v);
  auto num = [&](double x) { return unit == "%" ? pct(x) : fmt(x) + unit; };
  std::string t = num(s.median);
  if (v.size() > 1) t += " (" + num(s.min) + " to " + num(s.max) + " over " + std::to_string(v.size()) + " seeds)";
  if (inf) t += ", " + std::to_string(inf) + " failed";
  if (nan) t += ", " + std::to_string(nan) + " without a baseline";
  return t;
}

Case seed_case(const std::string& condition, const std::vector<double>& per_seed,
               const std::function<bool(double)>& meets, const std::string& what, const std::string& unit) {
  const SeedDecision d = decide_by_seeds(per_seed, meets);
  Case c{condition, d.vote.outcome, what + " " + per_seed_text(per_seed, unit) + "; " + d.vote.text() + " meet it"};
  if (d.marginal) c.detail += "; " + marginal_text(d);
  return c;
}

bool broken(double final_loss, double baseline_loss, bool diverged) {
  return diverged || !std::isfinite(final_loss) || final_loss >= kBrokenFactor * baseline_loss;
}

namespace {
bool is_broken(double ratio) { return ratio >= kBrokenFactor; }  // +inf (failed) included
Verdict broken_cases(const std::vector<std::pair<std::string, PairedRuns>>& arms, const std::string& head,
                     const std::string& range) {
  std::vector<Case> cases;
  for (const auto& [condition, runs] : arms) {
    Case c = seed_case(condition, paired_ratios(runs), is_broken, "final loss over the baseline's");
    c.detail += failures(runs);
    cases.push_back(c);
  }
  return from_cases(cases, head, range);
}
}  // namespace

// ---- E7 ---------------------------------------------------------------------------------------

Verdict learnable_scale(const std::vector<LearnedArm>& learned) {
  SL_CHECK(!learned.empty(), "learnable_scale: no learned arms");
  std::vector<Case> not_better, slower;
  for (const LearnedArm& a : learned) {
    Case nb = seed_case(a.condition, paired_differences(a.final_loss),
                        [](double d) { return d >= -kBetterMargin; }, "final loss minus the fixed arm's", " nats");
    nb.detail += failures(a.final_loss);
    not_better.push_back(nb);
    slower.push_back(seed_case(a.condition, a.steps_ratio, [](double r) { return r >= kSlowerFactor; },
                               "steps to the target over the fixed arm's"));
  }
  return from_parts(
      {part("not better", "a learnable scalar scale is not better than the fixed sqrt(d_model)",
            from_cases(not_better, "Not better than fixed ×sqrt(d) (ends no more than 0.01 nats below it)", "learned arm")),
       part("slower", "it can slow convergence",
            from_cases(slower, "Slower to the target loss (>= 1.2x the fixed arm's steps, or never)", "learned arm"))});
}

// ---- E8, A11 ----------------------------------------------------------------------------------

namespace {
Case equivalent_case(const std::string& condition, const std::vector<double>& gaps) {
  return seed_case(condition, gaps, [](double g) { return g <= kTrainEqualRel; },
                   "largest paired loss gap over the curve and the end", "%");
}
Case equal_at_init_case(const std::string& condition, const std::vector<double>& diffs, double bound) {
  return seed_case(condition, diffs, [bound](double d) { return d <= bound; }, "max relative difference", "");
}
}  // namespace

Verdict reparametrisation(const std::vector<Equivalence>& settings, const std::string& what) {
  SL_CHECK(!settings.empty(), "reparametrisation: no settings");
  std::vector<Case> init, train;
  for (const Equivalence& e : settings) {
    init.push_back(equal_at_init_case(e.setting, e.init_rel_diff, kInitEqualRel));
    train.push_back(equivalent_case(e.setting, e.train_gap));
  }
  return from_parts({part("at initialisation", what + " gives the same model at step 0",
                          from_cases(init, what + ", logits at init (equal when <= 1e-5)", "setting")),
                     part("in training", what + " trains the same (mathematically equivalent)",
                          from_cases(train, what + ", training (equivalent when <= 2 % at every point)", "setting"))});
}

// ---- E9 ---------------------------------------------------------------------------------------

Verdict layernorm_absorbs(const std::vector<Absorption>& cases) {
  SL_CHECK(!cases.empty(), "layernorm_absorbs: no cases");
  std::vector<Case> init, train;
  for (const Absorption& c : cases) {
    init.push_back(equal_at_init_case(c.condition, c.init_rel_diff, kAbsorbedRel));
    train.push_back(equivalent_case(c.condition, c.train_gap));
  }
  return from_parts({part("at initialisation", "the LayerNorm removes the embedding scale from the layer-0 input",
                          from_cases(init, "Layer-0 input, ×1 against ×sqrt(d) (absorbed when <= 1e-3)", "position setting")),
                     part("in training", "so no scale is needed: training is the same",
                          from_cases(train, "Training, ×1 against ×sqrt(d) (the same when <= 2 %)", "position setting"))});
}

// ---- E10 --------------------------------------------------------------------------------------

Verdict removal_oscillates(const std::string& condition, const std::vector<double>& grad_norm_ratio,
                           const std::vector<double>& roughness_ratio) {
  const Case g = seed_case(condition, grad_norm_ratio, [](double r) { return r >= kGradRatio; },
                           "median gradient norm with ×sqrt(d) over without");
  const Case r = seed_case(condition, roughness_ratio, [](double x) { return x >= kRoughnessRatio; },
                           "loss roughness without ×sqrt(d) over with");
  return from_parts({part("gradient norm", "with it the gradient norm drops (from 100+ to about 10)",
                          from_cases({g}, "The gradient norm drops without ×sqrt(d) (with / without >= 3)", "model")),
                     part("oscillation", "removing ×sqrt(d_model) makes the loss oscillate",
                          from_cases({r}, "The loss oscillates without ×sqrt(d) (roughness >= 1.5x)", "model"))});
}

// ---- E11 --------------------------------------------------------------------------------------

Verdict rope_rmsnorm_invariance(const std::vector<ScaleCase>& init_cases, const std::string& train_condition,
                                const std::vector<double>& train_gap) {
  SL_CHECK(!init_cases.empty(), "rope_rmsnorm_invariance: no cases");
  std::vector<Case> init;
  for (const ScaleCase& c : init_cases) {
    std::vector<double> change;
    for (double r : c.var_ratio) change.push_back(std::isfinite(r) ? std::abs(r - 1.0) : kInf);
    init.push_back(seed_case(c.condition, change, [](double x) { return x <= kInvariantRel; },
                             "|Var(logits) / Var at scale 1 - 1|", "%"));
  }
  return from_parts(
      {part("at initialisation", "with Pre-RMSNorm the embedding scale does not reach the attention",
            from_cases(init, "Layer-0 attention logits invariant to the embedding scale (<= 1 %)", "scale")),
       part("in training", "so the scale need not be set: training is the same",
            from_cases({equivalent_case(train_condition, train_gap)}, "Training, ×1 against ×sqrt(d) (the same when <= 2 %)", "model"))});
}

// ---- E12 --------------------------------------------------------------------------------------

Verdict extreme_scales(const PairedRuns& times_d, const PairedRuns& over_d) {
  return from_parts(
      {part("×d explodes", "multiplying by d_model explodes",
            broken_cases({{"×d", times_d}}, "×d is broken (final loss >= 1.5x the ×sqrt(d) baseline's, or diverged)", "scale")),
       part("÷d loses the tokens", "dividing by d_model loses the token information",
            broken_cases({{"÷d", over_d}}, "÷d is broken (final loss >= 1.5x the baseline's, or diverged)", "scale"))});
}

// ---- A3 ---------------------------------------------------------------------------------------

Verdict inv_dk_unusable(const std::vector<DkCase>& cases) {
  SL_CHECK(!cases.empty(), "inv_dk_unusable: no cases");
  std::vector<Case> uniform;
  std::vector<std::pair<std::string, PairedRuns>> train;
  for (const DkCase& c : cases) {
    const std::string cond = "d_k = " + std::to_string(c.d_k);
    uniform.push_back(seed_case(cond, c.entropy, [](double h) { return h >= kNearUniformEntropy; },
                                "normalised entropy at init", ""));
    train.push_back({cond, c.loss});
  }
  return from_parts({part("nearly uniform", "dividing by d_k makes attention nearly uniform",
                          from_cases(uniform, "1/d_k attention is nearly uniform at init (H / ln n >= 0.9)", "d_k")),
                     part("unusable", "the model cannot focus: not slightly worse but unusable",
                          broken_cases(train, "1/d_k is unusable (final loss >= 1.5x 1/sqrt(d_k)'s, or diverged)", "d_k"))});
}

// ---- A4 ---------------------------------------------------------------------------------------

Verdict no_scale_saturates(const std::vector<SaturationCase>& cases) {
  SL_CHECK(!cases.empty(), "no_scale_saturates: no cases");
  std::vector<Case> sat, vanish;
  std::vector<std::pair<std::string, PairedRuns>> train;
  for (const SaturationCase& c : cases) {
    const std::string cond = "d_k = " + std::to_string(c.d_k);
    sat.push_back(seed_case(cond, c.saturated_share, [](double s) { return s >= kSaturatedShare; },
                            "saturated share of rows at init", "%"));
    vanish.push_back(seed_case(cond, c.jacobian_ratio, [](double r) { return r <= 1.0 / kVanishFactor; },
                               "softmax Jacobian norm without the scale over with"));
    train.push_back({cond, c.loss});
  }
  return from_parts(
      {part("saturation", "no scaling pushes softmax into saturation (near one-hot)",
            from_cases(sat, "Without a scale >= 50 % of rows are saturated at init", "d_k")),
       part("vanishing gradients", "gradients vanish",
            from_cases(vanish, "Without a scale the softmax Jacobian is <= 1/10 of the scaled one's", "d_k")),
       part("no convergence", "training does not converge",
            broken_cases(train, "Without a scale training is broken (final loss >= 1.5x, or diverged)", "d_k"))});
}

// ---- A6 ---------------------------------------------------------------------------------------

Verdict gradient_drop(const std::vector<DropCase>& cases) {
  SL_CHECK(!cases.empty(), "gradient_drop: no cases");
  std::vector<Case> drop, stuck;
  for (const DropCase& c : cases) {
    const std::string cond = "d_k = " + std::to_string(c.d_k);
    Case d = seed_case(cond, c.grad_ratio, [](double r) { return r >= kDropFactor; },
                       "layer-0 gradient norm with the scale over without");
    // Say which way it goes: a ratio below 1 means the unscaled gradients are larger.
    const double m = median_of(c.grad_ratio);
    if (std::isfinite(m) && m > 0)
      d.detail += m < 1 ? "; without the scale the gradients are " + fmt(1.0 / m) + "x larger, not smaller"
                        : "; without the scale the gradients are " + fmt(m) + "x smaller";
    drop.push_back(d);
    stuck.push_back(seed_case(cond, c.loss_fraction, [](double f) { return f >= kNoFallFraction; },
                              "unscaled final over first training loss", ""));
  }
  return from_parts({part("gradient drop", "without scaling the first layers' gradient norm drops more than 10x",
                          from_cases(drop, "The first layer's gradient drops >= 10x without the scale", "d_k")),
                     part("loss stuck", "and the loss does not fall",
                          from_cases(stuck, "The unscaled loss does not fall (final >= 0.9x first)", "d_k"))});
}

// ---- A7 ---------------------------------------------------------------------------------------

Verdict wrong_scale_fails(const std::string& condition, const PairedRuns& loss, const std::vector<double>& roughness_ratio) {
  const std::vector<double> ratio = paired_ratios(loss);
  SL_CHECK(ratio.size() == roughness_ratio.size(), "wrong_scale_fails: ", ratio.size(), " loss pairs, ",
           roughness_ratio.size(), " roughness ratios");
  // Per seed, how far past its nearer threshold: >= 1 fails (broken or rough).
  std::vector<double> worst;
  for (size_t i = 0; i < ratio.size(); ++i)
    worst.push_back(std::isnan(ratio[i]) ? kNaN
                                          : std::max(ratio[i] / kBrokenFactor, failed_as_worst(roughness_ratio[i]) / kRougherFactor));
  Case c = seed_case(condition, worst, [](double w) { return w >= 1.0; },
                     "max(loss ratio / 1.5, roughness ratio / 2)", "");
  c.detail += "; final loss over the right scale's " + per_seed_text(ratio) + ", roughness " +
              per_seed_text(roughness_ratio) + failures(loss);
  return from_cases({c}, "The wrong scale fails to converge (final loss >= 1.5x or >= 2x as rough)", "setting");
}

// ---- A12 --------------------------------------------------------------------------------------

Verdict slower_training(double steps_ratio, int64_t d_k) {
  return Verdict::not_testable(
      "which implementation, model and data the seed's 2-3x refers to is unknown; only the speed ratio is measurable",
      "Steps to the target loss, 1/d_k over 1/sqrt(d_k), at d_k = " + std::to_string(d_k) + ": " +
          (std::isfinite(steps_ratio) ? fmt(steps_ratio) + "x" : std::string("never reached")) + ".");
}

// ---- B1 ---------------------------------------------------------------------------------------

Verdict warmup_needed(const WarmupRuns& r) {
  Case post = seed_case("Post-LN", paired_ratios(r.post), [](double x) { return x >= kNeedsWarmup; },
                        "final loss without warm-up over with");
  post.detail += failures(r.post);
  Case pre = seed_case("Pre-LN", paired_ratios(r.pre), [](double x) { return x < kNeedsWarmup; },
                       "final loss without warm-up over with");
  pre.detail += failures(r.pre);
  const Case grads = seed_case("Post-LN at init", r.post_last_is_largest, [](double x) { return x >= 1.0; },
                               "share of seeds whose last decoder layer has the largest gradient", "");
  return from_parts(
      {part("Post-LN needs warm-up", "Post-LN needs learning-rate warm-up",
            from_cases({post}, "Post-LN needs warm-up (without it >= 1.2x the loss, or diverged)", "norm")),
       part("Pre-LN does not", "Pre-LN does not",
            from_cases({pre}, "Pre-LN trains as well without warm-up (< 1.2x)", "norm")),
       part("gradients near the output", "at init Post-LN's gradients are largest near the output",
            from_cases({grads}, "Post-LN's largest decoder gradient at step 1 is in the last layer", "norm"))});
}

// ---- B2 ---------------------------------------------------------------------------------------

Verdict logit_growth(const std::vector<GrowthCase>& growth, const std::vector<BoundCase>& controls) {
  SL_CHECK(!growth.empty() && !controls.empty(), "logit_growth: ", growth.size(), " growth cases, ",
           controls.size(), " controls");
  std::vector<Case> g, b;
  for (const GrowthCase& c : growth)
    g.push_back(seed_case(c.condition, c.growth, [](double x) { return x >= kGrowth; },
                          "max |logit| at the end over at step 1"));
  for (const BoundCase& c : controls)
    b.push_back(seed_case(c.condition, c.end_over_baseline, [](double x) { return x <= kBounded; },
                          "end max |logit| over the baseline's"));
  return from_parts({part("growth", "at a high learning rate the attention logits grow during training",
                          from_cases(g, "The logits grow (end >= 3x step 1) without a control", "learning rate")),
                     part("bounded", "QK-norm or logit soft-capping bounds them",
                          from_cases(b, "A control bounds them (end <= 0.5x the baseline's)", "control"))});
}

// ---- B3 ---------------------------------------------------------------------------------------

double lr_span_steps(const std::vector<double>& lrs) {
  SL_CHECK(!lrs.empty(), "lr_span_steps: no rates");
  const auto [lo, hi] = std::minmax_element(lrs.begin(), lrs.end());
  return std::log2(*hi / *lo);
}

Verdict mup_transfer(const std::vector<TransferCase>& cases) {
  SL_CHECK(!cases.empty(), "mup_transfer: no cases");
  std::vector<Case> out;
  for (const TransferCase& c : cases) {
    const double mup = lr_span_steps(c.mup_best_lr), sp = lr_span_steps(c.sp_best_lr);
    const std::string detail = "best rate spans " + fmt(mup) + " x2 step(s) under muP, " + fmt(sp) + " under SP";
    if (!c.interior) {
      out.push_back({c.condition, Outcome::undecided, detail + "; a best rate is on the grid's edge, not an optimum"});
      continue;
    }
    const bool holds = mup <= kStaysPutSteps + 1e-9 && sp >= kMovesSteps - 1e-9;
    out.push_back({c.condition, holds ? Outcome::yes : Outcome::no, detail});
  }
  return from_cases(out, "muP's best rate stays put (<= 1 step) while SP's moves (>= 2 steps)", "setting");
}

// ---- B4 ---------------------------------------------------------------------------------------

Verdict loss_scaling_needed(const std::string& condition, const PairedRuns& no_scaling, const PairedRuns& dynamic_scaling) {
  std::vector<double> none, scaled;
  for (double r : paired_ratios(no_scaling)) none.push_back(std::isnan(r) ? r : r - 1.0);
  for (double r : paired_ratios(dynamic_scaling)) scaled.push_back(std::isnan(r) ? r : r - 1.0);
  Case n = seed_case(condition, none, [](double x) { return x >= kFp16Tolerance; },
                     "f16 without loss scaling, final loss over f32 - 1", "%");
  n.detail += failures(no_scaling);
  Case s = seed_case(condition, scaled, [](double x) { return std::abs(x) < kFp16Tolerance; },
                     "f16 with dynamic loss scaling, final loss over f32 - 1", "%");
  s.detail += failures(dynamic_scaling);
  return from_parts({part("needs it", "FP16 training without loss scaling falls short of f32",
                          from_cases({n}, "Without loss scaling f16 ends >= 5 % above f32 (or diverges)", "model")),
                     part("matches f32 with it", "with dynamic loss scaling it matches f32",
                          from_cases({s}, "With dynamic loss scaling f16 is within 5 % of f32", "model"))});
}

}  // namespace scalelab::ledger::criteria
