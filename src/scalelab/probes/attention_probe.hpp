// probes/attention_probe: attention logits and softmax rows recomputed from the q and k that
// entered the attention kernel, per head.
//
// For each visible (query i, key j) pair of head h (masks as in kernels/attention.hpp):
//   raw_ij    = q_i·k_j / query_prescale                     (before scaling; in double)
//   logit_ij  = AttentionLogit(h)(i, j, q_i·k_j)              (after scale, soft-cap, bias, ALiBi:
//                                                             exactly the kernel's logit, in T)
//   p_i       = softmax(logit_i) over the visible keys      (in double) -> SoftmaxRow
// Nothing here touches the model: the caller passes the saved q, k, shape and options, so the
// probe costs nothing unless it is called, and cannot change the forward's numbers.
#pragma once
#include <optional>
#include <vector>

#include "scalelab/kernels/attention.hpp"
#include "scalelab/probes/histogram.hpp"
#include "scalelab/probes/moments.hpp"
#include "scalelab/probes/softmax_stats.hpp"

namespace scalelab::probes {

struct AttentionProbeOptions {
  SoftmaxThresholds thresholds;
  double range_lo = -3.0, range_hi = 3.0;  // "share within [-3, 3]" of raw and scaled logits
  std::vector<double> logit_edges;         // non-empty: histograms of raw and scaled logits
  std::vector<double> entropy_edges;       // non-empty: histogram of the normalised entropy
};

// One head's totals (or all heads merged).
struct HeadAttentionStats {
  RangeMoments raw, scaled;      // over visible pairs of counted query rows
  SoftmaxAccumulator softmax;    // one row per counted query row
  RunningMoments q, k;           // entries of this head's q (counted rows) and k (unpadded keys)
  std::optional<Histogram> raw_histogram, scaled_histogram;

  explicit HeadAttentionStats(const AttentionProbeOptions& options = {});
  void merge(const HeadAttentionStats& other);
};

// Accumulates into stats[h] for every head h (stats is resized to shape.heads if empty).
// q: [batch, q_len, heads, head_dim], k: [batch, k_len, heads, head_dim] with the shape's strides.
// query_rows (optional, [batch * q_len]): 0 skips a query row (e.g. a padded target position).
// Rows with no visible key are skipped. query_prescale: the factor already multiplied into q
// (attention.scale_query), divided out of the raw logits so that they are q·k before any scale.
template <class T>
void probe_attention(const AttentionShape& shape, const AttentionOptions<T>& opt, const T* q,
                     const T* k, const AttentionProbeOptions& options,
                     std::vector<HeadAttentionStats>& stats, const uint8_t* query_rows = nullptr,
                     double query_prescale = 1.0);

// All heads merged, in head order.
HeadAttentionStats merge_heads(const std::vector<HeadAttentionStats>& stats);

}  // namespace scalelab::probes
