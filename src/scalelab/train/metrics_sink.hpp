// train/metrics_sink: where a training run's metric records go.
//
// Trainer::run hands every record to a list of sinks, in order: the run directory's metrics.jsonl
// (train/run_dir.hpp), the caller's TrainerOptions::sink, and the progress lines
// (train/progress.hpp). A record is the JSON object of one line of metrics.jsonl:
//   {"split": "train", "step", "loss", "nll", "lr", "grad_norm" (null on a skipped step), "tokens",
//    "tokens_per_s", "time_s"[, "precision", "skipped_steps", "loss_scale", "rounding"]}
//   {"split": "valid", "step", "loss", "nll", "token_accuracy"[, "exact_match"]}
// A caller that embeds the trainer (the claims ledger's runs, a language binding) implements
// MetricsSink to receive them as they happen, with or without a run directory.
#pragma once
#include <utility>
#include <vector>

#include "scalelab/core/config_section.hpp"  // Json

namespace scalelab {

class MetricsSink {
 public:
  virtual ~MetricsSink() = default;
  virtual void record(const Json& rec) = 0;
};

// Passes each record to every sink of a list in order (null entries are skipped).
class MetricsFanout : public MetricsSink {
 public:
  explicit MetricsFanout(std::vector<MetricsSink*> sinks) : sinks_(std::move(sinks)) {}
  void record(const Json& rec) override {
    for (MetricsSink* s : sinks_)
      if (s) s->record(rec);
  }

 private:
  std::vector<MetricsSink*> sinks_;
};

}  // namespace scalelab
