#include "scalelab/data/task.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>

#include "data/fixture_path.hpp"
#include "scalelab/core/error.hpp"

namespace scalelab {
namespace {

DataConfig parse(const Json& j) { return parse_data_config(ConfigSection(&j, "data")); }

std::string error_of(const Json& j) {
  try {
    parse(j);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

std::string error_of_load(const DataConfig& c) {
  try {
    load_task(c);
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(Task, SyntheticDefaultsStillWork) {
  const DataConfig c = parse(Json{{"task", "reverse"}, {"train_size", 50}, {"valid_size", 5}});
  const TaskData d = load_task(c);
  ASSERT_EQ(d.train.size(), 50u);
  EXPECT_EQ(d.valid.size(), 5u);
  EXPECT_TRUE(d.has_source);
  EXPECT_FALSE(d.lm_windows);
  const Example& e = d.train[0];
  EXPECT_EQ(e.tgt, std::vector<int32_t>(e.src.rbegin(), e.src.rend()));
}

TEST(Task, OnlyTheChosenTasksKeysAreAllowed) {
  EXPECT_NE(error_of({{"task", "cmudict"}, {"symbols", 10}}).find("data.symbols"), std::string::npos);
  EXPECT_NE(error_of({{"task", "copy"}, {"path", "x"}}).find("data.path"), std::string::npos);
  EXPECT_NE(error_of({{"task", "kjv"}, {"max_train_words", 3}}).find("data.max_train_words"),
            std::string::npos);
  EXPECT_NE(error_of({{"task", "kjv"}, {"context", 0}}).find("data.context"), std::string::npos);
  EXPECT_NE(error_of({{"task", "cmudict"}, {"max_eval_words", -1}}).find("data.max_eval_words"),
            std::string::npos);
  EXPECT_NE(error_of({{"task", "klingon"}}).find("klingon"), std::string::npos);
}

TEST(Task, ConfigRoundTripsThroughJsonWithOnlyItsOwnKeys) {
  const DataConfig c = parse(Json{{"task", "kjv"}, {"context", 64}, {"stride", 32}});
  const Json j = data_config_to_json(c);
  EXPECT_FALSE(j.contains("symbols"));
  EXPECT_FALSE(j.contains("path"));
  const DataConfig back = parse(j);
  EXPECT_EQ(back.context, 64);
  EXPECT_EQ(back.stride, 32);
  const Json g = data_config_to_json(parse(Json{{"task", "cmudict"}, {"max_train_words", 7}}));
  EXPECT_EQ(parse(g).max_train_words, 7);
  EXPECT_EQ(parse(g).path, kCmudictDefaultPath);
}

TEST(Task, CmudictFromAFixtureIsSplitByWordWithReferences) {
  const DataConfig c =
      parse(Json{{"task", "cmudict"}, {"path", testing::data_fixture("cmudict_sample.dict")}});
  const TaskData d = load_task(c);
  EXPECT_TRUE(d.has_source);
  std::set<std::string> seen;
  size_t prons = 0;
  for (const auto* side : {&d.train_words, &d.valid_words, &d.test_words}) {
    for (const auto& e : *side) {
      EXPECT_TRUE(seen.insert(e.word).second) << e.word << " is on two sides";
      prons += e.pronunciations.size();
    }
  }
  EXPECT_EQ(prons, d.train.size() + d.valid.size() + d.test.size());
  // Every example decodes back to a word and one of its pronunciations.
  for (const Example& e : d.train) {
    ASSERT_FALSE(e.src.empty());
    ASSERT_FALSE(e.tgt.empty());
    for (int32_t id : e.tgt) EXPECT_GE(id, kNumSpecialTokens);
  }
}

TEST(Task, RightToLeftPhoneOrderReversesOnlyTheTargets) {
  const Json base = {{"task", "cmudict"}, {"path", testing::data_fixture("cmudict_sample.dict")}};
  Json r2l_json = base;
  r2l_json["phone_order"] = "right_to_left";
  const DataConfig l2r_config = parse(base), r2l_config = parse(r2l_json);
  EXPECT_FALSE(l2r_config.right_to_left());
  EXPECT_TRUE(r2l_config.right_to_left());
  EXPECT_EQ(data_config_to_json(r2l_config).at("phone_order"), "right_to_left");
  EXPECT_TRUE(parse(data_config_to_json(r2l_config)).right_to_left());  // kept in checkpoints
  const TaskData l2r = load_task(l2r_config), r2l = load_task(r2l_config);
  for (auto side : {&TaskData::train, &TaskData::valid, &TaskData::test}) {
    ASSERT_EQ((l2r.*side).size(), (r2l.*side).size());
    for (size_t i = 0; i < (l2r.*side).size(); ++i) {
      const Example &a = (l2r.*side)[i], &b = (r2l.*side)[i];
      EXPECT_EQ(a.src, b.src);
      EXPECT_EQ(a.tgt, std::vector<int32_t>(b.tgt.rbegin(), b.tgt.rend()));
    }
  }
  size_t asymmetric = 0;  // the fixture has pronunciations that read differently backwards
  for (const Example& e : l2r.train) asymmetric += e.tgt != std::vector<int32_t>(e.tgt.rbegin(), e.tgt.rend());
  EXPECT_GT(asymmetric, 0u);
  // The reference pronunciations (what WER/PER are scored against) stay left to right.
  ASSERT_EQ(l2r.test_words.size(), r2l.test_words.size());
  for (size_t i = 0; i < l2r.test_words.size(); ++i)
    EXPECT_EQ(l2r.test_words[i].pronunciations, r2l.test_words[i].pronunciations);
  const std::string bad = error_of(Json{{"task", "cmudict"}, {"phone_order", "backwards"}});
  EXPECT_NE(bad.find("data.phone_order"), std::string::npos) << bad;
  EXPECT_NE(bad.find("right_to_left"), std::string::npos) << bad;
  EXPECT_NE(error_of(Json{{"task", "kjv"}, {"phone_order", "right_to_left"}}).find("data.phone_order"),
            std::string::npos);  // a G2P key only
}

TEST(Task, MissingDictionaryNamesThePackage) {
  const DataConfig c = parse(Json{{"task", "cmudict"}, {"path", "/nonexistent/cmudict.dict"}});
  try {
    load_task(c);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("pocketsphinx-en-us"), std::string::npos) << e.what();
  }
}

TEST(Task, ADictionaryPathThatIsADirectoryIsNamedAsSuch) {
  const DataConfig c = parse(Json{{"task", "cmudict"}, {"path", std::filesystem::temp_directory_path().string()}});
  const std::string message = error_of_load(c);
  EXPECT_NE(message.find("is a directory"), std::string::npos) << message;
  EXPECT_EQ(message.find("not found"), std::string::npos) << message;
}

TEST(Task, AnEmptySplitIsAnErrorNotAPerfectScore) {
  // Both words hash to the training side: the validation split is empty (it used to report a
  // valid loss of 0 nats).
  const auto path = std::filesystem::temp_directory_path() / ("scalelab-two-words-" + std::to_string(::getpid()) + ".dict");
  std::ofstream(path) << "cat K AE1 T\ndog D AO1 G\n";
  const std::string message = error_of_load(parse(Json{{"task", "cmudict"}, {"path", path.string()}}));
  std::filesystem::remove(path);
  EXPECT_EQ(message, "data: the validation split is empty (data.path = " + path.string() +
                         ": too few words for a validation split)");
}

TEST(Task, AnEmptyKjvValidationSplitNamesItsKeys) {
  if (std::system("command -v bible > /dev/null 2>&1") != 0)
    GTEST_SKIP() << "the bible program (bible-kjv) is not installed";
  const std::string message = error_of_load(
      parse(Json{{"task", "kjv"}, {"context", 32}, {"max_train_chars", 1000}, {"max_eval_chars", 1}}));
  EXPECT_NE(message.find("data: the validation split is empty (data.max_eval_chars = 1, data.context = 32)"),
            std::string::npos) << message;
}

TEST(Task, MissingBibleProgramNamesThePackages) {
  const DataConfig c = parse(Json{{"task", "kjv"}, {"program", "/nonexistent/bible"}});
  try {
    load_task(c);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("bible-kjv"), std::string::npos) << e.what();
  }
}

TEST(Task, LmWindowsCoverTheStreamAndPredictEachTokenOnce) {
  std::vector<int32_t> stream(10);
  for (int i = 0; i < 10; ++i) stream[i] = 4 + i;
  const auto w = lm_windows(stream, 4, 4);  // [0..4], [4..8], [8..9]
  ASSERT_EQ(w.size(), 3u);
  EXPECT_EQ(w[0].tgt, (std::vector<int32_t>{4, 5, 6, 7, 8}));
  EXPECT_EQ(w[1].tgt, (std::vector<int32_t>{8, 9, 10, 11, 12}));
  EXPECT_EQ(w[2].tgt, (std::vector<int32_t>{12, 13}));
  size_t predicted = 0;
  for (const auto& e : w) predicted += e.tgt.size() - 1;
  EXPECT_EQ(predicted, stream.size() - 1);
  EXPECT_EQ(lm_windows(stream, 4, 2).size(), 4u);  // overlapping: starts 0, 2, 4, 6 (the last ends the stream)
  EXPECT_EQ(lm_windows(stream, 20, 20).size(), 1u);
  EXPECT_TRUE(lm_windows({5}, 4, 4).empty());
}

TEST(Task, RealCmudictSliceIsDeterministicAndLeakFree) {
  if (!std::filesystem::exists(kCmudictDefaultPath)) GTEST_SKIP() << "pocketsphinx-en-us missing";
  const DataConfig c = parse(Json{{"task", "cmudict"}, {"max_train_words", 300},
                                  {"max_eval_words", 50}});
  const TaskData a = load_task(c), b = load_task(c);
  ASSERT_EQ(a.train_words.size(), 300u);
  ASSERT_EQ(a.valid_words.size(), 50u);
  ASSERT_EQ(a.test_words.size(), 50u);
  EXPECT_EQ(a.src_vocab.size(), 33);  // docs/data.md: 29 letters + 4 specials
  EXPECT_EQ(a.tgt_vocab.size(), 43);  // 39 phones + 4 specials
  std::set<std::string> train;
  for (size_t i = 0; i < a.train_words.size(); ++i) {
    EXPECT_EQ(a.train_words[i].word, b.train_words[i].word);
    train.insert(a.train_words[i].word);
  }
  for (const auto* side : {&a.valid_words, &a.test_words})
    for (const auto& e : *side) EXPECT_EQ(train.count(e.word), 0u) << e.word;
  // The evenly spaced slice spans the alphabet, not just the words starting with 'a'.
  EXPECT_NE(a.train_words.front().word[0], a.train_words.back().word[0]);
}

TEST(Task, RealKjvSliceGivesWindows) {
  if (std::system("command -v bible > /dev/null 2>&1") != 0)
    GTEST_SKIP() << "the bible program (bible-kjv) is not installed";
  const DataConfig c = parse(Json{{"task", "kjv"}, {"context", 32}, {"stride", 16},
                                  {"max_train_chars", 1000}, {"max_eval_chars", 330}});
  const TaskData d = load_task(c);
  EXPECT_FALSE(d.has_source);
  EXPECT_TRUE(d.lm_windows);
  EXPECT_EQ(d.tgt_vocab.size(), 67);  // 63 symbols + 4 specials
  EXPECT_EQ(d.valid.size(), 11u);      // 329 predicted characters in windows of 32 (last: 9)
  for (const auto& w : d.train) EXPECT_LE(w.tgt.size(), 33u);
  EXPECT_EQ(batch_layout(d, false), BatchLayout::lm_window);
}

}  // namespace
}  // namespace scalelab
