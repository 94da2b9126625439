// data/batch: pads a set of examples into the rectangular arrays the model reads.
//
//   encoder-decoder:  src    = x_1..x_n <eos>        (padded with <pad>)
//                     tgt_in = <bos> y_1..y_m         tgt_out = y_1..y_m <eos>
//   decoder-only:     tgt_in = <bos> y_1..y_m         tgt_out = y_1..y_m <eos>
//   lm window:        tgt_in = y_1..y_m-1              tgt_out = y_2..y_m  (a window of a text
//                     stream: next-character prediction with no sentence boundaries)
// Positions of tgt_out that are <pad> are ignored by the loss.
#pragma once
#include <cstdint>
#include <vector>

#include "scalelab/core/rng.hpp"
#include "scalelab/data/example.hpp"

namespace scalelab {

enum class BatchLayout { seq2seq, sequence, lm_window };

struct Batch {
  int64_t size = 0, src_len = 0, tgt_len = 0;
  std::vector<int32_t> src, src_lengths;  // [size, src_len], [size] (empty for decoder-only)
  std::vector<int32_t> tgt_in, tgt_out;   // [size, tgt_len]
  int64_t target_tokens = 0;              // non-pad entries of tgt_out
};

Batch make_batch(const std::vector<Example>& examples, const std::vector<int64_t>& indices,
                 BatchLayout layout);

// Yields batches of `batch_size` examples in an order reshuffled each epoch from the seed, so a
// given seed gives the same batches on every machine. With bucket_by_length, each run of
// kBucketBatches batches of the shuffled order is sorted by target length before it is cut into
// batches (whose order is then shuffled again): batches hold similar lengths and carry less
// padding, while every example is still seen once per epoch.
class BatchStream {
 public:
  static constexpr int64_t kBucketBatches = 50;
  BatchStream(const std::vector<Example>& examples, int64_t batch_size, BatchLayout layout,
              uint64_t seed, bool bucket_by_length = false);
  Batch next();
  int64_t epoch() const { return epoch_; }

 private:
  const std::vector<Example>& examples_;
  int64_t batch_size_;
  BatchLayout layout_;
  bool bucket_;
  Rng rng_;
  std::vector<int64_t> order_;
  size_t cursor_ = 0;
  int64_t epoch_ = 0;
  void reshuffle();
};

// All examples in order, in batches (for evaluation).
std::vector<Batch> batches_in_order(const std::vector<Example>& examples, int64_t batch_size,
                                    BatchLayout layout);

}  // namespace scalelab
