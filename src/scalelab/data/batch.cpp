#include "scalelab/data/batch.hpp"

#include <algorithm>
#include <numeric>

#include "scalelab/core/error.hpp"

namespace scalelab {

namespace {

Batch make_lm_window_batch(const std::vector<Example>& examples,
                           const std::vector<int64_t>& indices) {
  Batch b;
  b.size = static_cast<int64_t>(indices.size());
  for (int64_t i : indices) {
    SL_CHECK(examples[i].tgt.size() >= 2, "lm window ", i, " has fewer than 2 tokens");
    b.tgt_len = std::max<int64_t>(b.tgt_len, examples[i].tgt.size() - 1);
  }
  b.tgt_in.assign(b.size * b.tgt_len, kPadId);
  b.tgt_out.assign(b.size * b.tgt_len, kPadId);
  for (int64_t r = 0; r < b.size; ++r) {
    const std::vector<int32_t>& w = examples[indices[r]].tgt;
    std::copy(w.begin(), w.end() - 1, b.tgt_in.begin() + r * b.tgt_len);
    std::copy(w.begin() + 1, w.end(), b.tgt_out.begin() + r * b.tgt_len);
    b.target_tokens += static_cast<int64_t>(w.size()) - 1;
  }
  return b;
}

}  // namespace

Batch make_batch(const std::vector<Example>& examples, const std::vector<int64_t>& indices,
                 BatchLayout layout) {
  SL_CHECK(!indices.empty(), "make_batch: no examples");
  if (layout == BatchLayout::lm_window) return make_lm_window_batch(examples, indices);
  const bool with_source = layout == BatchLayout::seq2seq;
  Batch b;
  b.size = static_cast<int64_t>(indices.size());
  for (int64_t i : indices) {
    b.src_len = std::max<int64_t>(b.src_len, examples[i].src.size() + 1);
    b.tgt_len = std::max<int64_t>(b.tgt_len, examples[i].tgt.size() + 1);
  }
  if (with_source) {
    b.src.assign(b.size * b.src_len, kPadId);
    b.src_lengths.resize(b.size);
  } else {
    b.src_len = 0;
  }
  b.tgt_in.assign(b.size * b.tgt_len, kPadId);
  b.tgt_out.assign(b.size * b.tgt_len, kPadId);
  for (int64_t r = 0; r < b.size; ++r) {
    const Example& e = examples[indices[r]];
    if (with_source) {
      std::copy(e.src.begin(), e.src.end(), b.src.begin() + r * b.src_len);
      b.src[r * b.src_len + e.src.size()] = kEosId;
      b.src_lengths[r] = static_cast<int32_t>(e.src.size() + 1);
    }
    int32_t* in = b.tgt_in.data() + r * b.tgt_len;
    int32_t* out = b.tgt_out.data() + r * b.tgt_len;
    in[0] = kBosId;
    std::copy(e.tgt.begin(), e.tgt.end(), in + 1);
    std::copy(e.tgt.begin(), e.tgt.end(), out);
    out[e.tgt.size()] = kEosId;
    b.target_tokens += static_cast<int64_t>(e.tgt.size()) + 1;
  }
  return b;
}

BatchStream::BatchStream(const std::vector<Example>& examples, int64_t batch_size,
                         BatchLayout layout, uint64_t seed, bool bucket_by_length)
    : examples_(examples), batch_size_(batch_size), layout_(layout), bucket_(bucket_by_length),
      rng_(seed) {
  SL_CHECK(!examples.empty(), "the training set is empty");
  SL_CHECK(batch_size > 0, "train.batch_size = ", batch_size, ": must be > 0");
  order_.resize(examples.size());
  reshuffle();
}

void BatchStream::reshuffle() {
  std::iota(order_.begin(), order_.end(), 0);
  for (size_t i = order_.size(); i > 1; --i) std::swap(order_[i - 1], order_[rng_.below(i)]);
  cursor_ = 0;
  if (!bucket_) return;
  const size_t window = static_cast<size_t>(batch_size_ * kBucketBatches);
  auto length = [&](int64_t i) { return examples_[i].tgt.size() + examples_[i].src.size(); };
  for (size_t start = 0; start < order_.size(); start += window) {
    const auto end = order_.begin() + std::min(order_.size(), start + window);
    std::stable_sort(order_.begin() + start, end,
                     [&](int64_t a, int64_t b) { return length(a) < length(b); });
  }
  // Shuffle whole batches so that lengths do not rise and fall in a pattern over the epoch.
  const size_t batches = order_.size() / batch_size_;
  std::vector<int64_t> shuffled(order_.begin(), order_.end());
  std::vector<size_t> batch_order(batches);
  std::iota(batch_order.begin(), batch_order.end(), 0);
  for (size_t i = batches; i > 1; --i) std::swap(batch_order[i - 1], batch_order[rng_.below(i)]);
  for (size_t b = 0; b < batches; ++b)
    std::copy_n(order_.begin() + batch_order[b] * batch_size_, batch_size_,
                shuffled.begin() + b * batch_size_);
  order_.swap(shuffled);
}

Batch BatchStream::next() {
  std::vector<int64_t> picked;
  while (static_cast<int64_t>(picked.size()) < batch_size_) {
    if (cursor_ == order_.size()) {
      ++epoch_;
      reshuffle();
    }
    picked.push_back(order_[cursor_++]);
  }
  return make_batch(examples_, picked, layout_);
}

std::vector<Batch> batches_in_order(const std::vector<Example>& examples, int64_t batch_size,
                                    BatchLayout layout) {
  std::vector<Batch> out;
  for (size_t start = 0; start < examples.size(); start += batch_size) {
    std::vector<int64_t> idx;
    for (size_t i = start; i < std::min(examples.size(), start + batch_size); ++i) idx.push_back(i);
    out.push_back(make_batch(examples, idx, layout));
  }
  return out;
}

}  // namespace scalelab
