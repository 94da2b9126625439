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

TEST(EditDistance, RatesOverNothingAreErrors) {
  ErrorRates empty;
  EXPECT_THROW(empty.wer(), Error);
  EXPECT_THROW(empty.per(), Error);
}

}  // namespace
}  // namespace scalelab
