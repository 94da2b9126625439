// train/data_parallel and core/comm without MPI: the batch slices, the bucketed gradient sum (with
// a fake two-rank Comm whose "other rank" holds the same gradients, so the sum doubles them), the
// rank-0 broadcast and the error agreement of a single process. The N-rank behaviour itself is
// tested under mpirun (tests/mpi/).
#include <gtest/gtest.h>

#include <numeric>

#include "scalelab/core/comm.hpp"
#include "scalelab/core/error.hpp"
#include "scalelab/train/data_parallel.hpp"

namespace scalelab {
namespace {

// Rank `r` of 2 whose peer has the same data: allreduce doubles; counts calls and sizes.
class MirrorComm final : public Comm {
 public:
  explicit MirrorComm(int r) : r_(r) {}
  int rank() const override { return r_; }
  int size() const override { return 2; }
  void allreduce_sum(float* x, int64_t n) override {
    sizes.push_back(n);
    for (int64_t i = 0; i < n; ++i) x[i] *= 2;
  }
  void allreduce_sum(double* x, int64_t n) override {
    for (int64_t i = 0; i < n; ++i) x[i] *= 2;
  }
  void broadcast(std::string& bytes, int) override {
    if (r_ != 0) bytes = root_bytes;
    else root_bytes = bytes;
  }
  void barrier() override {}
  std::vector<std::string> allgather(const std::string& b) override { return {b, b}; }
  void send(int, int, const std::string&) override {}
  CommMessage receive(int) override { return {}; }
  std::optional<CommMessage> try_receive() override { return std::nullopt; }
  bool all_arrive_within(double) override { return true; }
  [[noreturn]] void abort(int) override { std::abort(); }
  std::vector<int64_t> sizes;
  std::string root_bytes;

 private:
  int r_;
};

Batch batch_of(int64_t rows, int64_t len) {
  Batch b;
  b.size = rows, b.src_len = len, b.tgt_len = len;
  for (int64_t i = 0; i < rows; ++i) {
    for (int64_t j = 0; j < len; ++j) {
      const int32_t t = j <= i ? int32_t(10 + i) : kPadId;  // row i has i + 1 tokens
      b.src.push_back(t), b.tgt_in.push_back(t), b.tgt_out.push_back(t);
    }
    b.src_lengths.push_back(int32_t(std::min(i + 1, len)));
  }
  b.target_tokens = std::count_if(b.tgt_out.begin(), b.tgt_out.end(), [](int32_t t) { return t != kPadId; });
  return b;
}

TEST(ShardBatch, SlicesCoverTheBatchOnceAndKeepItsShape) {
  const Batch g = batch_of(7, 5);
  for (int ranks : {1, 2, 3, 7}) {
    int64_t rows = 0, tokens = 0;
    std::vector<int32_t> tgt_out;
    for (int r = 0; r < ranks; ++r) {
      const Batch s = shard_batch(g, r, ranks);
      EXPECT_EQ(s.tgt_len, g.tgt_len);
      EXPECT_EQ(s.src_len, g.src_len);
      EXPECT_EQ(int64_t(s.tgt_out.size()), s.size * s.tgt_len);
      EXPECT_EQ(int64_t(s.src_lengths.size()), s.size);
      EXPECT_GE(s.size, 7 / ranks);
      EXPECT_LE(s.size, 7 / ranks + 1);
      rows += s.size, tokens += s.target_tokens;
      tgt_out.insert(tgt_out.end(), s.tgt_out.begin(), s.tgt_out.end());
    }
    EXPECT_EQ(rows, g.size) << ranks << " ranks";
    EXPECT_EQ(tokens, g.target_tokens) << ranks << " ranks";
    EXPECT_EQ(tgt_out, g.tgt_out) << ranks << " ranks: the slices, in rank order, are the batch";
  }
}

TEST(GradientAllreduce, SumsEveryGradientInBuckets) {
  Parameter<float> a("a", {3}), b("b", {4}), big("big", {9}), c("c", {2});
  ParameterRefs<float> params{&a, &b, &big, &c};
  float v = 1;
  for (Parameter<float>* p : params)
    for (float& g : p->grad) g = v++;
  GradientAllreduce reduce(/*bucket_floats=*/8);
  MirrorComm comm(0);
  reduce.run(comm, params);
  v = 1;
  for (Parameter<float>* p : params)
    for (float g : p->grad) EXPECT_EQ(g, 2 * v++) << p->name;
  // a + b fill a bucket (7 of 8), big (9 > 8) goes alone in place, c in the last bucket.
  EXPECT_EQ(comm.sizes, (std::vector<int64_t>{7, 9, 2}));
  EXPECT_EQ(reduce.calls(), 3);
}

TEST(BroadcastFloats, CopiesRankZerosValues) {
  MirrorComm root(0), other(1);
  std::vector<float> x0{1, 2, 3}, y0{4}, x1{0, 0, 0}, y1{0};
  broadcast_floats(root, {{x0.data(), 3}, {y0.data(), 1}});
  other.root_bytes = root.root_bytes;
  broadcast_floats(other, {{x1.data(), 3}, {y1.data(), 1}});
  EXPECT_EQ(x1, x0);
  EXPECT_EQ(y1, y0);
  std::vector<float> wrong(5);
  EXPECT_THROW(broadcast_floats(other, {{wrong.data(), 5}}), Error);  // different model sizes
}

TEST(Comm, SingleProcessIsRankZeroOfOne) {
  std::unique_ptr<Comm> c = single_process_comm();
  EXPECT_EQ(c->rank(), 0);
  EXPECT_EQ(c->size(), 1);
  float x = 3;
  c->allreduce_sum(&x, 1);
  EXPECT_EQ(x, 3);
  EXPECT_EQ(c->allgather("ab"), std::vector<std::string>{"ab"});
  EXPECT_NO_THROW(require_same_on_all_ranks(*c, "config", "anything"));
  EXPECT_THROW(agree_on_errors(*c, [] { throw_error("bad"); }), Error);
  EXPECT_THROW(c->send(1, 0, "x"), Error);
}

TEST(Comm, DisagreementNamesTheRank) {
  // A fake 2-rank gather whose rank 1 differs.
  class Split final : public Comm {
   public:
    int rank() const override { return 0; }
    int size() const override { return 2; }
    void allreduce_sum(float*, int64_t) override {}
    void allreduce_sum(double*, int64_t) override {}
    void broadcast(std::string&, int) override {}
    void barrier() override {}
    std::vector<std::string> allgather(const std::string& b) override { return {b, b + "x"}; }
    void send(int, int, const std::string&) override {}
    CommMessage receive(int) override { return {}; }
    std::optional<CommMessage> try_receive() override { return std::nullopt; }
    bool all_arrive_within(double) override { return true; }
    [[noreturn]] void abort(int) override { std::abort(); }
  } split;
  try {
    require_same_on_all_ranks(split, "config", "abc");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("ranks 0 and 1 disagree on the config"), std::string::npos) << e.what();
  }
  try {
    throw_first_error(split, "");  // rank 1's error is "x" in this fake
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), "rank 1: x");
  }
}

}  // namespace
}  // namespace scalelab
