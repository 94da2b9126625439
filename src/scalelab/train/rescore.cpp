#include "scalelab/train/rescore.hpp"

#include <algorithm>
#include <cmath>

#include "scalelab/core/error.hpp"
#include "scalelab/data/batch.hpp"

namespace scalelab {
namespace {

// log softmax(z)[y] over V logits, in double (as beam search scores its tokens).
double log_softmax_at(const float* z, int64_t V, int32_t y) {
  const double m = *std::max_element(z, z + V);
  double s = 0;
  for (int64_t v = 0; v < V; ++v) s += std::exp(double(z[v]) - m);
  return double(z[y]) - m - std::log(s);
}

void check_source(const ModelConfig& c, const std::vector<int32_t>& src) {
  SL_CHECK(!src.empty(), "rescoring: an empty source");
  for (int32_t id : src)
    SL_CHECK(id >= 0 && id < c.src_vocab, "rescoring: source id ", id, " outside [0, ", c.src_vocab, ")");
}

void check_target(const ModelConfig& c, const std::vector<int32_t>& tgt) {
  for (int32_t id : tgt)
    SL_CHECK(id >= 0 && id < c.tgt_vocab, "rescoring: target id ", id, " outside [0, ", c.tgt_vocab, ")");
}

}  // namespace

std::vector<double> sequence_log_probs(Transformer<float>& model, const std::vector<Example>& pairs,
                                       int64_t batch_size) {
  const ModelConfig& c = model.config();
  SL_CHECK(c.arch == Architecture::encoder_decoder, "rescoring needs an encoder-decoder model");
  SL_CHECK(batch_size >= 1, "batch size = ", batch_size, ": must be >= 1");
  for (const Example& e : pairs) {
    check_source(c, e.src);
    check_target(c, e.tgt);
  }
  const int64_t V = c.tgt_vocab;
  std::vector<double> out;
  out.reserve(pairs.size());
  const ForwardMode eval{};
  for (size_t start = 0; start < pairs.size(); start += size_t(batch_size)) {
    const size_t end = std::min(pairs.size(), start + size_t(batch_size));
    std::vector<int64_t> idx;
    for (size_t i = start; i < end; ++i) idx.push_back(static_cast<int64_t>(i));
    const Batch b = make_batch(pairs, idx, BatchLayout::seq2seq);
    const ModelInput in{.batch = b.size, .src_len = b.src_len, .tgt_len = b.tgt_len,
                        .src = b.src.data(), .src_lengths = b.src_lengths.data(),
                        .tgt = b.tgt_in.data()};
    const Tensor<float>& logits = model.forward(in, eval);  // [size * tgt_len, V]
    for (int64_t r = 0; r < b.size; ++r) {
      double sum = 0;
      for (int64_t t = 0; t < b.tgt_len; ++t) {
        const int32_t y = b.tgt_out[r * b.tgt_len + t];
        if (y == kPadId) continue;  // past this row's <eos>
        sum += log_softmax_at(logits.data() + (r * b.tgt_len + t) * V, V, y);
      }
      out.push_back(sum);
    }
  }
  return out;
}

std::vector<std::vector<double>> candidate_log_probs(
    Transformer<float>& model, const std::vector<std::vector<int32_t>>& sources,
    const std::vector<std::vector<std::vector<int32_t>>>& candidates, int64_t max_rows) {
  const ModelConfig& c = model.config();
  SL_CHECK(c.arch == Architecture::encoder_decoder, "rescoring needs an encoder-decoder model");
  SL_CHECK(max_rows >= 1, "rescoring: max_rows = ", max_rows, ": must be >= 1");
  SL_CHECK(sources.size() == candidates.size(), "rescoring: ", sources.size(), " sources but ",
           candidates.size(), " candidate lists");
  for (size_t i = 0; i < sources.size(); ++i) {
    check_source(c, sources[i]);  // once per source, not once per candidate
    for (const auto& y : candidates[i]) {
      check_target(c, y);
      SL_CHECK(int64_t(y.size()) + 1 <= c.max_len, "rescoring: a candidate of ", y.size(),
               " ids leaves no room for <eos> within model.max_len = ", c.max_len);
    }
  }
  const int64_t V = c.tgt_vocab;
  std::vector<std::vector<double>> out(sources.size());
  DecoderCache<float> cache;
  for (size_t first = 0; first < sources.size();) {
    // A group of whole sources [first, last) holding at most max_rows candidates (at least one source).
    size_t last = first;
    int64_t rows = 0;
    while (last < sources.size() && (last == first || rows + int64_t(candidates[last].size()) <= max_rows))
      rows += int64_t(candidates[last++].size());
    std::vector<Example> group;
    std::vector<int64_t> idx;
    struct Row {
      int64_t source;                  // within the group
      const std::vector<int32_t>* y;   // the candidate
      double* result;                  // where its log-probability goes
    };
    std::vector<Row> order;
    for (size_t i = first; i < last; ++i) {
      idx.push_back(int64_t(i - first));
      group.push_back({sources[i], {}});
      out[i].assign(candidates[i].size(), 0.0);
      for (size_t j = 0; j < candidates[i].size(); ++j)
        order.push_back({int64_t(i - first), &candidates[i][j], &out[i][j]});
    }
    // Longest first: the rows still running at step t are a prefix, and the finished tail is
    // dropped without copying (DecoderCache::keep_first_rows).
    std::stable_sort(order.begin(), order.end(),
                     [](const Row& a, const Row& b) { return a.y->size() > b.y->size(); });
    if (rows > 0) {
      const int64_t longest = int64_t(order.front().y->size());
      const Batch b = make_batch(group, idx, BatchLayout::seq2seq);
      const ModelInput in{.batch = b.size, .src_len = b.src_len, .src = b.src.data(),
                          .src_lengths = b.src_lengths.data()};
      model.start_decoding(in, cache, longest + 1);  // encoder and memory k, v: once per source
      std::vector<int64_t> source_of_row;
      for (const Row& r : order) source_of_row.push_back(r.source);
      cache.select_rows(source_of_row);  // one row per candidate, on its source
      std::vector<int32_t> tokens;
      int64_t live = rows;  // rows with t <= |y|: a prefix of the sorted rows, shrinking with t
      for (int64_t t = 0; t <= longest; ++t) {  // feed position t, score position t + 1
        while (live > 0 && t > int64_t(order[live - 1].y->size())) --live;
        if (live < cache.rows) cache.keep_first_rows(live);
        tokens.resize(static_cast<size_t>(live));
        for (int64_t r = 0; r < live; ++r) {
          const auto& y = *order[r].y;
          tokens[r] = t == 0 ? kBosId : y[t - 1];
        }
        const Tensor<float>& logits = model.decode_step(cache, tokens.data());  // [live, V]
        for (int64_t r = 0; r < live; ++r) {
          const auto& y = *order[r].y;
          const int32_t next = t < int64_t(y.size()) ? y[t] : kEosId;
          *order[r].result += log_softmax_at(logits.data() + r * V, V, next);
        }
      }
    }
    first = last;
  }
  return out;
}

}  // namespace scalelab
