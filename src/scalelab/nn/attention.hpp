// nn/attention: multi-head attention with its four projections and every logit knob.
//
//   q = x_q Wqᵀ + bq,  k = x_kv Wkᵀ + bk,  v = x_kv Wvᵀ + bv      [rows, d], heads of d_k
//   q, k = QKNorm(q), QKNorm(k)           per head, over d_k            (optional)
//   q, k = RoPE(q), RoPE(k)                                              (optional)
//   q = c · q                              when the scale is applied to the query (then c' = 1)
//   ctx = attention(q, k, v; c', softcap, ALiBi, bias, masks)           (kernels/attention.hpp)
// c is the configured scale, resolved once here from d_k (AttentionScale::resolve); c' = c unless
// it is applied to the query or folded into W_q's initialisation (T5), then 1.
//   y = ctx Woᵀ + bo
// Self-attention passes the same x as x_q and x_kv and sums the two input gradients.
// Without the q/k transforms (QK-norm, RoPE, a query pre-scale), projections of one input run as
// one GEMM each way (nn/stacked_linear.hpp): q, k, v of self-attention's x ([rows, 3d]), k, v of
// cross-attention's memory ([rows, 2d]); the kernel reads them in place at that row stride.
//
// Incremental decoding (forward only): forward_step takes one new token per sequence, appends its
// k and v (after QK-norm and RoPE at the token's position) to a KvCache and attends over the cache;
// cross-attention projects the encoder memory into a KvCache once (project_memory) and each step
// only projects q. The logits are those of forward's last query row (kernels/attention_decode.hpp).
#pragma once
#include <vector>

#include "scalelab/nn/linear.hpp"
#include "scalelab/nn/norm.hpp"
#include "scalelab/nn/options.hpp"
#include "scalelab/nn/stacked_linear.hpp"

namespace scalelab {

// The per-call geometry and masks.
struct AttentionCall {
  int64_t batch = 0, q_len = 0, k_len = 0;
  bool causal = false;
  const int32_t* key_lengths = nullptr;  // [batch] or null
  const void* bias = nullptr;            // const T* [heads, q_len, k_len] additive, or null
  void* dbias = nullptr;                 // T* accumulates the bias gradient (+=), or null
};

// The keys and values one attention module has seen, for incremental decoding.
template <class T>
struct KvCache {
  Tensor<T> k, v;  // [sequences, capacity, d]: k after QK-norm and RoPE, v as projected
  int64_t sequences = 0, capacity = 0, len = 0;  // len: positions filled in every sequence
  void reset(int64_t sequences, int64_t capacity, int64_t d);
  // Sequence r becomes the old sequence rows[r] (positions [0, len)); rows.size() sequences after.
  void gather(const std::vector<int64_t>& rows);
  // Keeps sequences [0, n) as they are (no copy: they lead the layout); n sequences after.
  void keep_first(int64_t n);

 private:
  Tensor<T> spare_k_, spare_v_;  // the gather's destination, swapped in (no allocation per step)
};

// One cached step: `batch` rows, one new token each.
struct AttentionStep {
  int64_t batch = 0;
  const int64_t* sequence_of_row = nullptr;  // cross: the memory sequence each row reads, or null
  const int32_t* key_lengths = nullptr;      // cross: [batch] true memory lengths, or null
  const void* bias = nullptr;                // self: const T* [heads, len + 1] additive (T5), or null
};

template <class T>
class MultiHeadAttention {
 public:
  MultiHeadAttention() = default;
  // Self-attention takes the layer's options, cross-attention options.cross_attention().
  MultiHeadAttention(const std::string& name, const LayerOptions& options);

  // x_q: [batch*q_len, d], x_kv: [batch*k_len, d] (both kept by pointer), y: [batch*q_len, d].
  void forward(const AttentionCall& call, const T* x_q, const T* x_kv, T* y);
  // dy: [batch*q_len, d]. dx_q and dx_kv are accumulated into (+=); after a forward with x_q ==
  // x_kv (self-attention) they must alias (the stacked projections sum both gradients at once).
  void backward(const T* dy, T* dx_q, T* dx_kv);

  // Cross-attention: cache k, v of memory [sequences*len, d] (capacity = len = len).
  void project_memory(const T* memory, int64_t sequences, int64_t len, KvCache<T>& cache);
  // x: [batch, d] new tokens, y: [batch, d]. Self-attention (append = true) writes the tokens' k, v
  // at position cache.len of each row's sequence (row b is sequence b) and then attends over
  // [0, len + 1); cross-attention (append = false) attends over the cached memory.
  void forward_step(const AttentionStep& step, const T* x, KvCache<T>& cache, bool append, T* y);

