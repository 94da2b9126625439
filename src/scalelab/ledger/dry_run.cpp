#include "scalelab/ledger/dry_run.hpp"

#include <algorithm>
#include <filesystem>
#include <map>
#include <ostream>
#include <set>
#include <thread>

#include "scalelab/ledger/cache.hpp"
#include "scalelab/ledger/claim.hpp"
#include "scalelab/ledger/user_claims.hpp"

namespace fs = std::filesystem;

namespace scalelab::ledger {
namespace {

// Multiply-adds per second of one single-threaded run, measured on the quick copy task (a 150-step
// run of the ledger's quick model, 6.3e9 by run_seconds' count, took 2.3-2.5 s on an AMD EPYC
// shared with other work); an estimate for planning only, which another CPU scales.
constexpr double kMultiplyAddsPerSecond = 2.5e9;

// A run's multiply-adds: forward and backward (3x) over its tokens, or a probe's forward passes.
double run_seconds(const RunSpec& spec) {
  const Json& m = spec.config["model"];
  const double d = m.value("d_model", 64.0), ff = m.value("d_ff", 256.0);
  const double layers = m.value("encoder_layers", 1.0) + m.value("decoder_layers", 1.0);
  const double per_token = layers * (4 * d * d + 2 * d * ff) + 2e4;
  double cost;
  if (spec.kind == RunKind::probe) {
    const double tokens = spec.options.value("batches", 2.0) * spec.options.value("batch_size", 64.0) * 12;
    cost = 3 * tokens * per_token + 20 * layers * (4 * d * d + 2 * d * ff) + 5e6;
  } else {
    const Json& t = spec.config["train"];
    cost = t.value("steps", 1000.0) * t.value("batch_size", 64.0) * 12 * 3 * per_token;
  }
  return cost / kMultiplyAddsPerSecond;
}

std::string duration_text(double s) {
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
  std::map<std::string, double> shared_rate_runs;  // key -> estimated seconds
  double first_seconds = 0, later_min_seconds = 0, later_max_seconds = 0;
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
          first_seconds += run_seconds(spec);
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
        shared_rate_runs.emplace(spec.key(), run_seconds(spec));
      }
      d.later_max += rest;
      later_max_seconds += double(rest) * run_seconds(arm.spec_at(slots.front()));
    }
  }
  for (const auto& [key, seconds] : shared_rate_runs) {
    if (first.count(key)) continue;
    ++d.later_min, ++d.later_max;
    later_min_seconds += seconds, later_max_seconds += seconds;
  }
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
  out << " with " << d.jobs << " job(s) (rough: " << kMultiplyAddsPerSecond / 1e9
      << " G multiply-adds/s per run, runs from the cache take none)\nnothing was run or written (--dry-run)\n";
  return d;
}

}  // namespace scalelab::ledger
