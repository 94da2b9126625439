#include <gtest/gtest.h>

#include <map>

#include "scalelab/data/batch.hpp"
#include "scalelab/data/synthetic.hpp"

namespace scalelab {
namespace {

int64_t padding_of(const Batch& b) { return b.size * b.tgt_len - b.target_tokens; }

// Length bucketing keeps the epoch a permutation (every example once) and cuts the padding.
TEST(BatchStream, BucketingSeesEveryExampleOnceAndPadsLess) {
  const std::vector<Example> examples =
      make_synthetic({.task = SyntheticTask::copy, .min_len = 1, .max_len = 30, .count = 1600, .seed = 3});
  for (bool bucket : {false, true}) {
    BatchStream stream(examples, 16, BatchLayout::seq2seq, 7, bucket);
    std::map<std::vector<int32_t>, int64_t> seen;
    int64_t padding = 0;
    for (int i = 0; i < 100; ++i) {  // exactly one epoch: 1600 / 16
      const Batch b = stream.next();
      padding += padding_of(b);
      for (int64_t r = 0; r < b.size; ++r) {
        std::vector<int32_t> row(b.tgt_out.begin() + r * b.tgt_len, b.tgt_out.begin() + (r + 1) * b.tgt_len);
        ++seen[row];
      }
    }
    int64_t total = 0;
    for (const auto& [row, n] : seen) total += n;
    EXPECT_EQ(total, 1600);
    EXPECT_EQ(stream.epoch(), 0);
    if (bucket) {
      EXPECT_LT(padding, 2000) << "bucketed padding";
    } else {
      EXPECT_GT(padding, 4000) << "random batches of lengths 1..30 pad about 10 per row";
    }
  }
}

TEST(BatchStream, SameSeedSameBatches) {
  const std::vector<Example> examples = make_synthetic({.count = 300, .seed = 1});
  BatchStream a(examples, 8, BatchLayout::seq2seq, 5, true), b(examples, 8, BatchLayout::seq2seq, 5, true);
  for (int i = 0; i < 60; ++i) EXPECT_EQ(a.next().tgt_out, b.next().tgt_out);
}

}  // namespace
}  // namespace scalelab
