// ledger/user_claim_compile: a validated claim of a claim file as a Claim: its runs (every arm at
// every sweep value; coord_check: at every width) and its evaluation (per case the paired seeds'
// vote on the criterion, the verdict from the cases, the measurements and plots of the record).
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <functional>
#include <map>

#include "scalelab/ledger/criteria_training.hpp"
#include "scalelab/ledger/experiments.hpp"
#include "scalelab/ledger/user_claim_spec.hpp"

namespace fs = std::filesystem;

namespace scalelab::ledger::user_claim_detail {

std::string resolved_preset(const Json& tree) { return tree.value("preset", std::string()); }

size_t sweep_index(const SweepSpec& sweep, const Json& value) {
  const auto it = std::find(sweep.values.begin(), sweep.values.end(), value);
  SL_CHECK(it != sweep.values.end(), "sweep value ", value_text(value), " is not among the sweep's values");
  return size_t(it - sweep.values.begin());
}

ClaimSpec in_mode(const ClaimSpec& s, const LedgerMode& mode) {
  ClaimSpec out = s;
  if (s.ledger_base) {
    const std::string preset = resolved_preset(s.tree);
    out.tree = training_tree(mode);
    if (!preset.empty()) out.tree["preset"] = preset;
  }
  if (s.seeds_from_mode) out.seeds = mode.train_seeds;
  return out;
}

// Overrides a measure imposes on every run: f16 overflow counts over training need f16 training.
std::vector<std::string> measure_overrides(const MeasureSpec& m) {
  if (m.name == "f16_overflow" && m.when == "training") return {"train.precision=f16"};
  return {};
}

// The resolved config of an arm at a sweep value plus `extra` overrides; a rejected override is an
// error naming the arm (and the sweep value, the width).
Json arm_at(const Reader& r, const ClaimSpec& s, const ArmSpec& arm, const Json* value,
            const std::vector<std::string>& extra, const std::string& what) {
  std::vector<std::string> overrides = s.set;
  overrides.insert(overrides.end(), arm.set.begin(), arm.set.end());
  if (value) {
    if (!s.sweep->key.empty()) overrides.push_back(override_of(s.sweep->key, *value));
    if (!s.sweep->set.empty()) {
      const std::vector<std::string>& with = s.sweep->set[sweep_index(*s.sweep, *value)];
      overrides.insert(overrides.end(), with.begin(), with.end());
    }
  }
  const std::vector<std::string> own = measure_overrides(s.measure);
  overrides.insert(overrides.end(), own.begin(), own.end());
  overrides.insert(overrides.end(), extra.begin(), extra.end());
  Json tree = s.tree;
  tree.erase("preset");
  try {
    return arm_config(tree, overrides, resolved_preset(s.tree));
  } catch (const Error& e) {
    r.fail((value ? "arms \"" + arm.name + "\" at sweep " + case_name(*s.sweep, *value) : "arms \"" + arm.name + "\"") + what,
           e.what());
  }
}

std::string arm_run_name(const ClaimSpec& s, const std::string& arm, const Json* value) {
  return value ? arm + ", " + case_name(*s.sweep, *value) : arm;
}

// The runs of one arm at one sweep value: one group, or for coord_check one per width (d_ff kept
// in the arm's own ratio to d_model, first_steps training steps).
std::vector<ArmRuns> arm_runs(const Reader& r, const ClaimSpec& s, const ArmSpec& arm, const Json* value) {
  const std::string name = arm_run_name(s, arm.name, value);
  const Json config = arm_at(r, s, arm, value);
  if (s.measure.name != "coord_check") return {{name, config}};
  const double ratio = config["model"]["d_ff"].get<double>() / config["model"]["d_model"].get<double>();
  std::vector<ArmRuns> out;
  for (int64_t w : s.measure.widths) {
    const std::vector<std::string> width = {"model.d_model=" + std::to_string(w),
                                            "model.d_ff=" + std::to_string(std::llround(double(w) * ratio)),
                                            "train.steps=" + std::to_string(s.measure.first_steps)};
    out.push_back({name + ", width " + std::to_string(w), arm_at(r, s, arm, value, width, " at width " + std::to_string(w))});
  }
  return out;
}

// The per-seed values of the criterion and what a seed must meet.
struct Judged {
  std::vector<double> values;
  std::function<bool(double)> meets;
  std::string what, unit;
};

// Per seed, the worst of a paired quantity over the measure's points (the claim must hold at every
// point); a NaN point (a failed baseline) makes the seed NaN, which never supports the claim.
std::vector<double> worst_over_points(const std::vector<std::vector<double>>& per_point, bool highest) {
  std::vector<double> out = per_point.front();
  for (size_t p = 1; p < per_point.size(); ++p)
    for (size_t i = 0; i < out.size(); ++i) {
      const double x = per_point[p][i];
      if (std::isnan(out[i]) || std::isnan(x)) out[i] = NAN;
      else out[i] = highest ? std::max(out[i], x) : std::min(out[i], x);
    }
  return out;
}

// test / base: [point][seed] values of the arm under test and of its baseline (base empty for
// diverges, whose test_failed holds 1 per seed whose run failed).
Judged judge(const ClaimSpec& s, const std::string& arm, const std::vector<std::vector<double>>& test,
             const std::vector<std::vector<double>>& base, const std::vector<double>& test_failed) {
  const CriterionSpec& c = s.criterion;
  const MeasureSpec& m = s.measure;
  if (c.kind == "diverges")
    return {test_failed, [](double x) { return x >= 1.0; }, arm + " diverged (1) or not (0)", ""};
  SL_CHECK(test.size() == base.size(), "measure points: ", test.size(), " vs ", base.size());
  auto paired = [&](std::vector<double> (*f)(const criteria::PairedRuns&)) {
    std::vector<std::vector<double>> out;
    for (size_t p = 0; p < test.size(); ++p) out.push_back(f(criteria::PairedRuns{test[p], base[p]}));
    return out;
  };
  const std::string at_points = test.size() > 1 ? " (worst of " + std::to_string(test.size()) + " points)" : "";
  if (c.kind == "ratio_at_least")
    return {worst_over_points(paired(criteria::paired_ratios), false), [t = c.threshold](double x) { return x >= t; },
            measure_label(m) + ", " + arm + " / " + c.than + at_points, "x"};
  if (c.kind == "equivalent") {
    if (log_scale_measure(m)) {
      std::vector<std::vector<double>> steps = paired(criteria::paired_ratios);
      for (auto& point : steps)
        for (double& ratio : point) ratio = std::abs(std::log2(ratio));
      return {worst_over_points(steps, true), [t = c.tolerance](double x) { return x <= t; },
              measure_label(m) + ", |log2(" + arm + " / " + c.than + ")|", ""};
    }
    return {worst_over_points(paired(criteria::paired_gaps), true), [t = c.tolerance](double x) { return x <= t; },
            measure_label(m) + ", |" + arm + " - " + c.than + "| / |" + c.than + "|" + at_points, ""};
  }
  const bool better = c.kind == "better";
  return {worst_over_points(paired(criteria::paired_differences), better),
          better ? std::function<bool(double)>([mg = c.margin](double d) { return d < -mg; })
                 : std::function<bool(double)>([mg = c.margin](double d) { return d > mg; }),
          measure_label(m) + ", " + arm + " - " + c.than + at_points, measure_unit(m).empty() ? "" : " " + measure_unit(m)};
}

std::string quoted_arms(const CriterionSpec& c) {
  std::string out;
  for (const std::string& a : c.arms) out += (out.empty() ? "\"" : ", \"") + a + "\"";
  return c.arms.size() > 1 ? out + " (each)" : out;
}

std::string criterion_text(const ClaimSpec& s) {
  const CriterionSpec& c = s.criterion;
  if (!c.text.empty()) return c.text;
  const std::string m = measure_label(s.measure);
  const std::string arm = quoted_arms(c);
  std::string body;
  if (c.kind == "better") body = m + " of " + arm + " lower than \"" + c.than + "\"'s by more than " + fmt(c.margin);
  if (c.kind == "worse") body = m + " of " + arm + " higher than \"" + c.than + "\"'s by more than " + fmt(c.margin);
  if (c.kind == "equivalent")
    body = log_scale_measure(s.measure) ? m + " of " + arm + " within " + fmt(c.tolerance) + " x2 steps of \"" + c.than + "\"'s"
                                        : m + " of " + arm + " within " + fmt(100 * c.tolerance) + " % of \"" + c.than + "\"'s";
  if (c.kind == "ratio_at_least") body = m + " of " + arm + " >= " + fmt(c.threshold) + "x \"" + c.than + "\"'s";
  if (c.kind == "diverges") body = arm + " diverges";
  if (s.measure.name == "loss_curve" && c.kind != "diverges") body += " at each of the points";
  std::string where = c.arms.size() > 1 ? "arm" : "";
  if (s.sweep) where += (where.empty() ? "" : " and ") + s.sweep->name;
  std::string context;
  for (size_t i = 0; s.sweep && i < s.sweep->values.size(); ++i)
    if (s.sweep->context[i]) context += (context.empty() ? "" : ", ") + case_name(*s.sweep, s.sweep->values[i]);
  if (!context.empty()) context = "; " + context + " run and recorded as context, not judged";
  return body + " on every paired seed (a failed run is the worst value), " +
         (where.empty() ? std::string("in the one setting tested") : (c.at == "every" ? "at every " : "at some ") + where + " tested") +
         (s.measure.name == "coord_check" ? "; every width at the arm's own learning rate (untuned, as mup's coordinate check)"
                                          : "; training arms at their own best learning rate") +
         (s.measure.name == "best_lr" || sweeps_learning_rate(s.sweep) ? " (except where the learning rate is the subject)" : "") +
         context + ".";
}

// The plot of coord_check for one arm at one sweep value: per step, the geometric mean over the
// sites of their coordinate size against the width (mup's coordinate-check picture).
Json coord_plot(const ClaimSpec& s, const std::string& name, const std::vector<const Arm*>& by_width, size_t index) {
  Json plot = line_plot(s.id + "-coord-" + std::to_string(index),
                        name + ": " + s.measure.of + " output size (RMS, geometric mean over layers) against width, per step",
                        "width (d_model)", "RMS of the activation", true, true);
  const CoordSizes sizes = coord_sizes(s.measure, by_width);
  for (int64_t step = 1; step <= s.measure.first_steps; ++step) {
    std::vector<std::pair<double, std::vector<double>>> points;
    for (size_t w = 0; w < by_width.size(); ++w) {
      std::vector<double> per_seed(by_width[w]->results.size(), 0.0);
      int sites = 0;
      for (const auto& [where, per_width] : sizes.rms) {
        if (where.second != step || w >= per_width.size()) continue;
        ++sites;
        for (size_t i = 0; i < per_seed.size(); ++i)
          per_seed[i] += i < per_width[w].size() && per_width[w][i] > 0 ? std::log(per_width[w][i]) : NAN;
      }
      for (double& x : per_seed) x = sites ? std::exp(x / sites) : NAN;
      points.push_back({double(s.measure.widths[w]), per_seed});
    }
    plot["series"].push_back(series("step " + std::to_string(step), points));
  }
  return plot;
}

Claim compile(const ClaimSpec& s) {
  Claim c;
  std::string arms;
  for (const ArmSpec& a : s.arms) arms += (arms.empty() ? "" : "; ") + a.name + (a.set.empty() ? " (the base)" : ": " + joined(a.set));
  std::string widths;
  for (int64_t w : s.measure.widths) widths += (widths.empty() ? "" : ", ") + std::to_string(w);
  const std::string seeds = s.seeds_from_mode ? "paired seeds as --seeds sets (default 3)" : std::to_string(s.seeds) + " paired seeds";
  c.info = {s.id, s.group.empty() ? "user (" + fs::path(s.file).filename().string() + ")" : s.group, s.statement,
            !s.experiment.empty() ? s.experiment
                                  : "Arms " + arms + (s.sweep ? "; swept over " + s.sweep->name : "") +
                                        (widths.empty() ? "" : "; each at d_model " + widths + " for " + std::to_string(s.measure.first_steps) + " steps") +
                                        "; " + seeds + "; measure: " + measure_label(s.measure) + ".",
            criterion_text(s)};
  c.plan = [spec = s](ClaimRun& run) {
    const ClaimSpec s = in_mode(spec, run.mode());
    const bool lr_swept = sweeps_learning_rate(s.sweep);
    const bool best_lr = measures_learning_rate(s.measure);
    if (lr_swept || best_lr) run.learning_rate_is_the_subject();
    // The criterion's bound, fixed before any run, in the record as the built-in claims' are.
    const CriterionSpec& cr = s.criterion;
    if (cr.kind == "equivalent") run.threshold("tolerance", cr.tolerance);
    if (cr.kind == "better" || cr.kind == "worse") run.threshold("margin", cr.margin);
    if (cr.kind == "ratio_at_least") run.threshold("threshold", cr.threshold);
    std::vector<int64_t> seeds;
    for (int64_t i = 1; i <= s.seeds; ++i) seeds.push_back(i);
    const Reader r(s.file);
    auto add = [&](const ArmSpec& a, const Json* value) {
      for (const ArmRuns& g : arm_runs(r, s, a, value)) {
        if (measured_at_init(s.measure)) {
          Json options = {{"batches", 1}, {"batch_size", 64}};
          if (s.measure.name == "f16_overflow") options["precision"] = "f16";
          run.add_arm(g.name, RunKind::probe, g.config, seeds, options);
        } else if (s.measure.name == "coord_check") {
          // Every step observed with the activation sizes; at the arm's own rate, as mup does.
          Arm& arm = run.add_arm(g.name, RunKind::train, g.config, seeds, {{"observe_every", 1}, {"activations", true}});
          arm.tune_lr = false;
        } else {
          // Observed as the built-in arms are (step 1 and 8 more times), so shared runs share the cache.
          const int64_t steps = g.config["train"]["steps"].get<int64_t>();
          Arm& arm = run.add_arm(g.name, RunKind::train, g.config, seeds, {{"observe_every", std::max<int64_t>(1, steps / 8)}});
          arm.tune_lr = !lr_swept;
          arm.lr_rank_all_seeds = best_lr;
        }
      }
    };
    if (!s.sweep) {
      for (const ArmSpec& a : s.arms) add(a, nullptr);
    } else {
      for (const Json& v : s.sweep->values)
        for (const ArmSpec& a : s.arms) add(a, &v);
    }
  };
  c.evaluate = [spec = s](ClaimRun& run) {
    const ClaimSpec s = in_mode(spec, run.mode());
    const CriterionSpec& cr = s.criterion;
    const MeasureSpec& m = s.measure;
    std::vector<Case> cases;
    struct CaseMedian {
      std::string label;
      double median;
      std::string unit;
    };
    std::vector<CaseMedian> case_medians;  // per case, its paired quantity's median over seeds
    const bool numeric = s.sweep && std::all_of(s.sweep->values.begin(), s.sweep->values.end(),
                                                [](const Json& v) { return v.is_number(); });
    Json plot = line_plot(s.id + "-measure", measure_label(m) + (s.sweep ? " against " + s.sweep->name : "") +
                                                 ", median over seeds with min..max",
                          s.sweep ? s.sweep->name + (numeric ? "" : " (index of the value)") : "arm", measure_label(m));
    std::map<std::string, std::vector<std::pair<double, std::vector<double>>>> points;
    size_t coord_plots = 0, curve_plots = 0;
    // The run groups of an arm at a sweep value (coord_check: one per width).
    auto groups = [&](const std::string& arm, const Json* value) {
      std::vector<const Arm*> out;
      const std::string name = arm_run_name(s, arm, value);
      if (m.name != "coord_check") return std::vector<const Arm*>{&run.arm(name)};
      for (int64_t w : m.widths) out.push_back(&run.arm(name + ", width " + std::to_string(w)));
      return out;
    };
    auto values_at_points = [&](const std::vector<const Arm*>& g) {
      return m.name == "coord_check" ? std::vector<std::vector<double>>{coord_check_per_seed(m, g)} : measure_points(m, *g.front());
    };
    auto one_value = [&](const Json* value, double x) {
      const Json at = value ? *value : Json(nullptr);
      std::map<std::string, std::vector<std::vector<double>>> by_arm;
      for (const ArmSpec& a : s.arms) {
        const std::string name = arm_run_name(s, a.name, value);
        const std::vector<const Arm*> g = groups(a.name, value);
        by_arm[a.name] = values_at_points(g);
        const std::vector<double> v = m.name == "coord_check" ? by_arm[a.name].front() : measure_per_seed(m, *g.front());
        run.measure(measure_label(m), name, at, measure_unit(m), v);
        points[a.name].push_back({x, v});
        if (m.name == "loss_curve") {
          const std::vector<int64_t> steps = loss_curve_steps(m, g.front()->config["train"]["steps"].get<int64_t>());
          for (size_t p = 0; p < steps.size(); ++p)
            run.measure("training loss at step " + std::to_string(steps[p]), name, at, "nats", by_arm[a.name][p]);
        }
        if (m.name == "f16_overflow")
          for (const auto& [op, counts] : overflow_per_op(*g.front(), m.when == "init"))
            if (op != "all") run.measure("f16 overflows of " + op, name, at, "results", counts);
        if (m.name == "coord_check") run.plot(coord_plot(s, name, g, coord_plots++));
      }
      if (m.name == "loss_curve") {
        Json curves = line_plot(s.id + "-curves-" + std::to_string(curve_plots++),
                                "training loss" + (value ? " at " + case_name(*s.sweep, *value) : std::string()) +
                                    ", median over seeds with min..max",
                                "step", "training loss");
        for (const ArmSpec& a : s.arms) curves["series"].push_back(curve_series(a.name, *groups(a.name, value).front()));
        run.plot(curves);
      }
      for (const std::string& arm : cr.arms) {
        std::vector<double> failed;
        for (size_t i = 0; i < size_t(s.seeds); ++i) {
          bool f = false;
          for (const Arm* g : groups(arm, value))
            f = f || i >= g->results.size() || diverged(g->results[i]) ||
                (g->kind == RunKind::train && !std::isfinite(final_valid_nll(g->results[i])));
          failed.push_back(f ? 1.0 : 0.0);
        }
        const Judged j = judge(s, arm, by_arm[arm], cr.than.empty() ? std::vector<std::vector<double>>{} : by_arm[cr.than], failed);
        std::string condition = cr.arms.size() > 1 ? arm : "";
        if (value) condition += (condition.empty() ? "" : ", ") + case_name(*s.sweep, *value);
        if (condition.empty()) condition = "the setting tested";
        run.measure(j.what, "paired", at, j.unit, j.values);
        // A context value is measured and recorded like the others but is not a case.
        if (value && s.sweep->context[sweep_index(*s.sweep, *value)]) continue;
        cases.push_back(criteria::seed_case(condition, j.values, j.meets, j.what, j.unit));
        case_medians.push_back({j.what + " at " + condition, median_of(j.values), j.unit});
      }
    };
    if (!s.sweep) {
      one_value(nullptr, 0);
    } else {
      for (size_t i = 0; i < s.sweep->values.size(); ++i)
        one_value(&s.sweep->values[i], numeric ? s.sweep->values[i].get<double>() : double(i));
    }
    for (const ArmSpec& a : s.arms) plot["series"].push_back(series(a.name, points[a.name]));
    run.plot(plot);
    // With one case, its paired quantity is the claim's key number (with several, the cases say more).
    if (case_medians.size() == 1) {
      std::string unit = case_medians[0].unit;
      unit.erase(0, unit.find_first_not_of(' '));
      run.key_number(case_medians[0].label, case_medians[0].median, unit);
    }
    std::string range = cr.arms.size() > 1 ? "arm" : "";
    if (s.sweep) range += (range.empty() ? "" : " and ") + s.sweep->name;
    if (range.empty()) range = "setting";
    // The statement heads the sentence ("<statement>: holds at ..."), without its closing period.
    std::string head = s.statement;
    while (!head.empty() && (head.back() == '.' || head.back() == ' ')) head.pop_back();
    Verdict v = from_cases(cases, head, range);
    // "At some": the claim is existential, so one case where it held is enough.
    if (cr.at == "some" && v.kind == VerdictKind::holds_only_if) {
      Verdict h = Verdict::holds(v.sentence + " (the claim asks for some " + range + ": it held at " + v.condition + ")");
      h.held_on = v.held_on, h.failed_on = v.failed_on, h.undecided_on = v.undecided_on, h.tested = v.tested;
      v = h;
    }
    return v;
  };
  return c;
}

}  // namespace scalelab::ledger::user_claim_detail
