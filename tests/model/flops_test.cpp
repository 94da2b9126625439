// model/flops: step_flops against counts done by hand for two tiny models, and its refusals.
#include "scalelab/model/flops.hpp"

#include <gtest/gtest.h>

#include "scalelab/core/error.hpp"
#include "support/model_config.hpp"

namespace scalelab {
namespace {

ModelConfig tiny(Architecture arch) {
  return testing::sized_model({.arch = arch, .src_vocab = 10, .tgt_vocab = 10, .d_model = 4,
                               .n_heads = 2, .d_ff = 8, .encoder_layers = 1, .decoder_layers = 1});
}

TEST(StepFlops, DecoderOnlyByHand) {
  // 6 target rows: q, k, v, o 4 · 2·6·4·4 = 768; FFN 2·6·4·8 · 2 = 768; output 2·6·4·10 = 480.
  // Causal attention: 4 · batch 2 · 3 · 3 · d 4 / 2 = 144.
  const StepFlops f = step_flops(tiny(Architecture::decoder_only), {.batch = 2, .src_len = 0, .tgt_len = 3});
  EXPECT_DOUBLE_EQ(f.linear_forward, 2016);
  EXPECT_DOUBLE_EQ(f.attention_forward, 144);
  EXPECT_DOUBLE_EQ(f.training(), 3 * 2016 + 3.5 * 144);
  // The 2 · tokens · (matrix parameters) rule gives the same linear count: 4d² + 2·d·ff + d·V = 168.
  EXPECT_DOUBLE_EQ(f.linear_forward, 2.0 * 6 * (4 * 16 + 2 * 4 * 8 + 4 * 10));
}

TEST(StepFlops, EncoderDecoderByHand) {
  // Encoder, 10 rows: 4 · 2·10·16 = 1280 + FFN 1280; attention 4·2·5·5·4 = 800.
  // Decoder, 6 rows: self 768 + FFN 768 + cross q, o 384 and k, v on the 10 memory rows 640;
  // output 480; attention causal 144 + cross 4·2·3·5·4 = 480.
  const StepFlops f = step_flops(tiny(Architecture::encoder_decoder), {.batch = 2, .src_len = 5, .tgt_len = 3});
  EXPECT_DOUBLE_EQ(f.linear_forward, 2560 + 2560 + 480);
  EXPECT_DOUBLE_EQ(f.attention_forward, 800 + 144 + 480);
  EXPECT_DOUBLE_EQ(f.forward(), 5600 + 1424);
}

TEST(StepFlops, RefusesShapesThatDoNotFitTheArchitecture) {
  EXPECT_THROW(step_flops(tiny(Architecture::decoder_only), {.batch = 2, .src_len = 5, .tgt_len = 3}), Error);
  EXPECT_THROW(step_flops(tiny(Architecture::encoder_decoder), {.batch = 2, .src_len = 0, .tgt_len = 3}), Error);
  EXPECT_THROW(step_flops(tiny(Architecture::decoder_only), {.batch = 0, .src_len = 0, .tgt_len = 3}), Error);
}

}  // namespace
}  // namespace scalelab
