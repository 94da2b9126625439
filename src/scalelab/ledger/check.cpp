#include "scalelab/ledger/check.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <exception>
#include <functional>
#include <filesystem>
#include <iomanip>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <ostream>
#include <sstream>
#include <thread>

#include "scalelab/core/atomic_file.hpp"
#include "scalelab/core/cpu.hpp"
#include "scalelab/core/error.hpp"
#include "scalelab/ledger/builtin_claim_files.hpp"
#include "scalelab/ledger/cache.hpp"
#include "scalelab/ledger/claim.hpp"
#include "scalelab/ledger/computed.hpp"
#include "scalelab/ledger/eta.hpp"
#include "scalelab/ledger/earlier_claims.hpp"
#include "scalelab/ledger/out_dir.hpp"
#include "scalelab/ledger/robustness.hpp"
#include "scalelab/ledger/user_claims.hpp"

namespace fs = std::filesystem;

namespace scalelab::ledger {
namespace {

std::string duration(double s) {
  std::ostringstream out;
  const int64_t t = int64_t(s + 0.5);
  if (t >= 60) out << t / 60 << "m" << std::setw(2) << std::setfill('0') << t % 60 << "s";
  else out << t << "s";
  return out.str();
}

// A run to do in this round, and where its result goes: (claim, arm, slot) of every arm that
// asked for it (runs shared between claims are one run).
struct PendingRun {
  RunSpec spec;
  std::string key;    // spec.key(), computed once
  std::string claim;  // the first claim that needs it (for the progress line)
  Json result;
};

std::string summary_markdown(const Json& ledger) {
  std::ostringstream md;
  md << "# scalelab check: summary (" << ledger["mode"].get<std::string>() << " mode)\n\n"
     << "CPU: " << ledger["cpu"].get<std::string>() << "; " << ledger["runs"] << " runs ("
     << ledger["cached_runs"] << " from the cache) in " << duration(ledger["seconds"]) << ".\n\n"
     << "| ID | claim | verdict | key number |\n|---|---|---|---|\n";
  for (const Json& c : ledger["claims"]) {
    std::string verdict = c["verdict"];
    if (!c["condition"].get<std::string>().empty()) verdict += " " + c["condition"].get<std::string>();
    if (c["provisional"].get<bool>()) verdict += " (provisional (quick))";
    const Json& earlier = ledger.contains("earlier_claims") ? ledger["earlier_claims"] : Json::array();
    if (std::find(earlier.begin(), earlier.end(), c["id"]) != earlier.end()) verdict += " (earlier check)";
    std::string statement = c["statement"];
    std::replace(statement.begin(), statement.end(), '|', '/');
    const Json& k = c["key_number"];
    const std::string key = k.is_object() ? k["label"].get<std::string>() + ": " + k["text"].get<std::string>() : "";
    md << "| " << c["id"].get<std::string>() << " | " << statement << " | " << verdict << " | " << key << " |\n";
  }
  return md.str();
}

// The runs to do, in eta.hpp's run_order (largest first within each kind, kinds alternating).
std::vector<size_t> in_run_order(const std::vector<PendingRun>& batch, const std::vector<size_t>& todo) {
  std::vector<RunSize> sizes;
  for (size_t i : todo) sizes.push_back({batch[i].spec.kind, run_units(batch[i].spec)});
  std::vector<size_t> out;
  for (size_t position : run_order(sizes)) out.push_back(todo[position]);
  return out;
}

}  // namespace

std::string claims_markdown() {
  auto source = [](const std::string& id) -> std::string {
    for (const BuiltinClaimFile& f : builtin_claim_files())
      if (f.name == id + ".toml") return "claims/" + f.name;
    const int n = std::stoi(id.substr(1));
    if (id[0] == 'E') return n <= 6 ? "claims_embedding_init.cpp" : "claims_embedding_training.cpp";
    if (id[0] == 'B') return "claims_beyond.cpp";
    for (int init : {1, 2, 5, 9, 10, 13})
      if (n == init) return "claims_attention_init.cpp";
    return "claims_attention_training.cpp";
  };
  // Init-time claims are judged in criteria_init.cpp, training claims in criteria_training.cpp,
  // claim files by the criterion of the format (user_claim_compile.cpp).
  auto criteria_source = [&](const std::string& id) -> std::string {
    const std::string file = source(id);
    if (file.rfind("claims/", 0) == 0) return "user_claim_compile.cpp";
    return file.find("_init") != std::string::npos ? "criteria_init.cpp" : "criteria_training.cpp";
  };
  std::ostringstream md;
  for (const Claim& c : all_claims()) {
    md << "### " << c.info.id << "\n\n**Claim.** " << c.info.statement << "\n\n**Experiment.** "
       << c.info.experiment << "\n\n**Criterion.** " << c.info.criterion << "\n\n**Code.** `src/scalelab/ledger/"
       << source(c.info.id) << "` (criterion in `" << criteria_source(c.info.id) << "`).\n\n";
  }
  return md.str();
}

std::vector<std::string> parse_claim_ids(const std::string& list, const std::vector<std::string>& user_ids) {
  std::vector<std::string> ids;
  std::stringstream in(list);
  std::string item;
  while (std::getline(in, item, ',')) {
    item.erase(std::remove_if(item.begin(), item.end(), ::isspace), item.end());
    if (item.empty()) continue;
    if (std::find(user_ids.begin(), user_ids.end(), item) != user_ids.end()) {
      if (std::find(ids.begin(), ids.end(), item) == ids.end()) ids.push_back(item);
      continue;
    }
    std::transform(item.begin(), item.end(), item.begin(), ::toupper);
    bool known = false;
    for (const Claim& c : all_claims()) known = known || c.info.id == item;
    if (!known) {
      std::string allowed;
      for (const Claim& c : all_claims()) allowed += (allowed.empty() ? "" : ",") + c.info.id;
      for (const std::string& id : user_ids) allowed += "," + id;
      throw_error("--only: unknown claim ID \"", item, "\"; allowed: ", allowed);
    }
    if (std::find(ids.begin(), ids.end(), item) == ids.end()) ids.push_back(item);
  }
  SL_CHECK(!ids.empty(), "--only \"", list, "\": names no claim");
  return ids;
}

namespace {

// The work queue's messages (tags): a worker asks for work, rank 0 assigns "index\nspec JSON" of
// the current round ("" = no more work), the worker returns "index\nresult JSON" or its error.
enum QueueTag : int { kAskWork = 1, kAssign = 2, kResult = 3, kFailed = 4 };

// A rank other than 0: runs what rank 0 assigns until it says stop. It needs no plan of its own:
// the rounds of learning-rate tuning depend on results only rank 0 holds.
void serve_work_queue(Comm& comm) {
  for (;;) {
    comm.send(0, kAskWork, "");
    const CommMessage m = comm.receive(0);
    if (m.bytes.empty()) return;
    const size_t nl = m.bytes.find('\n');
    const std::string index = m.bytes.substr(0, nl);
    const RunSpec spec = spec_from_json(Json::parse(m.bytes.substr(nl + 1)));
    try {
      // Sent as text: the result reaches rank 0 in its serialised form, as a fresh or cached one.
      comm.send(0, kResult, index + "\n" + execute_run(spec).dump());
    } catch (const std::exception& e) {
      comm.send(0, kFailed, spec.label + ": " + e.what());
    }
  }
}

// Runs one round's runs: `jobs` threads side by side, or under MPI a work queue served from this
// thread (every MPI call stays on it) with one more thread running runs here. Workers that ask
// while a round has nothing left wait for the next round; finish() releases them all.
class RunQueue {
 public:
  using Done = std::function<void(PendingRun&, const Json&)>;
  RunQueue(Comm& comm, bool parallel, int64_t jobs, std::ostream* progress, bool on_terminal,
           std::function<double()> elapsed)
      : comm_(comm), parallel_(parallel), jobs_(jobs), progress_(progress), on_terminal_(on_terminal),
        elapsed_(std::move(elapsed)) {}

