#include "scalelab/data/split.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "scalelab/core/error.hpp"

namespace scalelab {
namespace {

std::vector<std::string> words_of(const std::vector<CmudictEntry>& entries) {
  std::vector<std::string> words;
  for (const auto& e : entries) words.push_back(e.word);
  return words;
}

TEST(Split, SideDependsOnlyOnTheWordAndTheSeed) {
  EXPECT_EQ(side_of_word("tomato"), side_of_word("tomato"));
  // Over many words, another seed moves some of them: the seed really enters the hash.
  SplitOptions other;
  other.seed = 7;
  int moved = 0;
  for (int i = 0; i < 1000; ++i) {
    const std::string word = "w" + std::to_string(i);
    moved += side_of_word(word) != side_of_word(word, other);
  }
  EXPECT_GT(moved, 50);
}

TEST(Split, AddingOrReorderingEntriesNeverMovesAWord) {
  std::vector<CmudictEntry> entries;
  for (int i = 0; i < 2000; ++i) entries.push_back({"word" + std::to_string(i), {{"W"}}});
  const G2pSplit before = split_by_word(entries);

  std::vector<CmudictEntry> changed(entries.rbegin(), entries.rend());
  for (int i = 0; i < 500; ++i) changed.push_back({"extra" + std::to_string(i), {{"X"}}});
  const G2pSplit after = split_by_word(changed);

  auto as_set = [](const std::vector<CmudictEntry>& e) {
    const auto w = words_of(e);
    return std::set<std::string>(w.begin(), w.end());
  };
  for (const auto& [old_side, new_side] :
       {std::pair{&before.train, &after.train}, {&before.valid, &after.valid},
        {&before.test, &after.test}}) {
    const auto old_words = as_set(*old_side);
    const auto new_words = as_set(*new_side);
    EXPECT_TRUE(std::includes(new_words.begin(), new_words.end(), old_words.begin(),
                              old_words.end()));
  }
}

TEST(Split, RejectsImpossibleFractions) {
  SplitOptions bad;
  bad.valid_fraction = 0.6;
  bad.test_fraction = 0.6;
  EXPECT_THROW(side_of_word("a", bad), Error);
  bad.valid_fraction = -0.1;
  bad.test_fraction = 0.1;
  EXPECT_THROW(split_by_word({}, bad), Error);
}

TEST(Split, RealDictionaryIsNinetyFiveFiveAndLeakFree) {
  const Cmudict dict = load_cmudict();
  const G2pSplit split = split_by_word(dict.entries);
  const double n = static_cast<double>(dict.entries.size());
  EXPECT_EQ(split.train.size() + split.valid.size() + split.test.size(), dict.entries.size());
  EXPECT_NEAR(split.train.size() / n, 0.90, 0.01);
  EXPECT_NEAR(split.valid.size() / n, 0.05, 0.005);
  EXPECT_NEAR(split.test.size() / n, 0.05, 0.005);

  // No word on two sides (words are unique in the dictionary, so a leak would be a repeat here).
  std::set<std::string> seen;
  for (const auto* side : {&split.train, &split.valid, &split.test})
    for (const auto& e : *side) EXPECT_TRUE(seen.insert(e.word).second) << e.word;

  // All pronunciations of a word travel together.
  size_t pronunciations = 0;
  for (const auto* side : {&split.train, &split.valid, &split.test})
    for (const auto& e : *side) pronunciations += e.pronunciations.size();
  EXPECT_EQ(static_cast<int64_t>(pronunciations), dict.stats.pronunciations);

  // Deterministic: a second split is identical.
  EXPECT_EQ(words_of(split_by_word(dict.entries).test), words_of(split.test));
}

}  // namespace
}  // namespace scalelab
