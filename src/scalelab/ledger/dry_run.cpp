#include "scalelab/ledger/dry_run.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <map>
#include <optional>
#include <ostream>
#include <set>
#include <thread>

#include "scalelab/ledger/cache.hpp"
#include "scalelab/ledger/claim.hpp"
#include "scalelab/ledger/eta.hpp"
#include "scalelab/ledger/user_claims.hpp"

namespace fs = std::filesystem;

namespace scalelab::ledger {
namespace {

// What one unit (eta.hpp, run_units) of each kind costs in seconds on this CPU, measured by
// running the first planned run of that kind: a training run cut to 10 and to 30 steps (the
// difference is the per-step cost, the rest a fixed cost per run such as the final evaluation),
// after one untimed 10-step run that loads the task's data; a probe run once. Seconds per unit, then seconds per run.
struct UnitCost {
  double train_per_unit = 0, train_fixed = 0, probe_per_unit = 0;
  double took = 0;  // seconds the calibration itself ran
};

RunSpec shortened(RunSpec spec, int64_t steps) {
  Json& t = spec.config["train"];
  t["steps"] = steps;
  t["warmup"] = std::min<int64_t>(t.value("warmup", int64_t{0}), steps / 2);
  spec.options["observe_every"] = 0;
  return spec;
}

UnitCost calibrate(const std::optional<RunSpec>& train, const std::optional<RunSpec>& probe) {
  UnitCost c;
  const auto t0 = std::chrono::steady_clock::now();
  if (train) {
    const RunSpec a = shortened(*train, 10), b = shortened(*train, 30);
    execute_run(a);  // loads the task's data once, outside the timed runs
    const double ta = execute_run(a).value("seconds", 0.0), tb = execute_run(b).value("seconds", 0.0);
    c.train_per_unit = std::max(0.0, tb - ta) / (run_units(b) - run_units(a));
    c.train_fixed = std::max(0.0, ta - run_units(a) * c.train_per_unit);
  }
  if (probe) {
    const auto p0 = std::chrono::steady_clock::now();
    execute_run(*probe);
    c.probe_per_unit = std::chrono::duration<double>(std::chrono::steady_clock::now() - p0).count() / run_units(*probe);
  }
  c.took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return c;
}

double run_seconds(const RunSpec& spec, const UnitCost& c) {
  return spec.kind == RunKind::probe ? run_units(spec) * c.probe_per_unit
                                     : c.train_fixed + run_units(spec) * c.train_per_unit;
}

std::string duration_text(double s) {
  if (s < 9.95) return fmt(std::round(s * 10) / 10) + " s";
  const int64_t t = int64_t(s + 0.5);
  return t >= 60 ? std::to_string(t / 60) + " min " + std::to_string(t % 60) + " s" : std::to_string(t) + " s";
}

}  // namespace

DryRun dry_run(const CheckOptions& o, std::ostream& out) {
  LedgerMode mode;
  mode.quick = o.quick;
  if (o.seeds > 0) mode.train_seeds = o.seeds;
  mode.init_seeds = std::max<int64_t>(8, mode.train_seeds);
  const std::vector<Claim> claims = select_claims(o.only, o.claim_files, mode);
  DryRun d;
  d.claims = int64_t(claims.size());
  d.jobs = o.jobs > 0 ? o.jobs : std::max<int64_t>(1, int64_t(std::thread::hardware_concurrency()));
  const RunCache cache((fs::path(o.out) / "cache").string());
  const bool have_cache = fs::is_directory(fs::path(o.out) / "cache");
  std::set<std::string> first, tuned_arms;
  bool any_tuned = false;
  std::map<std::string, RunSpec> shared_rate_runs;  // key -> run
  std::vector<RunSpec> first_todo;                   // first-round runs not in the cache
  std::vector<std::pair<double, RunSpec>> later_max_runs;  // (count, a run like them)
  for (const Claim& c : claims) {
    ClaimRun run(c.info, mode);
    c.plan(run);
    out << c.info.id << ":\n";
    for (Arm& arm : run.arms()) {
      const std::vector<RunSlot> slots = arm.next_runs(mode.quick);
      int64_t fresh = 0;
      for (const RunSlot& slot : slots) {
        const RunSpec spec = arm.spec_at(slot);
        if (!first.insert(spec.key()).second) continue;
        ++fresh;
        if (have_cache && cache.find(spec.key(), spec.kind, nullptr)) {
          ++d.first_round_cached;
        } else {
          first_todo.push_back(spec);
        }
      }
      d.first_round += fresh;
      out << "  " << arm.name << " (" << run_kind_name(arm.kind) << "): ";
      if (arm.config.is_null()) {
        out << "computed inline, no run\n";
        continue;
      }
      if (!arm.tuned()) {
        out << arm.seeds.size() << " seed(s) at lr " << (arm.kind == RunKind::train ? fmt(arm.config["train"]["lr"].get<double>()) : "-")
            << ": " << slots.size() << " run(s), " << slots.size() - size_t(fresh) << " shared with an arm listed above\n";
        continue;
      }
      any_tuned = true;
      const int64_t swept = arm.lr_rank_all_seeds ? int64_t(arm.seeds.size()) : 1;
      const int64_t rest = int64_t(arm.seeds.size()) - swept;
      out << arm.grid.size() << " learning rate(s) (";
      for (size_t i = 0; i < arm.grid.size(); ++i) out << (i ? ", " : "") << fmt(arm.grid[i]);
      out << ") x " << swept << " seed(s): " << slots.size() << " run(s), " << slots.size() - size_t(fresh)
          << " shared; then up to " << 2 * rest << " more (the other seeds at " << fmt(arm.shared_lr)
          << " and at the chosen rate if it differs)\n";
      // The other seeds at the shared rate always run (unless another arm runs them); at the
      // chosen rate too when it differs. Identical arms (the same first run) do them once.
      if (!tuned_arms.insert(arm.spec_at(slots.front()).key()).second) continue;
      for (size_t i = size_t(swept); i < arm.seeds.size(); ++i) {
        const RunSpec spec = arm.spec_at({arm.shared_lr, i});
        shared_rate_runs.emplace(spec.key(), spec);
      }
      d.later_max += rest;
      later_max_runs.emplace_back(double(rest), arm.spec_at(slots.front()));
    }
  }
  std::vector<RunSpec> later_todo;
  for (const auto& [key, spec] : shared_rate_runs) {
    if (first.count(key)) continue;
    ++d.later_min, ++d.later_max;
    later_todo.push_back(spec);
  }
  // The unit costs, measured on the first planned run of each kind.
  std::optional<RunSpec> first_train, first_probe;
  for (const auto* list : {&first_todo, &later_todo})
    for (const RunSpec& spec : *list) {
      std::optional<RunSpec>& slot = spec.kind == RunKind::train ? first_train : first_probe;
      const bool f32 = spec.kind == RunKind::probe || spec.config["train"].value("precision", std::string("f32")) == "f32";
      if (!slot && f32) slot = spec;
    }
  const UnitCost cost = calibrate(first_train, first_probe);
  double first_seconds = 0, later_min_seconds = 0, later_max_seconds = 0;
  for (const RunSpec& spec : first_todo) first_seconds += run_seconds(spec, cost);
  for (const RunSpec& spec : later_todo) later_min_seconds += run_seconds(spec, cost);
  later_max_seconds = later_min_seconds;
  for (const auto& [count, spec] : later_max_runs) later_max_seconds += count * run_seconds(spec, cost);
  d.seconds_min = (first_seconds + later_min_seconds) / double(d.jobs);
  d.seconds_max = (first_seconds + later_max_seconds) / double(d.jobs);
  out << "total: " << d.claims << " claim(s); " << d.first_round << " run(s) in the first round";
  if (have_cache) out << " (" << d.first_round_cached << " in the cache)";
  if (d.later_max > 0) {
    out << ", then " << d.later_min << " to " << d.later_max << " more: " << d.first_round + d.later_min << " to "
        << d.first_round + d.later_max << " run(s) in all";
  } else {
    out << ": " << d.first_round << " run(s) in all";
  }
  if (any_tuned) out << " (more if a learning-rate grid grows past its edge)";
  out << "\nestimated time: " << duration_text(d.seconds_min);
  if (d.seconds_max > d.seconds_min) out << " to " << duration_text(d.seconds_max);
  out << " with " << d.jobs << " job(s) (each run's cost scaled from short runs of the first planned\n"
      << "  training and probe runs, timed on this CPU in " << duration_text(cost.took)
      << "; runs from the cache take none)\nnothing was written (--dry-run)\n";
  return d;
}

}  // namespace scalelab::ledger