  // Runs expected in later rounds (learning-rate tuning), for the ETA.
  void expect_later(RunKind kind, double units) { eta_.expect_later(kind, units); }
  // Ends the updating progress line before other output.
  void end_line() {
    if (line_open_ && progress_) *progress_ << "\n";
    line_open_ = false;
  }

  // Runs `todo` of `batch`; `later_round`: a round after the first (learning-rate tuning), whose
  // runs replace the work expected with expect_later.
  void run(std::vector<PendingRun>& batch, const std::vector<size_t>& todo, bool later_round, const Done& done) {
    if (todo.empty()) return;
    std::atomic<size_t> next{0};
    size_t finished = 0;
    std::mutex mutex;
    std::exception_ptr failure;
    for (size_t i : todo) eta_.planned(batch[i].spec.kind, run_units(batch[i].spec), later_round);
    auto finish = [&](PendingRun& p, const Json& r, double took) {
      done(p, r);
      std::lock_guard<std::mutex> lock(mutex);
      eta_.done(p.spec.kind, run_units(p.spec), took);
      ++finished;
      if (progress_) {
        const double eta = eta_.remaining_seconds(jobs_);
        const std::string line = "[check] " + p.claim + " " + p.spec.label + ": run " + std::to_string(finished) +
                                 " of " + std::to_string(todo.size()) + " this round, elapsed " +
                                 duration(elapsed_()) + ", ETA " + (std::isfinite(eta) ? duration(eta) : "?");
        if (on_terminal_) *progress_ << "\r\033[K" << line << std::flush;  // one line, rewritten
        else *progress_ << line << "\n" << std::flush;
        line_open_ = on_terminal_;
      }
    };
    auto failed = [&] {
      std::lock_guard<std::mutex> lock(mutex);
      return failure != nullptr;
    };
    auto worker = [&] {
      for (;;) {
        if (failed()) return;
        const size_t k = next.fetch_add(1);
        if (k >= todo.size()) return;
        PendingRun& p = batch[todo[k]];
        try {
          const auto r0 = std::chrono::steady_clock::now();
          const Json r = execute_run(p.spec);
          finish(p, r, std::chrono::duration<double>(std::chrono::steady_clock::now() - r0).count());
        } catch (...) {
          std::lock_guard<std::mutex> lock(mutex);
          if (!failure) failure = std::current_exception();
          return;
        }
      }
    };
    if (!parallel_) {
      std::vector<std::thread> threads;
      for (int64_t j = 0; j < std::min<int64_t>(jobs_, int64_t(todo.size())); ++j) threads.emplace_back(worker);
      for (std::thread& t : threads) t.join();
      if (failure) std::rethrow_exception(failure);
      return;
    }
    std::thread local(worker);
    size_t in_flight = 0;
    auto assign = [&](int rank) {
      const size_t k = failed() ? todo.size() : next.fetch_add(1);
      if (k >= todo.size()) return false;
      comm_.send(rank, kAssign, std::to_string(todo[k]) + "\n" + spec_to_json(batch[todo[k]].spec).dump());
      ++in_flight;
      return true;
    };
    for (size_t i = 0; i < idle_.size();)  // workers left waiting by the previous round
      if (assign(idle_[i])) idle_.erase(idle_.begin() + long(i));
      else ++i;
    for (;;) {
      {
        std::lock_guard<std::mutex> lock(mutex);
        if (in_flight == 0 && (finished == todo.size() || failure)) break;
      }
      std::optional<CommMessage> m = comm_.try_receive();
      if (!m) {
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
        continue;
      }
      if (m->tag == kAskWork) {
        if (!assign(m->source)) idle_.push_back(m->source);
      } else if (m->tag == kResult) {
        --in_flight;
        const size_t nl = m->bytes.find('\n');
        const size_t i = std::stoul(m->bytes.substr(0, nl));
        const Json r = Json::parse(m->bytes.substr(nl + 1));
        finish(batch.at(i), r, r.value("seconds", 0.0));
      } else if (m->tag == kFailed) {
        --in_flight;
        std::lock_guard<std::mutex> lock(mutex);
        if (!failure) failure = std::make_exception_ptr(Error("rank " + std::to_string(m->source) + ": " + m->bytes));
      }
    }
    local.join();
    if (failure) {
      std::string message;
      try {
        std::rethrow_exception(failure);
      } catch (const std::exception& e) {
        message = e.what();
      }
      release_workers();
      throw_first_error(comm_, message);  // every rank ends with it
    }
  }

