// Finite-difference checks, in double, of every nn module's backward: the loss is
// L = sum(w ⊙ y) for a fixed random w, so dL/dy = w is fed to backward.
#include <gtest/gtest.h>

#include <vector>

#include "scalelab/nn/block.hpp"
#include "scalelab/nn/embedding.hpp"
#include "support/finite_difference.hpp"

namespace scalelab {
namespace {

using testing::check_gradients;
using testing::FdInput;
using testing::weighted_sum;

constexpr double kTolerance = 1e-6;  // relative, double precision, eps 1e-6
// A whole block sums many more terms into L, so the rounding noise of the central difference
// (|L| · 1e-16 / eps ≈ 1e-9 absolute) is a larger share of its small gradients.
constexpr double kBlockTolerance = 1e-5;

void fill_random(Tensor<double>& t, Rng& rng, double scale = 1.0) {
  for (double& v : t) v = rng.normal(0.0, scale);
}

std::vector<FdInput> parameter_inputs(const ParameterRefs<double>& params) {
  std::vector<FdInput> out;
  for (Parameter<double>* p : params)
    out.push_back({p->value.data(), p->value.numel(), p->name, p->grad.data()});
  return out;
}

void randomize(const ParameterRefs<double>& params, Rng& rng) {
  for (Parameter<double>* p : params) {
    fill_random(p->value, rng, 0.5);
    p->grad.zero();
  }
}

LayerOptions small_options(NormPlacement norm, Activation act) {
  LayerOptions o;
  o.d_model = 8;
  o.n_heads = 2;
  o.d_ff = 12;
  o.activation = act;
  o.norm = norm;
  return o;
}

TEST(LinearGrad, MatchesFiniteDifferences) {
  Rng rng(1);
  Linear<double> lin("lin", 5, 3);
  randomize(lin.parameters(), rng);
  Tensor<double> x({4, 5}), y({4, 3}), w({4, 3}), dx({4, 5});
  fill_random(x, rng);
  fill_random(w, rng);
  auto loss = [&] {
    lin.forward(x.data(), 4, y.data());
    return weighted_sum(w.data(), y.data(), y.numel());
  };
  loss();
  lin.backward(w.data(), dx.data());
  auto inputs = parameter_inputs(lin.parameters());
  inputs.push_back({x.data(), x.numel(), "x", dx.data()});
  const auto report = check_gradients(loss, inputs);
  EXPECT_LT(report.worst_rel_error, kTolerance) << report;
}

TEST(EmbeddingGrad, LearnedScaleAndTable) {
  Rng rng(2);
  Embedding<double> emb("embed", 6, 4, 1.7, /*learned_scale=*/true);
  randomize(emb.parameters(), rng);
  const std::vector<int32_t> ids{0, 3, 3, 5, 1};
  Tensor<double> y({5, 4}), w({5, 4});
  fill_random(w, rng);
  auto loss = [&] {
    emb.forward(ids.data(), 5, y.data());
    return weighted_sum(w.data(), y.data(), y.numel());
  };
  loss();
  emb.backward(w.data());
  const auto report = check_gradients(loss, parameter_inputs(emb.parameters()));
  EXPECT_LT(report.worst_rel_error, kTolerance) << report;
}

TEST(EmbeddingGrad, RejectsIdsOutsideTheVocabulary) {
  Embedding<double> emb("embed", 6, 4, 1.0, false);
  Tensor<double> y({1, 4});
  const int32_t bad = 6;
  EXPECT_THROW(emb.forward(&bad, 1, y.data()), Error);
}

struct AttentionCase {
  const char* name;
  bool cross;
  bool causal;
  bool padding;
};

class AttentionGrad : public ::testing::TestWithParam<AttentionCase> {};

TEST_P(AttentionGrad, MatchesFiniteDifferences) {
  const AttentionCase c = GetParam();
  Rng rng(3);
  const LayerOptions options = small_options(NormPlacement::post, Activation::relu);
  MultiHeadAttention<double> mha("attn", c.cross ? options.cross_attention() : options);
  randomize(mha.parameters(), rng);
  const int64_t B = 2, Nq = 3, Nk = c.cross ? 4 : 3, d = 8;
  Tensor<double> xq({B * Nq, d}), xkv({B * Nk, d}), y({B * Nq, d}), w({B * Nq, d});
  Tensor<double> dxq({B * Nq, d}), dxkv({B * Nk, d});
  fill_random(xq, rng);
  fill_random(xkv, rng);
  fill_random(w, rng);
  const std::vector<int32_t> lengths{static_cast<int32_t>(Nk), 2};
  const AttentionCall call{B, Nq, Nk, c.causal, c.padding ? lengths.data() : nullptr};
  auto loss = [&] {
    mha.forward(call, xq.data(), c.cross ? xkv.data() : xq.data(), y.data());
    return weighted_sum(w.data(), y.data(), y.numel());
  };
  loss();
  dxq.zero();
  dxkv.zero();
  mha.backward(w.data(), dxq.data(), c.cross ? dxkv.data() : dxq.data());
  auto inputs = parameter_inputs(mha.parameters());
  inputs.push_back({xq.data(), xq.numel(), "x_q", dxq.data()});
  if (c.cross) inputs.push_back({xkv.data(), xkv.numel(), "x_kv", dxkv.data()});
  const auto report = check_gradients(loss, inputs);
  EXPECT_LT(report.worst_rel_error, kTolerance) << report;
}

INSTANTIATE_TEST_SUITE_P(Cases, AttentionGrad,
                         ::testing::Values(AttentionCase{"self", false, false, false},
                                           AttentionCase{"self_causal", false, true, false},
                                           AttentionCase{"self_padding", false, false, true},
                                           AttentionCase{"cross_padding", true, false, true}),
                         [](const auto& info) { return std::string(info.param.name); });

TEST(FeedForwardGrad, ReluAndGelu) {
  for (Activation act : {Activation::relu, Activation::gelu}) {
    Rng rng(4);
    FeedForward<double> ffn("ffn", small_options(NormPlacement::post, act));
    randomize(ffn.parameters(), rng);
    Tensor<double> x({5, 8}), y({5, 8}), w({5, 8}), dx({5, 8});
    fill_random(x, rng);
    fill_random(w, rng);
    auto loss = [&] {
      ffn.forward(x.data(), 5, y.data());
      return weighted_sum(w.data(), y.data(), y.numel());
    };
    loss();
    dx.zero();
    ffn.backward(w.data(), dx.data());
    auto inputs = parameter_inputs(ffn.parameters());
    inputs.push_back({x.data(), x.numel(), "x", dx.data()});
    const auto report = check_gradients(loss, inputs);
    EXPECT_LT(report.worst_rel_error, kTolerance) << (act == Activation::relu ? "relu " : "gelu ") << report;
  }
}

struct BlockCase {
  const char* name;
  NormPlacement norm;
  bool cross;
  double dropout;
};

class BlockGrad : public ::testing::TestWithParam<BlockCase> {};

// Dropout is checked too: the Rng is re-seeded before every forward, so each loss evaluation
// draws the same mask.
TEST_P(BlockGrad, MatchesFiniteDifferences) {
  const BlockCase c = GetParam();
  Rng rng(5);
  LayerOptions opt = small_options(c.norm, Activation::gelu);
  opt.dropout = c.dropout;
  Block<double> block("layer", opt, c.cross);
  randomize(block.parameters(), rng);
  const int64_t B = 2, N = 3, M = 4, d = 8;
  Tensor<double> x({B * N, d}), memory({B * M, d}), w({B * N, d}), dmemory({B * M, d});
  fill_random(x, rng);
  fill_random(memory, rng);
  fill_random(w, rng);
  const std::vector<int32_t> memory_lengths{4, 3};
  Rng dropout_rng(0);
  BlockCall call{.batch = B, .len = N, .causal = true, .training = c.dropout > 0, .rng = &dropout_rng};
  if (c.cross) {
    call.memory = memory.data();
    call.memory_len = M;
    call.memory_lengths = memory_lengths.data();
  }
  auto loss = [&] {
    dropout_rng = Rng(42);
    const Tensor<double>& y = block.forward(call, x.data());
    return weighted_sum(w.data(), y.data(), y.numel());
  };
  loss();
  dmemory.zero();
  const Tensor<double> dx = block.backward(w.data(), c.cross ? dmemory.data() : nullptr);
  auto inputs = parameter_inputs(block.parameters());
  inputs.push_back({x.data(), x.numel(), "x", dx.data()});
  if (c.cross) inputs.push_back({memory.data(), memory.numel(), "memory", dmemory.data()});
  const auto report = check_gradients(loss, inputs);
  EXPECT_LT(report.worst_rel_error, kBlockTolerance) << report;
}

INSTANTIATE_TEST_SUITE_P(
    Cases, BlockGrad,
    ::testing::Values(BlockCase{"post_encoder", NormPlacement::post, false, 0.0},
                      BlockCase{"pre_encoder", NormPlacement::pre, false, 0.0},
                      BlockCase{"post_decoder", NormPlacement::post, true, 0.0},
                      BlockCase{"pre_decoder", NormPlacement::pre, true, 0.0},
                      BlockCase{"post_decoder_dropout", NormPlacement::post, true, 0.3},
                      BlockCase{"pre_decoder_dropout", NormPlacement::pre, true, 0.3}),
    [](const auto& info) { return std::string(info.param.name); });

TEST(Dropout, ZeroesAboutPAndRescalesTheRest) {
  Dropout<double> drop(0.25);
  Rng rng(7);
  Tensor<double> x({10000});
  x.fill(1.0);
  drop.forward(x.data(), x.numel(), &rng, /*training=*/true);
  int64_t zeros = 0;
  for (double v : x) {
    if (v == 0) ++zeros;
    else EXPECT_DOUBLE_EQ(v, 1.0 / 0.75);
  }
  EXPECT_NEAR(zeros / 10000.0, 0.25, 0.02);  // binomial sd 0.0043
  Tensor<double> y({10000});
  y.fill(1.0);
  drop.forward(y.data(), y.numel(), &rng, /*training=*/false);
  for (double v : y) EXPECT_EQ(v, 1.0);
}

TEST(SinusoidalPositions, MatchTheFormula) {
  Tensor<double> x({2 * 5, 6});
  x.zero();
  add_sinusoidal_positions(x.data(), 2, 5, 6);
  for (int64_t b = 0; b < 2; ++b)
    for (int64_t p = 0; p < 5; ++p)
      for (int64_t i = 0; i < 6; i += 2) {
        const double angle = p / std::pow(10000.0, double(i) / 6);
        EXPECT_NEAR(x[(b * 5 + p) * 6 + i], std::sin(angle), 1e-15);
        EXPECT_NEAR(x[(b * 5 + p) * 6 + i + 1], std::cos(angle), 1e-15);
      }
}

// The table of positions is kept between calls: other lengths, offsets (the decoder's cached
// step), odd widths and the same call again must all still match the formula, added to x.
TEST(SinusoidalPositions, KeptTableFollowsEveryCallsShape) {
  struct Call { int64_t batch, len, dim, offset; };
  for (const Call c : {Call{2, 5, 6, 0}, Call{3, 3, 6, 2}, Call{1, 1, 6, 7}, Call{2, 4, 5, 0},
                       Call{2, 5, 6, 0}, Call{1, 1, 6, 8}}) {
    std::vector<double> x(c.batch * c.len * c.dim);
    for (size_t j = 0; j < x.size(); ++j) x[j] = 0.25 * double(j);
    add_sinusoidal_positions(x.data(), c.batch, c.len, c.dim, c.offset);
    for (int64_t b = 0; b < c.batch; ++b)
      for (int64_t p = 0; p < c.len; ++p)
        for (int64_t i = 0; i < c.dim; ++i) {
          const double angle = double(p + c.offset) / std::pow(10000.0, double(i - i % 2) / double(c.dim));
          const int64_t at = (b * c.len + p) * c.dim + i;
          EXPECT_NEAR(x[at], 0.25 * double(at) + (i % 2 ? std::cos(angle) : std::sin(angle)), 1e-12)
              << "batch " << c.batch << " len " << c.len << " dim " << c.dim << " offset " << c.offset;
        }
  }
}

}  // namespace
}  // namespace scalelab