  ParameterRefs<T> parameters();
  Linear<T>& q_proj() { return q_; }
  Linear<T>& k_proj() { return k_; }
  Linear<T>& v_proj() { return v_; }
  Linear<T>& out_proj() { return o_; }
  Parameter<T>* temperature() { return opt_.attention.learned_temperature ? &temperature_ : nullptr; }
  // The scale's share of the initialisation, after W_q has been drawn: a learned temperature starts
  // at kernel_scale(); with fold_into_init W_q is multiplied by folded_query_init() (T5).
  void initialize_scale();

  // Read-only views for the probes (valid after a forward), dense [rows, d]; a stacked
  // projection's block is copied out when asked for.
  const Tensor<T>& kernel_q() const;  // q as the kernel sees it
  // q after QK-norm and RoPE, before a query pre-scale (the same tensor as kernel_q without one).
  const Tensor<T>& unscaled_q() const { return opt_.attention.scale_query ? qk_q_ : kernel_q(); }
  const Tensor<T>& kernel_k() const;
  const Tensor<T>& kernel_v() const;
  AttentionShape last_shape() const { return shape(call_); }
  AttentionOptions<T> last_options() const { return kernel_options(call_); }
  const Tensor<T>& probabilities() const { return saved_.probs; }  // naive kernel only
  // The next forwards fill *sink with the kernel's attention statistics (null: off, no cost).
  void set_probe_stats(AttentionProbeStats* sink) { probe_sink_ = sink; }
  // The configured scale c, wherever it is applied (one of the three below).
  double scale() const { return scale_; }
  // The scale the kernel applies per head (1 after a query pre-scale or with fold_into_init).
  double kernel_scale() const;
  // The factor q was multiplied by before the kernel (1 unless attention.apply_to = "query").
  double query_scale() const { return opt_.attention.scale_query ? scale_ : 1.0; }
  // The factor W_q's initial values are multiplied by (1 unless attention.fold_into_init).
  double folded_query_init() const { return opt_.attention.fold_into_init ? scale_ : 1.0; }

 private:
  // How the last forward computed the projections: one GEMM each, q, k, v stacked, or k, v.
  enum class Stacking { none, qkv, kv };
  // The kernel's q, k, v: the projections (or their transforms) and their row strides (0: d).
  struct KernelInputs {
    const T *q = nullptr, *k = nullptr, *v = nullptr;
    int64_t q_stride = 0, k_stride = 0, v_stride = 0;
  };
  AttentionShape shape(const AttentionCall& call) const;  // dense (the probes' view)
  AttentionShape kernel_shape() const;                   // shape(call_) with inputs_' strides
  // Block `block` (of d columns) of the stacked projections, copied into dst [rows, d].
  const Tensor<T>& stacked_block(int64_t block, Tensor<T>& dst) const;
  AttentionOptions<T> kernel_options(const AttentionCall& call) const;
  bool transforms_qk() const;
  const Tensor<T>& scale_query(const Tensor<T>& q);

  LayerOptions opt_;
  double scale_ = 1.0;  // the configured scale c, resolved once from d_k
  Linear<T> q_, k_, v_, o_;
  Norm<T> q_norm_, k_norm_;
  Parameter<T> temperature_;   // [heads]
  Tensor<T> alibi_slopes_;     // [heads]
  AttentionCall call_;
  StackedLinear<T> stacked_;
  Stacking stacking_ = Stacking::none;
  KernelInputs inputs_;
  Tensor<T> proj_, dproj_;  // stacked projections [rows, 3d] or [rows, 2d], and their gradient
  // Projections and the context, saved by the forward (q, k, v unstacked; mutable: the probes'
  // copies of stacked blocks).
  mutable Tensor<T> qraw_, kraw_, vbuf_;
  Tensor<T> ctx_;
  Tensor<T> qk_q_, qk_k_;               // q, k after the norm / RoPE
  Tensor<T> q_scaled_;                  // c · q, with a query pre-scale
  const Tensor<T>* q_in_ = nullptr;
  const Tensor<T>* k_in_ = nullptr;
  Tensor<T> dq_, dk_, dv_, dctx_, dqn_, dkn_;  // backward scratch
  AttentionSaved<T> saved_;
  AttentionProbeStats* probe_sink_ = nullptr;
};

// ALiBi slopes for n heads (Press et al. 2022): 2^(-8i/n) for i = 1..n when n is a power of two,
// otherwise those of the next lower power of two followed by every other one of twice as many.
std::vector<double> alibi_slopes(int64_t heads);

}  // namespace scalelab
