// The decoder key/value cache (model/decoder_cache.hpp): the cached step gives the same logits as
// re-running the decoder on the whole prefix, and greedy, beam (k = 1, 3, 5) and sampling give the
// same hypotheses and scores with and without it, on tiny models trained for a few steps, across
// configurations: post/pre/sandwich wiring, LayerNorm/RMSNorm, sinusoidal, learned, RoPE, ALiBi
// and T5 positions, QK-norm, learned temperature, soft-caps, query-side scale, tied/untied output,
// naive and flash kernels, bf16 matmuls, encoder-decoder and decoder-only.
//
// Tolerances: the two paths run the same operations on different row counts (GEMM blocking and
// the attention kernel differ), so float results differ by rounding only: logits within 1e-4
// (absolute; logits are O(1..10)), beam scores within 1e-5. With bf16 matmuls a float difference
// of one rounding can move an operand across a bf16 rounding boundary (a relative step of 2^-8),
// so the logits may differ by up to bf16's own error: the bound is measured in the case, as the
// largest |logit| difference between the model's bf16 and f32 matmuls on the same whole decode
// (1.3e-2 to 1.5e-2 on this tiny model, against 2e-7 in the Release build and 1.8e-3 in the
// sanitizer build between the cached and uncached paths; one wrong token fed to the cache moves
// the logits by 0.74).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "scalelab/core/error.hpp"
#include "scalelab/kernels/gemm.hpp"
#include "scalelab/train/beam.hpp"
#include "scalelab/train/decode.hpp"
#include "scalelab/train/sampling.hpp"
#include "support/tiny_trained_model.hpp"

