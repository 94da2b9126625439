// model/checkpoint_average: the element-wise mean of several checkpoints of one model.
//
// "Attention Is All You Need" evaluates the average of a run's last 5 checkpoints (written 10
// minutes apart). Only the model's parameters are averaged: optimizer moments and loss-scaler
// state are dropped, so the result is for eval/g2p/sample/probe, not for train --resume.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "scalelab/model/checkpoint.hpp"

namespace scalelab {

struct AveragedCheckpoint {
  Json run_config;              // the newest source's (all sources share the model section)
  int64_t step = 0;             // the newest source's step
  std::vector<std::string> sources;
  std::vector<int64_t> source_steps;
  std::unique_ptr<Transformer<float>> model;  // holds the mean weights
};

// theta = (1/n) sum_i theta_i, summed in double. Throws Error (naming the files) for fewer than
// two sources, a path listed twice, a model section that differs from the first source's, or a
// missing/misshapen tensor.
AveragedCheckpoint average_checkpoints(const std::vector<std::string>& paths);

// Writes it as a checkpoint whose metadata also has "averaged_from": a JSON list of
// {"path", "step"}.
void save_averaged_checkpoint(const std::string& path, AveragedCheckpoint& averaged);

}  // namespace scalelab
