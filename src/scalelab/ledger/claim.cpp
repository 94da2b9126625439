#include "scalelab/ledger/claim.hpp"

#include <algorithm>
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

RunSpec Arm::spec_at(const RunSlot& slot) const {
  RunSpec s = spec(slot.seed_index);
  if (!std::isnan(slot.lr)) {
    s.config["train"]["lr"] = slot.lr;
    s.label = name + " lr " + fmt(slot.lr) + " seed " + std::to_string(seeds.at(slot.seed_index));
  }
  return s;
}

std::vector<RunSlot> Arm::next_runs(bool quick) {
  std::vector<RunSlot> want;
  if (config.is_null()) return want;  // computed inline
  if (!tuned()) {
    results.resize(seeds.size());
    for (size_t i = 0; i < seeds.size(); ++i)
      if (results[i].is_null()) want.push_back({NAN, i});
    return want;
  }
  if (grid.empty()) {
    shared_lr = config["train"]["lr"].get<double>();
    grid = lr_grid(shared_lr, quick);
  }
  auto result = [&](double lr, size_t i) -> const Json& {
    std::vector<Json>& v = by_lr[lr];
    v.resize(seeds.size());
    return v[i];
  };
  // 1. Seed 1 (or every seed) at every rate of the grid.
  const size_t sweep_seeds = lr_rank_all_seeds ? seeds.size() : 1;
  for (double lr : grid)
    for (size_t i = 0; i < sweep_seeds; ++i)
      if (result(lr, i).is_null()) want.push_back({lr, i});
  if (!want.empty()) return want;
  // 2. The best rate, the grid grown past an edge while it may (failed seeds rank worst).
  std::map<double, double> loss;
  for (double lr : grid) {
    std::vector<double> v;
    for (size_t i = 0; i < sweep_seeds; ++i) v.push_back(final_valid_nll(result(lr, i)));
    loss[lr] = median_of(v);
  }
  lr_choice = choose_lr(loss, lr_extensions);
  if (lr_choice.extend) {
    grid.push_back(*lr_choice.extend);
    std::sort(grid.begin(), grid.end());
    ++lr_extensions;
    for (size_t i = 0; i < sweep_seeds; ++i) want.push_back({*lr_choice.extend, i});
    return want;
  }
  // 3. Every seed at the chosen rate and at the shared one.
  for (double lr : {lr_choice.best, shared_lr})
    for (size_t i = 0; i < seeds.size(); ++i)
      if (result(lr, i).is_null()) want.push_back({lr, i});
  if (want.empty()) {
    results = by_lr[lr_choice.best];
    shared_results = by_lr[shared_lr];
  }
  return want;
}

void Arm::deliver(const RunSlot& slot, const Json& result) {
  if (std::isnan(slot.lr)) {
    results.resize(seeds.size());
    results.at(slot.seed_index) = result;
  } else {
    std::vector<Json>& v = by_lr[slot.lr];
    v.resize(seeds.size());
    v.at(slot.seed_index) = result;
  }
}

