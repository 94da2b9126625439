#include "scalelab/ledger/check.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <exception>
#include <filesystem>
#include <iomanip>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <ostream>
#include <sstream>
#include <thread>

#include "scalelab/core/atomic_file.hpp"
#include "scalelab/core/cpu.hpp"
#include "scalelab/core/error.hpp"
#include "scalelab/ledger/cache.hpp"
#include "scalelab/ledger/claim.hpp"
#include "scalelab/ledger/earlier_claims.hpp"
#include "scalelab/ledger/out_dir.hpp"

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

struct PendingRun {
  RunSpec spec;
  std::string key;    // spec.key(), computed once
  std::string claim;  // the first claim that needs it (for the progress line)
  std::vector<std::tuple<size_t, size_t, size_t>> uses;  // (claim, arm, seed index)
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

// A rough relative cost of a run (multiply-adds), for the progress line's ETA only.
double estimated_cost(const RunSpec& spec) {
  const Json& config = spec.config;
  const Json& options = spec.options;
  const RunKind kind = spec.kind;
  const Json& m = config["model"];
  const double d = m.value("d_model", 64.0), ff = m.value("d_ff", 256.0);
  const double layers = m.value("encoder_layers", 1.0) + m.value("decoder_layers", 1.0);
  const double per_token = layers * (4 * d * d + 2 * d * ff) + 2e4;  // + per-token overheads
  if (kind == RunKind::probe) {
    // Initialising the weights dominates large models; the forward and backward the small ones.
    const double tokens = options.value("batches", 2.0) * options.value("batch_size", 64.0) * 12;
    return 3 * tokens * per_token + 20 * layers * (4 * d * d + 2 * d * ff) + 5e6;
  }
  const Json& t = config["train"];
  const double precision = t.value("precision", std::string("f32")) == "f32" ? 1.0 : 4.0;
  return t.value("steps", 1000.0) * t.value("batch_size", 64.0) * 12 * 3 * per_token * precision;
}

}  // namespace

std::string claims_markdown() {
  auto source = [](const std::string& id) -> std::string {
    const int n = std::stoi(id.substr(1));
    if (id[0] == 'E') return n <= 6 ? "claims_embedding_init.cpp" : "claims_embedding_training.cpp";
    if (id[0] == 'B') return "claims_beyond.cpp";
    for (int init : {1, 2, 5, 9, 10, 13})
      if (n == init) return "claims_attention_init.cpp";
    return "claims_attention_training.cpp";
  };
  std::ostringstream md;
  for (const Claim& c : all_claims()) {
    md << "### " << c.info.id << "\n\n**Claim.** " << c.info.statement << "\n\n**Experiment.** "
       << c.info.experiment << "\n\n**Criterion.** " << c.info.criterion << "\n\n**Code.** `src/scalelab/ledger/"
       << source(c.info.id) << "` (criterion in `criteria.cpp`).\n\n";
  }
  return md.str();
}

std::vector<std::string> parse_claim_ids(const std::string& list) {
  std::vector<std::string> ids;
  std::stringstream in(list);
  std::string item;
  while (std::getline(in, item, ',')) {
    item.erase(std::remove_if(item.begin(), item.end(), ::isspace), item.end());
    if (item.empty()) continue;
    std::transform(item.begin(), item.end(), item.begin(), ::toupper);
    bool known = false;
    for (const Claim& c : all_claims()) known = known || c.info.id == item;
    if (!known) {
      std::string allowed;
      for (const Claim& c : all_claims()) allowed += (allowed.empty() ? "" : ",") + c.info.id;
      throw_error("--only: unknown claim ID \"", item, "\"; allowed: ", allowed);
    }
    if (std::find(ids.begin(), ids.end(), item) == ids.end()) ids.push_back(item);
  }
  SL_CHECK(!ids.empty(), "--only \"", list, "\": names no claim");
  return ids;
}

