// data/task: the [data] section of a run config and the datasets it names.
//
//   data.task = copy | reverse | sort   synthetic (keys: symbols, min_len, max_len, train_size,
//                                       valid_size, seed)
//   data.task = cmudict                 G2P on CMUdict (keys: split, split_seed, max_train_words,
//                                       max_eval_words, phone_order, teacher_targets,
//                                       teacher_mix; with split = hash: path; with split =
//                                       g014b2b: g014b2b_dir)
//       split = hash     the pocketsphinx dictionary, split 90/5/5 by distinct word (split.hpp)
//       split = g014b2b  the standard benchmark split in data/cmudict-g014b2b (g014b2b.hpp):
//                        its train file minus 5 % of its words (valid), its test file
//       phone_order = left_to_right (default) | right_to_left: the order of the phones in the
//                        examples' targets, i.e. the order a model trained on them emits them
//                        (an R2L model for L2R/R2L ensembles, g2p_eval.hpp); the words' reference
//                        pronunciations (train_words, ...) always stay left to right
//   data.task = kjv                     character LM on the King James Bible, whole books held out
//                                       (keys: context, stride, program, cache_dir,
//                                       max_train_chars, max_eval_chars)
// Only the keys of the chosen task are accepted; any other key is an error naming the allowed
// ones. The vocabularies are rebuilt deterministically from the data (sorted symbol sets over the
// whole dictionary / all 66 books), so a checkpoint's [data] section is enough to recover them.
#pragma once
#include <string>
#include <vector>

#include "scalelab/core/config_section.hpp"
#include "scalelab/data/batch.hpp"
#include "scalelab/data/cmudict.hpp"
#include "scalelab/data/g014b2b.hpp"
#include "scalelab/data/synthetic.hpp"
#include "scalelab/data/vocab.hpp"

namespace scalelab {

enum class TaskKind { synthetic, cmudict, kjv };

struct DataConfig {
  std::string task = "copy";  // copy | reverse | sort | cmudict | kjv
  TaskKind kind() const;

  // Synthetic tasks.
  int64_t symbols = 10;
  int64_t min_len = 1;
  int64_t max_len = 10;
  int64_t train_size = 20000;
  int64_t valid_size = 500;
  uint64_t seed = 1;

  // cmudict.
  std::string split = "hash";      // hash | g014b2b
  std::string path = kCmudictDefaultPath;       // split = hash
  std::string g014b2b_dir = default_g014b2b_dir();  // split = g014b2b
  uint64_t split_seed = 20170612;  // SplitOptions' default: the project's fixed split (g014b2b:
                                   // the hash that carves valid out of the train file)
  int64_t max_train_words = 0;     // 0: all; else an evenly spaced subset (quick runs, tests)
  int64_t max_eval_words = 0;      // same for valid and test
  std::string phone_order = "left_to_right";  // left_to_right | right_to_left (targets reversed)
  bool right_to_left() const { return phone_order == "right_to_left"; }
  std::string teacher_targets;     // "" none; else a dictionary file of the training words
  std::string teacher_mix = "replace";  // replace | add (teacher_targets.hpp)

  // kjv.
  int64_t context = 256;       // characters of context: windows of context + 1 ids
  int64_t stride = 0;          // training windows start every `stride` characters (0: context)
  std::string program = "bible";
  std::string cache_dir;       // optional cache of `bible -f` output ("" = none)
  int64_t max_train_chars = 0; // 0: all; else the first N characters of each stream
  int64_t max_eval_chars = 0;
};

struct TaskData {
  std::vector<Example> train, valid, test;
  Vocab src_vocab, tgt_vocab;
  bool has_source = true;   // false for language modelling (decoder-only)
  bool lm_windows = false;  // examples are windows of a text stream (BatchLayout::lm_window)
  // cmudict only: the words of each side with all their pronunciations (for WER/PER; always the
  // dictionary's, also when the training examples are a teacher's).
  std::vector<CmudictEntry> train_words, valid_words, test_words;
};

DataConfig parse_data_config(ConfigSection section);
Json data_config_to_json(const DataConfig& config);  // only the chosen task's keys
TaskData load_task(const DataConfig& config);
// The config without what only shapes the training examples (data.teacher_targets): to score a
// trained model, which needs its vocabularies and held-out words but not the teacher's file.
DataConfig scoring_data_config(DataConfig config);

// Splits a token stream into windows of context + 1 ids starting every `stride` ids; the last
// window may be shorter (at least 2 ids). With stride = context every token but the first is
// predicted exactly once.
std::vector<Example> lm_windows(const std::vector<int32_t>& stream, int64_t context,
                                int64_t stride);

// How to batch this task's examples for a model with or without an encoder.
BatchLayout batch_layout(const TaskData& data, bool encoder_decoder);

}  // namespace scalelab
