// train/progress: the progress lines of a training run, written from its metric records.
//
//   scalelab train: <parameters> parameters, <n> training examples, run dir <dir>[, ...]
//   step <s>/<steps>  loss <l>  lr <lr>  tok/s <t>  ETA <eta>[  scale <S>  skipped <k>]
//   valid step <s>: loss <nll> nats, token accuracy <a>[, exact match <e>]
//
// A MetricsSink (train/metrics_sink.hpp): every line after the header comes from one record, so
// the lines say exactly what metrics.jsonl holds. Data parallel: rank 0 alone prints.
#pragma once
#include <cstdint>
#include <iosfwd>
#include <string>

#include "scalelab/train/metrics_sink.hpp"

namespace scalelab {

struct ProgressHeader {
  int64_t parameters = 0, examples = 0;
  std::string run_dir;
  int ranks = 1;
  bool resume = false;
  int64_t start_step = 0;
  // A resumed warmup_cosine run whose train.steps changed from saved_steps: a note says that the
  // decay is recomputed over the new total.
  bool steps_changed = false;
  int64_t saved_steps = 0;
};

class TrainProgress : public MetricsSink {
 public:
  // out: where the lines go (null: silent). The ETA extrapolates the steps since start_step.
  TrainProgress(std::ostream* out, int64_t total_steps, int64_t start_step)
      : out_(out), total_steps_(total_steps), start_step_(start_step) {}
  void header(const ProgressHeader& h);
  void record(const Json& rec) override;

 private:
  std::ostream* out_;
  int64_t total_steps_, start_step_;
};

// "12s", "3m05s", "1h02m".
std::string format_duration(double seconds);

}  // namespace scalelab