  // No more rounds: tell every worker to stop (under MPI; nothing otherwise).
  void finish() {
    if (!parallel_) return;
    release_workers();
    throw_first_error(comm_, "");
  }

 private:
  void release_workers() {
    if (released_) return;
    released_ = true;
    for (int rank : idle_) comm_.send(rank, kAssign, "");
    int serving = comm_.size() - 1 - int(idle_.size());
    idle_.clear();
    while (serving > 0) {
      std::optional<CommMessage> m = comm_.try_receive();
      if (!m) {
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
        continue;
      }
      if (m->tag == kAskWork) comm_.send(m->source, kAssign, ""), --serving;
    }
  }

  Comm& comm_;
  bool parallel_;
  int64_t jobs_;
  std::ostream* progress_;
  bool on_terminal_;
  std::function<double()> elapsed_;
  Eta eta_;
  bool line_open_ = false;
  std::vector<int> idle_;
  bool released_ = false;
};

}  // namespace

CheckResult run_check(const CheckOptions& o) {
  std::unique_ptr<Comm> solo;
  if (!o.comm) solo = single_process_comm();
  Comm& comm = o.comm ? *o.comm : *solo;
  const bool root = comm.rank() == 0, parallel = comm.size() > 1;
  std::ostream* const progress = root ? o.progress : nullptr;
  SL_CHECK(o.jobs >= 0 && o.jobs <= 64, "--jobs ", o.jobs, ": must be in 0..64 (0: one per core)");
  SL_CHECK(o.seeds >= 0 && o.seeds <= 50, "--seeds ", o.seeds, ": must be in 0..50 (0: default)");
  SL_CHECK(o.seeds == 0 || o.seeds >= 3, "--seeds ", o.seeds, ": training claims need at least 3");
  LedgerMode mode;
  mode.quick = o.quick;
  if (o.seeds > 0) mode.train_seeds = o.seeds;
  mode.init_seeds = std::max<int64_t>(8, mode.train_seeds);
  // The claims (user claim files validated) before anything is written.
  const std::vector<Claim> claims = select_claims(o.only, o.claim_files, mode);
  OutDirLock out_lock;  // held until the ledger is written (ledger/out_dir.hpp)
  agree_on_errors(comm, [&] {
    if (root) out_lock = prepare_out_dir(o.out);
  });
  const auto t0 = std::chrono::steady_clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); };

  // Plan.
  std::vector<ClaimRun> runs;
  for (const Claim& c : claims) {
    runs.emplace_back(c.info, mode);
    c.plan(runs.back());
  }

  CheckResult result;
  if (!root) {  // a worker rank: rank 0 owns the cache, the rounds, the ledger and the report
    serve_work_queue(comm);
    throw_first_error(comm, "");  // rank 0's failure, if any, ends this rank too
    result.written = false;
    return result;
  }

  // Run, in rounds: each round runs what the arms still need (a learning-rate sweep asks for its
  // best rate's seeds only after its grid is done), once per distinct run, from the cache first.
  const RunCache cache((fs::path(o.out) / "cache").string());
  const int64_t jobs = parallel ? comm.size()
                       : o.jobs > 0 ? o.jobs
                                    : std::max<int64_t>(1, int64_t(std::thread::hardware_concurrency()));
  if (progress) {
    *progress << "scalelab check: " << claims.size() << " claim(s), " << jobs << " job(s)"
              << (parallel ? " (" + std::to_string(comm.size()) + " MPI ranks, one run each at a time)" : "")
              << ", " << (mode.quick ? "quick" : "full") << " mode\n";
    if (parallel && o.jobs > 1) *progress << "note: --jobs is ignored under MPI: -np sets the runs side by side\n";
  }
  std::map<std::string, Json> done;  // key -> serialised result
  RunQueue queue(comm, parallel, jobs, progress, o.progress_on_terminal, elapsed);
  int rounds = 0;
  for (int round = 1;; ++round) {
    std::vector<PendingRun> batch;
    std::map<std::string, size_t> in_batch;
    for (size_t ci = 0; ci < runs.size(); ++ci) {
      for (Arm& arm : runs[ci].arms()) {
        for (;;) {  // deliver what is done until the arm waits for runs not yet done
          const std::vector<RunSlot> want = arm.next_runs(mode.quick);
          bool delivered = false;
          for (const RunSlot& slot : want) {
            RunSpec spec = arm.spec_at(slot);
            const std::string key = spec.key();
            if (auto it = done.find(key); it != done.end()) {
              arm.deliver(slot, it->second);
              delivered = true;
            } else if (in_batch.emplace(key, batch.size()).second) {
              batch.push_back({std::move(spec), key, runs[ci].info().id, {}});
            }
          }
          if (!delivered) break;
        }
      }
    }
    if (batch.empty()) break;
    queue.end_line();
    rounds = round;
    std::vector<size_t> todo;
    for (size_t i = 0; i < batch.size(); ++i) {
      if (auto hit = cache.find(batch[i].key, batch[i].spec.kind, progress)) {
        batch[i].result = as_stored(*hit);
        ++result.cached_runs;
      } else {
        todo.push_back(i);
      }
    }
    todo = in_run_order(batch, todo);
    result.runs += static_cast<int64_t>(batch.size());
    if (round == 1) {
      // The later rounds of tuning, expected: each tuned arm's other seeds at its best and at the
      // shared rate (an arm shared by several claims counted once).
      std::set<std::string> seen;
      for (ClaimRun& run : runs)
        for (const Arm& arm : run.arms())
          if (arm.tuned() && !arm.lr_rank_all_seeds && seen.insert(arm.spec(0).key()).second)
            queue.expect_later(arm.kind, 2.0 * double(arm.seeds.size() - 1) * run_units(arm.spec(0)));
    }
    if (progress)
      *progress << "[check] round " << round << ": " << batch.size() << " run(s) ("
                << batch.size() - todo.size() << " cached)\n" << std::flush;
    queue.run(batch, todo, round > 1, [&](PendingRun& p, const Json& r) {
      p.result = as_stored(r);
      cache.store(p.key, p.claim + " " + p.spec.label, p.result);
    });
    for (PendingRun& p : batch) done[p.key] = std::move(p.result);
  }
  queue.finish();
  queue.end_line();
  if (progress)
    *progress << "[check] " << result.runs << " run(s) (" << result.cached_runs << " cached) in " << rounds
              << " round(s), " << duration(elapsed()) << "\n";

  // Evaluate and write. What the claims compute inline is cached beside the runs (computed.hpp).
  ComputedCache computed_cache((fs::path(o.out) / "cache").string(), progress);
  Json summaries = Json::array();
  for (size_t ci = 0; ci < runs.size(); ++ci) {
    const auto e0 = std::chrono::steady_clock::now();
    runs[ci].set_computed_cache(&computed_cache);
    const ClaimRun unevaluated = runs[ci];
    const int64_t marginal_before = marginal_decisions_so_far();
    Verdict v = runs[ci].checked_for_lr_edges(claims[ci].evaluate(runs[ci]));
    const Robustness robustness =
        under_seed_noise(claims[ci], unevaluated, v, marginal_decisions_so_far() > marginal_before);
    runs[ci].set_robustness(robustness.to_json());
    v.sentence += robustness.sentence();
    if (runs[ci].has_tuned_arms() && !runs[ci].learning_rate_is_subject()) {
      ClaimRun shared = runs[ci].at_shared_rates();
      const Verdict sv = claims[ci].evaluate(shared);
      runs[ci].set_sensitivity(sv, shared);
    }
    const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - e0).count();
    const Json record = runs[ci].to_json(v, took);
    const std::string id = runs[ci].info().id;
    write_file_atomically((fs::path(o.out) / "claims" / (id + ".json")).string(), record.dump(1) + "\n");
    summaries.push_back({{"id", id}, {"statement", record["statement"]}, {"verdict", record["verdict"]},
                         {"condition", record["condition"]}, {"provisional", record["provisional"]},
                         {"key_number", record["key_number"]}, {"sentence", record["sentence"]},
                         {"marginal", robustness.flips}});
    if (progress) {
      *progress << "[check] " << id << ": " << record["verdict"].get<std::string>()
                  << (v.condition.empty() ? "" : " " + v.condition) << "\n";
    }
  }
  result.seconds = elapsed();
  result.ledger = {{"schema", 1}, {"mode", mode.quick ? "quick" : "full"},
                   {"version", binary_version()}, {"cpu", detect_cpu().model_name},
                   {"seconds", result.seconds}, {"runs", result.runs},
                   {"cached_runs", result.cached_runs}, {"jobs", jobs}, {"ranks", comm.size()},
                   {"train_seeds", mode.train_seeds}, {"init_seeds", mode.init_seeds},
                   {"claims", summaries}};
  keep_earlier_claims(o.out, result.ledger, o.progress);  // a --only run keeps the others listed
  write_file_atomically((fs::path(o.out) / "ledger.json").string(), result.ledger.dump(1) + "\n");
  write_file_atomically((fs::path(o.out) / "summary.md").string(), summary_markdown(result.ledger));
  return result;
}

}  // namespace scalelab::ledger
