#include "scalelab/model/transformer.hpp"

#include <cmath>
#include <cstring>

#include "scalelab/core/parallel.hpp"
#include "scalelab/kernels/gemm.hpp"

namespace scalelab {

template <class T>
Transformer<T>::Transformer(const ModelConfig& config)
    : config_(config), encoder_decoder_(config.arch == Architecture::encoder_decoder) {
  SL_CHECK(config.tgt_vocab > 0, "model.tgt_vocab = ", config.tgt_vocab, ": must be set (> 0)");
  SL_CHECK(!encoder_decoder_ || config.src_vocab > 0, "model.src_vocab = ", config.src_vocab,
           ": must be set (> 0) for an encoder-decoder");
  SL_CHECK(config.d_model % config.n_heads == 0, "model.d_model = ", config.d_model,
           ": must be divisible by model.n_heads = ", config.n_heads);
  if (encoder_decoder_) {
    build_stack(encoder_, "encoder", config.src_vocab, config.encoder_layers, false, true);
  }
  build_stack(decoder_, "decoder", config.tgt_vocab, config.decoder_layers, encoder_decoder_, false);
  if (!config.tie_output) out_weight_ = Parameter<T>("decoder.out.weight", {config.tgt_vocab, config.d_model}, ParamRole::readout_weight);
  initialize();
}

template <class T>
void Transformer<T>::build_stack(Stack& s, const std::string& name, int64_t vocab, int64_t layers,
                                 bool cross, bool bidirectional) {
  const ModelConfig& c = config_;
  const LayerOptions opt = c.layer_options();
  s.embed = Embedding<T>(name + ".embed", vocab, c.d_model, c.embedding.scale_value, c.embedding.learned);
  if (c.positions == PositionEncoding::learned)
    s.positions = Parameter<T>(name + ".pos_embed.weight", {c.max_len, c.d_model}, ParamRole::learned_positions);
  if (c.positions == PositionEncoding::t5_bias) {
    s.relative_bias = Parameter<T>(name + ".rel_bias.weight", {c.t5_buckets, c.n_heads}, ParamRole::relative_bias);
    s.bias_shape = {c.t5_buckets, c.t5_max_distance, bidirectional};
  }
  if (c.embedding.layernorm)
    s.embed_norm = Norm<T>(name + ".embed_norm", c.d_model, NormKind::layer, c.norm_eps);
  s.dropout = Dropout<T>(c.dropout);
  for (int64_t l = 0; l < layers; ++l)
    s.blocks.emplace_back(name + ".layers." + std::to_string(l), opt, cross);
  if (has_final_norm()) s.final_norm = Norm<T>(name + ".final_norm", c.d_model, c.norm_kind, c.norm_eps);
}

// The documented parameter order (docs/checkpoint.md); it also fixes the initialisation streams.
template <class T>
ParameterRefs<T> Transformer<T>::stack_parameters(Stack& s) {
  ParameterRefs<T> out;
  collect_parameters(out, s.embed);
  if (config_.positions == PositionEncoding::learned) out.push_back(&s.positions);
  if (config_.positions == PositionEncoding::t5_bias) out.push_back(&s.relative_bias);
  if (config_.embedding.layernorm) collect_parameters(out, s.embed_norm);
  for (Block<T>& b : s.blocks) collect_parameters(out, b);
  if (has_final_norm()) collect_parameters(out, s.final_norm);
  return out;
}

template <class T>
ParameterRefs<T> Transformer<T>::parameters() {
  ParameterRefs<T> out;
  if (encoder_decoder_) out = stack_parameters(encoder_);
  for (Parameter<T>* p : stack_parameters(decoder_)) out.push_back(p);
  if (!config_.tie_output) out.push_back(&out_weight_);
  return out;
}

template <class T>
Parameter<T>* Transformer<T>::find_parameter(const std::string& name) {
  for (Parameter<T>* p : parameters())
    if (p->name == name) return p;
  return nullptr;
}

template <class T>
int64_t Transformer<T>::parameter_count() {
  int64_t n = 0;
  for (Parameter<T>* p : parameters()) n += p->value.numel();
  return n;
}

namespace {

template <class T>
void fill_uniform(Tensor<T>& t, Rng& rng, double bound) {
  for (T& v : t) v = static_cast<T>(rng.uniform(-bound, bound));
}
template <class T>
void fill_normal(Tensor<T>& t, Rng& rng, double stddev) {
  for (T& v : t) v = static_cast<T>(rng.normal(0.0, stddev));
}

}  // namespace

// Each parameter draws from its own stream split off the seed in parameter order, so adding a
// parameter at the end never changes the others. The initial value follows the parameter's role;
// what the embedding and attention scales decide (a learned scale's start, a temperature's, T5's
// W_q folded with the attention scale) their modules set, after the draws.
template <class T>
void Transformer<T>::initialize() {
  const ModelConfig& c = config_;
  Rng root(c.seed);
  const double d = static_cast<double>(c.d_model);
  for (Parameter<T>* p : parameters()) {
    Rng rng = root.split();
    Tensor<T>& w = p->value;
    switch (p->role) {
      case ParamRole::embedding_table: {
        const double vocab = static_cast<double>(w.dim(0));
        switch (c.embedding.init) {
          case EmbeddingInit::normal: fill_normal(w, rng, 1.0); break;
          case EmbeddingInit::normal_inv_d: fill_normal(w, rng, 1.0 / std::sqrt(d)); break;
          case EmbeddingInit::xavier_uniform: fill_uniform(w, rng, std::sqrt(6.0 / (vocab + d))); break;
          case EmbeddingInit::uniform_sqrt3_d: fill_uniform(w, rng, std::sqrt(3.0 / d)); break;
          case EmbeddingInit::normal_std: fill_normal(w, rng, c.embedding.init_std); break;
        }
        break;
      }
      case ParamRole::embedding_scale:         // set by its module (initialize_scale, below)
      case ParamRole::attention_temperature: break;
      case ParamRole::learned_positions: fill_normal(w, rng, c.learned_positions_std); break;
      case ParamRole::relative_bias: fill_normal(w, rng, 1.0 / std::sqrt(d)); break;  // HF T5: factor · d_model^-0.5
      case ParamRole::norm_gain: w.fill(T(1)); break;
      case ParamRole::norm_bias:
      case ParamRole::bias: w.zero(); break;
      case ParamRole::weight:
      case ParamRole::query_weight:
      case ParamRole::key_weight:
      case ParamRole::value_weight:
      case ParamRole::readout_weight: {  // a linear map [out, in]
        const double fan_out = static_cast<double>(w.dim(0)), fan_in = static_cast<double>(w.dim(1));
        switch (c.linear_init) {
          case LinearInit::xavier_uniform: fill_uniform(w, rng, std::sqrt(6.0 / (fan_in + fan_out))); break;
          case LinearInit::torch_default: fill_uniform(w, rng, 1.0 / std::sqrt(fan_in)); break;
          case LinearInit::normal_fan_in: fill_normal(w, rng, 1.0 / std::sqrt(fan_in)); break;
          case LinearInit::normal_std: fill_normal(w, rng, c.linear_init_std); break;
        }
        const bool query = p->role == ParamRole::query_weight;
        if (c.qkv_init_gain != 1.0 && (query || p->role == ParamRole::key_weight ||
                                       p->role == ParamRole::value_weight))
          for (T& v : w) v *= static_cast<T>(c.qkv_init_gain);
        // muP: zero query projection and readout (its bias, if any, starts at zero anyway).
        if ((c.zero_init_query && query) ||
            (c.zero_init_output && p->role == ParamRole::readout_weight))
          w.zero();
        break;
      }
    }
  }
  for (Stack* s : {&encoder_, &decoder_}) {
    s->embed.initialize_scale();
    for (Block<T>& b : s->blocks) {
      b.self_attention().initialize_scale();
      if (MultiHeadAttention<T>* cross = b.cross_attention()) cross->initialize_scale();
    }
  }
}

template <class T>
void Transformer<T>::zero_grad() {
  const ParameterRefs<T> params = parameters();  // tensors shared out across the threads
  parallel_for(static_cast<int64_t>(params.size()), [&](int64_t i) { params[i]->grad.zero(); });
}

template <class T>
const Tensor<T>& Transformer<T>::run_stack(Stack& s, const int32_t* ids, BlockCall call,
                                           const ForwardMode& mode) {
  SL_CHECK(call.len <= config_.max_len, "sequence length ", call.len, " exceeds model.max_len = ",
           config_.max_len);
  const int64_t rows = call.batch * call.len, d = config_.d_model;
  s.batch = call.batch;
  s.len = call.len;
  s.e0.resize({rows, d});
  s.x0.resize({rows, d});
  s.embed.forward(ids, rows, s.e0.data());  // s · E[ids]
  if (config_.positions == PositionEncoding::sinusoidal) {
    add_sinusoidal_positions(s.e0.data(), call.batch, call.len, d);  // + PE
  } else if (config_.positions == PositionEncoding::learned) {
    const T* P = s.positions.value.data();                             // + P[pos]
    T* e0 = s.e0.data();
    parallel_for(rows, [&](int64_t r) {
      for (int64_t j = 0; j < d; ++j) e0[r * d + j] += P[(r % call.len) * d + j];
    });
  }
  round_tensor(mode.rounding, s.e0.data(), rows * d, PrecisionOp::embedding_scale);
  // x0 = D(N_e(e0)), D(e0) or e0 itself: the blocks read e0 in place where neither the norm nor
  // an active dropout (which writes in place) stands between.
  const bool dropout_active = mode.training && s.dropout.p() > 0;
  const T* x = s.e0.data();
  if (config_.embedding.layernorm) {
    s.embed_norm.forward(s.e0.data(), rows, s.x0.data());  // N_e
    round_tensor(mode.rounding, s.x0.data(), rows * d, PrecisionOp::layernorm_normalize);
    x = s.x0.data();
  } else if (dropout_active) {
    parallel_copy(s.e0.data(), s.x0.data(), s.e0.numel());
    x = s.x0.data();
  }
  if (x == s.x0.data()) s.dropout.forward(s.x0.data(), rows * d, mode.rng, mode.training);
  else s.dropout.forward(nullptr, 0, mode.rng, /*training=*/false);  // inactive: its backward is the identity
  s.input = x == s.x0.data() ? &s.x0 : &s.e0;
  if (config_.positions == PositionEncoding::t5_bias) {  // shared by every layer of the stack
    const int64_t H = config_.n_heads;
    s.bias.resize({H, call.len, call.len});
    s.dbias.resize({H, call.len, call.len});
    s.dbias.zero();
    relative_bias_forward(s.bias_shape, s.relative_bias.value.data(), H, call.len, call.len, s.bias.data());
    call.self_bias = s.bias.data();
    call.self_dbias = s.dbias.data();
  }
  call.rounding = mode.rounding;
  const Tensor<T>* last = nullptr;  // the last block's output
  for (Block<T>& b : s.blocks) {
    last = &b.forward(call, x);
    x = last->data();
  }
  if (has_final_norm() || !last) {
    s.out.resize({rows, d});
    if (has_final_norm()) {
      s.final_norm.forward(x, rows, s.out.data());
      round_tensor(mode.rounding, s.out.data(), rows * d, PrecisionOp::layernorm_normalize);
    } else {
      parallel_copy(x, s.out.data(), rows * d);
    }
    s.output = &s.out;
  } else {
    s.output = last;  // post-norm: the last block's output is the stack's, not copied
  }
  return *s.output;
}

template <class T>
void Transformer<T>::backward_stack(Stack& s, const T* dout, T* dmemory) {
  const int64_t rows = s.batch * s.len, d = config_.d_model;
  s.dx.resize({rows, d});
  const T* dx = dout;  // each block reads the gradient of its output where the next left it
  if (has_final_norm()) {
    s.final_norm.backward(dout, s.dx.data());  // from out = N_f(x_L)
    round_tensor(rounding_, s.dx.data(), rows * d, PrecisionOp::activation_grad);
    dx = s.dx.data();
  }
  for (auto it = s.blocks.rbegin(); it != s.blocks.rend(); ++it) dx = it->backward(dx, dmemory).data();
  if (dx != s.dx.data()) parallel_copy(dx, s.dx.data(), rows * d);
  s.dropout.backward(s.dx.data(), rows * d);  // from x0 = D(...)
  const T* de0 = s.dx.data();
  if (config_.embedding.layernorm) {          // from x0 = N_e(e0)
    s.de0.resize({rows, d});
    s.embed_norm.backward(s.dx.data(), s.de0.data());
    round_tensor(rounding_, s.de0.data(), rows * d, PrecisionOp::activation_grad);
    de0 = s.de0.data();
  }
  if (config_.positions == PositionEncoding::learned) {  // from e0 += P[pos]: dP[p] += de0[b, p]
    T* dP = s.positions.grad.data();  // one position per iteration, its rows summed in order
    parallel_for(s.len, [&](int64_t p) {
      for (int64_t b = 0; b < s.batch; ++b)
        for (int64_t j = 0; j < d; ++j) dP[p * d + j] += de0[(b * s.len + p) * d + j];
    });
  }
  s.embed.backward(de0);  // from s · E[ids] (sinusoids are constant)
  if (config_.positions == PositionEncoding::t5_bias) {  // from bias = table[bucket]
    relative_bias_backward(s.bias_shape, s.dbias.data(), config_.n_heads, s.len, s.len,
                           s.relative_bias.grad.data());
  }
}

template <class T>
void Transformer<T>::encode(const ModelInput& in, const ForwardMode& mode) {
  SL_CHECK(encoder_decoder_, "encode() called on a decoder-only model");
  BlockCall call{.batch = in.batch, .len = in.src_len, .causal = false, .lengths = in.src_lengths,
                 .training = mode.training, .rng = mode.rng};
  run_stack(encoder_, in.src, call, mode);
}

template <class T>
const T* Transformer<T>::output_weight() {
  return config_.tie_output ? decoder_.embed.table().value.data() : out_weight_.value.data();
}

template <class T>
const Tensor<T>& Transformer<T>::decode(const ModelInput& in, const ForwardMode& mode) {
  input_ = in;
  BlockCall call{.batch = in.batch, .len = in.tgt_len, .causal = true, .lengths = nullptr,
                 .training = mode.training, .rng = mode.rng};
  if (encoder_decoder_) {
    call.memory = encoder_.output->data();
    call.memory_len = in.src_len;
    call.memory_lengths = in.src_lengths;
  }
  const Tensor<T>& h = run_stack(decoder_, in.tgt, call, mode);
  return output_logits(h.data(), in.batch * in.tgt_len, mode.rounding);
}

template <class T>
const Tensor<T>& Transformer<T>::output_logits(const T* h, int64_t rows, const TensorRounding* rounding) {
  const int64_t V = config_.tgt_vocab;
  logits_.resize({rows, V});
  // logits[rows, V] = c · h[rows, d] · W[V, d]ᵀ
  gemm<T>({.m = rows, .n = V, .k = config_.d_model, .trans_b = true}, h, output_weight(),
          logits_.data(), static_cast<T>(config_.embedding.output_scale));
  if (config_.output_softcap > 0) {  // logits = cap · tanh(logits / cap)
    const T cap = static_cast<T>(config_.output_softcap);
    for (T& z : logits_) z = cap * std::tanh(z / cap);
  }
  round_tensor(rounding, logits_.data(), rows * V, PrecisionOp::gemm);
  return logits_;
}

template <class T>
const Tensor<T>& Transformer<T>::forward(const ModelInput& in, const ForwardMode& mode) {
  SL_CHECK(!mode.training || config_.dropout == 0 || mode.rng,
           "training with dropout needs a random generator");
  rounding_ = mode.rounding;
  if (encoder_decoder_) encode(in, mode);
  return decode(in, mode);
}

template <class T>
void Transformer<T>::backward(const T* dlogits) {
  const ModelInput& in = input_;
  const int64_t rows = in.batch * in.tgt_len, V = config_.tgt_vocab, d = config_.d_model;
  if (rounding_ && rounding_->dtype != DType::f32) {  // the (scaled) loss gradient, stored in the format
    dlogits_.resize({rows, V});
    std::memcpy(dlogits_.data(), dlogits, rows * V * sizeof(T));
    round_tensor(rounding_, dlogits_.data(), rows * V, PrecisionOp::loss_scale);
    dlogits = dlogits_.data();
  }
  if (config_.output_softcap > 0) {  // from logits = cap tanh(z / cap): dz = dlogits (1 - (logits/cap)²)
    const T cap = static_cast<T>(config_.output_softcap);
    dlogits_.resize({rows, V});
    for (int64_t i = 0; i < rows * V; ++i) {  // (in place when dlogits is dlogits_)
      const T t = logits_[i] / cap;
      dlogits_[i] = dlogits[i] * (T(1) - t * t);
    }
    round_tensor(rounding_, dlogits_.data(), rows * V, PrecisionOp::activation_grad);
    dlogits = dlogits_.data();
  }
  const T c = static_cast<T>(config_.embedding.output_scale);
  T* dW = config_.tie_output ? decoder_.embed.table().grad.data() : out_weight_.grad.data();
  // from logits = c · h Wᵀ:  dW += c · dlogitsᵀ h,  dh = c · dlogits W
  gemm<T>({.m = V, .n = d, .k = rows, .trans_a = true}, dlogits, decoder_.output->data(), dW, c, T(1));
  dh_.resize({rows, d});
  gemm<T>({.m = rows, .n = d, .k = V}, dlogits, output_weight(), dh_.data(), c);
  round_tensor(rounding_, dh_.data(), rows * d, PrecisionOp::activation_grad);
  T* dmemory = nullptr;
  if (encoder_decoder_) {
    dmemory_.resize({in.batch * in.src_len, d});
    parallel_zero(dmemory_.data(), dmemory_.numel());
    dmemory = dmemory_.data();
  }
  backward_stack(decoder_, dh_.data(), dmemory);
  if (encoder_decoder_) {
    round_tensor(rounding_, dmemory_.data(), dmemory_.numel(), PrecisionOp::activation_grad);
    backward_stack(encoder_, dmemory_.data(), nullptr);
  }
}

template class Transformer<float>;
template class Transformer<double>;

}  // namespace scalelab
