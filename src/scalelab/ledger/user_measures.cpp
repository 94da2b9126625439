#include "scalelab/ledger/user_measures.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "scalelab/core/error.hpp"
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
}  // namespace

const std::vector<std::string>& measure_names() {
  static const std::vector<std::string> names = {
      "final_valid_loss", "final_train_loss", "steps_to_loss", "max_attention_logit",
      "attention_entropy", "saturated_share", "grad_norm", "best_lr", "probe"};
  return names;
}

std::vector<std::string> measure_keys(const std::string& name) {
  if (name == "steps_to_loss") return {"target"};
  if (name == "grad_norm") return {"stack", "layer", "step"};
  if (name == "probe") return {"probe", "field", "stack", "layer", "site"};
  return {};
}

std::string measure_unit(const MeasureSpec& m) {
  if (m.name == "final_valid_loss" || m.name == "final_train_loss") return "nats";
  if (m.name == "steps_to_loss") return "steps";
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
  return m.probe + "." + m.field + " at init (" + m.stack + " layer " + std::to_string(m.layer) + ", " + m.site + ")";
}

bool measured_at_init(const MeasureSpec& m) { return m.name == "probe"; }
bool measures_learning_rate(const MeasureSpec& m) { return m.name == "best_lr"; }
bool log_scale_measure(const MeasureSpec& m) { return m.name == "best_lr"; }

std::vector<double> measure_per_seed(const MeasureSpec& m, const Arm& arm) {
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
    throw_error("measure \"", m.name, "\": unknown");
  });
}

}  // namespace scalelab::ledger
