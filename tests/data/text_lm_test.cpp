#include "scalelab/data/text_lm.hpp"

#include <gtest/gtest.h>

namespace scalelab {
namespace {

TEST(TextLm, CharVocabIsSortedByByteAfterTheSpecials) {
  const Vocab vocab = build_char_vocab({"ba\n", "ab c"});
  ASSERT_EQ(vocab.size(), kNumSpecialTokens + 5);
  EXPECT_EQ(vocab.token(kNumSpecialTokens + 0), "\n");
  EXPECT_EQ(vocab.token(kNumSpecialTokens + 1), " ");
  EXPECT_EQ(vocab.token(kNumSpecialTokens + 2), "a");
  EXPECT_EQ(vocab.token(kNumSpecialTokens + 4), "c");
  // The order of the texts does not matter.
  EXPECT_EQ(build_char_vocab({"ab c", "ba\n"}).tokens(), vocab.tokens());
}

TEST(TextLm, EncodeDecodeRoundTripAndUnknownBytes) {
  const Vocab vocab = build_char_vocab({"abc"});
  const auto ids = encode_chars("cab", vocab);
  EXPECT_EQ(ids, (std::vector<int32_t>{kNumSpecialTokens + 2, kNumSpecialTokens,
                                       kNumSpecialTokens + 1}));
  EXPECT_EQ(decode_chars(ids, vocab), "cab");
  EXPECT_EQ(encode_chars("az", vocab), (std::vector<int32_t>{kNumSpecialTokens, kUnkId}));
}

}  // namespace
}  // namespace scalelab