namespace {

// The work queue's messages (tags): a worker asks for work, rank 0 assigns a pending-run index
// ("" = no more work), the worker returns "index\nresult JSON" or its error.
enum QueueTag : int { kAskWork = 1, kAssign = 2, kResult = 3, kFailed = 4 };

// A rank other than 0: runs what rank 0 assigns until it says stop.
void serve_work_queue(Comm& comm, const std::vector<PendingRun>& pending) {
  for (;;) {
    comm.send(0, kAskWork, "");
    const CommMessage m = comm.receive(0);
    if (m.bytes.empty()) return;
    const size_t i = std::stoul(m.bytes);
    SL_CHECK(i < pending.size(), "internal: rank 0 assigned run ", i, " of ", pending.size());
    try {
      const Json r = execute_run(pending[i].spec);
      comm.send(0, kResult, std::to_string(i) + "\n" + r.dump());
    } catch (const std::exception& e) {
      comm.send(0, kFailed, pending[i].claim + " " + pending[i].spec.label + ": " + e.what());
    }
  }
}

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
  OutDirLock out_lock;  // held until the ledger is written (ledger/out_dir.hpp)
  agree_on_errors(comm, [&] {
    if (root) out_lock = prepare_out_dir(o.out);
  });
  const auto t0 = std::chrono::steady_clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); };

  // Plan.
  std::vector<const Claim*> claims;
  for (const Claim& c : all_claims())
    if (o.only.empty() || std::find(o.only.begin(), o.only.end(), c.info.id) != o.only.end())
      claims.push_back(&c);
  std::vector<ClaimRun> runs;
  for (const Claim* c : claims) {
    runs.emplace_back(c->info, mode);
    c->plan(runs.back());
  }
  std::map<std::string, size_t> index;
  std::vector<PendingRun> pending;
  for (size_t ci = 0; ci < runs.size(); ++ci) {
    std::vector<Arm>& arms = runs[ci].arms();
    for (size_t ai = 0; ai < arms.size(); ++ai) {
      if (arms[ai].config.is_null()) continue;  // computed inline
      arms[ai].results.assign(arms[ai].seeds.size(), Json());
      for (size_t si = 0; si < arms[ai].seeds.size(); ++si) {
        RunSpec spec = arms[ai].spec(si);
        const std::string key = spec.key();
        auto [it, fresh] = index.emplace(key, pending.size());
        if (fresh) pending.push_back({std::move(spec), key, runs[ci].info().id, {}, {}});
        pending[it->second].uses.emplace_back(ci, ai, si);
      }
    }
  }

  // Run (cache first).
  CheckResult result;
  if (!root) {  // a worker rank: rank 0 owns the cache, the ledger and the report
    serve_work_queue(comm, pending);
    throw_first_error(comm, "");  // rank 0's failure, if any, ends this rank too
    result.written = false;
    return result;
  }
  const RunCache cache((fs::path(o.out) / "cache").string());
  std::vector<size_t> todo;
  for (size_t i = 0; i < pending.size(); ++i) {
    if (auto hit = cache.find(pending[i].key, pending[i].spec.kind, progress)) {
      pending[i].result = std::move(*hit);
      ++result.cached_runs;
    } else {
      todo.push_back(i);
    }
  }
  result.runs = static_cast<int64_t>(pending.size());
  // Under MPI every rank runs one run at a time (rank 0 on a second thread beside the queue).
  const int64_t jobs = parallel ? comm.size()
                       : o.jobs > 0 ? o.jobs
                                    : std::max<int64_t>(1, int64_t(std::thread::hardware_concurrency()));
  if (progress) {
    *progress << "scalelab check: " << claims.size() << " claim(s), " << pending.size()
                << " run(s) (" << result.cached_runs << " cached), " << jobs << " job(s)"
                << (parallel ? " (" + std::to_string(comm.size()) + " MPI ranks, one run each at a time)" : "")
                << ", " << (mode.quick ? "quick" : "full") << " mode\n";
    if (parallel && o.jobs > 1) *progress << "note: --jobs is ignored under MPI: -np sets the runs side by side\n";
  }
  std::atomic<size_t> next{0};
  std::atomic<size_t> finished{0};
  std::mutex mutex;
  std::exception_ptr failure;
  double run_seconds = 0, done_cost = 0, todo_cost = 0;
  for (size_t i : todo) todo_cost += estimated_cost(pending[i].spec);
  // A finished run (here or on another rank): cached, kept, counted.
  auto finish = [&](PendingRun& p, Json r, double took) {
    cache.store(p.key, p.claim + " " + p.spec.label, r);
    p.result = std::move(r);
    std::lock_guard<std::mutex> lock(mutex);
    run_seconds += took;
    done_cost += estimated_cost(p.spec);
    const size_t done = ++finished;
    if (progress) {
      // Seconds per unit of estimated cost so far, times the cost left, over the jobs.
      const double eta = run_seconds / done_cost * (todo_cost - done_cost) / double(jobs);
      *progress << "[check] " << p.claim << " " << p.spec.label << ": run " << done << " of "
                << todo.size() << ", elapsed " << duration(elapsed()) << ", ETA "
                << duration(eta) << "\n" << std::flush;
    }
  };
  auto worker = [&] {
    for (;;) {
      {
        std::lock_guard<std::mutex> lock(mutex);
        if (failure) return;
      }
      const size_t k = next.fetch_add(1);
      if (k >= todo.size()) return;
      PendingRun& p = pending[todo[k]];
      try {
        const auto r0 = std::chrono::steady_clock::now();
        Json r = execute_run(p.spec);
        finish(p, std::move(r), std::chrono::duration<double>(std::chrono::steady_clock::now() - r0).count());
      } catch (...) {
        std::lock_guard<std::mutex> lock(mutex);
        if (!failure) failure = std::current_exception();
        return;
      }
    }
  };
  if (!parallel) {
    std::vector<std::thread> threads;
    for (int64_t j = 0; j < std::min<int64_t>(jobs, int64_t(todo.size())); ++j) threads.emplace_back(worker);
    for (std::thread& t : threads) t.join();
  } else {
    // This thread serves the queue (every MPI call stays on it); one more thread runs runs here.
    std::thread local(worker);
    int serving = comm.size() - 1;
    while (serving > 0) {
      std::optional<CommMessage> m = comm.try_receive();
      if (!m) {
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
        continue;
      }
      if (m->tag == kAskWork) {
        bool failed;
        {
          std::lock_guard<std::mutex> lock(mutex);
          failed = failure != nullptr;
        }
        const size_t k = failed ? todo.size() : next.fetch_add(1);
        if (k >= todo.size()) {
          comm.send(m->source, kAssign, "");
          --serving;
        } else {
          comm.send(m->source, kAssign, std::to_string(todo[k]));
        }
      } else if (m->tag == kResult) {
        const size_t nl = m->bytes.find('\n');
        const size_t i = std::stoul(m->bytes.substr(0, nl));
        Json r = Json::parse(m->bytes.substr(nl + 1));
        const double took = r.value("seconds", 0.0);
        finish(pending.at(i), std::move(r), took);
      } else if (m->tag == kFailed) {
        std::lock_guard<std::mutex> lock(mutex);
        if (!failure) failure = std::make_exception_ptr(Error("rank " + std::to_string(m->source) + ": " + m->bytes));
      }
    }
    local.join();
    std::string message;
    if (failure) {
      try {
        std::rethrow_exception(failure);
      } catch (const std::exception& e) {
        message = e.what();
      }
    }
    throw_first_error(comm, message);  // every rank ends with it
  }
  if (failure) std::rethrow_exception(failure);
  for (PendingRun& p : pending)
    for (auto [ci, ai, si] : p.uses) runs[ci].arms()[ai].results[si] = p.result;

  // Evaluate and write.
  Json summaries = Json::array();
  for (size_t ci = 0; ci < runs.size(); ++ci) {
    const auto e0 = std::chrono::steady_clock::now();
    const Verdict v = claims[ci]->evaluate(runs[ci]);
    const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - e0).count();
    const Json record = runs[ci].to_json(v, took);
    const std::string id = runs[ci].info().id;
    write_file_atomically((fs::path(o.out) / "claims" / (id + ".json")).string(), record.dump(1) + "\n");
    summaries.push_back({{"id", id}, {"statement", record["statement"]}, {"verdict", record["verdict"]},
                         {"condition", record["condition"]}, {"provisional", record["provisional"]},
                         {"key_number", record["key_number"]}, {"sentence", record["sentence"]}});
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
