#include "scalelab/nn/block.hpp"

#include "scalelab/core/error.hpp"
#include "scalelab/core/parallel.hpp"

namespace scalelab {

template <class T>
Block<T>::Block(const std::string& name, const LayerOptions& options, bool cross_attention)
    : opt_(options),
      has_cross_(cross_attention),
      self_attn_(name + ".self_attn", options),
      ffn_(name + ".ffn", options) {
  if (cross_attention) {
    cross_attn_ = MultiHeadAttention<T>(name + ".cross_attn", options.cross_attention());
  }
  std::vector<Kind> kinds{Kind::self_attn};
  if (cross_attention) kinds.push_back(Kind::cross_attn);
  kinds.push_back(Kind::ffn);
  for (size_t i = 0; i < kinds.size(); ++i) {
    const std::string index = std::to_string(i + 1);
    Stage s;
    s.kind = kinds[i];
    s.norm = Norm<T>(name + ".norm" + index, options.d_model, options.norm_kind, options.norm_eps);
    s.dropout = Dropout<T>(options.dropout);
    if (options.norm == NormPlacement::sandwich)
      s.post_norm = Norm<T>(name + ".post_norm" + index, options.d_model, options.norm_kind, options.norm_eps);
    stages_.push_back(std::move(s));
  }
}

template <class T>
const char* Block<T>::stage_name(int i) const {
  switch (stages_[i].kind) {
    case Kind::self_attn: return "self_attn";
    case Kind::cross_attn: return "cross_attn";
    case Kind::ffn: return "ffn";
  }
  return "";
}

template <class T>
void Block<T>::run(Stage& s, const T* f_input, T* f_output) {
  const BlockCall& c = call_;
  if (step_cache_) {  // cached decoding: one token per row against the layer's cache
    switch (s.kind) {
      case Kind::self_attn:
        self_attn_.forward_step({.batch = c.batch, .bias = c.self_bias}, f_input, step_cache_->self,
                                /*append=*/true, f_output);
        return;
      case Kind::cross_attn:
        cross_attn_.forward_step({.batch = c.batch, .sequence_of_row = c.memory_sequence_of_row,
                                  .key_lengths = c.memory_lengths},
                                 f_input, step_cache_->cross, /*append=*/false, f_output);
        return;
      case Kind::ffn: break;
    }
  }
  switch (s.kind) {
    case Kind::self_attn:
      self_attn_.forward({c.batch, c.len, c.len, c.causal, c.lengths, c.self_bias, c.self_dbias},
                         f_input, f_input, f_output);
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
  const TensorRounding* r = call.rounding;  // bf16/f16 storage of each produced tensor, or null
  const T* in = x;
  for (Stage& s : stages_) {
    s.in = in;
    s.f_out.resize(shape);
    s.out.resize(shape);
    switch (opt_.norm) {
      case NormPlacement::pre:
        s.f_in.resize(shape);
        s.norm.forward(in, rows_, s.f_in.data());       // N(x)
        round_tensor(r, s.f_in.data(), n, PrecisionOp::layernorm_normalize);
        run(s, s.f_in.data(), s.f_out.data());          // f(N(x))
        round_tensor(r, s.f_out.data(), n, PrecisionOp::gemm);
        s.dropout.forward_add(s.f_out.data(), in, s.out.data(), n, call.rng, call.training);
        round_tensor(r, s.out.data(), n, PrecisionOp::residual_add);  // x + D(f(N(x))), one pass
        break;
      case NormPlacement::sandwich:
        s.f_in.resize(shape);
        s.f_raw.resize(shape);
        s.norm.forward(in, rows_, s.f_in.data());                 // N(x)
        round_tensor(r, s.f_in.data(), n, PrecisionOp::layernorm_normalize);
        run(s, s.f_in.data(), s.f_raw.data());                    // f(N(x))
        round_tensor(r, s.f_raw.data(), n, PrecisionOp::gemm);
        s.post_norm.forward(s.f_raw.data(), rows_, s.f_out.data());  // N'(f(N(x)))
        round_tensor(r, s.f_out.data(), n, PrecisionOp::layernorm_normalize);
        s.dropout.forward_add(s.f_out.data(), in, s.out.data(), n, call.rng, call.training);
        round_tensor(r, s.out.data(), n, PrecisionOp::residual_add);  // x + D(N'(f(N(x))))
        break;
      case NormPlacement::post:
        s.sum.resize(shape);
        run(s, in, s.f_out.data());                     // f(x)
        round_tensor(r, s.f_out.data(), n, PrecisionOp::gemm);
        s.dropout.forward_add(s.f_out.data(), in, s.sum.data(), n, call.rng, call.training);
        round_tensor(r, s.sum.data(), n, PrecisionOp::residual_add);  // x + D(f(x))
        s.norm.forward(s.sum.data(), rows_, s.out.data());              // N(x + D(f(x)))
        round_tensor(r, s.out.data(), n, PrecisionOp::layernorm_normalize);
        break;
    }
    in = s.out.data();
  }
  return stages_.back().out;
}

template <class T>
const Tensor<T>& Block<T>::forward_step(const BlockCall& call, const T* x, BlockCache<T>& cache) {
  SL_CHECK(call.len == 1 && !call.training && !call.rounding,
           "Block::forward_step: one token per row, evaluation only (len = ", call.len, ")");
  step_cache_ = &cache;
  const Tensor<T>* out = nullptr;
  try {
    out = &forward(call, x);
  } catch (...) {
    step_cache_ = nullptr;
    throw;
  }
  step_cache_ = nullptr;
  return *out;
}

template <class T>
void Block<T>::cache_memory(const T* memory, int64_t sequences, int64_t len, BlockCache<T>& cache) {
  SL_CHECK(has_cross_, "Block::cache_memory: this block has no cross-attention");
  cross_attn_.project_memory(memory, sequences, len, cache.cross);
}

// Accumulates f's input gradient into dinput (+=) given df, the gradient of f's output. df may be
// dinput itself: each f's backward reads df only in its output layer's backward (attention's o,
// the FFN's fc2), before anything is added into dinput (the post-norm path relies on it; the
// post-norm cases of tests/model/transformer_gradcheck_test.cpp check it).
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
  const T* g = dy;  // the gradient of the current stage's output: dy, then grad_a_
  const TensorRounding* r = call_.rounding;  // each gradient below is stored in the format
  const PrecisionOp grad_op = PrecisionOp::activation_grad;
  for (auto it = stages_.rbegin(); it != stages_.rend(); ++it) {
    Stage& s = *it;
    if (opt_.norm == NormPlacement::post) {
      // from out = N(sum), sum = x + D(f(x)): dsum = N'ᵀ dout; dx = dsum + f'ᵀ D'ᵀ dsum
      s.norm.backward(g, grad_b_.data());
      round_tensor(r, grad_b_.data(), n, grad_op);
      // D'ᵀ dsum: dsum itself when dropout is off, which run_backward then reads while adding
      // into it: it reads df only before it writes dinput (see run_backward)
      const T* df = s.dropout.backward_view(grad_b_.data(), df_.data(), n);
      run_backward(s, df, grad_b_.data());
      round_tensor(r, grad_b_.data(), n, grad_op);
      std::swap(grad_a_, grad_b_);
    } else {
      // from out = x + D(g), g = f(N(x)) or N'(f(N(x))): dx = dout + N'ᵀ f'ᵀ [N''ᵀ] D'ᵀ dout
      const T* df = s.dropout.backward_view(g, df_.data(), n);  // D'ᵀ dout
      if (opt_.norm == NormPlacement::sandwich) {  // from g = N'(f(.))
        draw_.resize(shape);
        s.post_norm.backward(df, draw_.data());
        round_tensor(r, draw_.data(), n, grad_op);
        df = draw_.data();
      }
      dfin_.resize(shape);
      parallel_zero(dfin_.data(), n);
      run_backward(s, df, dfin_.data());  // reads df (maybe g itself) before grad_a_ is written
      round_tensor(r, dfin_.data(), n, grad_op);
      s.norm.backward_add(dfin_.data(), g, grad_a_.data());  // dout + N'ᵀ dfin (g may be grad_a_)
      round_tensor(r, grad_a_.data(), n, grad_op);
    }
    g = grad_a_.data();
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
  if (opt_.norm == NormPlacement::sandwich)
    for (Stage& s : stages_) collect_parameters(out, s.post_norm);
  return out;
}

template class Block<float>;
template class Block<double>;

}  // namespace scalelab
