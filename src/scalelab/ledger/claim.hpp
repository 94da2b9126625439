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
#include <cmath>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "scalelab/core/config_section.hpp"
#include "scalelab/ledger/computed.hpp"
#include "scalelab/ledger/lr_tuning.hpp"
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

// Where a run's result goes in its arm: a seed, at a learning rate (NaN: the arm's own config).
struct RunSlot {
  double lr = NAN;
  size_t seed_index = 0;
};

struct Arm {
  std::string name;
  RunKind kind = RunKind::train;
  Json config;                 // resolved run config
  std::vector<int64_t> seeds;
  Json options = Json::object();
  // Training arms run at their own best learning rate (lr_tuning.hpp) unless the claim's subject is
  // the learning rate itself (B3's sweep), which sets this false.
  bool tune_lr = true;
  // Rank the rates by the median over every seed (each rate runs all seeds) instead of seed 1:
  // for B3, where the best rate itself is the measurement.
  bool lr_rank_all_seeds = false;
  std::vector<Json> results = {};  // one per seed, filled by the runner (tuned: at the chosen rate)

  // Tuned arms only, filled by the runner: the shared rate (the arm's config), the rates tried on
  // seed 1, every result by rate, and the choice.
  double shared_lr = 0;
  std::vector<double> grid;
  std::map<double, std::vector<Json>> by_lr;
  LrChoice lr_choice;
  int lr_extensions = 0;
  std::vector<Json> shared_results = {};  // every seed at the shared rate (sensitivity)

  bool tuned() const { return tune_lr && kind == RunKind::train && !config.is_null(); }
  RunSpec spec(size_t seed_index) const;
  RunSpec spec_at(const RunSlot& slot) const;
  // The runs this arm still needs, given what it has (the runner asks again after delivering);
  // empty when its results are complete.
  std::vector<RunSlot> next_runs(bool quick);
  void deliver(const RunSlot& slot, const Json& result);
  // The sweep as JSON for the claim record (null for an untuned arm).
  Json lr_sweep_json() const;
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

  // evaluate: the values of an inline computation (computed.hpp), through the check's cache when
  // it set one, always as read back from their JSON. `inputs` is everything besides the code that
  // decides the values (the mode is added); `required`: the series the evaluation reads.
  ComputedValues computed(const std::string& name, const Json& inputs, const std::vector<std::string>& required,
                          const std::function<ComputedValues()>& compute);
  // The inputs of a computed arm: its parameters and seeds.
  Json computed_arm_inputs(const std::string& arm) const;
  // Not owned; shared by the copies evaluated for robustness and sensitivity.
  void set_computed_cache(ComputedCache* cache) { computed_cache_ = cache; }

  // evaluate: the record.
  void threshold(const std::string& name, double value) { thresholds_[name] = value; }
  double threshold(const std::string& name) const;
  Spread measure(const std::string& name, const std::string& arm, const Json& x,
                 const std::string& unit, const std::vector<double>& per_seed);
  void plot(Json spec) { plots_.push_back(std::move(spec)); }
  void fact(const std::string& name, Json value) { facts_[name] = std::move(value); }
  void key_number(const std::string& label, double value, const std::string& unit = "");

  Json to_json(const Verdict& verdict, double seconds) const;

  // Learning rates (lr_tuning.hpp): the same claim with every tuned arm's results at the shared
  // rate, evaluated for the record's "sensitivity" (the comparison as it reads without tuning).
  bool has_tuned_arms() const;
  // The claim's subject is the learning rate (B3): no sensitivity record, and its evaluation reads
  // the grid's edges itself.
  void learning_rate_is_the_subject() { lr_subject_ = true; }
  bool learning_rate_is_subject() const { return lr_subject_; }
  // A verdict that compares a tuned arm whose best rate is on the grid's edge (not an optimum)
  // becomes "not testable here", naming the arm; others pass unchanged.
  Verdict checked_for_lr_edges(Verdict v) const;
  ClaimRun at_shared_rates() const;
  void set_sensitivity(const Verdict& verdict, const ClaimRun& shared);
  // The verdict under the seeds' own noise (ledger/robustness.hpp), as JSON for the record.
  void set_robustness(Json robustness) { robustness_ = std::move(robustness); }

 private:
  ClaimInfo info_;
  LedgerMode mode_;
  std::vector<Arm> arms_;
  std::map<std::string, double> thresholds_;
  Json measurements_ = Json::array(), plots_ = Json::array(), facts_ = Json::object();
  Json key_number_ = nullptr;
  Json sensitivity_ = nullptr;
  Json robustness_ = nullptr;
  bool lr_subject_ = false;
  ComputedCache* computed_cache_ = nullptr;
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
