// scalelab average: the mean of several checkpoints of one model, and its refusals.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "scalelab/core/rng.hpp"
#include "scalelab/model/checkpoint_average.hpp"
#include "support/model_config.hpp"

namespace scalelab {
namespace {

ModelConfig tiny() {
  return testing::sized_model({.arch = Architecture::encoder_decoder, .src_vocab = 11, .tgt_vocab = 13,
                               .d_model = 16, .n_heads = 2, .d_ff = 32, .encoder_layers = 1,
                               .decoder_layers = 1, .max_len = 16});
}

class CheckpointAverage : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("scalelab_average_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  // A checkpoint of `config` whose every weight is drawn from N(0, 1) with `seed`, plus a fake
  // optimizer tensor (which averaging must drop).
  std::string write(const std::string& name, const ModelConfig& config, uint64_t seed,
                    int64_t step) {
    Transformer<float> model(config);
    Rng rng(seed);
    for (Parameter<float>* p : model.parameters())
      for (float& w : p->value) w = float(rng.normal());
    // The moment of a real parameter (a tensor that matches no parameter is refused on load).
    Parameter<float>* first = model.parameters().front();
    Tensor<float> moment(first->value.shape());
    moment.fill(7.0f);
    save_checkpoint(path(name), model, Json{{"model", model_config_to_json(config)}}, step,
                    {.tensors = {{"optimizer.m." + first->name, moment.shape(), moment.data()}}});
    return path(name);
  }

  std::filesystem::path dir_;
};

TEST_F(CheckpointAverage, IsTheElementwiseMeanAndKeepsTheNewestStep) {
  const std::vector<std::string> sources = {write("a", tiny(), 1, 300), write("b", tiny(), 2, 500),
                                            write("c", tiny(), 3, 400)};
  AveragedCheckpoint averaged = average_checkpoints(sources);
  EXPECT_EQ(averaged.step, 500);
  EXPECT_EQ(averaged.source_steps, (std::vector<int64_t>{300, 500, 400}));

  std::vector<Checkpoint> read;
  for (const std::string& s : sources) read.push_back(read_checkpoint(s));
  int64_t checked = 0;
  for (Parameter<float>* p : averaged.model->parameters()) {
    for (int64_t j = 0; j < p->value.numel(); ++j) {
      double mean = 0;
      for (const Checkpoint& c : read) mean += c.file.tensors.at(p->name)[j];
      mean /= 3.0;
      ASSERT_NEAR(p->value[j], mean, 1e-6 * (1 + std::abs(mean))) << p->name << "[" << j << "]";
      ++checked;
    }
  }
  EXPECT_EQ(checked, averaged.model->parameter_count());

  // Written and read back: a checkpoint with the mean weights, its sources, no optimizer state.
  save_averaged_checkpoint(path("avg"), averaged);
  const Checkpoint back = read_checkpoint(path("avg"));
  EXPECT_EQ(back.step, 500);
  for (const auto& [name, t] : back.file.tensors) EXPECT_NE(name.rfind("optimizer.", 0), 0u) << name;
  const Json from = Json::parse(back.file.metadata.at("averaged_from"));
  ASSERT_EQ(from.size(), 3u);
  EXPECT_EQ(from[1]["path"], sources[1]);
  EXPECT_EQ(from[1]["step"], 500);
  Transformer<float> loaded(checkpoint_model_config(back));
  load_weights(loaded, back);
  const auto want = averaged.model->parameters();
  const auto got = loaded.parameters();
  for (size_t i = 0; i < got.size(); ++i)
    for (int64_t j = 0; j < got[i]->value.numel(); ++j)
      ASSERT_EQ(got[i]->value[j], want[i]->value[j]) << got[i]->name;
}

TEST_F(CheckpointAverage, AveragingACheckpointWithItselfShiftedByTwoAddsOne) {
  // theta and theta + 2 average to theta + 1 exactly (all values are small in float).
  const std::string a = write("a", tiny(), 5, 10);
  Checkpoint c = read_checkpoint(a);
  Transformer<float> shifted(checkpoint_model_config(c));
  load_weights(shifted, c);
  for (Parameter<float>* p : shifted.parameters())
    for (float& w : p->value) w += 2.0f;
  save_checkpoint(path("b"), shifted, c.run_config, 20);
  AveragedCheckpoint averaged = average_checkpoints({a, path("b")});
  for (Parameter<float>* p : averaged.model->parameters())
    for (int64_t j = 0; j < p->value.numel(); ++j)
      ASSERT_NEAR(p->value[j], c.file.tensors.at(p->name)[j] + 1.0f, 1e-6f) << p->name;
}

TEST_F(CheckpointAverage, RefusesWhatCannotBeAveraged) {
  const std::string a = write("a", tiny(), 1, 1), b = write("b", tiny(), 2, 2);
  ModelConfig wider = tiny();
  wider.d_ff = 64;
  const std::string w = write("w", wider, 3, 3);
  auto message = [](const std::vector<std::string>& paths) {
    try {
      average_checkpoints(paths);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  EXPECT_NE(message({a}).find("at least two checkpoints, got 1"), std::string::npos) << message({a});
  EXPECT_NE(message({a, b, a}).find(": listed twice"), std::string::npos);
  const std::string differs = message({a, w});
  EXPECT_NE(differs.find("model config differs"), std::string::npos) << differs;
  EXPECT_NE(differs.find("model.d_ff"), std::string::npos) << differs;
  EXPECT_NE(message({a, path("missing")}).find("missing"), std::string::npos);
}

}  // namespace
}  // namespace scalelab
