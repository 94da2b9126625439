#include "scalelab/nn/attention.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "scalelab/core/error.hpp"
#include "scalelab/core/parallel.hpp"

#include "scalelab/kernels/attention_decode.hpp"
#include "scalelab/kernels/rope.hpp"

namespace scalelab {

std::vector<double> alibi_slopes(int64_t heads) {
  auto power_of_two_slopes = [](int64_t n) {
    std::vector<double> s(n);
    for (int64_t i = 0; i < n; ++i) s[i] = std::pow(2.0, -8.0 * double(i + 1) / double(n));
    return s;
  };
  int64_t closest = 1;
  while (closest * 2 <= heads) closest *= 2;
  std::vector<double> slopes = power_of_two_slopes(closest);
  if (closest < heads) {
    const std::vector<double> extra = power_of_two_slopes(2 * closest);
    for (int64_t i = 0; static_cast<int64_t>(slopes.size()) < heads; i += 2) slopes.push_back(extra[i]);
  }
  return slopes;
}

template <class T>
MultiHeadAttention<T>::MultiHeadAttention(const std::string& name, const LayerOptions& options)
    : opt_(options),
      scale_(options.attention.scale.resolve(options.head_dim())),
      q_(name + ".q", options.d_model, options.d_model, options.bias, ParamRole::query_weight),
      k_(name + ".k", options.d_model, options.d_model, options.bias, ParamRole::key_weight),
      v_(name + ".v", options.d_model, options.d_model, options.bias, ParamRole::value_weight),
      o_(name + ".o", options.d_model, options.d_model, options.bias) {
  const AttentionKnobs& knobs = opt_.attention;
  const int64_t dk = options.head_dim();
  if (knobs.qk_norm != QkNorm::none) {
    const NormKind kind = knobs.qk_norm == QkNorm::layer ? NormKind::layer : NormKind::rms;
    q_norm_ = Norm<T>(name + ".q_norm", dk, kind, options.norm_eps, knobs.qk_norm_learned);
    k_norm_ = Norm<T>(name + ".k_norm", dk, kind, options.norm_eps, knobs.qk_norm_learned);
  }
  if (knobs.learned_temperature)
    temperature_ = Parameter<T>(name + ".temperature", {options.n_heads}, ParamRole::attention_temperature);
  if (knobs.alibi) {
    const std::vector<double> slopes = alibi_slopes(options.n_heads);
    alibi_slopes_.resize({options.n_heads});
    for (int64_t h = 0; h < options.n_heads; ++h) alibi_slopes_[h] = static_cast<T>(slopes[h]);
  }
  initialize_scale();  // a module built alone starts at its temperature (W_q is still zero)
}

template <class T>
void MultiHeadAttention<T>::initialize_scale() {
  // kernel_scale(), not the scale: a temperature excludes a query pre-scale.
  if (opt_.attention.learned_temperature) temperature_.value.fill(static_cast<T>(kernel_scale()));
  if (opt_.attention.fold_into_init) {
    const T c = static_cast<T>(folded_query_init());
    for (T& v : q_.weight().value) v *= c;
  }
}

template <class T>
bool MultiHeadAttention<T>::transforms_qk() const {
  return opt_.attention.qk_norm != QkNorm::none || opt_.attention.rope || opt_.attention.scale_query;
}

// The attention scale is applied once: to q before the kernel (query_scale(), in the header), to
// W_q's initialisation (folded_query_init()) or by the kernel (here); every use asks one of the three.
template <class T>
double MultiHeadAttention<T>::kernel_scale() const {
  const AttentionKnobs& knobs = opt_.attention;
  return knobs.scale_query || knobs.fold_into_init ? 1.0 : scale_;
}

// c · q into q_scaled_ (q itself is kept for unscaled_q()).
template <class T>
const Tensor<T>& MultiHeadAttention<T>::scale_query(const Tensor<T>& q) {
  const T c = static_cast<T>(query_scale());
  q_scaled_.resize(q.shape());
  const T* in = q.data();
  T* out = q_scaled_.data();
  parallel_elements(q.numel(), [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) out[i] = c * in[i];
  });
  return q_scaled_;
}

