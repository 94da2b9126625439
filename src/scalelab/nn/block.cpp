#include "scalelab/nn/block.hpp"

#include <cstring>

namespace scalelab {

template <class T>
Block<T>::Block(const std::string& name, const LayerOptions& options, bool cross_attention)
    : opt_(options),
      has_cross_(cross_attention),
      self_attn_(name + ".self_attn", options),
      ffn_(name + ".ffn", options) {
  if (cross_attention) cross_attn_ = MultiHeadAttention<T>(name + ".cross_attn", options);
  std::vector<Kind> kinds{Kind::self_attn};
  if (cross_attention) kinds.push_back(Kind::cross_attn);
  kinds.push_back(Kind::ffn);
  for (size_t i = 0; i < kinds.size(); ++i) {
    stages_.push_back(Stage{kinds[i],
                            LayerNorm<T>(name + ".norm" + std::to_string(i + 1), options.d_model,
                                         options.norm_eps),
                            Dropout<T>(options.dropout)});
  }
}

template <class T>
void Block<T>::run(Stage& s, const T* f_input, T* f_output) {
  const BlockCall& c = call_;
  switch (s.kind) {
    case Kind::self_attn:
      self_attn_.forward({c.batch, c.len, c.len, c.causal, c.lengths}, f_input, f_input, f_output);
      break;
    case Kind::cross_attn:
      cross_attn_.forward({c.batch, c.len, c.memory_len, false, c.memory_lengths}, f_input,
                          static_cast<const T*>(c.memory), f_output);
      break;
    case Kind::ffn:
      ffn_.forward(f_input, rows_, f_output);
      break;
  }
}

template <class T>
const Tensor<T>& Block<T>::forward(const BlockCall& call, const T* x) {
  call_ = call;
  rows_ = call.batch * call.len;
  const int64_t n = rows_ * opt_.d_model;
  const Shape shape{rows_, opt_.d_model};
  const T* in = x;
  for (Stage& s : stages_) {
    s.in = in;
    s.f_out.resize(shape);
    s.out.resize(shape);
    if (opt_.norm == NormPlacement::pre) {
      s.f_in.resize(shape);
      s.norm.forward(in, rows_, s.f_in.data());       // LN(x)
      run(s, s.f_in.data(), s.f_out.data());          // f(LN(x))
      s.dropout.forward(s.f_out.data(), n, *call.rng, call.training);
      for (int64_t i = 0; i < n; ++i) s.out[i] = in[i] + s.f_out[i];  // x + D(f(LN(x)))
    } else {
      s.sum.resize(shape);
      run(s, in, s.f_out.data());                     // f(x)
      s.dropout.forward(s.f_out.data(), n, *call.rng, call.training);
      for (int64_t i = 0; i < n; ++i) s.sum[i] = in[i] + s.f_out[i];  // x + D(f(x))
      s.norm.forward(s.sum.data(), rows_, s.out.data());              // LN(x + D(f(x)))
    }
    in = s.out.data();
  }
  return stages_.back().out;
}

// Accumulates f's input gradient into dinput (+=) given df, the gradient of f's output.
template <class T>
void Block<T>::run_backward(Stage& s, const T* df, T* dinput) {
  switch (s.kind) {
    case Kind::self_attn: self_attn_.backward(df, dinput, dinput); break;
    case Kind::cross_attn: cross_attn_.backward(df, dinput, dmemory_); break;
    case Kind::ffn: ffn_.backward(df, dinput); break;
  }
}

template <class T>
const Tensor<T>& Block<T>::backward(const T* dy, T* dmemory) {
  dmemory_ = dmemory;
  const int64_t n = rows_ * opt_.d_model;
  const Shape shape{rows_, opt_.d_model};
  grad_a_.resize(shape);  // gradient of the current stage's output
  grad_b_.resize(shape);  // gradient of its input
  df_.resize(shape);
  std::memcpy(grad_a_.data(), dy, n * sizeof(T));
  for (auto it = stages_.rbegin(); it != stages_.rend(); ++it) {
    Stage& s = *it;
    if (opt_.norm == NormPlacement::pre) {
      // from out = x + D(f(LN(x))): dx = dout + LN'ᵀ f'ᵀ D'ᵀ dout
      std::memcpy(grad_b_.data(), grad_a_.data(), n * sizeof(T));
      std::memcpy(df_.data(), grad_a_.data(), n * sizeof(T));
      s.dropout.backward(df_.data(), n);
      dfin_.resize(shape);
      dfin_.zero();
      run_backward(s, df_.data(), dfin_.data());
      s.norm.backward(dfin_.data(), grad_b_.data(), /*accumulate_dx=*/true);
    } else {
      // from out = LN(sum), sum = x + D(f(x)): dsum = LN'ᵀ dout; dx = dsum + f'ᵀ D'ᵀ dsum
      s.norm.backward(grad_a_.data(), grad_b_.data());
      std::memcpy(df_.data(), grad_b_.data(), n * sizeof(T));
      s.dropout.backward(df_.data(), n);
      run_backward(s, df_.data(), grad_b_.data());
    }
    std::swap(grad_a_, grad_b_);
  }
  return grad_a_;
}

template <class T>
ParameterRefs<T> Block<T>::parameters() {
  ParameterRefs<T> out;
  collect_parameters(out, self_attn_);
  if (has_cross_) collect_parameters(out, cross_attn_);
  collect_parameters(out, ffn_);
  for (Stage& s : stages_) collect_parameters(out, s.norm);
  return out;
}

template class Block<float>;
template class Block<double>;

}  // namespace scalelab
