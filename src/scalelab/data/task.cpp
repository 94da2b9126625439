#include "scalelab/data/task.hpp"

#include <algorithm>

#include "scalelab/core/error.hpp"
#include "scalelab/data/bible.hpp"
#include "scalelab/data/split.hpp"
#include "scalelab/data/teacher_targets.hpp"

namespace scalelab {
namespace {

constexpr int64_t kMaxSymbols = int64_t{1} << 20;
constexpr int64_t kMaxLength = int64_t{1} << 20;
constexpr int64_t kMaxExamples = int64_t{1} << 26;

uint64_t read_seed(ConfigSection& s, const std::string& key, uint64_t fallback) {
  const int64_t seed = s.get_int(key, static_cast<int64_t>(fallback));
  if (seed < 0) s.fail(key, "must be >= 0");
  return static_cast<uint64_t>(seed);
}

int64_t read_limit(ConfigSection& s, const std::string& key) {
  const int64_t n = s.get_int(key, 0);
  if (n < 0) s.fail(key, "must be >= 0 (0: no limit)");
  return n;
}

// An evenly spaced subset of n items (all of them when n is 0 or not smaller).
template <class T>
std::vector<T> evenly_spaced(const std::vector<T>& items, int64_t n) {
  const int64_t size = static_cast<int64_t>(items.size());
  if (n <= 0 || n >= size) return items;
  std::vector<T> out;
  out.reserve(n);
  for (int64_t i = 0; i < n; ++i) out.push_back(items[i * size / n]);
  return out;
}

std::vector<int32_t> prefix(const std::vector<int32_t>& stream, int64_t n) {
  if (n <= 0 || n >= static_cast<int64_t>(stream.size())) return stream;
  return {stream.begin(), stream.begin() + n};
}

TaskData load_synthetic(const DataConfig& c) {
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

TaskData load_cmudict_task(const DataConfig& c) {
  G2pVocabs vocabs;
  G2pSplit split;
  if (c.split == "g014b2b") {
    G014b2bSplit bench = load_g014b2b({.dir = c.g014b2b_dir, .seed = c.split_seed});
    // Vocabularies from both files (the whole benchmark; this leaks only the symbol sets).
    std::vector<CmudictEntry> all = bench.split.train;
    all.insert(all.end(), bench.split.valid.begin(), bench.split.valid.end());
    all.insert(all.end(), bench.split.test.begin(), bench.split.test.end());
    vocabs = build_g2p_vocabs(all);
    split = std::move(bench.split);
  } else {
    const Cmudict dict = load_cmudict({.path = c.path});
    SL_CHECK(!dict.entries.empty(), "data.path = ", c.path, ": no dictionary entries");
    // Vocabularies from the whole dictionary (this leaks only the symbol sets), so slicing the
    // training words never changes the ids.
    vocabs = build_g2p_vocabs(dict.entries);
    split = split_by_word(dict.entries, {.seed = c.split_seed});
  }
  TaskData data;
  data.train_words = evenly_spaced(split.train, c.max_train_words);
  data.valid_words = evenly_spaced(split.valid, c.max_eval_words);
  data.test_words = evenly_spaced(split.test, c.max_eval_words);
  if (c.teacher_targets.empty()) {
    data.train = make_g2p_examples(data.train_words, vocabs);
  } else {  // the same words (one entry per word, in order), the teacher's pronunciations
    std::vector<CmudictEntry> held_out = split.valid;
    held_out.insert(held_out.end(), split.test.begin(), split.test.end());
    data.train = make_g2p_examples(
        apply_teacher_targets(data.train_words, split.train, held_out,
                              load_teacher_targets(c.teacher_targets),
                              parse_teacher_mix(c.teacher_mix), vocabs.phones),
        vocabs);
  }
  data.valid = make_g2p_examples(data.valid_words, vocabs);
  data.test = make_g2p_examples(data.test_words, vocabs);
  if (c.right_to_left()) {  // the targets read backwards; the scored words stay as they are
    for (std::vector<Example>* side : {&data.train, &data.valid, &data.test})
      for (Example& e : *side) std::reverse(e.tgt.begin(), e.tgt.end());
  }
  data.src_vocab = vocabs.letters;
  data.tgt_vocab = vocabs.phones;
  return data;
}

TaskData load_kjv_task(const DataConfig& c) {
  const CharLmStreams streams =
      make_kjv_char_streams(load_kjv_books({.program = c.program, .cache_dir = c.cache_dir}));
  TaskData data;
  data.has_source = false;
  data.lm_windows = true;
  data.train = lm_windows(prefix(streams.train, c.max_train_chars), c.context,
                          c.stride > 0 ? c.stride : c.context);
  data.valid = lm_windows(prefix(streams.valid, c.max_eval_chars), c.context, c.context);
  data.test = lm_windows(prefix(streams.test, c.max_eval_chars), c.context, c.context);
  data.tgt_vocab = streams.vocab;
  return data;
}

}  // namespace

TaskKind DataConfig::kind() const {
  if (task == "cmudict") return TaskKind::cmudict;
  if (task == "kjv") return TaskKind::kjv;
  return TaskKind::synthetic;
}

DataConfig parse_data_config(ConfigSection s) {
  DataConfig c;
  c.task = s.get_choice("task", c.task, {"copy", "reverse", "sort", "cmudict", "kjv"});
  switch (c.kind()) {
    case TaskKind::synthetic:
      c.symbols = s.get_int("symbols", c.symbols);
      c.min_len = s.get_int("min_len", c.min_len);
      c.max_len = s.get_int("max_len", c.max_len);
      c.train_size = s.get_int("train_size", c.train_size);
      c.valid_size = s.get_int("valid_size", c.valid_size);
      c.seed = read_seed(s, "seed", 1);
      if (c.symbols < 1) s.fail("symbols", "must be >= 1");
      if (c.min_len < 1) s.fail("min_len", "must be >= 1");
      if (c.max_len < c.min_len) s.fail("max_len", "must be >= data.min_len");
      if (c.train_size < 1) s.fail("train_size", "must be >= 1");
      if (c.valid_size < 1) s.fail("valid_size", "must be >= 1");
      // Bounds far above any use: an absurd size is an error naming its key, not a bad_alloc.
      if (c.symbols > kMaxSymbols) s.fail("symbols", "must be <= " + std::to_string(kMaxSymbols));
      if (c.max_len > kMaxLength) s.fail("max_len", "must be <= " + std::to_string(kMaxLength));
      if (c.train_size > kMaxExamples) s.fail("train_size", "must be <= " + std::to_string(kMaxExamples));
      if (c.valid_size > kMaxExamples) s.fail("valid_size", "must be <= " + std::to_string(kMaxExamples));
      break;
    case TaskKind::cmudict:
      c.split = s.get_choice("split", c.split, {"hash", "g014b2b"});
      if (c.split == "hash") {
        c.path = s.get_string("path", c.path);
        if (c.path.empty()) s.fail("path", "must not be empty");
      } else {
        c.g014b2b_dir = s.get_string("g014b2b_dir", c.g014b2b_dir);
        if (c.g014b2b_dir.empty()) s.fail("g014b2b_dir", "must not be empty");
      }
      c.split_seed = read_seed(s, "split_seed", c.split_seed);
      c.max_train_words = read_limit(s, "max_train_words");
      c.max_eval_words = read_limit(s, "max_eval_words");
      c.phone_order = s.get_choice("phone_order", c.phone_order, {"left_to_right", "right_to_left"});
      c.teacher_targets = s.get_string("teacher_targets", c.teacher_targets);
      c.teacher_mix = s.get_choice("teacher_mix", c.teacher_mix, {"replace", "add"});
      if (c.teacher_targets.empty() && c.teacher_mix != DataConfig{}.teacher_mix)
        s.fail("teacher_mix", "applies only with data.teacher_targets (a file from scalelab distill)");
      break;
    case TaskKind::kjv:
      c.context = s.get_int("context", c.context);
      if (c.context < 1) s.fail("context", "must be >= 1");
      if (c.context > kMaxLength) s.fail("context", "must be <= " + std::to_string(kMaxLength));
      c.stride = s.get_int("stride", c.stride);
      if (c.stride < 0) s.fail("stride", "must be >= 0 (0: the context length)");
      c.program = s.get_string("program", c.program);
      if (c.program.empty()) s.fail("program", "must not be empty");
      c.cache_dir = s.get_string("cache_dir", c.cache_dir);
      c.max_train_chars = read_limit(s, "max_train_chars");
      c.max_eval_chars = read_limit(s, "max_eval_chars");
      break;
  }
  s.finish();
  return c;
}

Json data_config_to_json(const DataConfig& c) {
  switch (c.kind()) {
    case TaskKind::cmudict: {
      Json j = {{"task", c.task}, {"split", c.split}};
      if (c.split == "g014b2b") j["g014b2b_dir"] = c.g014b2b_dir;
      else j["path"] = c.path;
      j["split_seed"] = c.split_seed;
      j["max_train_words"] = c.max_train_words;
      j["max_eval_words"] = c.max_eval_words;
      j["phone_order"] = c.phone_order;
      if (!c.teacher_targets.empty()) {  // absent otherwise: older runs' configs stay as they were
        j["teacher_targets"] = c.teacher_targets;
        j["teacher_mix"] = c.teacher_mix;
      }
      return j;
    }
    case TaskKind::kjv:
      return {{"task", c.task},       {"context", c.context},
              {"stride", c.stride},   {"program", c.program},
              {"cache_dir", c.cache_dir}, {"max_train_chars", c.max_train_chars},
              {"max_eval_chars", c.max_eval_chars}};
    case TaskKind::synthetic:
      break;
  }
  return {{"task", c.task},       {"symbols", c.symbols},       {"min_len", c.min_len},
          {"max_len", c.max_len}, {"train_size", c.train_size}, {"valid_size", c.valid_size},
          {"seed", c.seed}};
}

TaskData load_task(const DataConfig& c) {
  TaskData data = c.kind() == TaskKind::cmudict ? load_cmudict_task(c)
                  : c.kind() == TaskKind::kjv   ? load_kjv_task(c)
                                                : load_synthetic(c);
  // An empty split would train on nothing or report a loss of 0 nats (a perfect score).
  auto why = [&](const char* side) -> std::string {
    switch (c.kind()) {
      case TaskKind::kjv:
        return std::string(side) == "training"
                   ? "data.max_train_chars = " + std::to_string(c.max_train_chars)
                   : "data.max_eval_chars = " + std::to_string(c.max_eval_chars) +
                         ", data.context = " + std::to_string(c.context);
      case TaskKind::cmudict:
        return (c.split == "hash" ? "data.path = " + c.path : "data.g014b2b_dir = " + c.g014b2b_dir) +
               ": too few words for a " + side + " split";
      case TaskKind::synthetic: break;
    }
    return "data.task = " + c.task;
  };
  SL_CHECK(!data.train.empty(), "data: the training split is empty (", why("training"), ")");
  SL_CHECK(!data.valid.empty(), "data: the validation split is empty (", why("validation"), ")");
  return data;
}

DataConfig scoring_data_config(DataConfig config) {
  config.teacher_targets.clear();
  config.teacher_mix = DataConfig{}.teacher_mix;
  return config;
}

std::vector<Example> lm_windows(const std::vector<int32_t>& stream, int64_t context,
                                int64_t stride) {
  SL_CHECK(context >= 1, "lm_windows: context = ", context, ": must be >= 1");
  SL_CHECK(stride >= 1, "lm_windows: stride = ", stride, ": must be >= 1");
  std::vector<Example> out;
  const int64_t n = static_cast<int64_t>(stream.size());
  for (int64_t start = 0; start + 1 < n; start += stride) {
    const int64_t end = std::min(n, start + context + 1);
    out.push_back({{}, std::vector<int32_t>(stream.begin() + start, stream.begin() + end)});
    if (end == n) break;
  }
  return out;
}

BatchLayout batch_layout(const TaskData& data, bool encoder_decoder) {
  if (data.lm_windows) return BatchLayout::lm_window;
  return encoder_decoder ? BatchLayout::seq2seq : BatchLayout::sequence;
}

}  // namespace scalelab
