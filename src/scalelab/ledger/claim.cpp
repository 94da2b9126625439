#include "scalelab/ledger/claim.hpp"

#include <cmath>
#include <iomanip>
#include <sstream>

#include "scalelab/core/error.hpp"

namespace scalelab::ledger {

std::vector<int64_t> LedgerMode::seeds(int64_t n) const {
  std::vector<int64_t> s;
  for (int64_t i = 1; i <= n; ++i) s.push_back(i);
  return s;
}

RunSpec Arm::spec(size_t i) const {
  return {.kind = kind, .config = config, .seed = seeds.at(i), .options = options,
          .label = name + " seed " + std::to_string(seeds.at(i))};
}

Arm& ClaimRun::add_arm(const std::string& name, RunKind kind, Json config,
                       std::vector<int64_t> seeds, Json options) {
  for (const Arm& a : arms_) SL_CHECK(a.name != name, info_.id, ": arm \"", name, "\" declared twice");
  arms_.push_back({.name = name, .kind = kind, .config = std::move(config), .seeds = std::move(seeds),
                   .options = std::move(options)});
  return arms_.back();
}

void ClaimRun::add_computed_arm(const std::string& name, Json parameters, std::vector<int64_t> seeds) {
  Arm a{.name = name, .kind = RunKind::probe, .config = nullptr, .seeds = std::move(seeds)};
  a.options = {{"computed", std::move(parameters)}};
  arms_.push_back(std::move(a));
}

const Arm& ClaimRun::arm(const std::string& name) const {
  for (const Arm& a : arms_)
    if (a.name == name) return a;
  throw_error(info_.id, ": no arm named \"", name, "\"");
}

double ClaimRun::threshold(const std::string& name) const {
  auto it = thresholds_.find(name);
  SL_CHECK(it != thresholds_.end(), info_.id, ": threshold \"", name, "\" was not declared");
  return it->second;
}

Spread ClaimRun::measure(const std::string& name, const std::string& arm, const Json& x,
                         const std::string& unit, const std::vector<double>& per_seed) {
  const Spread s = spread_of(per_seed);
  Json values = Json::array();
  for (double v : per_seed) values.push_back(std::isfinite(v) ? Json(v) : Json(nullptr));
  auto num = [](double v) { return std::isfinite(v) ? Json(v) : Json(nullptr); };
  measurements_.push_back({{"name", name}, {"arm", arm}, {"x", x}, {"unit", unit},
                           {"values", values}, {"median", num(s.median)}, {"min", num(s.min)},
                           {"max", num(s.max)}});
  return s;
}

void ClaimRun::key_number(const std::string& label, double value, const std::string& unit) {
  key_number_ = {{"label", label}, {"value", std::isfinite(value) ? Json(value) : Json(nullptr)},
                 {"unit", unit}, {"text", fmt(value) + (unit.empty() ? "" : " " + unit)}};
}

Json ClaimRun::to_json(const Verdict& v, double seconds) const {
  Json arms = Json::array();
  for (const Arm& a : arms_) {
    Json j = {{"name", a.name}, {"seeds", a.seeds}};
    if (a.config.is_null()) {
      j["kind"] = "compute";
      j["config"] = a.options.value("computed", Json::object());
    } else {
      j["kind"] = run_kind_name(a.kind);
      j["config"] = a.config;
      if (!a.options.empty()) j["options"] = a.options;
    }
    arms.push_back(std::move(j));
  }
  return {{"schema", 1},
          {"id", info_.id},
          {"group", info_.group},
          {"statement", info_.statement},
          {"experiment", info_.experiment},
          {"criterion", info_.criterion},
          {"thresholds", thresholds_},
          {"mode", mode_.quick ? "quick" : "full"},
          {"arms", arms},
          {"measurements", measurements_},
          {"plots", plots_},
          {"facts", facts_},
          {"verdict", verdict_name(v.kind)},
          {"condition", v.condition},
          {"reason", v.reason},
          {"provisional", mode_.quick},
          {"sentence", v.sentence},
          {"key_number", key_number_},
          {"seconds", seconds}};
}

Json band_point(double x, const std::vector<double>& per_seed) {
  const Spread s = spread_of(per_seed);
  auto num = [](double v) { return std::isfinite(v) ? Json(v) : Json(nullptr); };
  return Json::array({x, num(s.median), num(s.min), num(s.max)});
}

Json line_plot(const std::string& id, const std::string& title, const std::string& x_label,
               const std::string& y_label, bool log_x, bool log_y) {
  return {{"id", id}, {"title", title}, {"kind", "lines"}, {"x_label", x_label},
          {"y_label", y_label}, {"log_x", log_x}, {"log_y", log_y}, {"series", Json::array()}};
}

}  // namespace scalelab::ledger
