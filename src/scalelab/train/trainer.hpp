// train/trainer: the training loop. One step: batch -> forward -> loss -> backward -> clip ->
// optimiser, with periodic validation, JSON Lines metrics and atomic checkpoints.
//
// Run directory (train.run_dir; the files and their checks: train/run_dir.hpp):
//   config.toml, config.json   the resolved config (every default filled in)
//   metrics.jsonl              one record per logged step ("split": "train") and per evaluation
//                              ("split": "valid")
//   checkpoint.safetensors     the latest weights + optimizer state (docs/checkpoint.md)
//   summary.json               the final figures
// Embedding the trainer (the claims ledger, a language binding): two seams, both in
// TrainerOptions. `sink` (a MetricsSink, train/metrics_sink.hpp) receives every record as it is
// written, with or without a run directory; `observer` sees the model after the backward of step 1
// and of every observe_every-th step. The progress lines (train/progress.hpp) are one more sink.
// train.precision = bf16 | f16 trains with tensors stored in the format (nn/rounding.hpp) and f32
// master weights; with f16 a dynamic loss scaler skips the steps whose gradients overflow. The
// log records then carry the loss scale, the skipped steps and the per-op overflow counts.
// Determinism: batches come from train.seed, dropout masks from (train.seed, step), so the same
// config and thread count give the same loss sequence, also across a resume.
// Data parallel (TrainerOptions::comm with more than one rank, docs/scaling.md): every rank trains
// on its slice of each global batch, gradients and loss are summed over the ranks, and all ranks
// hold the same weights; only rank 0 writes the run directory and prints. Dropout masks then come
// from (train.seed, step, rank): with dropout > 0 an N-rank run is reproducible at that N but is
// not the 1-process run's twin (with dropout 0 it is, to float rounding).
#pragma once
#include <csignal>
#include <functional>
#include <iosfwd>
#include <memory>
#include <optional>
#include <string>

#include "scalelab/core/comm.hpp"
#include "scalelab/data/batch.hpp"
#include "scalelab/data/task.hpp"
#include "scalelab/model/transformer.hpp"
#include "scalelab/nn/rounding.hpp"
#include "scalelab/train/data_parallel.hpp"
#include "scalelab/train/loss_scaler.hpp"
#include "scalelab/train/metrics_sink.hpp"
#include "scalelab/train/run_config.hpp"

namespace scalelab {

class RunDirectory;  // train/run_dir.hpp

struct EvalResult {
  double loss = 0, nll = 0, token_accuracy = 0;
  double exact_match = -1;  // -1: not measured (decoder-only)
  int64_t tokens = 0;
};

struct TrainSummary {
  int64_t steps = 0;
  int64_t skipped_steps = 0;  // dropped by the loss scaler (gradients inf or NaN)
  double final_train_loss = 0;
  EvalResult valid;
  double seconds = 0;
  double tokens_per_second = 0;
  int64_t parameters = 0;
  int ranks = 1;  // data-parallel processes (TrainerOptions::comm)
  // true: stopped early at `steps` on TrainerOptions::stop_requested; the checkpoint holds that
  // step, and there is no final validation and no summary.json.
  bool interrupted = false;
  // The signal that stopped it (TrainerOptions::stop_requested), on whichever rank it arrived.
  int stop_signal = 0;
};

// Signal numbers 1..kStopSignalSlots-1 are told apart in the stop vote across ranks.
inline constexpr int kStopSignalSlots = 32;

// What an observer sees, after the backward of `step` (gradients as backward left them: before
// unscaling, clipping and the update) while the model still holds that step's forward state.
struct StepView {
  int64_t step = 0;
  double loss = 0;
  Transformer<float>& model;
};
using StepObserver = std::function<void(const StepView&)>;

struct TrainerOptions {
  bool resume = false;         // continue from run_dir/checkpoint.safetensors
  std::ostream* progress = nullptr;  // progress lines (null: silent)
  // false: nothing is written to disk (no run directory, no checkpoint): the records reach only
  // `sink` (the claims ledger's runs). true: train.run_dir as documented above.
  bool write_run_dir = true;
  MetricsSink* sink = nullptr;  // also receives every record (null: none)
  // Called at step 1 and every observe_every steps (0: never); zero cost when unset.
  StepObserver observer = nullptr;
  int64_t observe_every = 0;
  // Polled after every step (the CLI's SIGINT/SIGTERM handler sets it; null: never). Non-zero:
  // the step in progress finishes, its train record and the checkpoint are written, and run()
  // returns with TrainSummary::interrupted, so that a Ctrl-C never loses the steps done.
  const volatile std::sig_atomic_t* stop_requested = nullptr;
  // The job's ranks (null: this process alone). With more than one rank every rank calls run()
  // with the same config; errors that depend on the run directory are checked on rank 0 and
  // raised on every rank, and the stop request of any rank stops all of them at the same step.
  Comm* comm = nullptr;
};

class Trainer {
 public:
  Trainer(const RunConfig& config, const TaskData& data);
  TrainSummary run(const TrainerOptions& options);
  Transformer<float>& model() { return model_; }

