// probes/probe_run: the probe experiment (scalelab probe, docs/probes.md) as one library call.
//
// For each seed (model.seed, model.seed + 1, ...; one model at the checkpoint's step when given):
// build the model at initialisation (or load the checkpoint's weights), run the first `batches`
// batches of the split through it in eval mode with a ModelProbe observing, back-propagate the mean
// label-smoothed loss over those batches, optionally replay the last batch in an emulated format
// (probe_precision), take one optimiser step inside a GradientProbe (the config's optimiser,
// clipping and the schedule's learning rate at step 1), and add a "loss" record. The batches are
// the same for every seed, so the spread over seeds is the initialisation's.
//
// It prints nothing and leaves process-wide state (thread count, denormal mode) as it found it:
// the caller sets the thread count (train.threads) before calling.
#pragma once
#include <cmath>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "scalelab/data/task.hpp"
#include "scalelab/kernels/precision.hpp"
#include "scalelab/model/checkpoint.hpp"
#include "scalelab/probes/model_probe.hpp"
#include "scalelab/probes/record.hpp"
#include "scalelab/train/run_config.hpp"

namespace scalelab::probes {

struct ProbeRunOptions {
  int64_t seeds = 3;            // models with model.seed, model.seed + 1, ... (1 when checkpoint)
  int64_t batches = 2;          // batches of the split per model
  int64_t batch_size = 0;       // 0: train.batch_size
  std::string split = "valid";  // valid | test | train
  bool optimizer_step = true;   // one optimiser step for the update/parameter ratio
  ModelProbeOptions model;      // what the ModelProbe records
  std::optional<DType> precision;       // also replay in f16 / bf16 (precision_probe)
  DType precision_accumulate = DType::f32;
  bool subtract_max = true;
  std::map<std::string, std::string> tags;  // copied into every record
};

struct ProbeRunResult {
  std::vector<ProbeRecord> records;   // every seed's records (all heads and per head)
  OverflowCounters precision_totals;  // summed over seeds (when precision is set)
  double first_step_lr = NAN;         // NaN without optimizer_step
  // The attention scale c as the model's first decoder self-attention resolved it (nn), wherever
  // the config applies it (logits, q or W_q's initialisation).
  double attention_scale = NAN;
  int64_t batches = 0, batch_size = 0, step = 0;
};

// config.model's vocab sizes must be resolved (resolve_vocab); data is the loaded task.
// checkpoint: probe those weights (one model, its step) instead of fresh initialisations.
// Throws Error before any model is built for seeds or batches < 1, batch_size < 0, an unknown
// split name, an empty split, and precision_accumulate neither f32 nor the precision.
ProbeRunResult run_probes(const RunConfig& config, const TaskData& data,
                          const ProbeRunOptions& options, const Checkpoint* checkpoint = nullptr);

// The examples of a split by name ("valid", "test" or "train"); throws Error for another name.
const std::vector<Example>& probe_split(const TaskData& data, const std::string& split);

// The batches run_probes runs through every model: the first options.batches batches of the
// split, in order, of options.batch_size (0: config.train.batch_size) examples. For callers that
// report the plan before the run.
std::vector<Batch> probe_batches(const RunConfig& config, const TaskData& data,
                                 const ProbeRunOptions& options);

}  // namespace scalelab::probes
