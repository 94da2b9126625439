#include "scalelab/data/cmudict.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>

#include "data/fixture_path.hpp"
#include "scalelab/core/error.hpp"

namespace scalelab {
namespace {

const CmudictEntry* find_word(const Cmudict& dict, const std::string& word) {
  auto it = std::lower_bound(dict.entries.begin(), dict.entries.end(), word,
                             [](const CmudictEntry& e, const std::string& w) { return e.word < w; });
  return it != dict.entries.end() && it->word == word ? &*it : nullptr;
}

Cmudict load_fixture() {
  return load_cmudict({testing::data_fixture("cmudict_sample.dict")});
}

TEST(Cmudict, FixtureKeepsTheGoodEntriesSortedAndGroupsAlternatives) {
  const Cmudict dict = load_fixture();
  std::vector<std::string> words;
  for (const auto& e : dict.entries) words.push_back(e.word);
  EXPECT_EQ(words, (std::vector<std::string>{"'bout", "'em", "a", "a.d.", "cat", "cats", "read",
                                              "ready", "tomato", "x-ray"}));
  const auto* read = find_word(dict, "read");
  ASSERT_NE(read, nullptr);
  EXPECT_EQ(read->pronunciations,
            (std::vector<Pronunciation>{{"R", "IY", "D"}, {"R", "EH", "D"}}));
  // An alternative listed before its main entry is still grouped, in file order.
  const auto* tomato = find_word(dict, "tomato");
  ASSERT_NE(tomato, nullptr);
  EXPECT_EQ(tomato->pronunciations, (std::vector<Pronunciation>{{"T", "AH", "M", "AA", "T", "OW"},
                                                                {"T", "AH", "M", "EY", "T", "OW"}}));
  // Upper case is lowered, stress digits and the trailing comment are removed.
  const auto* ready = find_word(dict, "ready");
  ASSERT_NE(ready, nullptr);
  EXPECT_EQ(ready->pronunciations, (std::vector<Pronunciation>{{"R", "EH", "D", "IY"}}));
}

TEST(Cmudict, FixtureCountsEveryDroppedLine) {
  const CmudictStats s = load_fixture().stats;
  EXPECT_EQ(s.lines, 21);
  EXPECT_EQ(s.blank_or_comment_lines, 2);
  EXPECT_EQ(s.dropped_bad_word, 3);   // m1, cat-2, a non-ASCII word
  EXPECT_EQ(s.dropped_no_phones, 1);  // lonely
  EXPECT_EQ(s.dropped_bad_phone, 1);  // weird ... $D
  EXPECT_EQ(s.duplicates_merged, 1);  // read(3) repeats read
  EXPECT_EQ(s.words, 10);
  EXPECT_EQ(s.pronunciations, 13);
  EXPECT_EQ(s.dropped(), 5);
  ASSERT_EQ(s.dropped_examples.size(), 5u);
  EXPECT_EQ(s.dropped_examples[0], "m1 EH M W AH N");
  // Every line is accounted for: kept, merged, dropped or blank.
  EXPECT_EQ(s.pronunciations + s.duplicates_merged + s.dropped() + s.blank_or_comment_lines, s.lines);
}

TEST(Cmudict, VocabsAreSortedAndExamplesEncodeEveryPronunciation) {
  const Cmudict dict = load_fixture();
  const G2pVocabs vocabs = build_g2p_vocabs(dict.entries);
  EXPECT_EQ(vocabs.letters.size(), kNumSpecialTokens + 16);
  EXPECT_EQ(vocabs.phones.size(), kNumSpecialTokens + 15);
  EXPECT_EQ(vocabs.letters.token(kNumSpecialTokens), "'");  // the smallest byte comes first
  EXPECT_EQ(vocabs.phones.token(kNumSpecialTokens), "AA");
  EXPECT_TRUE(std::is_sorted(vocabs.letters.tokens().begin() + kNumSpecialTokens,
                             vocabs.letters.tokens().end()));

  const auto examples = make_g2p_examples(dict.entries, vocabs);
  ASSERT_EQ(examples.size(), 13u);
  // "cat" is entry 4 and has one pronunciation; the examples before it come from 5 pronunciations.
  const Example& cat = examples[5];
  EXPECT_EQ(cat.src, encode_word("cat", vocabs.letters));
  ASSERT_EQ(cat.src.size(), 3u);
  EXPECT_EQ(vocabs.letters.token(cat.src[0]), "c");
  ASSERT_EQ(cat.tgt.size(), 3u);
  EXPECT_EQ(vocabs.phones.token(cat.tgt[1]), "AE");
  EXPECT_EQ(encode_word("q", vocabs.letters), std::vector<int32_t>{kUnkId});
}

TEST(Cmudict, MissingFileErrorNamesTheDebianPackage) {
  try {
    load_cmudict({"/nonexistent/cmudict-en-us.dict"});
    FAIL() << "expected scalelab::Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("pocketsphinx-en-us"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("/nonexistent/cmudict-en-us.dict"), std::string::npos);
  }
}

TEST(Cmudict, ParsesWindowsLineEndingsAndAlternativeMarkersOnly) {
  std::istringstream in("go G OW\r\ngo(2) G AH\r\nf(x) EH F\n");
  const Cmudict dict = parse_cmudict(in, "inline");
  ASSERT_EQ(dict.entries.size(), 1u);  // "f(x)" is not an alternative marker: bad characters
  EXPECT_EQ(dict.entries[0].pronunciations.size(), 2u);
  EXPECT_EQ(dict.entries[0].pronunciations[1], (Pronunciation{"G", "AH"}));
  EXPECT_EQ(dict.stats.dropped_bad_word, 1);
}

TEST(Cmudict, RealDictionaryFromPocketsphinx) {
  const Cmudict dict = load_cmudict();
  const CmudictStats& s = dict.stats;
  // Figures of Debian's pocketsphinx-en-us 5prealpha (see docs/data.md); ranges allow updates.
  EXPECT_GT(s.lines, 130000);
  EXPECT_GT(s.words, 120000);
  EXPECT_LT(s.dropped(), 100);
  EXPECT_EQ(s.pronunciations + s.duplicates_merged + s.dropped() + s.blank_or_comment_lines, s.lines);
  ASSERT_NE(find_word(dict, "'bout"), nullptr);
  ASSERT_NE(find_word(dict, "a.d."), nullptr);
  EXPECT_EQ(find_word(dict, "m1"), nullptr);
  ASSERT_NE(find_word(dict, "read"), nullptr);
  EXPECT_GE(find_word(dict, "read")->pronunciations.size(), 2u);
  const G2pVocabs vocabs = build_g2p_vocabs(dict.entries);
  EXPECT_EQ(vocabs.phones.size(), kNumSpecialTokens + 39);   // the stress-free ARPAbet set
  EXPECT_EQ(vocabs.letters.size(), kNumSpecialTokens + 29);  // a-z ' - .
}

}  // namespace
}  // namespace scalelab