template <class T>
AttentionShape MultiHeadAttention<T>::shape(const AttentionCall& call) const {
  return {.batch = call.batch, .heads = opt_.n_heads, .q_len = call.q_len, .k_len = call.k_len,
          .head_dim = opt_.head_dim()};
}

template <class T>
AttentionOptions<T> MultiHeadAttention<T>::kernel_options(const AttentionCall& call) const {
  AttentionOptions<T> o;
  o.scale = kernel_scale();
  o.head_scales = opt_.attention.learned_temperature ? temperature_.value.data() : nullptr;
  o.causal = call.causal;
  o.key_lengths = call.key_lengths;
  o.softcap = opt_.attention.softcap;
  o.bias = static_cast<const T*>(call.bias);
  o.alibi_slopes = opt_.attention.alibi ? alibi_slopes_.data() : nullptr;
  return o;
}

template <class T>
AttentionShape MultiHeadAttention<T>::kernel_shape() const {
  AttentionShape s = shape(call_);
  s.q_stride = inputs_.q_stride, s.k_stride = inputs_.k_stride, s.v_stride = inputs_.v_stride;
  return s;
}

template <class T>
const Tensor<T>& MultiHeadAttention<T>::stacked_block(int64_t block, Tensor<T>& dst) const {
  const int64_t d = opt_.d_model, width = proj_.shape()[1], rows = proj_.shape()[0];
  dst.resize({rows, d});
  for (int64_t r = 0; r < rows; ++r)
    std::memcpy(dst.data() + r * d, proj_.data() + r * width + block * d, d * sizeof(T));
  return dst;
}

template <class T>
const Tensor<T>& MultiHeadAttention<T>::kernel_q() const {
  if (stacking_ == Stacking::qkv) return stacked_block(0, qraw_);
  return q_in_ ? *q_in_ : qraw_;
}

template <class T>
const Tensor<T>& MultiHeadAttention<T>::kernel_k() const {
  if (stacking_ != Stacking::none) return stacked_block(stacking_ == Stacking::qkv ? 1 : 0, kraw_);
  return k_in_ ? *k_in_ : kraw_;
}

template <class T>
const Tensor<T>& MultiHeadAttention<T>::kernel_v() const {
  if (stacking_ != Stacking::none) return stacked_block(stacking_ == Stacking::qkv ? 2 : 1, vbuf_);
  return vbuf_;
}

