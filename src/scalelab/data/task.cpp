#include "scalelab/data/task.hpp"

#include "scalelab/core/error.hpp"

namespace scalelab {

DataConfig parse_data_config(ConfigSection s) {
  DataConfig c;
  c.task = s.get_choice("task", c.task, {"copy", "reverse", "sort"});
  c.symbols = s.get_int("symbols", c.symbols);
  c.min_len = s.get_int("min_len", c.min_len);
  c.max_len = s.get_int("max_len", c.max_len);
  c.train_size = s.get_int("train_size", c.train_size);
  c.valid_size = s.get_int("valid_size", c.valid_size);
  const int64_t seed = s.get_int("seed", 1);
  if (c.symbols < 1) s.fail("symbols", "must be >= 1");
  if (c.min_len < 1) s.fail("min_len", "must be >= 1");
  if (c.max_len < c.min_len) s.fail("max_len", "must be >= data.min_len");
  if (c.train_size < 1) s.fail("train_size", "must be >= 1");
  if (c.valid_size < 1) s.fail("valid_size", "must be >= 1");
  if (seed < 0) s.fail("seed", "must be >= 0");
  c.seed = static_cast<uint64_t>(seed);
  s.finish();
  return c;
}

Json data_config_to_json(const DataConfig& c) {
  return {{"task", c.task},       {"symbols", c.symbols},       {"min_len", c.min_len},
          {"max_len", c.max_len}, {"train_size", c.train_size}, {"valid_size", c.valid_size},
          {"seed", c.seed}};
}

TaskData load_task(const DataConfig& c) {
  TaskData data;
  SyntheticOptions o{.task = parse_synthetic_task(c.task), .symbols = c.symbols,
                     .min_len = c.min_len, .max_len = c.max_len};
  o.count = c.train_size;
  o.seed = c.seed;
  data.train = make_synthetic(o);
  o.count = c.valid_size;
  o.seed = c.seed + 1000003;  // a different stream for held-out examples
  data.valid = make_synthetic(o);
  o.seed = c.seed + 2000006;
  data.test = make_synthetic(o);
  for (int64_t i = 0; i < c.symbols; ++i) data.src_vocab.add("s" + std::to_string(i));
  data.tgt_vocab = data.src_vocab;
  return data;
}

}  // namespace scalelab

namespace scalelab {

BatchLayout batch_layout(const TaskData& data, bool encoder_decoder) {
  if (data.lm_windows) return BatchLayout::lm_window;
  return encoder_decoder ? BatchLayout::seq2seq : BatchLayout::sequence;
}

}  // namespace scalelab
