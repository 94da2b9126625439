#include "scalelab/train/beam.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>

#include "scalelab/train/decode.hpp"
#include "scalelab/train/trainer.hpp"
#include "support/model_config.hpp"

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
    // A second member for the ensemble tests: its own initialisation and batch order.
    Json other = tree;
    other["model"]["seed"] = 7;
    other["train"]["seed"] = 7;
    other_config_ = new RunConfig(parse_run_config(other));
    other_ = new Trainer(*other_config_, *data_);
    other_->run({});
    std::filesystem::remove_all(dir);
  }
  static void TearDownTestSuite() {
    delete other_;
    delete other_config_;
    delete trainer_;
    delete data_;
    delete config_;
  }
  static RunConfig* config_;
  static TaskData* data_;
  static Trainer* trainer_;
  static RunConfig* other_config_;
  static Trainer* other_;
};
RunConfig* BeamOnTrainedModel::config_ = nullptr;
TaskData* BeamOnTrainedModel::data_ = nullptr;
Trainer* BeamOnTrainedModel::trainer_ = nullptr;
RunConfig* BeamOnTrainedModel::other_config_ = nullptr;
Trainer* BeamOnTrainedModel::other_ = nullptr;

// The ensemble's log-probability of `tokens` + <eos> after `source`, from each member's
// teacher-forced decoder (no beam search, no cache): sum over positions of
// log((1/M) sum_m softmax_m(z)_y), computed here in long double from the raw logits.
double ensemble_sequence_log_prob(const Ensemble& models, const Example& source,
                                  const std::vector<int32_t>& tokens) {
  std::vector<int32_t> tgt = {kBosId};
  tgt.insert(tgt.end(), tokens.begin(), tokens.end());
  const int64_t T = static_cast<int64_t>(tgt.size());
  const Batch b = make_batch({source}, {0}, BatchLayout::seq2seq);  // the source as decoded
  ModelInput in{.batch = 1, .src_len = b.src_len, .tgt_len = T, .src = b.src.data(),
                .src_lengths = b.src_lengths.data(), .tgt = tgt.data()};
  std::vector<std::vector<float>> logits;
  for (Transformer<float>* m : models) {
    m->encode(in, ForwardMode{});
    const Tensor<float>& z = m->decode(in, ForwardMode{});
    logits.emplace_back(z.data(), z.data() + z.numel());
  }
  const int64_t V = models[0]->config().tgt_vocab;
  long double total = 0;
  for (int64_t t = 0; t < T; ++t) {
    const int32_t y = t + 1 < T ? tgt[t + 1] : kEosId;
    long double mixture = 0;
    for (const auto& z : logits) {
      long double norm = 0;
      for (int64_t v = 0; v < V; ++v) norm += std::exp((long double)z[t * V + v]);
      mixture += std::exp((long double)z[t * V + y]) / norm;
    }
    total += std::log(mixture / models.size());
  }
  return static_cast<double>(total);
}

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

TEST_F(BeamOnTrainedModel, EnsembleOfTwoCopiesIsTheModel) {
  Transformer<float>& model = trainer_->model();
  const Batch b = make_batch(data_->valid, {0, 1, 2, 3, 4, 5, 6, 7}, BatchLayout::seq2seq);
  for (int64_t beam : {int64_t{1}, int64_t{4}}) {
    const BeamOptions o{.beam = beam, .length_penalty = 0.6, .max_len = 12};
    const auto alone = beam_search(model, b, o);
    const auto twice = beam_search(Ensemble{&model, &model}, b, o);
    ASSERT_EQ(alone.size(), twice.size());
    for (size_t i = 0; i < alone.size(); ++i) {
      EXPECT_EQ(twice[i].tokens, alone[i].tokens) << "beam " << beam << " source " << i;
      EXPECT_NEAR(twice[i].score, alone[i].score, 1e-9) << "beam " << beam << " source " << i;
    }
  }
}

