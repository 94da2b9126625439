#include "scalelab/probes/precision_probe.hpp"

#include <string>

#include "scalelab/kernels/layernorm_emulated.hpp"

namespace scalelab::probes {
namespace {

ProbeRecord counts_record(const OverflowCounters& c, const std::string& stack, int64_t layer,
                          const std::string& site, const PrecisionProbeOptions& o, int64_t seed,
                          int64_t step) {
  ProbeRecord r = probe_record("precision", stack, layer, site, seed, step);
  r.tags = {{"dtype", dtype_name(o.dtype)}, {"accumulate", dtype_name(o.accumulate)},
            {"subtract_max", o.subtract_max ? "true" : "false"}};
  for (int i = 0; i < kPrecisionOps; ++i) {
    const OpCounts& n = c.ops[i];
    if (n.results == 0) continue;
    const std::string op = precision_op_name(static_cast<PrecisionOp>(i));
    r.values[op + "_results"] = double(n.results);
    r.values[op + "_overflow"] = double(n.overflow);
    r.values[op + "_nan"] = double(n.nan);
    r.values[op + "_underflow"] = double(n.underflow);
    r.values[op + "_subnormal"] = double(n.subnormal);
    r.values[op + "_max_abs"] = n.max_abs;
  }
  return r;
}

void emulate_norm(const Tensor<float>& x, int64_t d, bool rms, const PrecisionProbeOptions& o,
                  OverflowCounters& c) {
  const int64_t rows = x.numel() / d;
  std::vector<float> gamma(d, 1.0f), beta(d, 0.0f), y(x.numel());
  layernorm_emulated_forward({rows, d, 1e-5}, {o.dtype, o.accumulate, rms}, x.data(), gamma.data(),
                             beta.data(), y.data(), c);
}

void emulate_attention(const MultiHeadAttention<float>& mha, const PrecisionProbeOptions& o,
                       OverflowCounters& c) {
  const AttentionShape s = mha.last_shape();
  const AttentionOptions<float> ko = mha.last_options();
  // q before a query pre-scale, so that the emulation applies the scale in the model's own order.
  const double q_scale = mha.query_scale();
  std::vector<float> q(mha.unscaled_q().begin(), mha.unscaled_q().end());
  std::vector<float> k(mha.kernel_k().begin(), mha.kernel_k().end());
  std::vector<float> v(mha.kernel_v().begin(), mha.kernel_v().end()), out(q.size());
  for (std::vector<float>* t : {&q, &k, &v})
    emulated_cast(o.dtype, t->data(), static_cast<int64_t>(t->size()), PrecisionOp::input_cast, &c);
  EmulatedAttentionOptions e{.dtype = o.dtype, .accumulate = o.accumulate,
                             .scale_order = q_scale != 1.0 ? ScaleOrder::q_before : ScaleOrder::logits_after,
                             .subtract_max = o.subtract_max, .algorithm = o.algorithm,
                             .scale = q_scale != 1.0 ? q_scale : ko.scale, .causal = ko.causal,
                             .key_lengths = ko.key_lengths};
  attention_emulated_forward(s, e, q.data(), k.data(), v.data(), out.data(), c);
}

}  // namespace

std::vector<ProbeRecord> probe_precision(Transformer<float>& model, const PrecisionProbeOptions& o,
                                         int64_t seed, int64_t step) {
  std::vector<ProbeRecord> out;
  const ModelConfig& m = model.config();
  const bool rms = m.norm_kind == NormKind::rms;
  const bool enc_dec = m.arch == Architecture::encoder_decoder;
  for (bool encoder : {true, false}) {
    if (encoder && !enc_dec) continue;
    const std::string stack = encoder ? "encoder" : "decoder";
    {  // s · E[ids]: the scale and the looked-up rows stored in the format, then multiplied
      OverflowCounters c;
      const ModelInput& in = model.last_input();
      const int32_t* ids = encoder ? in.src : in.tgt;
      const int64_t rows = in.batch * (encoder ? in.src_len : in.tgt_len);
      Embedding<float>& emb = model.embedding(encoder);
      std::vector<float> e(rows * m.d_model), scaled(e.size());
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t j = 0; j < m.d_model; ++j) e[r * m.d_model + j] = emb.table().value[ids[r] * m.d_model + j];
      emulated_cast(o.dtype, e.data(), static_cast<int64_t>(e.size()), PrecisionOp::input_cast, &c);
      const double s = round_to(o.dtype, emb.scale());
      emulated_scale(o.dtype, e.data(), s, scaled.data(), static_cast<int64_t>(e.size()),
                     PrecisionOp::embedding_scale, &c);
      out.push_back(counts_record(c, stack, -1, "embedding", o, seed, step));
    }
    std::vector<Block<float>>& blocks = encoder ? model.encoder_blocks() : model.decoder_blocks();
    for (size_t l = 0; l < blocks.size(); ++l) {
      Block<float>& b = blocks[l];
      const Tensor<float>* stage_in = l == 0 ? &model.stack_input(encoder) : &blocks[l - 1].stage_output(
                                                   static_cast<int>(blocks[l - 1].stage_count() - 1));
      for (int i = 0; i < b.stage_count(); ++i) {
        OverflowCounters c;
        const std::string site = b.stage_name(i);
        if (site == "self_attn") emulate_attention(b.self_attention(), o, c);
        if (site == "cross_attn") emulate_attention(*b.cross_attention(), o, c);
        // x + f(x), then the norm's input (post: the sum; pre and sandwich: the stage input)
        std::vector<float> x(stage_in->begin(), stage_in->end()), f(b.sublayer_output(i).begin(),
                                                                     b.sublayer_output(i).end());
        emulated_cast(o.dtype, x.data(), static_cast<int64_t>(x.size()), PrecisionOp::input_cast, &c);
        emulated_cast(o.dtype, f.data(), static_cast<int64_t>(f.size()), PrecisionOp::input_cast, &c);
        Tensor<float> sum({static_cast<int64_t>(x.size())});
        emulated_add(o.dtype, x.data(), f.data(), sum.data(), static_cast<int64_t>(x.size()),
                     PrecisionOp::residual_add, &c);
        emulate_norm(m.norm == NormPlacement::post ? sum : *stage_in, m.d_model, rms, o, c);
        out.push_back(counts_record(c, stack, static_cast<int64_t>(l), site, o, seed, step));
        stage_in = &b.stage_output(i);
      }
    }
  }
  return out;
}

void add_counts(const ProbeRecord& r, OverflowCounters& totals) {
  for (int i = 0; i < kPrecisionOps; ++i) {
    const std::string op = precision_op_name(static_cast<PrecisionOp>(i));
    auto it = r.values.find(op + "_results");
    if (it == r.values.end()) continue;
    OpCounts& t = totals.ops[i];
    t.results += static_cast<int64_t>(it->second);
    t.overflow += static_cast<int64_t>(r.value(op + "_overflow"));
    t.nan += static_cast<int64_t>(r.value(op + "_nan"));
    t.underflow += static_cast<int64_t>(r.value(op + "_underflow"));
    t.subnormal += static_cast<int64_t>(r.value(op + "_subnormal"));
    t.max_abs = std::max(t.max_abs, r.value(op + "_max_abs"));
  }
}

}  // namespace scalelab::probes
