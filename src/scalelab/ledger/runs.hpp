// ledger/runs: one unit of work of the ledger (a training run or a probe run at initialisation),
// its cache key, and how it is executed.
//
// A run is fully described by (kind, resolved run config, seed, options). The seed sets both
// model.seed (initialisation) and train.seed (batch order), so the arms of a claim that share a
// seed share their data order (paired comparison). Every run uses one thread: results do not
// depend on --jobs, and runs side by side do not compete for cores.
//
// Result JSON of a training run:
//   {"curve": [[step, loss, grad_norm], ...],          every train.log_every steps
//    "valid": [[step, nll, token_accuracy], ...],      every train.eval_every steps and at the end
//    "final_valid_nll", "final_train_loss", "diverged": bool, "diverged_step",
//    "observations": [{"step", "grad_layers": [[stack, layer, ||g||], ...],
//                      "attn": [[stack, layer, site, max|logit|, entropy_norm, saturated]],
//                      "act": [[stack, layer, site, rms of f(x), rms of x + f(x)]]}],  (option
//                                                            "activations": true only)
//    "rounding": {op: {results, overflow, nan, underflow}}, "skipped_steps"   (f16 / bf16 only)
//    "seconds"}
// Result JSON of a probe run: {"records": [probe records with head = -1], "first_step_lr"}
// (probe_run.hpp; docs/probes.md for the record format).
#pragma once
#include <cstdint>
#include <string>

#include "scalelab/core/config_section.hpp"
#include "scalelab/data/task.hpp"
#include "scalelab/train/run_config.hpp"

namespace scalelab::ledger {

enum class RunKind { train, probe };
const char* run_kind_name(RunKind kind);

struct RunSpec {
  RunKind kind = RunKind::train;
  Json config;         // run_config_to_json of the parsed config (every default filled in)
  int64_t seed = 1;
  Json options = Json::object();  // train: {"observe_every", "activations"}; probe: {"batches", "batch_size",
                                  // "split", "precision", "accumulate", "subtract_max"}
  std::string label;   // for the progress line only (not in the key)

  // Hex digest of (kind, config, seed, options, binary version).
  std::string key() const;
};

// Reading a training result: the final valid loss (NaN when the run diverged or the value is
// missing or null: a failed run, which the criteria rank as the worst), and whether it diverged.
double final_valid_nll(const Json& result);
bool diverged(const Json& result);

// A result as the cache and the other MPI ranks hold it (non-finite numbers become null). Every
// evaluation reads this form, so a fresh run, a cached one and one from another rank give one
// verdict (docs/ledger.md, rule 4).
Json as_stored(const Json& result);

// A run spec as JSON and back (the MPI work queue sends specs; the key is recomputed).
Json spec_to_json(const RunSpec& spec);
RunSpec spec_from_json(const Json& j);

// Builds a run's resolved config from a base tree (TOML-like JSON) and "section.key=value"
// overrides; the seed and the ledger's fixed settings (one thread, no run directory) are applied.
Json resolve_config(const Json& base, const std::vector<std::string>& overrides);

// Runs it on the calling thread (with one OpenMP thread; the previous count is restored).
Json execute_run(const RunSpec& spec);

// The loaded data of a [data] config, loaded once per process and shared (thread-safe).
const TaskData& shared_task_data(const DataConfig& config);

// The version the cache is keyed by: scalelab's version, the digest of the engine's sources
// (everything that decides a run's numbers) and the CPU model.
const std::string& binary_version();

// The cache keys' digests: FNV-1a (64-bit) over bytes from state h; a key is two such digests
// of its text with independent seeds, as 32 hex digits (a collision would need both to collide).
constexpr uint64_t kFnvOffset = 1469598103934665603ull;
uint64_t fnv1a(const char* bytes, size_t n, uint64_t h);
std::string hex64(uint64_t x);
std::string key_digest(const std::string& text);

}  // namespace scalelab::ledger