TEST_F(BeamOnTrainedModel, EnsembleScoreIsTheMeanOfTheMembersDistributions) {
  const Ensemble models{&trainer_->model(), &other_->model()};
  const double alpha = 0.6;
  int64_t differs = 0;  // sources where a member alone would answer otherwise
  for (int64_t i = 0; i < 40; ++i) {
    const Batch b = make_batch(data_->valid, {i}, BatchLayout::seq2seq);
    for (int64_t beam : {int64_t{1}, int64_t{3}}) {
      const BeamResult r = beam_search(models, b, {.beam = beam, .length_penalty = alpha,
                                                   .max_len = 12})[0];
      const int64_t n = static_cast<int64_t>(r.tokens.size()) + 1;  // with <eos>
      const double expected = ensemble_sequence_log_prob(models, data_->valid[i], r.tokens) /
                              gnmt_length_penalty(n, alpha);
      EXPECT_NEAR(r.score, expected, 2e-5 * std::max(1.0, std::abs(expected)))
          << "source " << i << " beam " << beam;
      if (beam == 1) {
        for (Transformer<float>* m : models)
          differs += beam_search(*m, b, {.beam = 1, .max_len = 12})[0].tokens != r.tokens;
      }
    }
  }
  // The two members are different models: the check above is not one member's score twice.
  const double a0 = ensemble_sequence_log_prob({models[0]}, data_->valid[0], data_->valid[0].tgt);
  const double a1 = ensemble_sequence_log_prob({models[1]}, data_->valid[0], data_->valid[0].tgt);
  EXPECT_GT(std::abs(a0 - a1), 1e-4);
  RecordProperty("sources_where_a_member_differs", std::to_string(differs));
}

TEST_F(BeamOnTrainedModel, EnsembleCachedEqualsUncached) {
  const Ensemble models{&trainer_->model(), &other_->model()};
  for (const Batch& b : batches_in_order(data_->valid, 50, BatchLayout::seq2seq)) {
    BeamOptions o{.beam = 4, .length_penalty = 0.6, .max_len = 12};
    const auto cached = beam_search(models, b, o);
    o.use_cache = false;
    const auto plain = beam_search(models, b, o);
    for (int64_t i = 0; i < b.size; ++i) {
      EXPECT_EQ(cached[i].tokens, plain[i].tokens) << "source " << i;
      EXPECT_NEAR(cached[i].score, plain[i].score, 1e-4) << "source " << i;
    }
  }
}

// An untrained 1+1-layer encoder-decoder (d 8) and a one-word batch, for the option checks.
ModelConfig untrained_config() {
  return testing::sized_model({.src_vocab = 6, .tgt_vocab = 6, .d_model = 8, .n_heads = 2,
                               .d_ff = 8, .encoder_layers = 1, .decoder_layers = 1});
}
Batch one_source() { return make_batch({{{4, 5}, {5}}}, {0}, BatchLayout::seq2seq); }

TEST(Beam, EnsembleRefusesMembersWithOtherVocabularies) {
  ModelConfig m = untrained_config();
  Transformer<float> a(m);
  m.tgt_vocab = 7;
  Transformer<float> b(m);
  a.initialize();
  b.initialize();
  const Batch batch = one_source();
  EXPECT_THROW(beam_search(Ensemble{&a, &b}, batch, {.beam = 2}), Error);
  EXPECT_THROW(beam_search(Ensemble{}, batch, {.beam = 2}), Error);
  EXPECT_NO_THROW(beam_search(Ensemble{&a, &a}, batch, {.beam = 2}));
}

TEST(Beam, RejectsBadOptions) {
  Transformer<float> model(untrained_config());
  model.initialize();
  const Batch b = one_source();
  EXPECT_THROW(beam_decode(model, b, {.beam = 0}), Error);
  EXPECT_THROW(beam_decode(model, b, {.beam = 2, .length_penalty = -1}), Error);
  EXPECT_EQ(beam_decode(model, b, {.beam = 3, .max_len = 4}).size(), 1u);
}

}  // namespace
}  // namespace scalelab
