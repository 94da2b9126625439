#include "scalelab/data/g2p_baseline.hpp"

#include <gtest/gtest.h>

#include <cstdio>

#include "data/fixture_path.hpp"
#include "scalelab/core/error.hpp"
#include "scalelab/data/split.hpp"

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

// The real figures of docs/data.md (about 25 s, so disabled in the suite). Run by hand:
//   ./build/tests/g2p_baseline_test --gtest_also_run_disabled_tests --gtest_filter='*Real*'
TEST(G2pBaseline, DISABLED_RealDictionaryFigures) {
  const Cmudict dict = load_cmudict();
  const G2pSplit split = split_by_word(dict.entries);
  auto pronunciations = [](const std::vector<CmudictEntry>& entries) {
    int64_t n = 0;
    for (const auto& e : entries) n += static_cast<int64_t>(e.pronunciations.size());
    return n;
  };
  std::printf("words train/valid/test: %zu / %zu / %zu; pronunciations: %ld / %ld / %ld\n",
              split.train.size(), split.valid.size(), split.test.size(),
              pronunciations(split.train), pronunciations(split.valid), pronunciations(split.test));
  const G2pBaseline model = G2pBaseline::train(split.train);
  std::printf("unaligned training pronunciations: %ld\n", model.unaligned_pronunciations());
  for (const auto& [name, entries] : {std::pair{"valid", &split.valid}, {"test", &split.test}}) {
    const ErrorRates rates = evaluate_g2p_baseline(model, *entries);
    std::printf("%s: %ld words, %ld wrong, WER %.2f %%; %ld edits / %ld phones, PER %.2f %%\n",
                name, rates.words, rates.wrong_words, 100 * rates.wer(), rates.edits,
                rates.reference_tokens, 100 * rates.per());
    EXPECT_LT(rates.wer(), 0.5);  // a floor, but not a broken one
    EXPECT_LT(rates.per(), 0.15);
  }
}

}  // namespace
}  // namespace scalelab
