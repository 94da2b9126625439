// A tiny G2P Transformer memorises a few hundred real CMUdict words; the WER/PER evaluation and
// the word-level API (pronounce, unknown letters) on top of it.
#include <gtest/gtest.h>

#include <filesystem>

#include "data/fixture_path.hpp"
#include "scalelab/core/error.hpp"
#include "scalelab/train/g2p_eval.hpp"
#include "scalelab/train/trainer.hpp"

namespace scalelab {
namespace {

TEST(G2pOverfit, TinyModelMemorisesAFewHundredWords) {
  const std::string dir =
      (std::filesystem::temp_directory_path() / ("scalelab_g2p_overfit_" + std::to_string(::getpid())))
          .string();
  std::filesystem::remove_all(dir);
  const bool real = std::filesystem::exists(kCmudictDefaultPath);
  const std::string path = real ? kCmudictDefaultPath : testing::data_fixture("g2p_train.dict");
  const Json tree = {
      {"model", {{"arch", "encoder_decoder"}, {"d_model", 64}, {"n_heads", 4}, {"d_ff", 128},
                 {"encoder_layers", 2}, {"decoder_layers", 2}, {"norm", "pre"}, {"dropout", 0.0},
                 {"tie_output", true}, {"max_len", 40}}},
      {"data", {{"task", "cmudict"}, {"path", path}, {"max_train_words", 200},
                {"max_eval_words", 100}}},
      {"train", {{"steps", 400}, {"batch_size", 32}, {"schedule", "warmup_cosine"}, {"lr", 5e-3},
                 {"warmup", 40}, {"label_smoothing", 0.0}, {"clip_norm", 1.0}, {"eval_every", 0},
                 {"eval_examples", 0}, {"log_every", 1000}, {"threads", 1}, {"run_dir", dir}}}};
  const RunConfig config = parse_run_config(tree);
  const TaskData data = load_task(config.data);
  if (real) {
    ASSERT_EQ(data.train_words.size(), 200u);
  }
  Trainer trainer(config, data);
  trainer.run({});
  std::filesystem::remove_all(dir);
  Transformer<float>& model = trainer.model();

  const G2pScore train = evaluate_g2p(model, data.train_words, data.src_vocab, data.tgt_vocab, {});
  EXPECT_EQ(train.rates.words, static_cast<int64_t>(data.train_words.size()));
  EXPECT_LE(train.rates.wer(), 0.10) << "memorised only " << 1 - train.rates.wer();
  EXPECT_LE(train.rates.per(), 0.03);
  // Beam search ranked by log-probability (alpha = 0) scores about as well on the memorised
  // words; a length penalty (alpha > 0) may prefer a longer, wrong output, so only loosely.
  const G2pScore beam = evaluate_g2p(model, data.train_words, data.src_vocab, data.tgt_vocab,
                                     {.beam = 4, .length_penalty = 0.0, .batch_size = 17});
  EXPECT_LE(beam.rates.wer(), train.rates.wer() + 0.03);
  const G2pScore penalised = evaluate_g2p(model, data.train_words, data.src_vocab,
                                          data.tgt_vocab, {.beam = 4, .length_penalty = 0.6});
  EXPECT_LE(penalised.rates.wer(), train.rates.wer() + 0.15);
  // Batching does not change greedy outputs' scores much (padding is masked).
  const G2pScore rebatched = evaluate_g2p(model, data.train_words, data.src_vocab, data.tgt_vocab,
                                          {.batch_size = 7});
  EXPECT_NEAR(rebatched.rates.wer(), train.rates.wer(), 0.02);
  if (real) {
    // Held-out words are much harder for a model that saw 200 words: memorising, not generalising.
    const G2pScore held = evaluate_g2p(model, data.valid_words, data.src_vocab, data.tgt_vocab, {});
    EXPECT_GT(held.rates.wer(), train.rates.wer());
  }
  // The word-level API.
  const auto prons = pronounce(model, {data.train_words[0].word}, data.src_vocab, data.tgt_vocab, {});
  ASSERT_EQ(prons.size(), 1u);
  EXPECT_EQ(unknown_letters("ab1c2", data.src_vocab), "12");
  EXPECT_EQ(unknown_letters("it's", data.src_vocab), "");
  try {
    pronounce(model, {"r2d2"}, data.src_vocab, data.tgt_vocab, {});
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("r2d2"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace scalelab
