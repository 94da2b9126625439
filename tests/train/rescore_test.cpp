// Rescoring (train/rescore.hpp) and ensembles of left-to-right and right-to-left members
// (train/g2p_eval.hpp). A model trained on "copy" emits x for source x: read right to left, that is
// reverse(x), so it is a right-to-left model of the "reverse" task and can join an ensemble with a
// left-to-right "reverse" model (same vocabulary: symbols s0..s5).
#include "scalelab/train/rescore.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <memory>

#include "scalelab/train/beam.hpp"
#include "scalelab/train/g2p_eval.hpp"
#include "scalelab/train/trainer.hpp"

namespace scalelab {
namespace {

std::vector<int32_t> reversed(std::vector<int32_t> v) {
  std::reverse(v.begin(), v.end());
  return v;
}

Json data_section(const std::string& task) {
  return {{"task", task}, {"symbols", 6}, {"min_len", 1}, {"max_len", 6}, {"train_size", 2000},
          {"valid_size", 200}};
}
TaskData load_data(const std::string& task) {
  const Json j = data_section(task);
  return load_task(parse_data_config(ConfigSection(&j, "data")));
}

class TwoOrders : public ::testing::Test {
 protected:
  static std::unique_ptr<Trainer> train(const std::string& task, const TaskData& data,
                                        RunConfig& config) {
    const std::string dir = (std::filesystem::temp_directory_path() /
                             ("scalelab_rescore_test_" + task + std::to_string(::getpid())))
                                .string();
    const Json tree = {
        {"model", {{"arch", "encoder_decoder"}, {"d_model", 32}, {"n_heads", 2}, {"d_ff", 64},
                   {"encoder_layers", 1}, {"decoder_layers", 1}, {"norm", "pre"},
                   {"dropout", 0.0}, {"max_len", 16}}},
        {"data", data_section(task)},
        {"train", {{"steps", 150}, {"batch_size", 32}, {"schedule", "warmup_cosine"},
                   {"lr", 3e-3}, {"warmup", 30}, {"label_smoothing", 0.0}, {"eval_every", 0},
                   {"eval_examples", 0}, {"log_every", 1000}, {"threads", 1}, {"run_dir", dir}}}};
    config = parse_run_config(tree);
    auto trainer = std::make_unique<Trainer>(config, data);
    trainer->run({});
    std::filesystem::remove_all(dir);
    return trainer;
  }
  static void SetUpTestSuite() {
    reverse_config_ = new RunConfig();
    copy_config_ = new RunConfig();
    reverse_data_ = new TaskData(load_data("reverse"));
    copy_data_ = new TaskData(load_data("copy"));
    l2r_ = train("reverse", *reverse_data_, *reverse_config_).release();
    r2l_ = train("copy", *copy_data_, *copy_config_).release();
  }
  static void TearDownTestSuite() {
    delete l2r_;
    delete r2l_;
    delete reverse_data_;
    delete copy_data_;
    delete reverse_config_;
    delete copy_config_;
  }
  // The first n valid sources of the reverse task (targets: their reversal, left to right).
  static std::vector<Example> sources(size_t n) {
    return {reverse_data_->valid.begin(), reverse_data_->valid.begin() + n};
  }
  static Batch batch_of(const std::vector<Example>& src) {
    std::vector<int64_t> idx(src.size());
    for (size_t i = 0; i < src.size(); ++i) idx[i] = int64_t(i);
    return make_batch(src, idx, BatchLayout::seq2seq);
  }
  // Beam 4 without length penalty: a finished hypothesis' score is its raw log-probability.
  static constexpr BeamOptions kRawBeam{.beam = 4, .length_penalty = 0.0, .max_len = 10};
  static RunConfig *reverse_config_, *copy_config_;
  static TaskData *reverse_data_, *copy_data_;
  static Trainer *l2r_, *r2l_;
};
RunConfig* TwoOrders::reverse_config_ = nullptr;
RunConfig* TwoOrders::copy_config_ = nullptr;
TaskData* TwoOrders::reverse_data_ = nullptr;
TaskData* TwoOrders::copy_data_ = nullptr;
Trainer* TwoOrders::l2r_ = nullptr;
Trainer* TwoOrders::r2l_ = nullptr;

TEST_F(TwoOrders, SequenceLogProbIsTheSearchsUnnormalisedScore) {
  Transformer<float>& model = l2r_->model();
  const std::vector<Example> src = sources(40);
  const Batch batch = batch_of(src);
  const auto nbest = beam_search_nbest(Ensemble{&model}, batch, kRawBeam);
  ASSERT_EQ(nbest.size(), src.size());
  std::vector<Example> pairs;
  std::vector<double> searched;
  for (size_t i = 0; i < src.size(); ++i) {
    ASSERT_FALSE(nbest[i].empty());
    for (size_t j = 1; j < nbest[i].size(); ++j)
      EXPECT_GE(nbest[i][j - 1].score, nbest[i][j].score) << "n-best not sorted, source " << i;
    for (const BeamResult& r : nbest[i]) {
      pairs.push_back({src[i].src, r.tokens});
      searched.push_back(r.score);
    }
  }
  ASSERT_GT(pairs.size(), 2 * src.size());  // more than one finished hypothesis per source
  const std::vector<double> forced = sequence_log_probs(model, pairs, 64);
  const std::vector<double> one_by_one = sequence_log_probs(model, pairs, 1);
  ASSERT_EQ(forced.size(), pairs.size());
  for (size_t p = 0; p < pairs.size(); ++p) {
    EXPECT_NEAR(forced[p], searched[p], 2e-4 * (1 + std::abs(searched[p]))) << "pair " << p;
    EXPECT_NEAR(forced[p], one_by_one[p], 1e-4 * (1 + std::abs(forced[p]))) << "pair " << p;
    EXPECT_LE(forced[p], 0.0);
  }
  // The best of the n-best list is beam_search's answer.
  const auto best = beam_search(Ensemble{&model}, batch, kRawBeam);
  for (size_t i = 0; i < src.size(); ++i) EXPECT_EQ(best[i].tokens, nbest[i].front().tokens);
}

// The cached path (each source encoded once, its candidates as rows of the decoder's cache, the
// finished rows dropped as it goes) gives the reference's log-probabilities, whatever the grouping.
TEST_F(TwoOrders, CachedCandidateScoresEqualTheFullForward) {
  Transformer<float>& model = l2r_->model();
  const std::vector<Example> src = sources(40);
  const auto nbest = beam_search_nbest(Ensemble{&model}, batch_of(src), kRawBeam);
  std::vector<std::vector<int32_t>> sources_ids;
  std::vector<std::vector<std::vector<int32_t>>> candidates(src.size());
  std::vector<Example> pairs;
  for (size_t i = 0; i < src.size(); ++i) {
    sources_ids.push_back(src[i].src);
    if (i % 7 == 3) continue;  // some sources with no candidate at all
    for (const BeamResult& r : nbest[i]) candidates[i].push_back(r.tokens);
    if (i % 5 == 0) candidates[i].push_back({});  // the empty output: only <eos> is scored
    if (i % 6 == 1) candidates[i].push_back(reversed(candidates[i].front()));  // a poor one
  }
  for (size_t i = 0; i < src.size(); ++i)
    for (const auto& y : candidates[i]) pairs.push_back({src[i].src, y});
  const std::vector<double> reference = sequence_log_probs(model, pairs, 64);
  for (int64_t max_rows : {int64_t{1}, int64_t{7}, int64_t{512}}) {
    const auto cached = candidate_log_probs(model, sources_ids, candidates, max_rows);
    ASSERT_EQ(cached.size(), src.size());
    size_t at = 0;
    for (size_t i = 0; i < src.size(); ++i) {
      ASSERT_EQ(cached[i].size(), candidates[i].size()) << "source " << i;
      for (size_t j = 0; j < candidates[i].size(); ++j, ++at)
        EXPECT_NEAR(cached[i][j], reference[at], 1e-4 * (1 + std::abs(reference[at])))
            << "max_rows " << max_rows << ", source " << i << ", candidate " << j;
    }
    EXPECT_EQ(at, pairs.size());
  }
}

TEST_F(TwoOrders, CachedRescoringRefusesWhatItCannotScore) {
  Transformer<float>& model = l2r_->model();
  const int32_t s = kNumSpecialTokens;
  EXPECT_THROW(candidate_log_probs(model, {{}}, {{{s}}}), Error);                 // empty source
  EXPECT_THROW(candidate_log_probs(model, {{}}, {{}}), Error);                    // even unused
  EXPECT_THROW(candidate_log_probs(model, {{s}}, {{{999}}}), Error);              // id outside
  EXPECT_THROW(candidate_log_probs(model, {{999}}, {{{s}}}), Error);              // source id outside
  EXPECT_THROW(candidate_log_probs(model, {{s}}, {}), Error);                     // lists mismatch
  EXPECT_THROW(candidate_log_probs(model, {{s}}, {{{s}}}, 0), Error);             // max_rows 0
  const int64_t max_len = model.config().max_len;
  EXPECT_THROW(candidate_log_probs(model, {{s}}, {{std::vector<int32_t>(size_t(max_len), s)}}), Error);
  const auto fits = candidate_log_probs(model, {{s}}, {{std::vector<int32_t>(size_t(max_len - 1), s)}});
  ASSERT_EQ(fits.size(), 1u);
  EXPECT_LT(fits[0][0], 0.0);
  EXPECT_TRUE(candidate_log_probs(model, {}, {}).empty());
}

TEST_F(TwoOrders, ARightToLeftMemberAloneIsReadBackwards) {
  const std::vector<Example> src = sources(30);
  for (int64_t beam : {int64_t{1}, int64_t{3}}) {
    const G2pDecodeOptions o{.beam = beam};
    const auto forwards = decode_members({{&r2l_->model(), false}}, src, o);
    const auto backwards = decode_members({{&r2l_->model(), true}}, src, o);
    ASSERT_EQ(forwards.size(), src.size());
    for (size_t i = 0; i < src.size(); ++i) EXPECT_EQ(backwards[i], reversed(forwards[i]));
  }
  // The copy model read right to left solves the reverse task.
  int64_t right = 0;
  const auto out = decode_members({{&r2l_->model(), true}}, sources(200), {.beam = 3});
  for (size_t i = 0; i < out.size(); ++i) right += out[i] == reverse_data_->valid[i].tgt;
  EXPECT_GT(right, 100) << "the tiny copy model did not learn";
}

// Both orders: the answer is, among the union of the two searches' n-best lists (read left to
// right), the one with the best mean log-probability over the members (each in its own order)
// divided by the length penalty. Checked against sequence_log_probs, itself checked above against
// the search's own scores.
TEST_F(TwoOrders, BothOrdersPickTheBestRescoredProposal) {
  Transformer<float>& l2r = l2r_->model();
  Transformer<float>& r2l = r2l_->model();
  const std::vector<Example> src = sources(40);
  const Batch batch = batch_of(src);
  const double alpha = 0.6;
  const G2pDecodeOptions o{.beam = 3, .length_penalty = alpha};
  const std::vector<G2pMember> members{{&l2r, false}, {&r2l, true}};
  const auto chosen = decode_members(members, src, o);
  int64_t longest = 0;
  for (const Example& e : src) longest = std::max<int64_t>(longest, e.src.size());
  const BeamOptions search{.beam = 3, .length_penalty = alpha, .max_len = longest + o.max_extra_len};
  const auto from_l2r = beam_search_nbest(Ensemble{&l2r}, batch, search);
  const auto from_r2l = beam_search_nbest(Ensemble{&r2l}, batch, search);
  int64_t disagreements = 0, right = 0;
  for (size_t i = 0; i < src.size(); ++i) {
    std::vector<std::vector<int32_t>> proposals;
    for (const BeamResult& r : from_l2r[i]) proposals.push_back(r.tokens);
    for (const BeamResult& r : from_r2l[i]) proposals.push_back(reversed(r.tokens));
    ASSERT_NE(std::find(proposals.begin(), proposals.end(), chosen[i]), proposals.end())
        << "source " << i << ": the answer is not one of the proposals";
    auto score = [&](const std::vector<int32_t>& y) {
      const double a = sequence_log_probs(l2r, {{src[i].src, y}})[0];
      const double b = sequence_log_probs(r2l, {{src[i].src, reversed(y)}})[0];
      return (a + b) / 2 / gnmt_length_penalty(int64_t(y.size()) + 1, alpha);
    };
    const double best = score(chosen[i]);
    // The choice was made with the cached scores, equal to these up to float rounding.
    for (const auto& y : proposals) EXPECT_GE(best, score(y) - 1e-4) << "source " << i;
    disagreements += from_l2r[i].front().tokens != reversed(from_r2l[i].front().tokens);
    right += chosen[i] == src[i].tgt;
  }
  EXPECT_GT(right, 20) << "the two-order ensemble should still reverse most sources";
  // Members agreeing everywhere would not exercise the choice; report how often they differ.
  RecordProperty("disagreements", static_cast<int>(disagreements));
}

TEST_F(TwoOrders, RescoringRefusesWhatItCannotScore) {
  Transformer<float>& model = l2r_->model();
  EXPECT_THROW(sequence_log_probs(model, {{{}, {kNumSpecialTokens}}}), Error);     // empty source
  EXPECT_THROW(sequence_log_probs(model, {{{kNumSpecialTokens}, {999}}}), Error);  // id outside
  EXPECT_THROW(sequence_log_probs(model, {{{kNumSpecialTokens}, {4}}}, 0), Error);  // batch 0
  EXPECT_TRUE(sequence_log_probs(model, {}).empty());
  EXPECT_THROW(decode_members({}, sources(2), {}), Error);
  EXPECT_THROW(decode_members({{nullptr, true}}, sources(2), {}), Error);
}

}  // namespace
}  // namespace scalelab
