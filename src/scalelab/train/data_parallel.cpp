#include "scalelab/train/data_parallel.hpp"

#include <algorithm>
#include <cstring>
#include <string>

#include "scalelab/core/error.hpp"

namespace scalelab {

Batch shard_batch(const Batch& global, int rank, int ranks) {
  const int64_t base = global.size / ranks, extra = global.size % ranks;
  const int64_t begin = rank * base + std::min<int64_t>(rank, extra);
  const int64_t rows = base + (rank < extra ? 1 : 0);
  Batch b;
  b.size = rows;
  b.src_len = global.src_len;
  b.tgt_len = global.tgt_len;
  auto slice = [&](const std::vector<int32_t>& v, int64_t width) {
    if (v.empty()) return std::vector<int32_t>();
    return std::vector<int32_t>(v.begin() + begin * width, v.begin() + (begin + rows) * width);
  };
  b.src = slice(global.src, global.src_len);
  b.src_lengths = slice(global.src_lengths, 1);
  b.tgt_in = slice(global.tgt_in, global.tgt_len);
  b.tgt_out = slice(global.tgt_out, global.tgt_len);
  b.target_tokens = std::count_if(b.tgt_out.begin(), b.tgt_out.end(),
                                  [](int32_t t) { return t != kPadId; });
  return b;
}

void GradientAllreduce::run(Comm& comm, const ParameterRefs<float>& params) {
  if (comm.size() == 1) return;
  // Parameters are packed whole into the bucket until the next one would not fit; a parameter
  // larger than a bucket is reduced in place on its own.
  buffer_.resize(bucket_);
  size_t first = 0;
  while (first < params.size()) {
    const int64_t n0 = params[first]->grad.numel();
    if (n0 >= bucket_) {
      comm.allreduce_sum(params[first]->grad.data(), n0);
      ++calls_;
      ++first;
      continue;
    }
    size_t last = first;
    int64_t used = 0;
    while (last < params.size() && used + params[last]->grad.numel() <= bucket_) {
      std::memcpy(buffer_.data() + used, params[last]->grad.data(),
                  sizeof(float) * params[last]->grad.numel());
      used += params[last]->grad.numel();
      ++last;
    }
    comm.allreduce_sum(buffer_.data(), used);
    ++calls_;
    used = 0;
    for (size_t i = first; i < last; ++i) {
      std::memcpy(params[i]->grad.data(), buffer_.data() + used, sizeof(float) * params[i]->grad.numel());
      used += params[i]->grad.numel();
    }
    first = last;
  }
}

void broadcast_floats(Comm& comm, const std::vector<std::pair<float*, int64_t>>& tensors) {
  if (comm.size() == 1) return;
  std::string bytes;
  if (comm.rank() == 0) {
    for (auto [p, n] : tensors) bytes.append(reinterpret_cast<const char*>(p), sizeof(float) * n);
  }
  comm.broadcast(bytes, 0);
  size_t off = 0;
  for (auto [p, n] : tensors) {
    SL_CHECK(off + sizeof(float) * n <= bytes.size(), "internal: broadcast of the training state "
             "is shorter than this rank's tensors (the ranks built different models)");
    std::memcpy(p, bytes.data() + off, sizeof(float) * n);
    off += sizeof(float) * n;
  }
  SL_CHECK(off == bytes.size(), "internal: broadcast of the training state has ", bytes.size(),
           " bytes, this rank's tensors ", off, " (the ranks built different models)");
}

std::string floats_digest(const std::vector<std::pair<const float*, int64_t>>& tensors) {
  uint64_t h = 1469598103934665603ull;
  for (auto [p, n] : tensors) h = fnv1a64(p, sizeof(float) * n, h);
  return std::to_string(h);
}

}  // namespace scalelab
