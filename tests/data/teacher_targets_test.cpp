// data/teacher_targets: a student's training targets from a teacher's pronunciations, the leak
// and coverage checks, and the dictionary writer that `scalelab distill` uses.
#include "scalelab/data/teacher_targets.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "data/fixture_path.hpp"
#include "scalelab/core/error.hpp"
#include "scalelab/data/task.hpp"
#include "support/error_message.hpp"
#include "support/pronunciation.hpp"

namespace scalelab {
namespace {

using test::error_of;
using test::phones_of;

const Vocab kPhones({"AE", "AH", "D", "G", "K", "OW", "T"});

std::vector<CmudictEntry> train_side() {
  return {{"cat", {phones_of("K AE T")}}, {"dog", {phones_of("D AO G"), phones_of("D AA G")}}};
}

TEST(TeacherTargets, ReplaceTrainsOnTheTeachersPronunciationsOnly) {
  const TeacherTargets teacher{"t.dict", {{"cat", {phones_of("K AE T")}}, {"dog", {phones_of("D OW G")}}}};
  const auto out = apply_teacher_targets(train_side(), train_side(), {}, teacher, TeacherMix::replace, kPhones);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].word, "cat");
  EXPECT_EQ(out[0].pronunciations, std::vector<Pronunciation>{phones_of("K AE T")});
  EXPECT_EQ(out[1].pronunciations, std::vector<Pronunciation>{phones_of("D OW G")});
}

TEST(TeacherTargets, AddKeepsTheDictionaryAndAddsOnlyNewPronunciations) {
  const TeacherTargets teacher{"t.dict", {{"cat", {phones_of("K AE T")}}, {"dog", {phones_of("D OW G")}}}};
  const auto out = apply_teacher_targets(train_side(), train_side(), {}, teacher, TeacherMix::add, kPhones);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].pronunciations, std::vector<Pronunciation>{phones_of("K AE T")});  // right: nothing added
  EXPECT_EQ(out[1].pronunciations,
            (std::vector<Pronunciation>{phones_of("D AO G"), phones_of("D AA G"), phones_of("D OW G")}));
}

TEST(TeacherTargets, ATrainedSubsetSkipsTheOtherTrainingWords) {
  const TeacherTargets teacher{"t.dict", {{"cat", {phones_of("K AH T")}}, {"dog", {phones_of("D OW G")}}}};
  const std::vector<CmudictEntry> subset{train_side()[1]};
  const auto out = apply_teacher_targets(subset, train_side(), {}, teacher, TeacherMix::replace, kPhones);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].word, "dog");
  EXPECT_EQ(out[0].pronunciations, std::vector<Pronunciation>{phones_of("D OW G")});
}

TEST(TeacherTargets, AHeldOutWordIsALeakNotATarget) {
  const std::vector<CmudictEntry> held_out{{"cow", {phones_of("K AW")}}};
  const TeacherTargets teacher{"t.dict", {{"cat", {phones_of("K AE T")}}, {"cow", {phones_of("K OW")}},
                                          {"dog", {phones_of("D OW G")}}}};
  const std::string e = error_of([&] {
    apply_teacher_targets(train_side(), train_side(), held_out, teacher, TeacherMix::replace, kPhones);
  });
  EXPECT_NE(e.find("t.dict"), std::string::npos) << e;
  EXPECT_NE(e.find("'cow' is a held-out"), std::string::npos) << e;
}

TEST(TeacherTargets, StrayMissingWordsAndUnknownPhonesAreNamed) {
  const TeacherTargets stray{"t.dict", {{"ant", {phones_of("AE T")}}, {"cat", {phones_of("K AE T")}},
                                        {"dog", {phones_of("D OW G")}}}};
  std::string e = error_of([&] {
    apply_teacher_targets(train_side(), train_side(), {}, stray, TeacherMix::replace, kPhones);
  });
  EXPECT_NE(e.find("'ant' is not a training word"), std::string::npos) << e;
  const TeacherTargets missing{"t.dict", {{"dog", {phones_of("D OW G")}}}};
  e = error_of([&] {
    apply_teacher_targets(train_side(), train_side(), {}, missing, TeacherMix::replace, kPhones);
  });
  EXPECT_NE(e.find("lack the training word 'cat'"), std::string::npos) << e;
  const TeacherTargets unknown{"t.dict", {{"cat", {phones_of("K AE T")}}, {"dog", {phones_of("D UW G")}}}};
  e = error_of([&] {
    apply_teacher_targets(train_side(), train_side(), {}, unknown, TeacherMix::replace, kPhones);
  });
  EXPECT_NE(e.find("'dog' has the phone 'UW'"), std::string::npos) << e;
  EXPECT_NE(error_of([] { parse_teacher_mix("blend"); }).find("replace or add"), std::string::npos);
}

