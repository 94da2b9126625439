// train/data_parallel: the pieces of data-parallel training over a Comm (docs/scaling.md).
//
// Every rank draws the same global batch (same train.seed) and trains on its slice of rows:
// rank r of N takes rows [r·B/N, (r+1)·B/N) (the first B mod N ranks one more), padded to the global
// batch's lengths. Each rank's loss gradient is scaled by n_r / n (its target tokens over the global
// batch's), so that after the sum over ranks
//   g = sum_r (n_r / n) · (1/n_r) sum_{t in r} dL_t = (1/n) sum_t dL_t,
// the gradient of the global batch's mean loss, exactly what one process with batch B computes
// (up to float rounding of the order of the sums).
#pragma once
#include <cstdint>
#include <vector>

#include "scalelab/core/comm.hpp"
#include "scalelab/data/batch.hpp"
#include "scalelab/nn/parameter.hpp"

namespace scalelab {

// Rank `rank` of `ranks`'s rows of `global` (its src_len and tgt_len; target_tokens recounted).
Batch shard_batch(const Batch& global, int rank, int ranks);

// Sums every parameter's gradient over the ranks, in flat buckets of at most `bucket_floats`
// values (one MPI_Allreduce each), copied in and out of one reused buffer.
class GradientAllreduce {
 public:
  explicit GradientAllreduce(int64_t bucket_floats = int64_t{1} << 22) : bucket_(bucket_floats) {}
  void run(Comm& comm, const ParameterRefs<float>& params);
  int64_t calls() const { return calls_; }

 private:
  int64_t bucket_;
  int64_t calls_ = 0;
  std::vector<float> buffer_;
};

// Copies rank 0's values of the tensors into every rank's (weights and optimizer state at the
// start of a run, so that all ranks start identical also after a resume that only rank 0 read).
void broadcast_floats(Comm& comm, const std::vector<std::pair<float*, int64_t>>& tensors);

// Digest of the tensors' bytes: compared across ranks to prove their weights are identical.
std::string floats_digest(const std::vector<std::pair<const float*, int64_t>>& tensors);

}  // namespace scalelab
