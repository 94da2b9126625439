// Greedy, beam search and sampling never emit <pad>, <bos> or <unk>, even when those would win.
#include <gtest/gtest.h>

#include <algorithm>

#include "scalelab/data/batch.hpp"
#include "scalelab/data/example.hpp"
#include "scalelab/train/beam.hpp"
#include "scalelab/train/decode.hpp"
#include "scalelab/train/sampling.hpp"
#include "support/model_config.hpp"

namespace scalelab {
namespace {

constexpr int64_t kVocab = 8;

ModelConfig tiny(Architecture arch) {
  const bool enc_dec = arch == Architecture::encoder_decoder;
  ModelConfig m = testing::sized_model({.arch = arch, .src_vocab = enc_dec ? kVocab : 0,
                                       .tgt_vocab = kVocab, .d_model = 16, .n_heads = 2,
                                       .d_ff = 32, .encoder_layers = enc_dec ? 1 : 0,
                                       .decoder_layers = 1, .max_len = 12});
  m.norm = NormPlacement::pre;  // a final norm: its gain 0 and bias 1 make every h the ones vector
  m.tie_output = false;
  return m;
}

// Every position's logits become row_value[v] · d_model: the given order, whatever the input.
void bias_logits(Transformer<float>& model, const std::vector<float>& row_value) {
  Parameter<float>* gain = model.find_parameter("decoder.final_norm.weight");
  Parameter<float>* bias = model.find_parameter("decoder.final_norm.bias");
  Parameter<float>* out = model.find_parameter("decoder.out.weight");
  ASSERT_TRUE(gain && bias && out);
  gain->value.fill(0.0f);
  bias->value.fill(1.0f);
  const int64_t d = model.config().d_model;
  for (int64_t v = 0; v < kVocab; ++v)
    std::fill(out->value.data() + v * d, out->value.data() + (v + 1) * d, row_value[v]);
}

bool holds_masked(const std::vector<int32_t>& tokens) {
  return std::any_of(tokens.begin(), tokens.end(),
                     [](int32_t t) { return t == kPadId || t == kBosId || t == kUnkId; });
}

Batch source_batch() {
  std::vector<Example> examples = {{{4, 5, 6}, {4}}, {{7, 4}, {5}}, {{5, 5, 6, 7}, {6, 7}}};
  return batches_in_order(examples, 8, BatchLayout::seq2seq).front();
}

TEST(DecodeMask, EmittableIdsAndArgmax) {
  EXPECT_FALSE(emittable_token(kPadId));
  EXPECT_FALSE(emittable_token(kBosId));
  EXPECT_FALSE(emittable_token(kUnkId));
  EXPECT_TRUE(emittable_token(kEosId));
  EXPECT_TRUE(emittable_token(4));
  const float z[] = {9, 8, 1, 9, 2, 3, 3, 0};
  EXPECT_EQ(argmax_emittable(z, 8), 5);  // the first of the tied allowed maxima, as max_element
  const float eos_wins[] = {9, 9, 5, 9, 2};
  EXPECT_EQ(argmax_emittable(eos_wins, 5), kEosId);
  const float only_specials[] = {1, 2};
  EXPECT_THROW(argmax_emittable(only_specials, 2), Error);
}

// <unk> > <pad> > <bos> > phone 4 > <eos> > the rest: unmasked, every step would emit <unk>.
const std::vector<float> kSpecialsWin = {0.9f, 0.8f, 0.3f, 1.0f, 0.5f, 0.1f, 0.0f, 0.2f};
// Same, but <eos> is the best allowed token: the outputs are empty.
const std::vector<float> kEosNext = {0.9f, 0.8f, 0.6f, 1.0f, 0.5f, 0.1f, 0.0f, 0.2f};

TEST(DecodeMask, GreedyNeverEmitsPadBosUnk) {
  Transformer<float> model(tiny(Architecture::encoder_decoder));
  const Batch batch = source_batch();
  // Untrained (random) weights first.
  for (const auto& out : greedy_decode(model, batch, 10)) EXPECT_FALSE(holds_masked(out));
  bias_logits(model, kSpecialsWin);
  for (const auto& out : greedy_decode(model, batch, 6))
    EXPECT_EQ(out, std::vector<int32_t>(6, 4));  // phone 4 until max_len
  bias_logits(model, kEosNext);
  for (const auto& out : greedy_decode(model, batch, 6)) EXPECT_TRUE(out.empty());
}

TEST(DecodeMask, BeamNeverEmitsPadBosUnk) {
  Transformer<float> model(tiny(Architecture::encoder_decoder));
  const Batch batch = source_batch();
  for (int64_t beam : {1, 3, 8})
    for (const auto& out : beam_decode(model, batch, {.beam = beam, .max_len = 10}))
      EXPECT_FALSE(holds_masked(out)) << "beam " << beam;
  bias_logits(model, kSpecialsWin);
  for (int64_t beam : {1, 2, 5, 8}) {
    const auto outs = beam_decode(model, batch, {.beam = beam, .length_penalty = 0.0, .max_len = 6});
    for (const auto& out : outs) EXPECT_FALSE(holds_masked(out)) << "beam " << beam;
    if (beam == 1) EXPECT_EQ(outs, greedy_decode(model, batch, 6));
  }
  bias_logits(model, kEosNext);
  for (int64_t beam : {1, 4})
    for (const auto& out : beam_decode(model, batch, {.beam = beam, .max_len = 6}))
      EXPECT_TRUE(out.empty()) << "beam " << beam;
}

TEST(DecodeMask, SamplingNeverDrawsSpecials) {
  Transformer<float> model(tiny(Architecture::decoder_only));
  const std::vector<int32_t> prompt = {4, 5};
  bias_logits(model, {2.0f, 2.0f, 2.0f, 2.0f, 0.0f, 0.1f, 0.2f, 0.05f});
  for (double T : {0.0, 0.5, 1.0, 5.0}) {
    const auto out = sample_tokens(model, prompt, {.length = 40, .temperature = T, .seed = 7});
    ASSERT_EQ(out.size(), 40u);
    for (int32_t t : out) EXPECT_GE(t, kNumSpecialTokens) << "temperature " << T;
  }
}

}  // namespace
}  // namespace scalelab
