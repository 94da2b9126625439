// train/run_config: a whole run's configuration: [model], [data], [train]. Loaded from TOML with
// `--set section.key=value` overrides applied before validation, and kept in resolved form (every
// default filled in) for the run directory and the checkpoint.
#pragma once
#include <string>
#include <vector>

#include "scalelab/data/task.hpp"
#include "scalelab/model/config.hpp"
#include "scalelab/kernels/gemm.hpp"
#include "scalelab/kernels/precision.hpp"
#include "scalelab/train/loss_scaler.hpp"
#include "scalelab/train/optimizer.hpp"

namespace scalelab {

// Training in a reduced format (nn/rounding.hpp): tensors stored in bf16 or f16, f32 master
// weights, and dynamic loss scaling (train/loss_scaler.hpp) on by default for f16.
struct PrecisionConfig {
  DType dtype = DType::f32;          // train.precision
  bool dynamic_loss_scale = false;   // train.loss_scale = "dynamic" | "none"
  LossScalerOptions scaler;          // train.loss_scale_init, train.loss_scale_window
  // train.matmul_precision: "bf16" rounds every float GEMM's operands to bf16 with f32 sums
  // (kernels/gemm.hpp), independent of dtype; "auto" is resolved when parsed, by measurement: bf16
  // where this processor's bf16 GEMM runs >= 1.5x its f32 one (kernels/gemm_speed_probe.hpp).
  MatmulPrecision matmul = MatmulPrecision::f32;
};

struct TrainConfig {
  int64_t steps = 1000;
  int64_t batch_size = 64;
  bool length_bucketing = false;  // batches of similar lengths (less padding)
  OptimizerOptions optimizer;
  ScheduleOptions schedule;
  double clip_norm = 0.0;        // 0: no clipping
  double label_smoothing = 0.1;
  int64_t eval_every = 200;      // 0: only at the end
  int64_t eval_examples = 500;   // validation examples decoded for exact match
  int64_t checkpoint_every = 0;  // 0: only at the end
  int64_t snapshot_every = 0;    // weights-only copies run_dir/snapshots/step<N>.safetensors; 0: none
  int64_t log_every = 10;
  uint64_t seed = 1;             // batches and dropout
  int64_t threads = 0;           // 0: all cores
  bool flush_denormals = true;   // subnormal floats read and written as 0 (core/denormals.hpp)
  std::string run_dir = "runs/latest";
  PrecisionConfig precision;
};

struct RunConfig {
  std::string preset;  // the preset the [model] section started from ("" for none)
  ModelConfig model;
  DataConfig data;
  TrainConfig train;
};

// Reads a TOML file into a JSON tree; throws Error with the file, line and parser message.
Json read_toml_file(const std::string& path);
// The same for TOML text; `source` names it in the error (a file name).
Json read_toml_text(const std::string& text, const std::string& source);
// Applies "section.key=value" (value parsed as a TOML value: number, bool, string, array;
// a bare word is taken as a string). Throws Error for a malformed override.
void apply_override(Json& tree, const std::string& assignment);

RunConfig parse_run_config(const Json& tree);  // validates everything, rejects unknown keys
Json run_config_to_json(const RunConfig& config);
std::string json_to_toml(const Json& tree);    // for the run directory's config.toml

// The layers of a config, lowest first: a preset's [model] fragment (from `preset` or the file's
// top-level `preset = "..."` key), the TOML file (may be empty), then the --set overrides.
struct ConfigSources {
  std::string path;
  std::string preset;
  std::vector<std::string> overrides;
};
Json merge_config_sources(const ConfigSources& sources);
RunConfig load_run_config(const ConfigSources& sources);

}  // namespace scalelab
