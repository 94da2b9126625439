#include "scalelab/train/beam.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>

#include "scalelab/train/decode.hpp"
#include "scalelab/train/trainer.hpp"

namespace scalelab {
namespace {

TEST(Beam, GnmtLengthPenalty) {
  EXPECT_DOUBLE_EQ(gnmt_length_penalty(1, 0.0), 1.0);
  EXPECT_DOUBLE_EQ(gnmt_length_penalty(1, 1.0), 1.0);  // (5+1)/6
  EXPECT_DOUBLE_EQ(gnmt_length_penalty(7, 1.0), 2.0);
  EXPECT_NEAR(gnmt_length_penalty(10, 0.6), std::pow(2.5, 0.6), 1e-12);
}

// A tiny model trained for a few seconds on "reverse", shared by the tests below.
class BeamOnTrainedModel : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    const std::string dir =
        (std::filesystem::temp_directory_path() / ("scalelab_beam_test_" + std::to_string(::getpid())))
            .string();
    std::filesystem::remove_all(dir);
    const Json tree = {
        {"model", {{"arch", "encoder_decoder"}, {"d_model", 32}, {"n_heads", 2}, {"d_ff", 64},
                   {"encoder_layers", 1}, {"decoder_layers", 1}, {"norm", "pre"},
                   {"dropout", 0.0}, {"max_len", 16}}},
        {"data", {{"task", "reverse"}, {"symbols", 6}, {"min_len", 1}, {"max_len", 6},
                  {"train_size", 2000}, {"valid_size", 200}}},
        {"train", {{"steps", 250}, {"batch_size", 32}, {"schedule", "warmup_cosine"},
                   {"lr", 3e-3}, {"warmup", 30}, {"label_smoothing", 0.0}, {"eval_every", 0},
                   {"eval_examples", 0}, {"log_every", 1000}, {"threads", 1}, {"run_dir", dir}}}};
    config_ = new RunConfig(parse_run_config(tree));
    data_ = new TaskData(load_task(config_->data));
    trainer_ = new Trainer(*config_, *data_);
    trainer_->run({});
    std::filesystem::remove_all(dir);
  }
  static void TearDownTestSuite() {
    delete trainer_;
    delete data_;
    delete config_;
  }
  static RunConfig* config_;
  static TaskData* data_;
  static Trainer* trainer_;
};
RunConfig* BeamOnTrainedModel::config_ = nullptr;
TaskData* BeamOnTrainedModel::data_ = nullptr;
Trainer* BeamOnTrainedModel::trainer_ = nullptr;

TEST_F(BeamOnTrainedModel, BeamOneEqualsGreedy) {
  Transformer<float>& model = trainer_->model();
  int64_t rows = 0;
  for (const Batch& b : batches_in_order(data_->valid, 50, BatchLayout::seq2seq)) {
    for (int64_t max_len : {int64_t{3}, int64_t{12}}) {  // also when the length cap bites
      const auto greedy = greedy_decode(model, b, max_len);
      for (double alpha : {0.0, 0.6, 2.0}) {
        const auto beam = beam_decode(model, b, {.beam = 1, .length_penalty = alpha,
                                                 .max_len = max_len});
        ASSERT_EQ(beam, greedy) << "max_len " << max_len << " alpha " << alpha;
      }
    }
    rows += b.size;
  }
  EXPECT_EQ(rows, 200);
}

TEST_F(BeamOnTrainedModel, WiderBeamsDecodeAsWellAndAreDeterministic) {
  Transformer<float>& model = trainer_->model();
  const double greedy = exact_match(model, data_->valid, 64);
  EXPECT_GT(greedy, 0.5) << "the tiny model did not learn to reverse";
  int64_t right = 0;
  size_t offset = 0;
  for (const Batch& b : batches_in_order(data_->valid, 64, BatchLayout::seq2seq)) {
    const auto out = beam_decode(model, b, {.beam = 4, .length_penalty = 0.6, .max_len = 12});
    EXPECT_EQ(out, beam_decode(model, b, {.beam = 4, .length_penalty = 0.6, .max_len = 12}));
    for (int64_t i = 0; i < b.size; ++i) {
      right += out[i] == data_->valid[offset + i].tgt;
      EXPECT_LE(out[i].size(), 12u);
    }
    offset += b.size;
  }
  EXPECT_GE(double(right) / data_->valid.size(), greedy - 0.05);
}

TEST_F(BeamOnTrainedModel, RespectsTheLengthCap) {
  const Batch b = make_batch(data_->valid, {0, 1, 2}, BatchLayout::seq2seq);
  for (const auto& out : beam_decode(trainer_->model(), b, {.beam = 3, .max_len = 2}))
    EXPECT_LE(out.size(), 2u);
}

TEST(Beam, RejectsBadOptions) {
  ModelConfig m;
  m.d_model = 8;
  m.n_heads = 2;
  m.d_ff = 8;
  m.encoder_layers = m.decoder_layers = 1;
  m.src_vocab = m.tgt_vocab = 6;
  Transformer<float> model(m);
  model.initialize();
  const std::vector<Example> ex = {{{4, 5}, {5}}};
  const Batch b = make_batch(ex, {0}, BatchLayout::seq2seq);
  EXPECT_THROW(beam_decode(model, b, {.beam = 0}), Error);
  EXPECT_THROW(beam_decode(model, b, {.beam = 2, .length_penalty = -1}), Error);
  EXPECT_EQ(beam_decode(model, b, {.beam = 3, .max_len = 4}).size(), 1u);
}

}  // namespace
}  // namespace scalelab