template <class T>
void MultiHeadAttention<T>::forward(const AttentionCall& call, const T* x_q, const T* x_kv, T* y) {
  call_ = call;
  const int64_t d = opt_.d_model, H = opt_.n_heads, dk = opt_.head_dim();
  const int64_t rows_q = call.batch * call.q_len, rows_k = call.batch * call.k_len;
  ctx_.resize({rows_q, d});
  q_in_ = k_in_ = nullptr;
  if (!transforms_qk() && x_kv == x_q) {  // q, k, v of one x: one GEMM, [rows, 3d]
    stacking_ = Stacking::qkv;
    proj_.resize({rows_q, 3 * d});
    stacked_.forward({&q_, &k_, &v_}, x_q, rows_q, proj_.data());
    inputs_ = {proj_.data(), proj_.data() + d, proj_.data() + 2 * d, 3 * d, 3 * d, 3 * d};
  } else if (!transforms_qk()) {  // q of x_q; k, v of the memory: one GEMM, [rows_k, 2d]
    stacking_ = Stacking::kv;
    qraw_.resize({rows_q, d});
    q_.forward(x_q, rows_q, qraw_.data());
    proj_.resize({rows_k, 2 * d});
    stacked_.forward({&k_, &v_}, x_kv, rows_k, proj_.data());
    inputs_ = {qraw_.data(), proj_.data(), proj_.data() + d, 0, 2 * d, 2 * d};
  } else {
    stacking_ = Stacking::none;
    qraw_.resize({rows_q, d});
    kraw_.resize({rows_k, d});
    vbuf_.resize({rows_k, d});
    // One bf16 copy of an input for all its projections (where the GEMMs run in bf16).
    q_.forward(x_q, rows_q, qraw_.data());
    k_.forward(x_kv, rows_k, kraw_.data(), x_kv == x_q ? q_.input_copy() : nullptr);
    v_.forward(x_kv, rows_k, vbuf_.data(), k_.input_copy());
    qk_q_.resize({rows_q, d});
    qk_k_.resize({rows_k, d});
    if (opt_.attention.qk_norm != QkNorm::none) {  // per head: rows of d_k
      q_norm_.forward(qraw_.data(), rows_q * H, qk_q_.data());
      k_norm_.forward(kraw_.data(), rows_k * H, qk_k_.data());
    } else {
      std::memcpy(qk_q_.data(), qraw_.data(), qraw_.bytes());
      std::memcpy(qk_k_.data(), kraw_.data(), kraw_.bytes());
    }
    if (opt_.attention.rope) {
      rope_forward<T>({call.batch, call.q_len, H, dk, 0, 0, opt_.attention.rope_base}, qk_q_.data());
      rope_forward<T>({call.batch, call.k_len, H, dk, 0, 0, opt_.attention.rope_base}, qk_k_.data());
    }
    q_in_ = opt_.attention.scale_query ? &scale_query(qk_q_) : &qk_q_;
    k_in_ = &qk_k_;
    inputs_ = {q_in_->data(), k_in_->data(), vbuf_.data()};
  }
  attention_forward<T>(opt_.attention.kernel, kernel_shape(), kernel_options(call), inputs_.q,
                       inputs_.k, inputs_.v, ctx_.data(), saved_, probe_sink_);
  o_.forward(ctx_.data(), rows_q, y);
}

template <class T>
void MultiHeadAttention<T>::backward(const T* dy, T* dx_q, T* dx_kv) {
  const int64_t d = opt_.d_model, H = opt_.n_heads, dk = opt_.head_dim();
  const int64_t rows_q = call_.batch * call_.q_len, rows_k = call_.batch * call_.k_len;
  dctx_.resize({rows_q, d});
  o_.backward(dy, dctx_.data());  // from y = ctx Woᵀ + bo
  AttentionExtraGrads<T> extra;
  extra.dhead_scales = opt_.attention.learned_temperature ? temperature_.grad.data() : nullptr;
  extra.dbias = static_cast<T*>(call_.dbias);
  // dq, dk (dkey), dv (dval) in the layout of q, k, v: blocks of dproj_ where the projections
  // were stacked
  T *dq = nullptr, *dkey = nullptr, *dval = nullptr;
  if (stacking_ == Stacking::qkv) {
    SL_CHECK(dx_q == dx_kv, "MultiHeadAttention::backward: self-attention (x_q == x_kv) needs "
                            "dx_q == dx_kv, got two buffers");
    dproj_.resize({rows_q, 3 * d});
    dq = dproj_.data(), dkey = dq + d, dval = dq + 2 * d;
  } else {
    dq_.resize({rows_q, d});
    dq = dq_.data();
    if (stacking_ == Stacking::kv) {
      dproj_.resize({rows_k, 2 * d});
      dkey = dproj_.data(), dval = dkey + d;
    } else {
      dk_.resize({rows_k, d});
      dv_.resize({rows_k, d});
      dkey = dk_.data(), dval = dv_.data();
    }
  }
  attention_backward<T>(opt_.attention.kernel, kernel_shape(), kernel_options(call_), inputs_.q,
                        inputs_.k, inputs_.v, ctx_.data(), dctx_.data(), saved_, dq, dkey, dval, extra);
  // from [q k v] = x [Wq; Wk; Wv]ᵀ + [bq bk bv]   (or [k v] = x_kv [Wk; Wv]ᵀ + [bk bv])
  if (stacking_ == Stacking::qkv) {
    stacked_.backward(dproj_.data(), dx_q, /*accumulate_dx=*/true);
    return;
  }
  if (stacking_ == Stacking::kv) {
    q_.backward(dq, dx_q, /*accumulate_dx=*/true);
    stacked_.backward(dproj_.data(), dx_kv, /*accumulate_dx=*/true);
    return;
  }
  const T* dq_in = dq;
  const T* dk_raw = dkey;
  if (opt_.attention.scale_query) {  // from q = c · q
    const T c = static_cast<T>(query_scale());
    for (T& v : dq_) v *= c;
  }
  if (opt_.attention.rope) {  // from q, k = RoPE(q), RoPE(k)
    rope_backward<T>({call_.batch, call_.q_len, H, dk, 0, 0, opt_.attention.rope_base}, dq_.data());
    rope_backward<T>({call_.batch, call_.k_len, H, dk, 0, 0, opt_.attention.rope_base}, dk_.data());
  }
  if (opt_.attention.qk_norm != QkNorm::none) {  // from q, k = QKNorm(q), QKNorm(k)
    dqn_.resize({rows_q, d});
    dkn_.resize({rows_k, d});
    q_norm_.backward(dq_.data(), dqn_.data());
    k_norm_.backward(dk_.data(), dkn_.data());
    dq_in = dqn_.data();
    dk_raw = dkn_.data();
  }
  // from q = x_q Wqᵀ + bq, k = x_kv Wkᵀ + bk, v = x_kv Wvᵀ + bv
  q_.backward(dq_in, dx_q, /*accumulate_dx=*/true);
  k_.backward(dk_raw, dx_kv, /*accumulate_dx=*/true);
  v_.backward(dv_.data(), dx_kv, /*accumulate_dx=*/true);
}