 private:
  struct StepResult {
    double loss = 0, nll = 0, grad_norm = 0;
    bool applied = true;  // false: skipped by the loss scaler
  };
  // `batch` is this rank's slice; global_tokens the global batch's target tokens (the loss's N).
  StepResult train_step(const Batch& batch, int64_t global_tokens, int64_t step, double lr,
                        const TrainerOptions& options);
  // The steps of run(): the job's ranks (comm, or this process alone); the checks before any
  // write and the resume (returns the step to continue from); the stop vote of every rank; the
  // train and valid records; the checkpoint (every rank checks the weights agree, rank 0 writes);
  // summary.json.
  Comm& bind_comm(Comm* comm);
  int64_t open_run(const RunDirectory& dir, const Json& resolved, const TrainerOptions& options);
  // The signal a rank was stopped by (0: none), agreed across ranks.
  int stop_voted(const TrainerOptions& options);
  Json train_record(int64_t step, const StepResult& r, double lr, int64_t tokens, double elapsed,
                    int64_t skipped_steps);
  EvalResult validate(int64_t step, MetricsSink& sink);
  void save_on_all_ranks(const RunDirectory& dir, int64_t step);
  Json summary_json(const TrainSummary& summary);
  // Rank 0's weights, optimizer and loss-scaler state to every rank (after init or a resume).
  void broadcast_state(int64_t& start_step);
  std::string weights_digest() const;
  // bf16/f16: the forward and backward use the weights rounded to the format; the optimizer
  // updates the f32 masters (kept here in between).
  void round_weights_to_format();
  void restore_master_weights_and_round_grads();
  void save(const std::string& path, int64_t step);
  int64_t restore(const std::string& path);
  // Throws if a gradient or (after the update) a parameter holds inf or NaN, naming the tensor
  // and the step, before anything of that step is saved.
  void check_finite(int64_t step, const StepResult& r, const std::string& kept) const;

  RunConfig config_;
  const TaskData& data_;
  Transformer<float> model_;
  Optimizer<float> optimizer_;
  Tensor<float> dlogits_;
  int64_t saved_steps_ = 0;  // train.steps of the run a resumed checkpoint came from
  // Reduced precision (train.precision): the format, the counts since the last log line and
  // over the run, the f32 master weights, and the loss scaler (f16 by default).
  TensorRounding rounding_;
  OverflowCounters counters_, run_counters_;
  std::vector<Tensor<float>> master_;
  std::optional<DynamicLossScaler> scaler_;
  // Data parallel: the job's ranks (run() sets it; a single process when TrainerOptions::comm is null).
  Comm* comm_ = nullptr;
  std::unique_ptr<Comm> solo_;
  GradientAllreduce allreduce_;
  double allreduce_seconds_ = 0;  // this process's time in allreduce_ (summary.json)
};

// comm (null: one process): the batches are dealt round-robin to the ranks and the sums reduced;
// every rank returns the same global figures.
EvalResult evaluate(Transformer<float>& model, const TaskData& data,
                    const std::vector<Example>& examples, int64_t batch_size,
                    int64_t exact_match_examples, Comm* comm = nullptr);

// Model config with the vocabulary sizes taken from the data when left at 0.
ModelConfig resolve_vocab(ModelConfig model, const TaskData& data);

}  // namespace scalelab