TEST(TeacherTargets, TheWrittenDictionaryParsesBackToTheSameEntries) {
  const std::string text = format_dictionary(train_side(), {"made by a test"});
  EXPECT_EQ(text, "# made by a test\nCAT\tK AE T\nDOG\tD AO G\nDOG\tD AA G\n");
  std::istringstream in(text);
  const Cmudict back = parse_cmudict(in, "written");
  EXPECT_EQ(back.stats.dropped(), 0);
  ASSERT_EQ(back.entries.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(back.entries[i].word, train_side()[i].word);
    EXPECT_EQ(back.entries[i].pronunciations, train_side()[i].pronunciations);
  }
}

TEST(TeacherTargets, AMissingOrEmptyFileIsNamed) {
  EXPECT_NE(error_of([] { load_teacher_targets("/nonexistent/t.dict"); }).find("not found"),
            std::string::npos);
  const std::string path = (std::filesystem::temp_directory_path() / "scalelab_empty_teacher.dict").string();
  std::ofstream(path) << "# only a comment\n";
  EXPECT_NE(error_of([&] { load_teacher_targets(path); }).find("holds no entry"), std::string::npos);
  std::ofstream(path) << "CAT\tK A-E T\n";
  EXPECT_NE(error_of([&] { load_teacher_targets(path); }).find("could not be parsed"), std::string::npos);
  std::filesystem::remove(path);
}

// The data layer end to end on the pocketsphinx fixture: only the training examples change.
TEST(TeacherTargets, TheTaskTrainsOnTheTeacherAndScoresOnTheDictionary) {
  const std::string fixture = testing::data_fixture("cmudict_sample.dict");
  Json j{{"task", "cmudict"}, {"path", fixture}};
  const DataConfig plain_config = parse_data_config(ConfigSection(&j, "data"));
  const TaskData plain = load_task(plain_config);
  // A "teacher" that says every training word backwards: easy to recognise in the examples.
  std::vector<CmudictEntry> taught;
  for (const CmudictEntry& e : plain.train_words) {
    Pronunciation p = e.pronunciations.front();
    std::reverse(p.begin(), p.end());
    taught.push_back({e.word, {p}});
  }
  const std::string path = (std::filesystem::temp_directory_path() / "scalelab_teacher.dict").string();
  std::ofstream(path) << format_dictionary(taught, {"test teacher"});
  j["teacher_targets"] = path;
  const DataConfig config = parse_data_config(ConfigSection(&j, "data"));
  const TaskData d = load_task(config);
  ASSERT_EQ(d.train.size(), taught.size());  // one pronunciation per word now
  for (size_t i = 0; i < taught.size(); ++i)
    EXPECT_EQ(d.train[i].tgt, encode_pronunciation(taught[i].pronunciations[0], d.tgt_vocab));
  for (size_t i = 0; i < d.train_words.size(); ++i)
    EXPECT_EQ(d.train_words[i].pronunciations, plain.train_words[i].pronunciations);
  EXPECT_EQ(d.valid.size(), plain.valid.size());
  EXPECT_EQ(d.test.size(), plain.test.size());
  // The keys travel in the checkpoint's config, and only when set.
  EXPECT_EQ(data_config_to_json(config).at("teacher_targets"), path);
  EXPECT_EQ(data_config_to_json(config).at("teacher_mix"), "replace");
  EXPECT_FALSE(data_config_to_json(plain_config).contains("teacher_targets"));
  EXPECT_TRUE(scoring_data_config(config).teacher_targets.empty());
  // add: the dictionary's examples, then each reversed pronunciation that differs from them.
  j["teacher_mix"] = "add";
  EXPECT_GT(load_task(parse_data_config(ConfigSection(&j, "data"))).train.size(), plain.train.size());
  // A valid word in the teacher's file is refused as a leak.
  taught.push_back(plain.valid_words.front());
  std::sort(taught.begin(), taught.end(),
            [](const CmudictEntry& a, const CmudictEntry& b) { return a.word < b.word; });
  std::ofstream(path) << format_dictionary(taught);
  const std::string leak = error_of([&] { load_task(parse_data_config(ConfigSection(&j, "data"))); });
  EXPECT_NE(leak.find("held-out"), std::string::npos) << leak;
  std::filesystem::remove(path);
  // teacher_mix alone says nothing: an error naming the key it needs.
  Json lone{{"task", "cmudict"}, {"path", fixture}, {"teacher_mix", "add"}};
  const std::string e = error_of([&] { parse_data_config(ConfigSection(&lone, "data")); });
  EXPECT_NE(e.find("data.teacher_mix"), std::string::npos) << e;
  EXPECT_NE(e.find("data.teacher_targets"), std::string::npos) << e;
}

}  // namespace
}  // namespace scalelab
