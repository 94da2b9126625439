#include "scalelab/train/rescore.hpp"

#include <algorithm>
#include <cmath>

#include "scalelab/core/error.hpp"
#include "scalelab/data/batch.hpp"

namespace scalelab {

std::vector<double> sequence_log_probs(Transformer<float>& model, const std::vector<Example>& pairs,
                                       int64_t batch_size) {
  const ModelConfig& c = model.config();
  SL_CHECK(c.arch == Architecture::encoder_decoder, "rescoring needs an encoder-decoder model");
  SL_CHECK(batch_size >= 1, "batch size = ", batch_size, ": must be >= 1");
  for (const Example& e : pairs) {
    SL_CHECK(!e.src.empty(), "rescoring: an empty source");
    for (int32_t id : e.src)
      SL_CHECK(id >= 0 && id < c.src_vocab, "rescoring: source id ", id, " outside [0, ", c.src_vocab, ")");
    for (int32_t id : e.tgt)
      SL_CHECK(id >= 0 && id < c.tgt_vocab, "rescoring: target id ", id, " outside [0, ", c.tgt_vocab, ")");
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
        const float* z = logits.data() + (r * b.tgt_len + t) * V;
        const double m = *std::max_element(z, z + V);
        double s = 0;
        for (int64_t v = 0; v < V; ++v) s += std::exp(double(z[v]) - m);
        sum += double(z[y]) - m - std::log(s);  // log softmax(z)[y]
      }
      out.push_back(sum);
    }
  }
  return out;
}

}  // namespace scalelab
