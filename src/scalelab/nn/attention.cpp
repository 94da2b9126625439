#include "scalelab/nn/attention.hpp"

namespace scalelab {

template <class T>
MultiHeadAttention<T>::MultiHeadAttention(const std::string& name, const LayerOptions& options)
    : opt_(options),
      q_(name + ".q", options.d_model, options.d_model),
      k_(name + ".k", options.d_model, options.d_model),
      v_(name + ".v", options.d_model, options.d_model),
      o_(name + ".o", options.d_model, options.d_model) {}

template <class T>
AttentionShape MultiHeadAttention<T>::shape(const AttentionCall& call) const {
  return {.batch = call.batch, .heads = opt_.n_heads, .q_len = call.q_len, .k_len = call.k_len,
          .head_dim = opt_.head_dim()};
}

template <class T>
AttentionOptions<T> MultiHeadAttention<T>::kernel_options(const AttentionCall& call) const {
  AttentionOptions<T> o;
  o.scale = opt_.attention_scale.resolve(opt_.head_dim());
  o.causal = call.causal;
  o.key_lengths = call.key_lengths;
  return o;
}

template <class T>
void MultiHeadAttention<T>::forward(const AttentionCall& call, const T* x_q, const T* x_kv, T* y) {
  call_ = call;
  const int64_t d = opt_.d_model, rows_q = call.batch * call.q_len, rows_k = call.batch * call.k_len;
  qbuf_.resize({rows_q, d});
  kbuf_.resize({rows_k, d});
  vbuf_.resize({rows_k, d});
  ctx_.resize({rows_q, d});
  q_.forward(x_q, rows_q, qbuf_.data());
  k_.forward(x_kv, rows_k, kbuf_.data());
  v_.forward(x_kv, rows_k, vbuf_.data());
  attention_naive_forward<T>(shape(call), kernel_options(call), qbuf_.data(), kbuf_.data(),
                             vbuf_.data(), ctx_.data(), saved_);
  o_.forward(ctx_.data(), rows_q, y);
}

template <class T>
void MultiHeadAttention<T>::backward(const T* dy, T* dx_q, T* dx_kv) {
  const int64_t d = opt_.d_model, rows_q = call_.batch * call_.q_len,
                rows_k = call_.batch * call_.k_len;
  dctx_.resize({rows_q, d});
  dq_.resize({rows_q, d});
  dk_.resize({rows_k, d});
  dv_.resize({rows_k, d});
  o_.backward(dy, dctx_.data());  // from y = ctx Woᵀ + bo
  attention_naive_backward<T>(shape(call_), kernel_options(call_), qbuf_.data(), kbuf_.data(),
                              vbuf_.data(), dctx_.data(), saved_, dq_.data(), dk_.data(),
                              dv_.data());
  // from q = x_q Wqᵀ + bq, k = x_kv Wkᵀ + bk, v = x_kv Wvᵀ + bv
  q_.backward(dq_.data(), dx_q, /*accumulate_dx=*/true);
  k_.backward(dk_.data(), dx_kv, /*accumulate_dx=*/true);
  v_.backward(dv_.data(), dx_kv, /*accumulate_dx=*/true);
}

template <class T>
ParameterRefs<T> MultiHeadAttention<T>::parameters() {
  ParameterRefs<T> out;
  collect_parameters(out, q_, k_, v_, o_);
  return out;
}

template class MultiHeadAttention<float>;
template class MultiHeadAttention<double>;

}  // namespace scalelab
