// The model probe reads a real Transformer's saved state: with it the logits and every gradient
// are bit-identical to a run without it (both attention kernels, kernel statistics armed), and its
// figures have known answers at initialisation.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "scalelab/model/transformer.hpp"
#include "scalelab/probes/gradient_probe.hpp"
#include "scalelab/probes/model_probe.hpp"
#include "scalelab/train/loss.hpp"
#include "support/model_config.hpp"

namespace scalelab::probes {
namespace {

ModelConfig small_config(Architecture arch, AttentionKernel kernel) {
  ModelConfig m = testing::sized_model({.arch = arch, .src_vocab = 11, .tgt_vocab = 9,
                                       .d_model = 32, .n_heads = 4, .d_ff = 48,
                                       .encoder_layers = 2, .decoder_layers = 2, .max_len = 16});
  m.dropout = 0.0;
  m.embedding.scale_value = std::sqrt(32.0);
  m.attention.kernel = kernel;
  m.seed = 5;
  return m;
}

struct Batch {
  int64_t B = 2, S = 5, T = 4;
  std::vector<int32_t> src{4, 5, 6, 7, 2, 8, 9, 2, 0, 0}, src_lengths{5, 3};
  std::vector<int32_t> tgt_in{1, 4, 5, 6, 1, 7, 0, 0}, tgt_out{4, 5, 6, 2, 7, 2, 0, 0};
  static Batch unpadded() {
    Batch b;
    b.src = {4, 5, 6, 7, 2, 8, 9, 10, 4, 2};
    b.src_lengths = {5, 5};
    b.tgt_in = {1, 4, 5, 6, 1, 7, 8, 4};
    b.tgt_out = {4, 5, 6, 2, 7, 8, 4, 2};
    return b;
  }
  ModelInput input(bool encoder_decoder) const {
    ModelInput in{.batch = B, .src_len = S, .tgt_len = T, .tgt = tgt_in.data()};
    if (encoder_decoder) {
      in.src = src.data();
      in.src_lengths = src_lengths.data();
    }
    return in;
  }
};

struct Outputs {
  std::vector<float> logits;
  std::vector<std::vector<float>> grads;
  std::vector<ProbeRecord> records;
};

// One forward and backward; with `probe`, every observer runs between them.
Outputs run(const ModelConfig& config, bool probe, const Batch& b = Batch()) {
  Transformer<float> model(config);
  const ModelInput in = b.input(config.arch == Architecture::encoder_decoder);
  ModelProbe<float> mp(model);
  GradientProbe<float> gp;
  if (probe) mp.arm_kernel_stats();
  const Tensor<float>& logits = model.forward(in, {});
  Outputs out;
  out.logits.assign(logits.begin(), logits.end());
  if (probe) mp.observe_forward();
  Tensor<float> dlogits(logits.shape());
  cross_entropy<float>(logits.data(), b.tgt_out.data(), b.B * b.T, config.tgt_vocab, 0.1, 0,
                       dlogits.data());
  model.zero_grad();
  model.backward(dlogits.data());
  if (probe) {
    gp.before_step(model.parameters());
    out.records = mp.records(1, 0);
    for (ProbeRecord& r : gp.records(1, 0)) out.records.push_back(r);
  }
  for (Parameter<float>* p : model.parameters()) out.grads.emplace_back(p->grad.begin(), p->grad.end());
  return out;
}

const ProbeRecord* find(const std::vector<ProbeRecord>& rs, const std::string& probe,
                        const std::string& stack, int64_t layer, const std::string& site,
                        int64_t head = -1) {
  for (const ProbeRecord& r : rs)
    if (r.probe == probe && r.stack == stack && r.layer == layer && r.site == site && r.head == head)
      return &r;
  return nullptr;
}

class ProbeDoesNotChangeNumbers
    : public ::testing::TestWithParam<std::tuple<Architecture, AttentionKernel>> {};

TEST_P(ProbeDoesNotChangeNumbers, LogitsAndGradientsAreBitIdentical) {
  const auto [arch, kernel] = GetParam();
  const ModelConfig config = small_config(arch, kernel);
  const Outputs plain = run(config, false), probed = run(config, true);
  ASSERT_EQ(plain.logits.size(), probed.logits.size());
  EXPECT_EQ(std::memcmp(plain.logits.data(), probed.logits.data(), plain.logits.size() * 4), 0);
  ASSERT_EQ(plain.grads.size(), probed.grads.size());
  for (size_t i = 0; i < plain.grads.size(); ++i)
    EXPECT_EQ(std::memcmp(plain.grads[i].data(), probed.grads[i].data(), plain.grads[i].size() * 4), 0)
        << "parameter " << i;
  EXPECT_FALSE(probed.records.empty());
  // Padded positions are left out: per head 5 + 3 source rows, or 4 + 2 target rows.
  const char* stack = arch == Architecture::encoder_decoder ? "encoder" : "decoder";
  const ProbeRecord* rows = find(probed.records, "attn_softmax", stack, 0, "self_attn", 2);
  ASSERT_NE(rows, nullptr);
  EXPECT_EQ(rows->value("rows"), arch == Architecture::encoder_decoder ? 8 : 6);
}

INSTANTIATE_TEST_SUITE_P(
    Models, ProbeDoesNotChangeNumbers,
    ::testing::Combine(::testing::Values(Architecture::encoder_decoder, Architecture::decoder_only),
                       ::testing::Values(AttentionKernel::naive, AttentionKernel::flash)));

// Without padding the kernel and the probe see the same rows: their softmax figures agree.
TEST(ModelProbe, AgreesWithTheKernelStatisticsOnUnpaddedBatches) {
  for (AttentionKernel kernel : {AttentionKernel::naive, AttentionKernel::flash}) {
    const Outputs o = run(small_config(Architecture::encoder_decoder, kernel), true, Batch::unpadded());
    int compared = 0;
    for (const ProbeRecord& k : o.records) {
      if (k.probe != "attn_kernel") continue;
      const ProbeRecord* m = find(o.records, "attn_softmax", k.stack, k.layer, k.site, k.head);
      ASSERT_NE(m, nullptr);
      EXPECT_EQ(k.value("rows"), m->value("rows"));
      EXPECT_NEAR(k.value("entropy_norm_mean"), m->value("entropy_norm_mean"), 1e-5)
          << k.stack << k.layer << k.site << k.head;
      // The kernel counts the causal mask's first row (one key, max p = 1) in its max p; the
      // probe sets it apart, so compare max p where no row has a single key.
      if (!(k.stack == "decoder" && k.site == "self_attn")) {
        EXPECT_NEAR(k.value("max_p_mean"), m->value("max_p_mean"), 1e-5);
      }
      ++compared;
    }
    EXPECT_EQ(compared, (2 + 2 * 2) * 5);  // 6 attention modules, all heads and 4 heads each
  }
}

TEST(ModelProbe, KnownAnswersAtInitialisation) {
  ModelConfig config = small_config(Architecture::encoder_decoder, AttentionKernel::flash);
  const Batch b;
  Transformer<float> model(config);
  ModelProbe<float> mp(model);
  const Tensor<float>& logits = model.forward(b.input(true), {});
  mp.observe_forward();
  const std::vector<ProbeRecord> rs = mp.records(4, 0);
  const int64_t d = config.d_model, dk = d / config.n_heads;

  // The token part is s·E[ids] over the real positions; the position part the sinusoids.
  const ProbeRecord* embed = find(rs, "embed", "encoder", -1, "input");
  ASSERT_NE(embed, nullptr);
  Embedding<float>& e = model.embedding(true);
  double norm_sum = 0.0;
  int rows = 0;
  for (int64_t bi = 0; bi < b.B; ++bi)
    for (int64_t t = 0; t < b.src_lengths[bi]; ++t, ++rows)
      for (int64_t j = 0; j < d; ++j) {
        const double x = double(e.scale()) * e.table().value[b.src[bi * b.S + t] * d + j];
        norm_sum += x * x;
      }
  EXPECT_EQ(embed->value("rows"), rows);
  EXPECT_NEAR(embed->value("token_sq_norm_mean"), norm_sum / rows, 1e-4 * norm_sum / rows);
  std::vector<double> pe(b.S * d, 0.0);
  add_sinusoidal_positions(pe.data(), 1, b.S, d);
  RunningMoments pm;
  for (int64_t bi = 0; bi < b.B; ++bi)
    for (int64_t t = 0; t < b.src_lengths[bi]; ++t) pm.add_values(pe.data() + t * d, d);
  EXPECT_NEAR(embed->value("var_position"), pm.variance(), 1e-5);
  EXPECT_NEAR(embed->value("token_position_ratio"),
              embed->value("var_token") / embed->value("var_position"), 1e-12);

  // Post-LN: every sublayer ends in a LayerNorm with gain 1 and bias 0, so the residual stream
  // has mean 0 and variance v/(v + eps) ≈ 1 on every row.
  int residuals = 0;
  for (const ProbeRecord& r : rs) {
    if (r.probe != "residual") continue;
    EXPECT_NEAR(r.value("mean"), 0.0, 1e-5) << r.stack << r.layer << r.site;
    EXPECT_NEAR(r.value("var"), 1.0, 1e-3) << r.stack << r.layer << r.site;
    ++residuals;
  }
  EXPECT_EQ(residuals, 2 * 2 + 2 * 3);

  // 1/sqrt(d_k): the scaled logits are the raw ones times 1/sqrt(d_k), so Var differs by d_k.
  for (const ProbeRecord& r : rs) {
    if (r.probe != "attn_logits") continue;
    const ProbeRecord* raw = find(rs, "attn_logits_raw", r.stack, r.layer, r.site, r.head);
    ASSERT_NE(raw, nullptr);
    EXPECT_NEAR(r.value("var") * dk, raw->value("var"), 1e-4 * raw->value("var"));
    EXPECT_EQ(r.value("count"), raw->value("count"));
  }

  // The output logits' max |.| over the real target rows, and its f16 headroom.
  double mx = 0.0;
  for (int64_t row = 0; row < b.B * b.T; ++row)
    if (b.tgt_in[row] != 0)
      for (int64_t j = 0; j < config.tgt_vocab; ++j)
        mx = std::max(mx, std::fabs(double(logits[row * config.tgt_vocab + j])));
  const ProbeRecord* out = find(rs, "activation", "decoder", -1, "output_logits");
  ASSERT_NE(out, nullptr);
  EXPECT_EQ(out->value("max_abs"), mx);
  EXPECT_NEAR(out->value("f16_headroom_bits"), std::log2(65504.0 / mx), 1e-12);
  EXPECT_EQ(out->value("over_f16"), 0.0);
  EXPECT_EQ(out->seed, 4);
}

TEST(ModelProbe, NoPositionsGiveANullRatio) {
  ModelConfig config = small_config(Architecture::decoder_only, AttentionKernel::flash);
  config.positions = PositionEncoding::none;
  const Batch b;
  Transformer<float> model(config);
  ModelProbe<float> mp(model);
  model.forward(b.input(false), {});
  mp.observe_forward();
  const std::vector<ProbeRecord> rs = mp.records(1, 0);
  const ProbeRecord* embed = find(rs, "embed", "decoder", -1, "input");
  ASSERT_NE(embed, nullptr);
  EXPECT_EQ(embed->value("var_position"), 0.0);
  EXPECT_TRUE(std::isnan(embed->value("token_position_ratio")));
  EXPECT_EQ(find(rs, "embed", "encoder", -1, "input"), nullptr);
}

}  // namespace
}  // namespace scalelab::probes