Json Arm::lr_sweep_json() const {
  if (!tuned()) return nullptr;
  Json rates = Json::array();
  for (double lr : grid) {
    // Per seed: the final valid loss, null where the seed did not run at this rate or failed.
    Json per_seed = Json::array();
    int64_t run = 0, failed = 0;
    auto it = by_lr.find(lr);
    if (it != by_lr.end())
      for (const Json& r : it->second) {
        const double l = r.is_null() ? NAN : final_valid_nll(r);
        run += !r.is_null();
        failed += !r.is_null() && !std::isfinite(l);
        per_seed.push_back(std::isfinite(l) ? Json(l) : Json(nullptr));
      }
    rates.push_back({{"lr", lr}, {"final_valid_loss", per_seed}, {"runs", run}, {"failed", failed}});
  }
  return {{"shared_lr", shared_lr}, {"chosen_lr", lr_choice.best}, {"interior", lr_choice.interior},
          {"extensions", lr_extensions}, {"rates", rates}};
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

ComputedValues ClaimRun::computed(const std::string& name, const Json& inputs,
                                  const std::vector<std::string>& required,
                                  const std::function<ComputedValues()>& compute) {
  const Json all = {{"inputs", inputs}, {"quick", mode_.quick}, {"init_seeds", mode_.init_seeds},
                    {"train_seeds", mode_.train_seeds}};
  if (computed_cache_) return computed_cache_->get(info_.id, name, all, required, compute);
  ComputedCache in_memory;
  return in_memory.get(info_.id, name, all, required, compute);
}

Json ClaimRun::computed_arm_inputs(const std::string& name) const {
  const Arm& a = arm(name);
  return {{"parameters", a.options.value("computed", Json::object())}, {"seeds", a.seeds}};
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
  // A failed value is stored as null and counted in "failed"; median/min/max rank it as +inf and are
  // null when it decides them (JSON has no infinity).
  auto stat = [&](double v) { return std::isfinite(v) ? Json(v) : Json(nullptr); };
  measurements_.push_back({{"name", name}, {"arm", arm}, {"x", x}, {"unit", unit},
                           {"values", values}, {"failed", s.failed}, {"median", stat(s.median)},
                           {"min", stat(s.min)}, {"max", stat(s.max)}});
  return s;
}

void ClaimRun::key_number(const std::string& label, double value, const std::string& unit) {
  key_number_ = {{"label", label}, {"value", std::isfinite(value) ? Json(value) : Json(nullptr)},
                 {"unit", unit}, {"text", fmt(value) + (unit.empty() ? "" : " " + unit)}};
}

namespace {
Json cases_json(const Verdict& v) {
  return {{"held_on", v.held_on}, {"failed_on", v.failed_on}, {"undecided_on", v.undecided_on}, {"tested", v.tested}};
}
Json parts_json(const Verdict& v) {
  Json parts = Json::array();
  for (const Part& p : v.parts)
    parts.push_back({{"name", p.name}, {"statement", p.statement}, {"verdict", verdict_name(p.verdict.kind)},
                     {"condition", p.verdict.condition}, {"reason", p.verdict.reason},
                     {"sentence", p.verdict.sentence}, {"cases", cases_json(p.verdict)}, {"arms", p.arms}});
  return parts;
}
}  // namespace

Verdict ClaimRun::checked_for_lr_edges(Verdict v) const {
  if (lr_subject_) return v;
  std::string edges;
  for (const Arm& a : arms_)
    if (a.tuned() && !a.lr_choice.interior)
      edges += (edges.empty() ? "" : "; ") + a.name + " (best " + fmt(a.lr_choice.best) + " of " +
               fmt(a.grid.front()) + " to " + fmt(a.grid.back()) + ")";
  if (edges.empty()) return v;
  Verdict out = Verdict::not_testable(
      "a compared arm's best learning rate is on the edge of its grid, which could not grow further, so it is not an optimum: " + edges,
      v.sentence);
  out.parts = v.parts;
  return out;
}

bool ClaimRun::has_tuned_arms() const {
  return std::any_of(arms_.begin(), arms_.end(), [](const Arm& a) { return a.tuned(); });
}

ClaimRun ClaimRun::at_shared_rates() const {
  ClaimRun copy(info_, mode_);
  copy.arms_ = arms_;
  copy.computed_cache_ = computed_cache_;
  for (Arm& a : copy.arms_)
    if (a.tuned()) a.results = a.shared_results;
  copy.thresholds_ = thresholds_;
  return copy;
}

void ClaimRun::set_sensitivity(const Verdict& v, const ClaimRun& shared) {
  sensitivity_ = {{"what", "every tuned arm at the ledger's shared learning rate instead of its own best"},
                  {"verdict", verdict_name(v.kind)}, {"condition", v.condition}, {"reason", v.reason},
                  {"sentence", v.sentence}, {"key_number", shared.key_number_}};
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
      if (a.tuned()) j["lr_sweep"] = a.lr_sweep_json();
    }
    arms.push_back(std::move(j));
  }
  // The curve a reviewer asks for first: each tuned arm's final valid loss against the learning
  // rate (seed 1 of its sweep; the chosen rate ran every seed).
  Json plots = plots_;
  if (has_tuned_arms() && !lr_subject_) {
    Json p = line_plot(info_.id + "-lr-sweep", "Final valid loss against learning rate, seed 1 of each arm's sweep",
                       "learning rate", "final valid loss (nats/token)", true, false);
    for (const Arm& a : arms_) {
      if (!a.tuned()) continue;
      Json pts = Json::array();
      for (double lr : a.grid) {
        auto it = a.by_lr.find(lr);
        const double l = it == a.by_lr.end() || it->second.empty() ? NAN : final_valid_nll(it->second.front());
        pts.push_back(Json::array({lr, std::isfinite(l) ? Json(l) : Json(nullptr)}));
      }
      p["series"].push_back({{"label", a.name}, {"points", pts}});
    }
    plots.push_back(p);
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
          {"plots", plots},
          {"facts", facts_},
          {"verdict", verdict_name(v.kind)},
          {"condition", v.condition},
          {"reason", v.reason},
          {"cases", cases_json(v)},
          {"parts", parts_json(v)},
          {"sensitivity", sensitivity_},
          {"robustness", robustness_},
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
