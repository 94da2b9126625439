// Internal: the float flash-attention kernels of attention_flash_simd.cpp (Highway, dispatched at
// run time). Callers use attention_flash.hpp; this header only connects the two files.
#pragma once
#include <cstdint>

#include "scalelab/kernels/attention.hpp"
#include "scalelab/kernels/attention_flash.hpp"
#include "scalelab/kernels/attention_logit.hpp"

namespace scalelab::detail {

// Everything one (batch, head) unit needs; pointers as in attention.hpp.
struct FlashArgs {
  AttentionShape shape;
  TokenStrides strides;
  const AttentionOptions<float>* opt = nullptr;
  const float *q = nullptr, *k = nullptr, *v = nullptr, *out = nullptr, *dout = nullptr;
  float* out_mut = nullptr;  // forward output
  float* lse = nullptr;      // [batch, heads, q_len]
  float *dq = nullptr, *dk = nullptr, *dv = nullptr;
  float* dbias = nullptr;
  const AttentionProbeStats* probe_cfg = nullptr;  // non-null: compute probes
};

// The float SIMD twin of AttentionLogit (attention_logit.hpp), for its test: row[c] (the raw dot
// product of query row i and key j0 + c, c < n) becomes the logit s_i,j0+c, or -inf at c >= limit.
void attention_logit_row_simd(const AttentionLogit<float>& logit, int64_t i, int64_t j0,
                              int64_t n, int64_t limit, float* row);

// Whether the short-key path (attention_short-inl.hpp: query rows in vector lanes) computes a
// call with this shape and these options on the current SIMD target; the backward also needs the
// call's key range unsplit, which it is whenever this holds (k_len < the key tile).
bool flash_short_path_applies(const AttentionShape& s, const AttentionOptions<float>& opt,
                              bool probes);

void flash_forward_simd(const AttentionShape& s, const AttentionOptions<float>& opt, const float* q,
                        const float* k, const float* v, float* out, float* lse,
                        AttentionProbeStats* probes);
void flash_backward_simd(const AttentionShape& s, const AttentionOptions<float>& opt,
                         const float* q, const float* k, const float* v, const float* out,
                         const float* dout, const float* lse, float* dq, float* dk, float* dv,
                         AttentionExtraGrads<float> extra);

}  // namespace scalelab::detail
