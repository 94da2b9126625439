// data/predictions: the file `scalelab eval --predictions` writes (round trip, every refusal) and
// the agreement of two models that `scalelab agree` prints, each count on both sides.
#include "scalelab/data/predictions.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "scalelab/core/error.hpp"
#include "support/error_message.hpp"
#include "support/pronunciation.hpp"

namespace scalelab {
namespace {

using test::error_of;
using test::phones_of;

// Three words; "read" has two pronunciations.
const std::vector<CmudictEntry> kWords{{"cat", {phones_of("K AE T")}},
                                       {"read", {phones_of("R IY D"), phones_of("R EH D")}},
                                       {"dog", {phones_of("D AO G")}}};

std::vector<WordPrediction> answers(const std::string& cat, const std::string& read, const std::string& dog) {
  return score_predictions(kWords, {phones_of(cat), phones_of(read), phones_of(dog)});
}

TEST(Predictions, ScoringMatchesEveryReferenceAndCountsEditsToTheClosest) {
  const auto rows = answers("K AE T", "R EH D", "D AA G G");
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_TRUE(rows[0].score.correct);
  EXPECT_TRUE(rows[1].score.correct);  // the second pronunciation
  EXPECT_FALSE(rows[2].score.correct);
  EXPECT_EQ(rows[2].score.distance, 2);
  EXPECT_NE(error_of([] { score_predictions(kWords, {phones_of("K AE T")}); }).find("3 words but 1 hypotheses"),
            std::string::npos);
}

TEST(Predictions, TheFileReadsBackToTheSameRows) {
  const auto rows = answers("K AE T", "", "D AA G");  // an empty hypothesis too
  const std::string text = format_predictions(rows, {"scalelab eval --predictions: test split"});
  EXPECT_EQ(text,
            "# scalelab eval --predictions: test split\n"
            "cat\tK AE T\tright\t0\tK AE T\n"
            "read\t\twrong\t3\tR IY D | R EH D\n"
            "dog\tD AA G\twrong\t1\tD AO G\n");
  const auto back = parse_predictions(text, "p.tsv");
  ASSERT_EQ(back.size(), rows.size());
  for (size_t i = 0; i < rows.size(); ++i) {
    EXPECT_EQ(back[i].word, rows[i].word);
    EXPECT_EQ(back[i].hypothesis, rows[i].hypothesis);
    EXPECT_EQ(back[i].references, rows[i].references);
    EXPECT_EQ(back[i].score.correct, rows[i].score.correct);
    EXPECT_EQ(back[i].score.distance, rows[i].score.distance);
  }
}

TEST(Predictions, ALineWhoseColumnsDisagreeIsRefused) {
  const auto parse = [](const std::string& text) { return error_of([&] { parse_predictions(text, "p.tsv"); }); };
  EXPECT_EQ(parse("cat\tK AE T\tright\t0\tK AE T\n"), "(no error)");
  EXPECT_NE(parse("cat\tK AE T\twrong\t0\tK AE T\n").find("line 1: word 'cat' is marked 'wrong' but its hypothesis is right"),
            std::string::npos);
  EXPECT_NE(parse("# c\ncat\tK AE\tright\t1\tK AE T\n").find("line 2: word 'cat' is marked 'right'"),
            std::string::npos);
  EXPECT_NE(parse("cat\tK AE\twrong\t2\tK AE T\n").find("has edits '2' but its hypothesis is 1 edits"),
            std::string::npos);
  EXPECT_NE(parse("cat\tK AE T\tright\t0\n").find("4 tab-separated columns, expected 5"), std::string::npos);
  EXPECT_NE(parse("cat\tK AE T\tright\t0\tK AE T\textra\n").find("6 tab-separated columns"), std::string::npos);
  EXPECT_NE(parse("\tK\twrong\t1\tK AE T\n").find("empty word"), std::string::npos);
  EXPECT_NE(parse("cat\tK AE T\tright\t0\tK AE T | \n").find("empty reference"), std::string::npos);
  EXPECT_NE(parse("cat\tK  AE T\twrong\t1\tK AE T\n").find("hypothesis 'K  AE T' has an empty phone"),
            std::string::npos);
  EXPECT_NE(parse("# only a comment\n").find("'p.tsv': no word"), std::string::npos);
}

TEST(Predictions, ReadingNamesAMissingFileOrADirectory) {
  const auto dir = std::filesystem::temp_directory_path() / "scalelab-predictions-test";
  std::filesystem::create_directories(dir);
  EXPECT_NE(error_of([&] { read_predictions((dir / "none.tsv").string()); }).find("not found"), std::string::npos);
  EXPECT_NE(error_of([&] { read_predictions(dir.string()); }).find("is a directory"), std::string::npos);
  const auto file = dir / "p.tsv";
  std::ofstream(file) << format_predictions(answers("K AE T", "R IY D", "D AO G"));
  EXPECT_EQ(read_predictions(file.string()).size(), 3u);
  std::filesystem::remove_all(dir);
}

TEST(Predictions, AgreementCountsEveryCaseOnce) {
  // cat: both right, same output; read: both right with different pronunciations; dog: both
  // wrong alike.
  const Agreement same = compare_predictions(answers("K AE T", "R IY D", "D AA G"),
                                             answers("K AE T", "R EH D", "D AA G"));
  EXPECT_EQ(same.words, 3);
  EXPECT_EQ(same.same_output, 2);
  EXPECT_EQ(same.both_right, 2);
  EXPECT_EQ(same.both_wrong_same, 1);
  EXPECT_EQ(same.only_first_right + same.only_second_right + same.both_wrong_different, 0);
  EXPECT_DOUBLE_EQ(same.oracle_wer(), 1.0 / 3);
  // cat: only the first right; read: only the second; dog: both wrong, differently.
  const Agreement split = compare_predictions(answers("K AE T", "R AY D", "D AA G"),
                                              answers("K AH T", "R IY D", "D OW G"));
  EXPECT_EQ(split.same_output, 0);
  EXPECT_EQ(split.both_right, 0);
  EXPECT_EQ(split.only_first_right, 1);
  EXPECT_EQ(split.only_second_right, 1);
  EXPECT_EQ(split.both_wrong_same, 0);
  EXPECT_EQ(split.both_wrong_different, 1);
  EXPECT_DOUBLE_EQ(split.first_wer(), 2.0 / 3);
  EXPECT_DOUBLE_EQ(split.second_wer(), 2.0 / 3);
  EXPECT_DOUBLE_EQ(split.oracle_wer(), 1.0 / 3);  // either is right on cat and read
}

TEST(Predictions, AgreementRefusesDifferentWordsOrReferences) {
  const auto full = answers("K AE T", "R IY D", "D AO G");
  const std::vector<WordPrediction> two(full.begin(), full.begin() + 2);
  EXPECT_NE(error_of([&] { compare_predictions(full, two); }).find("hold 3 and 2 words"), std::string::npos);
  auto renamed = full;
  renamed[1].word = "reed";
  EXPECT_NE(error_of([&] { compare_predictions(full, renamed); }).find("differ at word 2: 'read' against 'reed'"),
            std::string::npos);
  auto other_refs = full;
  other_refs[2].references = {phones_of("D AA G")};
  EXPECT_NE(error_of([&] { compare_predictions(full, other_refs); }).find("'dog' different references"),
            std::string::npos);
  EXPECT_NE(error_of([] { Agreement{}.oracle_wer(); }).find("agreement of no words"), std::string::npos);
}

}  // namespace
}  // namespace scalelab
