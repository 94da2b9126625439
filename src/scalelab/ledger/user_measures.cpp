#include "scalelab/ledger/user_measures.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "scalelab/core/error.hpp"
#include "scalelab/kernels/precision.hpp"
#include "scalelab/ledger/experiments.hpp"

namespace scalelab::ledger {
namespace {
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

double number_or_nan(const Json& j) { return j.is_number() ? j.get<double>() : kNaN; }

// Column `column` of every attention site at the run's last observation (observed_attn's columns:
// 3 max|logit|, 4 normalised entropy, 5 saturated share).
std::vector<double> last_attention(const Json& result, int column) {
  std::vector<double> out;
  if (!result.contains("observations") || result["observations"].empty()) return out;
  for (const Json& a : result["observations"].back()["attn"]) out.push_back(number_or_nan(a[size_t(column)]));
  return out;
}

double attention_at_end(const Json& result, int column, bool mean) {
  if (diverged(result)) return kInf;
  const std::vector<double> v = last_attention(result, column);
  if (v.empty()) return kNaN;
  double acc = mean ? 0.0 : -kInf;
  for (double x : v) acc = mean ? acc + x : std::max(acc, x);
  return mean ? acc / double(v.size()) : acc;
}

// The training loss at the logged step nearest `step` (the curve is logged every log_every steps).
double loss_near(const Curve& curve, int64_t step) {
  double best = kNaN, distance = kInf;
  for (const auto& [s, loss] : curve)
    if (std::abs(s - double(step)) < distance) distance = std::abs(s - double(step)), best = loss;
  return best;
}

// Overflowing results of `op` ("all": every op) in one result: a training run's summed per-op
// counts, or a probe run's precision records summed over sites. A run without counts: NaN. A
// diverged training run is +inf (the worst value) unless `up_to_failure`: then its counts until it
// stopped, which say where it overflowed.
double overflow_of(const Json& result, const std::string& op, bool at_init, bool up_to_failure = false) {
  if (!at_init) {
    if (diverged(result) && !up_to_failure) return kInf;
    if (!result.contains("rounding")) return kNaN;
    double n = 0;
    for (const auto& [name, counts] : result["rounding"].items())
      if (op == "all" || name == op) n += counts.value("overflow", 0.0);
    return n;
  }
  if (!result.contains("records")) return kNaN;
  double n = 0;
  bool any = false;
  for (const Json& r : result["records"]) {
    if (r.value("probe", "") != "precision") continue;
    any = true;
    for (const auto& [name, v] : r["values"].items()) {
      const size_t at = name.rfind("_overflow");
      if (at == std::string::npos || at + 9 != name.size() || !v.is_number()) continue;
      if (op == "all" || name.substr(0, at) == op) n += v.get<double>();
    }
  }
  return any ? n : kNaN;
}
}  // namespace

const std::vector<std::string>& measure_names() {
  static const std::vector<std::string> names = {
      "final_valid_loss", "final_train_loss", "steps_to_loss", "loss_curve", "max_attention_logit",
      "attention_entropy", "saturated_share", "grad_norm", "f16_overflow", "best_lr", "probe", "coord_check"};
  return names;
}

std::vector<std::string> measure_keys(const std::string& name) {
  if (name == "steps_to_loss") return {"target"};
  if (name == "grad_norm") return {"stack", "layer", "step"};
  if (name == "probe") return {"probe", "field", "stack", "layer", "site"};
  if (name == "loss_curve") return {"points"};
  if (name == "f16_overflow") return {"op", "when"};
  if (name == "coord_check") return {"widths", "steps", "of"};
  return {};
}

std::string measure_unit(const MeasureSpec& m) {
  if (m.name == "final_valid_loss" || m.name == "final_train_loss") return "nats";
  if (m.name == "steps_to_loss") return "steps";
  if (m.name == "loss_curve") return "nats";
  if (m.name == "f16_overflow") return "results";
  return "";
}

std::string measure_label(const MeasureSpec& m) {
  if (m.name == "final_valid_loss") return "final valid loss";
  if (m.name == "final_train_loss") return "final training loss";
  if (m.name == "steps_to_loss") return "steps to training loss " + fmt(m.target);
  if (m.name == "max_attention_logit") return "max |attention logit| at the end";
  if (m.name == "attention_entropy") return "normalised attention entropy at the end (mean over sites)";
  if (m.name == "saturated_share") return "share of saturated attention rows at the end (max over sites)";
  if (m.name == "grad_norm")
    return "gradient norm of " + m.stack + " layer " + std::to_string(m.layer) + " at step " + std::to_string(m.step);
  if (m.name == "best_lr") return "best learning rate";
  if (m.name == "loss_curve") return "training loss at " + std::to_string(m.points) + " points of the curve (their mean where one number is shown)";
  if (m.name == "f16_overflow")
    return "f16 overflows " + (m.op == "all" ? std::string("over every op") : "of " + m.op) +
           (m.when == "init" ? " at init" : " over training");
  if (m.name == "coord_check")
    return "coordinate check: largest |d log2 size / d log2 width| of " + m.of + " outputs over the first " +
           std::to_string(m.first_steps) + " steps";
  return m.probe + "." + m.field + " at init (" + m.stack + " layer " + std::to_string(m.layer) + ", " + m.site + ")";
}

bool measured_at_init(const MeasureSpec& m) { return m.name == "probe" || (m.name == "f16_overflow" && m.when == "init"); }
bool measures_learning_rate(const MeasureSpec& m) { return m.name == "best_lr"; }
bool log_scale_measure(const MeasureSpec& m) { return m.name == "best_lr"; }

std::vector<double> measure_per_seed(const MeasureSpec& m, const Arm& arm) {
  if (m.name == "loss_curve") {  // the mean over the points (a failed seed: +inf)
    const std::vector<std::vector<double>> points = measure_points(m, arm);
    std::vector<double> mean(arm.results.size(), 0.0);
    for (const auto& p : points)
      for (size_t i = 0; i < mean.size(); ++i) mean[i] += p[i] / double(points.size());
    return mean;
  }
  if (m.name == "best_lr") {
    // Each seed's own argmin over the grid (every seed ran every rate); a seed that failed at
    // every rate has no best rate (+inf).
    std::vector<double> out;
    for (size_t s = 0; s < arm.seeds.size(); ++s) {
      double best = kInf, best_loss = kInf;
      for (const auto& [lr, results] : arm.by_lr) {
        if (s >= results.size() || results[s].is_null()) continue;
        const double l = final_valid_nll(results[s]);
        if (std::isfinite(l) && l < best_loss) best_loss = l, best = lr;
      }
      out.push_back(best);
    }
    return out;
  }
  return per_seed(arm, [&](const Json& r) -> double {
    if (m.name == "final_valid_loss") return final_valid_nll(r);
    if (m.name == "final_train_loss") return diverged(r) ? kInf : number_or_nan(r["final_train_loss"]);
    if (m.name == "steps_to_loss") {
      const double s = diverged(r) ? -1 : steps_to(loss_curve(r), m.target);
      return s < 0 ? kInf : s;  // never reached: the worst value
    }
    if (m.name == "max_attention_logit") return attention_at_end(r, 3, false);
    if (m.name == "attention_entropy") return attention_at_end(r, 4, true);
    if (m.name == "saturated_share") return attention_at_end(r, 5, false);
    if (m.name == "grad_norm") return observed_grad(r, m.step, m.stack, m.layer);
    if (m.name == "probe") return probe_value(r, m.probe, m.stack, m.layer, m.site, m.field);
    if (m.name == "f16_overflow") return overflow_of(r, m.op, m.when == "init");
    throw_error("measure \"", m.name, "\": unknown");
  });
}

std::vector<int64_t> loss_curve_steps(const MeasureSpec& m, int64_t steps) {
  std::vector<int64_t> out;
  for (int64_t k = 1; k <= m.points; ++k) out.push_back(std::max<int64_t>(1, steps * k / m.points));
  return out;
}

std::vector<std::vector<double>> measure_points(const MeasureSpec& m, const Arm& arm) {
  if (m.name != "loss_curve") return {measure_per_seed(m, arm)};
  const std::vector<int64_t> steps = loss_curve_steps(m, arm.config["train"]["steps"].get<int64_t>());
  std::vector<std::vector<double>> out;
  for (int64_t step : steps)
    out.push_back(per_seed(arm, [&](const Json& r) { return diverged(r) ? kInf : loss_near(loss_curve(r), step); }));
  return out;
}

std::vector<std::string> precision_op_names() {
  std::vector<std::string> out;
  for (int i = 0; i < kPrecisionOps; ++i) out.push_back(precision_op_name(static_cast<PrecisionOp>(i)));
  return out;
}

std::map<std::string, std::vector<double>> overflow_per_op(const Arm& arm, bool at_init) {
  std::map<std::string, std::vector<double>> out;
  for (const std::string& op : precision_op_names()) {
    std::vector<double> v = per_seed(arm, [&](const Json& r) { return overflow_of(r, op, at_init, true); });
    if (std::any_of(v.begin(), v.end(), [](double x) { return std::isfinite(x) && x != 0; })) out[op] = std::move(v);
  }
  out["all"] = per_seed(arm, [&](const Json& r) { return overflow_of(r, "all", at_init); });
  return out;
}

CoordSizes coord_sizes(const MeasureSpec& m, const std::vector<const Arm*>& by_width) {
  CoordSizes out;
  const int column = m.of == "residual" ? 4 : 3;
  for (size_t w = 0; w < by_width.size(); ++w) {
    const Arm& arm = *by_width[w];
    for (size_t seed = 0; seed < arm.results.size(); ++seed) {
      const Json& r = arm.results[seed];
      if (!r.is_object() || !r.contains("observations")) continue;
      for (const Json& o : r["observations"]) {
        const int64_t step = o.value("step", int64_t{0});
        if (step < 1 || step > m.first_steps || !o.contains("act")) continue;
        for (const Json& a : o["act"]) {
          const std::string site = a[0].get<std::string>() + " " + std::to_string(a[1].get<int64_t>()) + " " + a[2].get<std::string>();
          auto& per_width = out.rms[{site, step}];
          per_width.resize(by_width.size());
          per_width[w].resize(arm.results.size(), kNaN);
          per_width[w][seed] = number_or_nan(a[size_t(column)]);
        }
      }
    }
  }
  return out;
}

std::vector<double> coord_check_per_seed(const MeasureSpec& m, const std::vector<const Arm*>& by_width) {
  SL_CHECK(by_width.size() >= 2, "coord_check needs at least two widths (got ", by_width.size(), ")");
  const size_t seeds = by_width.front()->results.size();
  std::vector<double> out(seeds, 0.0);
  std::vector<double> widths;
  for (const Arm* a : by_width) widths.push_back(a->config["model"]["d_model"].get<double>());
  // A run that diverged or stopped before the last observed step: +inf, the worst value.
  for (size_t seed = 0; seed < seeds; ++seed)
    for (const Arm* a : by_width)
      if (seed >= a->results.size() || diverged(a->results[seed])) out[seed] = kInf;
  const CoordSizes sizes = coord_sizes(m, by_width);
  if (sizes.rms.empty()) return std::vector<double>(seeds, kNaN);
  for (const auto& [where, per_width] : sizes.rms) {
    for (size_t seed = 0; seed < seeds; ++seed) {
      std::vector<double> y;
      for (const auto& v : per_width) y.push_back(seed < v.size() ? v[seed] : kNaN);
      bool complete = y.size() == widths.size();
      for (double x : y) complete = complete && std::isfinite(x) && x > 0;
      const double slope = complete ? std::abs(slope_loglog(widths, y)) : kInf;
      out[seed] = std::max(out[seed], slope);
    }
  }
  return out;
}

}  // namespace scalelab::ledger
