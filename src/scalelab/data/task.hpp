// data/task: the [data] section of a run config and the datasets it names.
#pragma once
#include <string>
#include <vector>

#include "scalelab/core/config_section.hpp"
#include "scalelab/data/batch.hpp"
#include "scalelab/data/synthetic.hpp"
#include "scalelab/data/vocab.hpp"

namespace scalelab {

struct DataConfig {
  std::string task = "copy";  // copy | reverse | sort
  int64_t symbols = 10;
  int64_t min_len = 1;
  int64_t max_len = 10;
  int64_t train_size = 20000;
  int64_t valid_size = 500;
  uint64_t seed = 1;
};

struct TaskData {
  std::vector<Example> train, valid, test;
  Vocab src_vocab, tgt_vocab;
  bool has_source = true;  // false for language modelling (decoder-only)
  bool lm_windows = false;  // examples are windows of a text stream (BatchLayout::lm_window)
};

DataConfig parse_data_config(ConfigSection section);
Json data_config_to_json(const DataConfig& config);
TaskData load_task(const DataConfig& config);

// How to batch this task's examples for a model with or without an encoder.
BatchLayout batch_layout(const TaskData& data, bool encoder_decoder);

}  // namespace scalelab
