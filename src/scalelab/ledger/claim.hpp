// ledger/claim: a claim as data (ID, statement, experiment, criterion) with its two functions:
//
//   plan(run)      declares the arms: each a config and the seeds to run it with (no work yet)
//   evaluate(run)  reads the arms' results, records measurements, plots and facts, and returns
//                  the verdict of the claim's criterion (ledger/criteria.hpp)
//
// The runner (ledger/check.hpp) executes the planned runs of all selected claims between the two,
// once each (runs shared between claims are one run) and from the cache when possible. The record
// a ClaimRun builds is the claim's JSON (docs/ledger.md, "Claim record").
#pragma once
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "scalelab/core/config_section.hpp"
#include "scalelab/ledger/runs.hpp"
#include "scalelab/ledger/stats.hpp"
#include "scalelab/ledger/verdict.hpp"

namespace scalelab::ledger {

struct LedgerMode {
  bool quick = false;
  int64_t init_seeds = 8;   // init-time claims
  int64_t train_seeds = 3;  // training claims
  std::vector<int64_t> seeds(int64_t n) const;  // 1..n
};

struct Arm {
  std::string name;
  RunKind kind = RunKind::train;
  Json config;                 // resolved run config
  std::vector<int64_t> seeds;
  Json options = Json::object();
  std::vector<Json> results = {};  // one per seed, filled by the runner

  RunSpec spec(size_t seed_index) const;
};

struct ClaimInfo {
  std::string id, group, statement, experiment, criterion;
};

class ClaimRun {
 public:
  ClaimRun(ClaimInfo info, LedgerMode mode) : info_(std::move(info)), mode_(mode) {}

  const LedgerMode& mode() const { return mode_; }
  const ClaimInfo& info() const { return info_; }

  // plan: an arm of runs (training or probe) of a resolved config, one per seed.
  Arm& add_arm(const std::string& name, RunKind kind, Json config, std::vector<int64_t> seeds,
               Json options = Json::object());
  // plan or evaluate: an arm computed inline (Monte Carlo, exact evaluation); `description`
  // says what, `parameters` the settings (JSON).
  void add_computed_arm(const std::string& name, Json parameters, std::vector<int64_t> seeds = {});
  std::vector<Arm>& arms() { return arms_; }
  const Arm& arm(const std::string& name) const;  // throws Error naming the missing arm

  // evaluate: the record.
  void threshold(const std::string& name, double value) { thresholds_[name] = value; }
  double threshold(const std::string& name) const;
  Spread measure(const std::string& name, const std::string& arm, const Json& x,
                 const std::string& unit, const std::vector<double>& per_seed);
  void plot(Json spec) { plots_.push_back(std::move(spec)); }
  void fact(const std::string& name, Json value) { facts_[name] = std::move(value); }
  void key_number(const std::string& label, double value, const std::string& unit = "");

  Json to_json(const Verdict& verdict, double seconds) const;

 private:
  ClaimInfo info_;
  LedgerMode mode_;
  std::vector<Arm> arms_;
  std::map<std::string, double> thresholds_;
  Json measurements_ = Json::array(), plots_ = Json::array(), facts_ = Json::object();
  Json key_number_ = nullptr;
};

struct Claim {
  ClaimInfo info;
  std::function<void(ClaimRun&)> plan;
  std::function<Verdict(ClaimRun&)> evaluate;
};

// Every claim of shared/claims.md, in order E1..E12, A1..A13, B1..B4.
const std::vector<Claim>& all_claims();

// Plot helpers: a line series from (x, per-seed values) -> [x, median, min, max] points.
Json band_point(double x, const std::vector<double>& per_seed);
Json line_plot(const std::string& id, const std::string& title, const std::string& x_label,
               const std::string& y_label, bool log_x = false, bool log_y = false);

}  // namespace scalelab::ledger
