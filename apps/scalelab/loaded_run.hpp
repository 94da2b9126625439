// A trained run recovered from its checkpoint: the run config (from the metadata), the task's data
// and vocabularies (rebuilt deterministically by load_task from the [data] section), and the model.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "scalelab/data/task.hpp"
#include "scalelab/model/checkpoint.hpp"
#include "scalelab/train/run_config.hpp"

namespace scalelab::cli {

struct LoadedRun {
  RunConfig config;
  int64_t step = 0;
  TaskData data;
  std::unique_ptr<Transformer<float>> model;
};

// Throws Error for an unreadable checkpoint, a config this build cannot parse (e.g. an unknown
// data.task) and vocabularies that do not fit the model.
LoadedRun load_run(const std::string& checkpoint_path);

// The other members of a G2P ensemble: `paths` are all the members' checkpoints, paths[0] the one
// `first` was loaded from. Each must be trained on the task and split of the first (their phone
// orders and teacher targets may differ), so that all share the vocabularies and held-out words;
// else an Error names both.
std::vector<LoadedRun> load_ensemble_members(const LoadedRun& first,
                                             const std::vector<std::string>& paths);

// "cmudict", "kjv" or "synthetic (copy)" for messages.
std::string task_label(const DataConfig& data);

}  // namespace scalelab::cli
