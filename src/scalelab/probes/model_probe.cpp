#include "scalelab/probes/model_probe.hpp"

#include <cmath>

#include "scalelab/data/example.hpp"
#include "scalelab/probes/values.hpp"

namespace scalelab::probes {

namespace {

const char* stack_name(bool encoder) { return encoder ? "encoder" : "decoder"; }

ProbeRecord make_record(const std::string& probe, const std::tuple<std::string, int64_t, std::string>& key,
                        int64_t head, int64_t seed, int64_t step, Values values) {
  ProbeRecord r = probe_record(probe, std::get<0>(key), std::get<1>(key), std::get<2>(key), seed, step, head);
  r.values = std::move(values);
  return r;
}

// Moments of the rows of x [rows, width] whose mask is set (all rows when mask is null).
template <class T>
RunningMoments masked_moments(const T* x, int64_t rows, int64_t width, const uint8_t* mask) {
  RunningMoments m;
  for (int64_t r = 0; r < rows; ++r)
    if (!mask || mask[r]) m.add_values(x + r * width, width);
  return m;
}

}  // namespace

template <class T>
ModelProbe<T>::ModelProbe(Transformer<T>& model, ModelProbeOptions options)
    : model_(model), opt_(std::move(options)) {}

template <class T>
ModelProbe<T>::~ModelProbe() {
  disarm_kernel_stats();
}

template <class T>
void ModelProbe<T>::arm_kernel_stats() {
  for (bool encoder : {true, false}) {
    if (encoder && model_.config().arch != Architecture::encoder_decoder) continue;
    auto& blocks = encoder ? model_.encoder_blocks() : model_.decoder_blocks();
    for (size_t l = 0; l < blocks.size(); ++l) {
      auto arm = [&](MultiHeadAttention<T>& attn, const char* site) {
        auto& sink = kernel_[Key{stack_name(encoder), static_cast<int64_t>(l), site}];
        if (!sink) {
          sink = std::make_unique<AttentionProbeStats>();
          sink->saturation_threshold = opt_.attention.thresholds.saturated;
          sink->uniform_threshold = opt_.attention.thresholds.near_uniform;
        }
        attn.set_probe_stats(sink.get());
      };
      arm(blocks[l].self_attention(), "self_attn");
      if (auto* cross = blocks[l].cross_attention()) arm(*cross, "cross_attn");
    }
  }
}

template <class T>
void ModelProbe<T>::disarm_kernel_stats() {
  for (bool encoder : {true, false}) {
    auto& blocks = encoder ? model_.encoder_blocks() : model_.decoder_blocks();
    for (Block<T>& b : blocks) {
      b.self_attention().set_probe_stats(nullptr);
      if (auto* cross = b.cross_attention()) cross->set_probe_stats(nullptr);
    }
  }
}

template <class T>
std::vector<uint8_t> ModelProbe<T>::row_mask(bool encoder) const {
  const ModelInput& in = model_.last_input();
  const int64_t len = encoder ? in.src_len : in.tgt_len;
  std::vector<uint8_t> mask(in.batch * len, 1);
  for (int64_t b = 0; b < in.batch; ++b)
    for (int64_t t = 0; t < len; ++t) {
      if (encoder) mask[b * len + t] = !in.src_lengths || t < in.src_lengths[b];
      else mask[b * len + t] = in.tgt[b * len + t] != kPadId;
    }
  return mask;
}

template <class T>
void ModelProbe<T>::activation(const Key& key, const T* x, int64_t rows, int64_t width,
                               const uint8_t* mask) {
  if (!opt_.activation_probes) return;
  auto [it, fresh] = activation_.try_emplace(key);
  if (fresh) {
    it->second.lo = -kF16Max;
    it->second.hi = kF16Max;
  }
  for (int64_t r = 0; r < rows; ++r)
    if (!mask || mask[r])
      for (int64_t c = 0; c < width; ++c) it->second.add(static_cast<double>(x[r * width + c]));
}

template <class T>
void ModelProbe<T>::observe_attention(const Key& key, MultiHeadAttention<T>& attn,
                                      const uint8_t* rows) {
  const AttentionShape shape = attn.last_shape();
  const AttentionOptions<T> options = attn.last_options();
  const Tensor<T>& q = attn.kernel_q();
  const Tensor<T>& k = attn.kernel_k();
  const auto& [stack, layer, site] = key;
  const int64_t d = shape.heads * shape.head_dim;
  activation({stack, layer, site + ".q"}, q.data(), shape.batch * shape.q_len, d, rows);
  activation({stack, layer, site + ".k"}, k.data(), shape.batch * shape.k_len, d, nullptr);
  if (!opt_.attention_probes) return;
  probe_attention(shape, options, q.data(), k.data(), opt_.attention, attention_[key], rows,
                  attn.query_scale());
}

template <class T>
void ModelProbe<T>::observe_stack(bool encoder) {
  const std::string stack = stack_name(encoder);
  const int64_t d = model_.config().d_model;
  const ModelInput& in = model_.last_input();
  const int64_t len = encoder ? in.src_len : in.tgt_len, rows = in.batch * len;
  const int32_t* ids = encoder ? in.src : in.tgt;
  const std::vector<uint8_t> mask = row_mask(encoder);

  // The input: e0 = s·E[ids] + P, x0 = N_e(e0) (eval mode: no dropout).
  const Tensor<T>& e0 = model_.embedding_sum(encoder);
  const Tensor<T>& x0 = model_.stack_input(encoder);
  Embedding<T>& embed = model_.embedding(encoder);
  const T s = embed.scale();
  const T* table = embed.table().value.data();
  if (opt_.stream_probes || opt_.activation_probes) {
    EmbedStats& es = embed_[stack];
    std::vector<T> token(d), position(d);
    for (int64_t r = 0; r < rows; ++r) {
      if (!mask[r]) continue;
      const T* row = table + static_cast<int64_t>(ids[r]) * d;
      double tn = 0, pn = 0;
      for (int64_t j = 0; j < d; ++j) {
        token[j] = s * row[j];  // exactly the embedding's forward
        position[j] = e0[r * d + j] - token[j];
        tn += double(token[j]) * double(token[j]);
        pn += double(position[j]) * double(position[j]);
      }
      es.token.add_values(token.data(), d);
      es.position.add_values(position.data(), d);
      es.token_sq_norm.add(tn);
      es.position_sq_norm.add(pn);
      activation({stack, -1, "embed.token"}, token.data(), 1, d, nullptr);
    }
    es.sum.merge(masked_moments(e0.data(), rows, d, mask.data()));
    es.input.merge(masked_moments(x0.data(), rows, d, mask.data()));
    activation({stack, -1, "embed.sum"}, e0.data(), rows, d, mask.data());
    activation({stack, -1, "input"}, x0.data(), rows, d, mask.data());
  }

  auto& blocks = encoder ? model_.encoder_blocks() : model_.decoder_blocks();
  for (size_t l = 0; l < blocks.size(); ++l) {
    Block<T>& block = blocks[l];
    const int64_t layer = static_cast<int64_t>(l);
    observe_attention({stack, layer, "self_attn"}, block.self_attention(), mask.data());
    if (auto* cross = block.cross_attention())
      observe_attention({stack, layer, "cross_attn"}, *cross, mask.data());
    for (int i = 0; i < static_cast<int>(block.stage_count()); ++i) {
      const std::string site = block.stage_name(i);
      const Tensor<T>& out = block.stage_output(i);
      const Tensor<T>& f = block.sublayer_output(i);
      if (opt_.stream_probes) {
        residual_[{stack, layer, site}].merge(masked_moments(out.data(), rows, d, mask.data()));
        sublayer_[{stack, layer, site}].merge(masked_moments(f.data(), rows, d, mask.data()));
      }
      activation({stack, layer, site + ".out"}, f.data(), rows, d, mask.data());
      activation({stack, layer, site + ".residual"}, out.data(), rows, d, mask.data());
    }
  }
}

template <class T>
void ModelProbe<T>::observe_forward() {
  const ModelInput& in = model_.last_input();
  SL_CHECK(in.batch > 0 && in.tgt, "probes: observe_forward() before any forward of the model");
  if (model_.config().arch == Architecture::encoder_decoder) observe_stack(true);
  observe_stack(false);
  const Tensor<T>& logits = model_.logits();
  const std::vector<uint8_t> mask = row_mask(false);
  activation({"decoder", -1, "output_logits"}, logits.data(), logits.dim(0), logits.dim(1),
             mask.data());
  ++forwards_;
}

template <class T>
std::vector<ProbeRecord> ModelProbe<T>::records(int64_t seed, int64_t step) const {
  std::vector<ProbeRecord> out;
  for (const auto& [key, heads] : attention_) {
    const HeadAttentionStats all = merge_heads(heads);
    auto emit = [&](const HeadAttentionStats& s, int64_t head) {
      Values qk;
      for (const auto& [name, m] : {std::pair{"q", &s.q}, std::pair{"k", &s.k}}) {
        qk[std::string(name) + "_mean"] = m->mean_or_nan();
        qk[std::string(name) + "_var"] = m->variance();
        qk[std::string(name) + "_max_abs"] = m->max_abs();
      }
      out.push_back(make_record("attn_qk", key, head, seed, step, qk));
      ProbeRecord raw = make_record("attn_logits_raw", key, head, seed, step, range_values(s.raw));
      if (s.raw_histogram) raw.histograms["values"] = *s.raw_histogram;
      out.push_back(std::move(raw));
      ProbeRecord sc = make_record("attn_logits", key, head, seed, step, range_values(s.scaled));
      if (s.scaled_histogram) sc.histograms["values"] = *s.scaled_histogram;
      out.push_back(std::move(sc));
      ProbeRecord sm = make_record("attn_softmax", key, head, seed, step, softmax_values(s.softmax));
      if (s.softmax.entropy_histogram) sm.histograms["entropy_norm"] = *s.softmax.entropy_histogram;
      out.push_back(std::move(sm));
    };
    emit(all, -1);
    if (opt_.per_head)
      for (size_t h = 0; h < heads.size(); ++h) emit(heads[h], static_cast<int64_t>(h));
  }
  for (const auto& [key, sink] : kernel_) {
    if (sink->rows.empty()) continue;
    out.push_back(make_record("attn_kernel", key, -1, seed, step, kernel_values(*sink, -1)));
    if (opt_.per_head)
      for (size_t h = 0; h < sink->rows.size(); ++h)
        out.push_back(make_record("attn_kernel", key, static_cast<int64_t>(h), seed, step,
                                  kernel_values(*sink, static_cast<int64_t>(h))));
  }
  for (const auto& [stack, e] : embed_) {
    const double vt = e.token.variance(), vp = e.position.variance();
    Values v = {{"var_token", vt},
                {"var_position", vp},
                {"token_position_ratio", vp > 0 ? vt / vp : RunningMoments::nan()},
                {"var_sum", e.sum.variance()},
                {"var_input", e.input.variance()},
                {"token_sq_norm_mean", e.token_sq_norm.mean_or_nan()},
                {"position_sq_norm_mean", e.position_sq_norm.mean_or_nan()},
                {"rows", static_cast<double>(e.token_sq_norm.count)},
                {"d_model", static_cast<double>(model_.config().d_model)}};
    out.push_back(make_record("embed", Key{stack, -1, "input"}, -1, seed, step, v));
  }
  for (const auto& [key, m] : residual_)
    out.push_back(make_record("residual", key, -1, seed, step, moment_values(m)));
  for (const auto& [key, m] : sublayer_)
    out.push_back(make_record("sublayer", key, -1, seed, step, moment_values(m)));
  for (const auto& [key, r] : activation_)
    out.push_back(make_record("activation", key, -1, seed, step, activation_values(r)));
  return out;
}

template class ModelProbe<float>;
template class ModelProbe<double>;

}  // namespace scalelab::probes