template <class T>
void KvCache<T>::reset(int64_t n, int64_t cap, int64_t d) {
  sequences = n;
  capacity = cap;
  len = 0;
  k.resize({n, cap, d});
  v.resize({n, cap, d});
}

template <class T>
void KvCache<T>::gather(const std::vector<int64_t>& rows) {
  const int64_t n = static_cast<int64_t>(rows.size()), d = k.numel() / std::max<int64_t>(1, sequences * capacity);
  spare_k_.resize({n, capacity, d});
  spare_v_.resize({n, capacity, d});
  const size_t bytes = static_cast<size_t>(len * d) * sizeof(T);  // only the filled positions
  for (int64_t r = 0; r < n; ++r) {
    SL_CHECK(rows[r] >= 0 && rows[r] < sequences, "KvCache::gather: row ", rows[r], " of ", sequences);
    std::memcpy(spare_k_.data() + r * capacity * d, k.data() + rows[r] * capacity * d, bytes);
    std::memcpy(spare_v_.data() + r * capacity * d, v.data() + rows[r] * capacity * d, bytes);
  }
  std::swap(k, spare_k_);
  std::swap(v, spare_v_);
  sequences = n;
}

template <class T>
void KvCache<T>::keep_first(int64_t n) {
  SL_CHECK(n >= 0 && n <= sequences, "KvCache::keep_first: ", n, " of ", sequences, " sequences");
  const int64_t d = k.numel() / std::max<int64_t>(1, sequences * capacity);
  k.resize({n, capacity, d});  // shrinking keeps the leading elements
  v.resize({n, capacity, d});
  sequences = n;
}

template <class T>
void MultiHeadAttention<T>::project_memory(const T* memory, int64_t sequences, int64_t len,
                                           KvCache<T>& cache) {
  const int64_t d = opt_.d_model, H = opt_.n_heads, rows = sequences * len;
  cache.reset(sequences, len, d);
  cache.len = len;
  k_.forward(memory, rows, cache.k.data());  // k = m Wkᵀ + bk
  v_.forward(memory, rows, cache.v.data());  // v = m Wvᵀ + bv
  if (opt_.attention.qk_norm != QkNorm::none) {      // k = QKNorm(k), per head (no RoPE across attention)
    kraw_.resize({rows, d});
    std::memcpy(kraw_.data(), cache.k.data(), kraw_.bytes());
    k_norm_.forward(kraw_.data(), rows * H, cache.k.data());
  }
}