namespace scalelab {
namespace {

constexpr double kLogitTolerance = 1e-4;
constexpr double kScoreTolerance = 1e-5;

struct Case {
  std::string name, preset;
  Json overrides;
  bool bf16 = false;  // matmul precision bf16 for the whole case
};

void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

std::vector<Case> cases() {
  return {
      {"vaswani_post_layernorm_sinusoidal", "vaswani2017", Json::object()},
      {"t2t_pre_query_scale", "t2t", Json::object()},
      {"t5_relative_bias_rmsnorm", "t5", Json::object()},
      {"bert_learned_positions_embed_norm", "bert", Json::object()},
      {"llama_rope_decoder_only", "llama", Json::object()},
      {"gemma_sandwich_softcaps_decoder_only", "gemma", Json::object()},
      {"post_rope_encoder_decoder_tied", "",
       {{"norm", "post"}, {"positions", "rope"}, {"tie_output", true}}},
      {"alibi_qknorm_temperature_decoder_only", "",
       {{"arch", "decoder_only"}, {"norm", "pre"}, {"norm_type", "rmsnorm"}, {"positions", "alibi"},
        {"output_softcap", 8.0},
        {"attention", {{"qk_norm", "layernorm"}, {"learned_temperature", true}, {"softcap", 5.0}}}}},
      {"pre_sinusoidal_decoder_only_naive_kernel", "",
       {{"arch", "decoder_only"}, {"norm", "pre"}, {"attention", {{"kernel", "naive"}}}}},
      {"pre_sinusoidal_bf16_matmul", "", {{"norm", "pre"}}, /*bf16=*/true},
  };
}

class KvCache : public ::testing::TestWithParam<Case> {
 protected:
  void SetUp() override {
    if (GetParam().bf16) precision_ = std::make_unique<ScopedMatmulPrecision>(MatmulPrecision::bf16);
    model_ = std::make_unique<Transformer<float>>(
        testing::tiny_model_config(GetParam().preset, GetParam().overrides));
    const double loss = testing::train_tiny(*model_, 12);
    ASSERT_TRUE(std::isfinite(loss));
    if (GetParam().bf16) {
      logit_tolerance_ = bf16_logit_error();
      // bf16 is in use (some logit moved) and its error is a rounding error on O(1) logits, not
      // one that would make the bound vacuous.
      ASSERT_GT(logit_tolerance_, 0.0);
      ASSERT_LT(logit_tolerance_, 0.1);
    }
  }
  // The largest |logit| difference between bf16 and f32 matmuls, on a whole decode of three
  // sources and random 10-token prefixes: the rounding error bf16 itself brings.
  double bf16_logit_error() {
    Transformer<float>& m = *model_;
    const Batch src = sources();
    const std::vector<int32_t> tgt = prefixes(7);
    const ModelInput in = whole_input(src, tgt);
    auto decode_at = [&](MatmulPrecision precision) {
      ScopedMatmulPrecision scoped(precision);
      if (seq2seq()) m.encode(in, {});
      return Tensor<float>(m.decode(in, {}));
    };
    const Tensor<float> bf16 = decode_at(MatmulPrecision::bf16), f32 = decode_at(MatmulPrecision::f32);
    double worst = 0;
    for (int64_t i = 0; i < bf16.numel(); ++i) worst = std::max(worst, double(std::fabs(bf16[i] - f32[i])));
    return worst;
  }
  bool seq2seq() const { return model_->config().arch == Architecture::encoder_decoder; }
  // Three sources of different lengths (padding in the batch).
  Batch sources() const {
    const auto ex = testing::tiny_examples(model_->config().tgt_vocab, 3, 7, 99);
    return make_batch(ex, {0, 1, 2}, BatchLayout::seq2seq);
  }
  // kRows random target prefixes of kLength tokens, each starting with BOS, row-major.
  static constexpr int64_t kRows = 3, kLength = 10;
  std::vector<int32_t> prefixes(uint64_t seed) const {
    const int64_t V = model_->config().tgt_vocab;
    std::vector<int32_t> tgt(kRows * kLength);
    Rng rng(seed);
    for (int64_t i = 0; i < kRows * kLength; ++i)
      tgt[i] = i % kLength == 0 ? kBosId
                                : kNumSpecialTokens + int32_t(rng.below(uint64_t(V - kNumSpecialTokens)));
    return tgt;
  }
  // The decoder's input for the whole prefixes (the sources only where there is an encoder).
  ModelInput whole_input(const Batch& src, const std::vector<int32_t>& tgt) const {
    return {.batch = kRows, .src_len = src.src_len, .tgt_len = kLength,
            .src = seq2seq() ? src.src.data() : nullptr,
            .src_lengths = seq2seq() ? src.src_lengths.data() : nullptr, .tgt = tgt.data()};
  }
  std::unique_ptr<ScopedMatmulPrecision> precision_;
  std::unique_ptr<Transformer<float>> model_;
  double logit_tolerance_ = kLogitTolerance;  // bf16: bf16_logit_error()
};

// decode_step at t gives row t of decode() on the whole prefix, for every row of the batch.
TEST_P(KvCache, StepLogitsEqualTheUncachedDecoder) {
  Transformer<float>& m = *model_;
  const int64_t V = m.config().tgt_vocab, B = kRows, L = kLength;
  const Batch src = sources();
  const std::vector<int32_t> tgt = prefixes(5);
  const ModelInput in = whole_input(src, tgt);
  if (seq2seq()) m.encode(in, {});
  const Tensor<float> full = m.decode(in, {});  // [B*L, V], copied
  DecoderCache<float> cache;
  m.start_decoding(in, cache, L);
  double worst = 0;
  for (int64_t t = 0; t < L; ++t) {
    std::vector<int32_t> tokens(B);
    for (int64_t b = 0; b < B; ++b) tokens[b] = tgt[b * L + t];
    const Tensor<float>& step = m.decode_step(cache, tokens.data());
    ASSERT_EQ(step.dim(0), B);
    for (int64_t b = 0; b < B; ++b)
      for (int64_t v = 0; v < V; ++v)
        worst = std::max(worst, double(std::fabs(step[b * V + v] - full[(b * L + t) * V + v])));
  }
  EXPECT_LE(worst, logit_tolerance_) << "largest |logit difference|";
  // The cache holds L positions: one more step is refused, naming the capacity.
  std::vector<int32_t> more(B, kEosId);
  EXPECT_THROW(m.decode_step(cache, more.data()), Error);
}

// Re-selecting rows (as beam search does) moves each row's cache with it.
TEST_P(KvCache, SelectedRowsContinueTheirParents) {
  Transformer<float>& m = *model_;
  const int64_t V = m.config().tgt_vocab;
  const Batch src = sources();
  const std::vector<int32_t> prefix[3] = {{kBosId, 5, 6, 7}, {kBosId, 8, 9, 4}, {kBosId, 6, 6, 5}};
  ModelInput in{.batch = 3, .src_len = src.src_len, .tgt_len = 1,
                .src = seq2seq() ? src.src.data() : nullptr,
                .src_lengths = seq2seq() ? src.src_lengths.data() : nullptr};
  DecoderCache<float> cache;
  m.start_decoding(in, cache, 8);
  for (int t = 0; t < 3; ++t) {
    const int32_t tokens[3] = {prefix[0][t], prefix[1][t], prefix[2][t]};
    m.decode_step(cache, tokens);
  }
  const std::vector<int64_t> from = {2, 0, 0, 1};  // 4 rows: parents 2, 0, 0, 1
  cache.select_rows(from);
  const int32_t last[4] = {prefix[2][3], prefix[0][3], 9, prefix[1][3]};
  const Tensor<float> got = m.decode_step(cache, last);
  for (int64_t r = 0; r < 4; ++r) {  // the reference: row r's parent source and prefix, uncached
    const int64_t p = from[r];
    std::vector<int32_t> tgt = prefix[p];
    tgt[3] = last[r];
    const auto one = testing::tiny_examples(V, 3, 7, 99);
    const Batch s1 = make_batch(one, {p}, BatchLayout::seq2seq);
    ModelInput r_in{.batch = 1, .src_len = s1.src_len, .tgt_len = 4,
                    .src = seq2seq() ? s1.src.data() : nullptr,
                    .src_lengths = seq2seq() ? s1.src_lengths.data() : nullptr, .tgt = tgt.data()};
    if (seq2seq()) m.encode(r_in, {});
    const Tensor<float>& ref = m.decode(r_in, {});
    for (int64_t v = 0; v < V; ++v)
      EXPECT_NEAR(got[r * V + v], ref[3 * V + v], logit_tolerance_)
          << "row " << r << " token " << v;
  }
}

// Dropping the last rows (rescoring drops finished candidates) leaves the others' next steps as
// they were.
TEST_P(KvCache, KeepingTheFirstRowsLeavesThemUnchanged) {
  Transformer<float>& m = *model_;
  const int64_t V = m.config().tgt_vocab;
  const Batch src = sources();
  ModelInput in{.batch = 3, .src_len = src.src_len, .tgt_len = 1,
                .src = seq2seq() ? src.src.data() : nullptr,
                .src_lengths = seq2seq() ? src.src_lengths.data() : nullptr};
  DecoderCache<float> all, first_two;  // the same three steps into both
  const int32_t steps[3][3] = {{kBosId, kBosId, kBosId}, {5, 8, 6}, {6, 9, 6}};
  for (DecoderCache<float>* cache : {&all, &first_two}) {
    m.start_decoding(in, *cache, 8);
    for (const auto& tokens : steps) m.decode_step(*cache, tokens);
  }
  first_two.keep_first_rows(2);
  EXPECT_EQ(first_two.rows, 2);
  EXPECT_THROW(first_two.keep_first_rows(3), Error);  // rows cannot come back
  const int32_t next[3] = {7, 4, 5};
  const Tensor<float> ref = m.decode_step(all, next);  // copied: the model owns the logits
  const Tensor<float>& got = m.decode_step(first_two, next);
  ASSERT_EQ(got.dim(0), 2);
  for (int64_t r = 0; r < 2; ++r)
    for (int64_t v = 0; v < V; ++v)
      EXPECT_NEAR(got[r * V + v], ref[r * V + v], logit_tolerance_)
          << "row " << r << " token " << v;
  first_two.keep_first_rows(0);
  EXPECT_EQ(first_two.rows, 0);
}

TEST_P(KvCache, GreedyBeamAndSamplingEqualTheUncachedPath) {
  Transformer<float>& m = *model_;
  if (seq2seq()) {
    const Batch src = sources();
    EXPECT_EQ(greedy_decode(m, src, 12, /*use_cache=*/true), greedy_decode(m, src, 12, false));
    for (int64_t k : {1, 3, 5}) {
      for (double alpha : {0.0, 0.6}) {
        BeamOptions o{.beam = k, .length_penalty = alpha, .max_len = 12};
        const auto cached = beam_search(m, src, o);
        o.use_cache = false;
        const auto plain = beam_search(m, src, o);
        ASSERT_EQ(cached.size(), plain.size());
        for (size_t b = 0; b < cached.size(); ++b) {
          EXPECT_EQ(cached[b].tokens, plain[b].tokens) << "beam " << k << " source " << b;
          EXPECT_NEAR(cached[b].score, plain[b].score, kScoreTolerance) << "beam " << k;
        }
      }
    }
  } else {
    const std::vector<int32_t> prompt = {5, 6, 7};
    for (double temperature : {0.0, 1.0}) {
      // context 0: the whole max_len (24) is cached; context 9: the window slides after 6 tokens.
      for (int64_t context : {0, 9}) {
        SampleOptions o{.length = 20, .temperature = temperature, .seed = 3, .context = context};
        const auto cached = sample_tokens(m, prompt, o);
        o.use_cache = false;
        EXPECT_EQ(cached, sample_tokens(m, prompt, o)) << "T " << temperature << " context " << context;
        EXPECT_EQ(cached.size(), 20u);
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Configs, KvCache, ::testing::ValuesIn(cases()),
                         [](const auto& info) { return info.param.name; });

TEST(KvCacheRefusals, CapacityBeyondMaxLenAndUnstartedCache) {
  Transformer<float> m(testing::tiny_model_config("", {{"arch", "decoder_only"}}));
  DecoderCache<float> cache;
  EXPECT_THROW(m.start_decoding(ModelInput{.batch = 1}, cache, m.config().max_len + 1), Error);
  const int32_t token = kBosId;
  EXPECT_THROW(m.decode_step(cache, &token), Error);  // never started
}

}  // namespace
}  // namespace scalelab
