// kernels/attention: scaled dot-product attention over many heads, forward and backward.
//
// Layout: q is [batch, q_len, heads, head_dim] row-major with a row stride per token (so the
// packed output of a projection, [batch, q_len, heads*head_dim], is read in place); k and v are
// [batch, k_len, heads, head_dim]; out like q. For query i and key j of head h:
//
//   s_ij  = scale_h · q_i·k_j                          (scale_h = head_scales[h] if given, else scale)
//   s_ij  = cap · tanh(s_ij / cap)                      (only if softcap > 0)
//   s_ij += bias[h, i, j] - alibi_slope_h · |i' - j|   (optional; i' = i + k_len - q_len)
//   s_ij  = -inf if masked (causal: j > i'; padding: j >= key_lengths[b])
//   p_i   = softmax(s_i),   o_i = sum_j p_ij v_j
//
// Backward (dp = do·vᵀ, ds = p ⊙ (dp - rowsum(dp ⊙ p))):
//   dv_j = sum_i p_ij do_i;  ds through softcap: ds_pre = ds (1 - tanh²(s/cap));
//   dq_i = scale_h sum_j ds_ij k_j;  dk_j = scale_h sum_i ds_ij q_i;
//   dhead_scales[h] += sum_ij ds_ij (q_i·k_j);  dbias[h,i,j] += sum_b ds_ij
//
// Two implementations share this contract: the naive one materialises p (the reference, and the
// source of the attention probes), and the tiled flash one (attention_flash.hpp).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "scalelab/core/tensor.hpp"

namespace scalelab {

struct AttentionShape {
  int64_t batch = 0, heads = 0, q_len = 0, k_len = 0, head_dim = 0;
  // Elements between consecutive tokens of one sequence (0: dense heads*head_dim).
  int64_t q_stride = 0, k_stride = 0, v_stride = 0, o_stride = 0;
};

template <class T>
struct AttentionOptions {
  double scale = 1.0;                     // multiplies q·k (used when head_scales is null)
  const T* head_scales = nullptr;         // [heads] per-head multiplier (learned temperature)
  bool causal = false;
  const int32_t* key_lengths = nullptr;   // [batch] keys j >= key_lengths[b] are masked
  double softcap = 0.0;                   // > 0: cap · tanh(s / cap) after scaling
  const T* bias = nullptr;                // [heads, q_len, k_len] additive (e.g. T5 buckets)
  const T* alibi_slopes = nullptr;        // [heads]
};

// What the forward leaves for the backward.
template <class T>
struct AttentionSaved {
  Tensor<T> probs;  // naive: [batch, heads, q_len, k_len]
  Tensor<T> lse;    // flash: [batch, heads, q_len] log-sum-exp of each row
};

// Gradients of the optional inputs; null pointers are skipped. All accumulate (+=).
template <class T>
struct AttentionExtraGrads {
  T* dhead_scales = nullptr;  // [heads]
  T* dbias = nullptr;         // [heads, q_len, k_len]
};

template <class T>
void attention_naive_forward(const AttentionShape& shape, const AttentionOptions<T>& opt,
                             const T* q, const T* k, const T* v, T* out, AttentionSaved<T>& saved);

// Overwrites dq, dk, dv (same layouts as q, k, v).
template <class T>
void attention_naive_backward(const AttentionShape& shape, const AttentionOptions<T>& opt,
                              const T* q, const T* k, const T* v, const T* dout,
                              const AttentionSaved<T>& saved, T* dq, T* dk, T* dv,
                              AttentionExtraGrads<T> extra = {});

// ---- Flash attention: implemented in attention_flash.cpp. ----

// Which implementation runs (config key attention.kernel = "naive" | "flash"; flash is the default).
enum class AttentionKernel { naive, flash };
const char* attention_kernel_name(AttentionKernel kernel);
// Parses "naive" or "flash"; throws Error naming the value and what is allowed.
AttentionKernel parse_attention_kernel(const std::string& name);

// Attention probes, accumulated (+=) per head over the batch and the query rows; the vectors are
// resized to [heads] (zeros) when empty. Rows with no visible key are not counted. For row i with
// n_i visible keys: H_i = -sum_j p_ij log p_ij (nats), max_i = max_j p_ij.
// The flash kernel computes them online (H_i = log l_i - A_i / l_i with l_i = sum_j e^(s_ij - m_i),
// A_i = sum_j e^(s_ij - m_i)(s_ij - m_i), max_i = 1 / l_i), the naive one from p.
struct AttentionProbeStats {
  double saturation_threshold = 0.9;  // input: a row is saturated when max_i >= this
  double uniform_threshold = 0.9;     // input: a row is near-uniform when H_i / log n_i >= this
  std::vector<double> entropy_sum;             // sum_i H_i
  std::vector<double> normalized_entropy_sum;  // sum_i H_i / log n_i over rows with n_i >= 2
  std::vector<double> max_prob_sum;            // sum_i max_i
  std::vector<int64_t> rows;                   // rows counted
  std::vector<int64_t> normalized_rows;        // rows with n_i >= 2
  std::vector<int64_t> saturated_rows;         // rows with max_i >= saturation_threshold
  std::vector<int64_t> uniform_rows;           // rows with n_i >= 2 and H_i / log n_i >= uniform_threshold
};

// Runs the chosen kernel. The flash kernel fills saved.lse only; the naive one saved.probs.
// probes (optional) is filled online by flash and from p by naive.
template <class T>
void attention_forward(AttentionKernel kernel, const AttentionShape& shape,
                       const AttentionOptions<T>& opt, const T* q, const T* k, const T* v, T* out,
                       AttentionSaved<T>& saved, AttentionProbeStats* probes = nullptr);

// out is the forward's output (flash needs rowsum(dout ⊙ out); naive ignores it).
template <class T>
void attention_backward(AttentionKernel kernel, const AttentionShape& shape,
                        const AttentionOptions<T>& opt, const T* q, const T* k, const T* v,
                        const T* out, const T* dout, const AttentionSaved<T>& saved, T* dq, T* dk,
                        T* dv, AttentionExtraGrads<T> extra = {});

}  // namespace scalelab
