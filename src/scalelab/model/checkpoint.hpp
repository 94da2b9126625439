// model/checkpoint: a model's weights, its full run config and the step, in one safetensors file.
// Tensor names and metadata keys are documented in docs/checkpoint.md.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "scalelab/core/safetensors.hpp"
#include "scalelab/model/transformer.hpp"

namespace scalelab {

constexpr const char* kCheckpointFormat = "scalelab-checkpoint-1";

struct Checkpoint {
  std::string path;
  Json run_config;  // the resolved config of the run that wrote it ({"model": ..., ...})
  int64_t step = 0;
  SafetensorsFile file;
};

// What a checkpoint holds beside the weights, the config and the step.
struct CheckpointExtras {
  std::vector<TensorRef> tensors;               // e.g. optimizer state
  std::map<std::string, std::string> metadata;  // more __metadata__ keys (must not shadow ours)
};

// Writes atomically (temp file + rename).
void save_checkpoint(const std::string& path, Transformer<float>& model, const Json& run_config,
                     int64_t step, const CheckpointExtras& extras = {});

// Throws Error for a missing, truncated or foreign file.
Checkpoint read_checkpoint(const std::string& path);

ModelConfig checkpoint_model_config(const Checkpoint& checkpoint);

// Copies every parameter from the checkpoint; each must be present with the right shape, and
// every other tensor must be an optimizer moment of a parameter's shape or the loss scaler state.
void load_weights(Transformer<float>& model, const Checkpoint& checkpoint);

}  // namespace scalelab