// The rows of forward for the last query: the same projections and q/k transforms, the new k, v
// stored in the cache, then one query row against the cached keys.
template <class T>
void MultiHeadAttention<T>::forward_step(const AttentionStep& step, const T* x, KvCache<T>& cache,
                                         bool append, T* y) {
  const int64_t d = opt_.d_model, H = opt_.n_heads, dk = opt_.head_dim(), B = step.batch;
  const int64_t pos = cache.len;  // the new token's position (self-attention)
  if (append) {
    SL_CHECK(cache.sequences == B && pos < cache.capacity, "KvCache: ", B, " rows at position ", pos,
             " do not fit a cache of ", cache.sequences, " sequences x ", cache.capacity, " positions");
  }
  stacking_ = Stacking::none;  // one token's projections, each its own GEMM
  qraw_.resize({B, d});
  ctx_.resize({B, d});
  q_.forward(x, B, qraw_.data());
  if (append) {
    kraw_.resize({B, d});
    vbuf_.resize({B, d});
    k_.forward(x, B, kraw_.data());
    v_.forward(x, B, vbuf_.data());
  }
  const T* q = qraw_.data();
  const T* k_new = kraw_.data();
  if (transforms_qk()) {
    qk_q_.resize({B, d});
    if (append) qk_k_.resize({B, d});
    if (opt_.attention.qk_norm != QkNorm::none) {
      q_norm_.forward(qraw_.data(), B * H, qk_q_.data());
      if (append) k_norm_.forward(kraw_.data(), B * H, qk_k_.data());
    } else {
      std::memcpy(qk_q_.data(), qraw_.data(), qraw_.bytes());
      if (append) std::memcpy(qk_k_.data(), kraw_.data(), kraw_.bytes());
    }
    if (opt_.attention.rope) {  // self-attention only: both at the new token's position
      rope_forward<T>({B, 1, H, dk, 0, pos, opt_.attention.rope_base}, qk_q_.data());
      rope_forward<T>({B, 1, H, dk, 0, pos, opt_.attention.rope_base}, qk_k_.data());
    }
    q = opt_.attention.scale_query ? scale_query(qk_q_).data() : qk_q_.data();
    if (append) k_new = qk_k_.data();
  }
  if (append) {
    for (int64_t b = 0; b < B; ++b) {
      std::memcpy(cache.k.data() + (b * cache.capacity + pos) * d, k_new + b * d, d * sizeof(T));
      std::memcpy(cache.v.data() + (b * cache.capacity + pos) * d, vbuf_.data() + b * d, d * sizeof(T));
    }
    cache.len = pos + 1;
  }
  AttentionCall call{.batch = B, .q_len = 1, .k_len = cache.len, .causal = false,
                     .key_lengths = append ? nullptr : step.key_lengths,
                     .bias = append ? step.bias : nullptr};
  attention_decode_forward<T>({.batch = B, .heads = H, .head_dim = dk, .k_len = cache.len,
                               .capacity = cache.capacity},
                              kernel_options(call), q, cache.k.data(), cache.v.data(),
                              append ? nullptr : step.sequence_of_row, ctx_.data());
  o_.forward(ctx_.data(), B, y);
}

template <class T>
ParameterRefs<T> MultiHeadAttention<T>::parameters() {
  ParameterRefs<T> out;
  collect_parameters(out, q_, k_, v_, o_);
  if (opt_.attention.qk_norm != QkNorm::none) collect_parameters(out, q_norm_, k_norm_);
  if (opt_.attention.learned_temperature) out.push_back(&temperature_);
  return out;
}

template struct KvCache<float>;
template struct KvCache<double>;
template class MultiHeadAttention<float>;
template class MultiHeadAttention<double>;

}  // namespace scalelab
