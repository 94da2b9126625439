#include "scalelab/data/g2p_baseline.hpp"

#include <gtest/gtest.h>

#include "data/fixture_path.hpp"
#include "scalelab/core/error.hpp"

namespace scalelab {
namespace {

G2pBaseline train_on_fixture() {
  return G2pBaseline::train(load_cmudict({testing::data_fixture("g2p_train.dict")}).entries);
}

TEST(G2pBaseline, ReproducesItsTrainingWords) {
  const G2pBaseline model = train_on_fixture();
  EXPECT_EQ(model.predict("cat"), (Pronunciation{"K", "AE", "T"}));
  EXPECT_EQ(model.predict("box"), (Pronunciation{"B", "AA", "K", "S"}));
  EXPECT_EQ(model.predict("lake"), (Pronunciation{"L", "EY", "K"}));
}

TEST(G2pBaseline, GeneralisesLetterPatternsToNewWords) {
  const G2pBaseline model = train_on_fixture();
  EXPECT_EQ(model.predict("dat"), (Pronunciation{"D", "AE", "T"}));
  EXPECT_EQ(model.predict("bax"), (Pronunciation{"B", "AE", "K", "S"}));  // x -> two phones
  EXPECT_EQ(model.predict("take"), (Pronunciation{"T", "EY", "K"}));      // silent e
  EXPECT_EQ(model.predict("q"), Pronunciation{});  // an unseen letter gives no phone
}

TEST(G2pBaseline, SkipsPronunciationsThatCannotBeAlignedAndScoresWithErrorRates) {
  const G2pBaseline model = train_on_fixture();
  EXPECT_EQ(model.unaligned_pronunciations(), 1);  // w -> 7 phones for 1 letter
  const std::vector<CmudictEntry> test = {{"dat", {{"D", "AE", "T"}}},
                                          {"dox", {{"D", "OW", "K", "S"}, {"D", "AH", "K", "S"}}}};
  const ErrorRates rates = evaluate_g2p_baseline(model, test);
  // "dox" comes out as D AA K S: one substitution against either 4-phone reference.
  EXPECT_EQ(model.predict("dox"), (Pronunciation{"D", "AA", "K", "S"}));
  EXPECT_EQ(rates.wrong_words, 1);
  EXPECT_DOUBLE_EQ(rates.wer(), 0.5);
  EXPECT_DOUBLE_EQ(rates.per(), 1.0 / 7.0);
}

TEST(G2pBaseline, RejectsBadOptions) {
  G2pBaselineOptions options;
  options.context = -1;
  EXPECT_THROW(G2pBaseline::train({{"a", {{"AH"}}}}, options), Error);
  EXPECT_THROW(G2pBaseline::train({}), Error);
}

}  // namespace
}  // namespace scalelab
