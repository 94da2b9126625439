#include "scalelab/train/sampling.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "scalelab/core/error.hpp"
#include "scalelab/data/example.hpp"
#include "support/model_config.hpp"

namespace scalelab {
namespace {

TEST(Sampling, TemperatureZeroIsArgmaxAndSpecialsAreSkipped) {
  const float z[] = {9, 9, 9, 9, 0.5f, 2.0f, 1.0f};  // the specials would win if allowed
  Rng rng(1);
  EXPECT_EQ(draw_token(z, 7, kNumSpecialTokens, 0.0, rng), 5);
  for (int i = 0; i < 200; ++i) EXPECT_GE(draw_token(z, 7, kNumSpecialTokens, 1.0, rng), 4);
}

TEST(Sampling, FrequenciesFollowTheTemperedSoftmax) {
  const float z[] = {0, 0, 0, 0, 0.0f, 1.0f, 2.0f};
  for (double T : {0.5, 1.0, 2.0}) {
    Rng rng(42);
    const int n = 40000;
    int counts[3] = {0, 0, 0};
    for (int i = 0; i < n; ++i) counts[draw_token(z, 7, 4, T, rng) - 4]++;
    double p[3], sum = 0;
    for (int k = 0; k < 3; ++k) sum += p[k] = std::exp(k / T);
    for (int k = 0; k < 3; ++k) {
      const double expected = p[k] / sum;
      const double sd = std::sqrt(expected * (1 - expected) / n);
      EXPECT_NEAR(double(counts[k]) / n, expected, 5 * sd) << "T " << T << " token " << k;
    }
  }
}

ModelConfig tiny_lm() {
  return testing::sized_model({.arch = Architecture::decoder_only, .tgt_vocab = 10, .d_model = 16,
                               .n_heads = 2, .d_ff = 32, .encoder_layers = 0, .decoder_layers = 1,
                               .max_len = 8});
}

TEST(Sampling, SeededAndWindowed) {
  Transformer<float> model(tiny_lm());
  const std::vector<int32_t> prompt = {4, 5, 6};
  const auto a = sample_tokens(model, prompt, {.length = 20, .temperature = 1.0, .seed = 3});
  const auto b = sample_tokens(model, prompt, {.length = 20, .temperature = 1.0, .seed = 3});
  const auto c = sample_tokens(model, prompt, {.length = 20, .temperature = 1.0, .seed = 4});
  ASSERT_EQ(a.size(), 20u);  // longer than max_len: the window slides
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  for (int32_t t : a) EXPECT_GE(t, kNumSpecialTokens);
  EXPECT_EQ(sample_tokens(model, prompt, {.length = 5, .temperature = 0.0, .seed = 1}),
            sample_tokens(model, prompt, {.length = 5, .temperature = 0.0, .seed = 2}));
  EXPECT_THROW(sample_tokens(model, {}, {}), Error);
  EXPECT_THROW(sample_tokens(model, prompt, {.temperature = -1}), Error);
}

}  // namespace
}  // namespace scalelab
