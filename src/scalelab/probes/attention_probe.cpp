#include "scalelab/probes/attention_probe.hpp"

#include "scalelab/core/error.hpp"
#include "scalelab/core/parallel.hpp"
#include "scalelab/kernels/attention_flash.hpp"
#include "scalelab/kernels/attention_logit.hpp"

namespace scalelab::probes {

HeadAttentionStats::HeadAttentionStats(const AttentionProbeOptions& o) {
  raw.lo = scaled.lo = o.range_lo;
  raw.hi = scaled.hi = o.range_hi;
  softmax.thresholds = o.thresholds;
  if (!o.entropy_edges.empty()) softmax.entropy_histogram = Histogram(o.entropy_edges);
  if (!o.logit_edges.empty()) raw_histogram = scaled_histogram = Histogram(o.logit_edges);
}

void HeadAttentionStats::merge(const HeadAttentionStats& o) {
  raw.merge(o.raw);
  scaled.merge(o.scaled);
  softmax.merge(o.softmax);
  q.merge(o.q);
  k.merge(o.k);
  auto merge_opt = [](std::optional<Histogram>& a, const std::optional<Histogram>& b) {
    if (!b) return;
    if (a) a->merge(*b);
    else a = b;
  };
  merge_opt(raw_histogram, o.raw_histogram);
  merge_opt(scaled_histogram, o.scaled_histogram);
}

template <class T>
void probe_attention(const AttentionShape& s, const AttentionOptions<T>& opt, const T* q,
                     const T* k, const AttentionProbeOptions& options,
                     std::vector<HeadAttentionStats>& stats, const uint8_t* query_rows,
                     double query_prescale) {
  detail::check_attention_shape(s);
  SL_CHECK(options.range_lo <= options.range_hi, "attention probe: range [", options.range_lo,
           ", ", options.range_hi, "] is empty");
  if (stats.empty()) stats.assign(s.heads, HeadAttentionStats(options));
  SL_CHECK(static_cast<int64_t>(stats.size()) == s.heads, "attention probe: ", stats.size(),
           " head totals for ", s.heads, " heads");
  const detail::TokenStrides st = detail::token_strides(s);
  const int64_t D = s.head_dim, BH = s.batch * s.heads;
  std::vector<HeadAttentionStats> partial(BH, HeadAttentionStats(options));
  parallel_for(BH, [&](int64_t bh) {
    const int64_t b = bh / s.heads, h = bh % s.heads;
    HeadAttentionStats& out = partial[bh];
    const AttentionLogit<T> logit_of(s, opt, h);
    const int64_t keys = opt.key_lengths ? std::min<int64_t>(s.k_len, opt.key_lengths[b]) : s.k_len;
    for (int64_t j = 0; j < keys; ++j) out.k.add_values(k + (b * s.k_len + j) * st.k + h * D, D);
    std::vector<double> logits(s.k_len), scratch;
    for (int64_t i = 0; i < s.q_len; ++i) {
      if (query_rows && !query_rows[b * s.q_len + i]) continue;
      const int64_t n = attention_visible_keys(s, opt, b, i);
      if (n <= 0) continue;
      const T* qi = q + (b * s.q_len + i) * st.q + h * D;
      out.q.add_values(qi, D);
      for (int64_t j = 0; j < n; ++j) {
        const T* kj = k + (b * s.k_len + j) * st.k + h * D;
        double dot = 0.0;
        for (int64_t c = 0; c < D; ++c) dot += static_cast<double>(qi[c]) * static_cast<double>(kj[c]);
        const double raw = dot / query_prescale;
        const double logit = static_cast<double>(logit_of(i, j, static_cast<T>(dot)));
        out.raw.add(raw);
        out.scaled.add(logit);
        if (out.raw_histogram) out.raw_histogram->add(raw);
        if (out.scaled_histogram) out.scaled_histogram->add(logit);
        logits[j] = logit;
      }
      out.softmax.add(softmax_row_from_logits(logits.data(), n, scratch));
    }
  });
  for (int64_t bh = 0; bh < BH; ++bh) stats[bh % s.heads].merge(partial[bh]);
}

HeadAttentionStats merge_heads(const std::vector<HeadAttentionStats>& stats) {
  SL_CHECK(!stats.empty(), "attention probe: no heads to merge");
  HeadAttentionStats all = stats[0];
  for (size_t h = 1; h < stats.size(); ++h) all.merge(stats[h]);
  return all;
}

template void probe_attention<float>(const AttentionShape&, const AttentionOptions<float>&,
                                     const float*, const float*, const AttentionProbeOptions&,
                                     std::vector<HeadAttentionStats>&, const uint8_t*, double);
template void probe_attention<double>(const AttentionShape&, const AttentionOptions<double>&,
                                      const double*, const double*, const AttentionProbeOptions&,
                                      std::vector<HeadAttentionStats>&, const uint8_t*, double);

}  // namespace scalelab::probes
