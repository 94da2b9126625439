#include "scalelab/data/edit_distance.hpp"

#include <gtest/gtest.h>

#include <string>

namespace scalelab {
namespace {

std::vector<char> chars(const std::string& s) { return {s.begin(), s.end()}; }
using Phones = std::vector<std::string>;

TEST(EditDistance, HandComputedExamples) {
  EXPECT_EQ(edit_distance(chars("kitten"), chars("sitting")), 3);  // k->s, e->i, +g
  EXPECT_EQ(edit_distance(chars("flaw"), chars("lawn")), 2);       // -f, +n
  EXPECT_EQ(edit_distance(chars(""), chars("abc")), 3);
  EXPECT_EQ(edit_distance(chars("abc"), chars("")), 3);
  EXPECT_EQ(edit_distance(chars("abc"), chars("abc")), 0);
  EXPECT_EQ(edit_distance(Phones{"R", "IY", "D"}, Phones{"R", "EH", "D"}), 1);
  EXPECT_EQ(edit_distance(Phones{"K", "AE", "T"}, Phones{"T", "AE", "K"}), 2);
}

TEST(EditDistance, ScoreWordPicksTheClosestReferenceAndTheFirstOnATie) {
  const std::vector<Phones> refs = {{"K", "AE", "T", "S"}, {"K", "AH", "T"}};
  const WordScore tie = score_word(Phones{"K", "AE", "T"}, refs);  // distance 1 to both
  EXPECT_EQ(tie.distance, 1);
  EXPECT_EQ(tie.reference_length, 4);
  EXPECT_FALSE(tie.correct);

  const WordScore exact = score_word(Phones{"K", "AH", "T"}, refs);
  EXPECT_EQ(exact.distance, 0);
  EXPECT_EQ(exact.reference_length, 3);
  EXPECT_TRUE(exact.correct);

  EXPECT_THROW(score_word(Phones{"K"}, std::vector<Phones>{}), Error);
}

TEST(EditDistance, WerAndPerOverThreeWords) {
  ErrorRates rates;
  // word 1: matches its second reference -> right, 0 edits, reference length 2.
  rates.add(score_word(Phones{"R", "EH"}, std::vector<Phones>{{"R", "IY"}, {"R", "EH"}}));
  // word 2: one substitution against a 3-phone reference.
  rates.add(score_word(Phones{"K", "AE", "T"}, std::vector<Phones>{{"K", "AH", "T"}}));
  // word 3: empty hypothesis against a 4-phone reference -> 4 edits.
  rates.add(score_word(Phones{}, std::vector<Phones>{{"S", "T", "AA", "P"}}));
  EXPECT_EQ(rates.words, 3);
  EXPECT_EQ(rates.wrong_words, 2);
  EXPECT_EQ(rates.edits, 5);
  EXPECT_EQ(rates.reference_tokens, 9);
  EXPECT_DOUBLE_EQ(rates.wer(), 2.0 / 3.0);
  EXPECT_DOUBLE_EQ(rates.per(), 5.0 / 9.0);
}

// Hand-made words with several pronunciations (as CMUdict's "(2)", "(3)" variants): a word is
// right if the hypothesis equals ANY variant, and its PER counts the edits to the closest variant
// over that variant's length, whichever position the variant has.
TEST(EditDistance, MultiVariantWordsScoreAgainstTheClosestVariant) {
  // "either": IY DH ER | AY DH ER; "tomato": T AH M EY T OW | T AH M AA T OW | T OW M EY T OW.
  const std::vector<Phones> either = {{"IY", "DH", "ER"}, {"AY", "DH", "ER"}};
  const std::vector<Phones> tomato = {
      {"T", "AH", "M", "EY", "T", "OW"}, {"T", "AH", "M", "AA", "T", "OW"}, {"T", "OW", "M", "EY", "T", "OW"}};
  // "lives": L IH V Z | L AY V Z, here with a shorter first variant L IH V.
  const std::vector<Phones> live = {{"L", "IH", "V"}, {"L", "AY", "V", "Z"}};
  const WordScore second = score_word(Phones{"AY", "DH", "ER"}, either);  // the second variant
  EXPECT_TRUE(second.correct);
  EXPECT_EQ(second.distance, 0);
  const WordScore third = score_word(Phones{"T", "OW", "M", "EY", "T", "OW"}, tomato);
  EXPECT_TRUE(third.correct);
  // L AY V is 1 edit from both variants (IH -> AY; + Z): the tie goes to the first, length 3.
  const WordScore longer = score_word(Phones{"L", "AY", "V"}, live);
  EXPECT_FALSE(longer.correct);
  EXPECT_EQ(longer.distance, 1);
  EXPECT_EQ(longer.reference_length, 3);
  // L AY V Z Z is 1 edit from the second variant and 3 from the first: the second, length 4.
  const WordScore far = score_word(Phones{"L", "AY", "V", "Z", "Z"}, live);
  EXPECT_EQ(far.distance, 1);
  EXPECT_EQ(far.reference_length, 4);
  ErrorRates rates;
  for (const WordScore& w : {second, third, longer, far}) rates.add(w);
  EXPECT_EQ(rates.words, 4);
  EXPECT_EQ(rates.wrong_words, 2);
  EXPECT_EQ(rates.edits, 2);
  EXPECT_EQ(rates.reference_tokens, 3 + 6 + 3 + 4);
  EXPECT_DOUBLE_EQ(rates.wer(), 0.5);
  EXPECT_DOUBLE_EQ(rates.per(), 2.0 / 16.0);
}

TEST(EditDistance, RatesOverNothingAreErrors) {
  ErrorRates empty;
  EXPECT_THROW(empty.wer(), Error);
  EXPECT_THROW(empty.per(), Error);
}

}  // namespace
}  // namespace scalelab
