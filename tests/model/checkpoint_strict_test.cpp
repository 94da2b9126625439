// A checkpoint's tensors must be exactly what its config implies: a tensor the config does not
// use, or an optimizer moment of the wrong shape, is refused (docs/robustness.md, finding 10).
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "scalelab/model/checkpoint.hpp"
#include "support/error_message.hpp"
#include "support/model_config.hpp"

namespace scalelab {
namespace {

using test::error_of;
using ::testing::AllOf;
using ::testing::HasSubstr;

ModelConfig tiny(int64_t decoder_layers) {
  return testing::sized_model({.arch = Architecture::decoder_only, .tgt_vocab = 7, .d_model = 8,
                               .n_heads = 2, .d_ff = 16, .decoder_layers = decoder_layers,
                               .max_len = 8});
}

class CheckpointStrict : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("scalelab-ckpt-strict-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string path(const std::string& n) const { return (dir_ / n).string(); }

  // Loads `file` into a fresh model of the config the checkpoint states.
  std::string load(const std::string& file) {
    return error_of([&] {
      const Checkpoint c = read_checkpoint(file);
      Transformer<float> model(checkpoint_model_config(c));
      load_weights(model, c);
    });
  }
  std::filesystem::path dir_;
};

TEST_F(CheckpointStrict, AMatchingCheckpointLoads) {
  Transformer<float> model(tiny(1));
  save_checkpoint(path("ok.safetensors"), model, Json{{"model", model_config_to_json(tiny(1))}}, 3);
  EXPECT_EQ(load(path("ok.safetensors")), "(no error)");
}

TEST_F(CheckpointStrict, TensorsTheConfigDoesNotUseAreRefused) {
  // The weights of a 2-layer model under the config of a 1-layer one: layer 1 would be dropped.
  Transformer<float> two(tiny(2));
  save_checkpoint(path("two.safetensors"), two, Json{{"model", model_config_to_json(tiny(1))}}, 3);
  EXPECT_THAT(load(path("two.safetensors")),
              AllOf(HasSubstr("two.safetensors: tensor "), HasSubstr("is not used by the checkpoint's model config")));
}

TEST_F(CheckpointStrict, AMomentOfTheWrongShapeIsRefused) {
  Transformer<float> model(tiny(1));
  Parameter<float>* p = nullptr;
  for (Parameter<float>* q : model.parameters())
    if (q->value.shape().size() == 2 && q->value.shape()[0] != q->value.shape()[1]) p = q;
  ASSERT_NE(p, nullptr);
  const Shape& s = p->value.shape();
  Tensor<float> moment(Shape{s[1], s[0]});  // same element count, transposed
  save_checkpoint(path("moment.safetensors"), model, Json{{"model", model_config_to_json(tiny(1))}}, 3,
                  {.tensors = {{"optimizer.v." + p->name, moment.shape(), moment.data()}}});
  EXPECT_THAT(load(path("moment.safetensors")),
              AllOf(HasSubstr("tensor optimizer.v." + p->name + " has shape " + shape_str(moment.shape())),
                    HasSubstr("the model expects " + shape_str(s))));
}

TEST_F(CheckpointStrict, BadMetadataIsNamed) {
  Transformer<float> model(tiny(1));
  const std::vector<TensorRef> none;
  write_safetensors(path("step.safetensors"), none,
                    {{"format", kCheckpointFormat}, {"config", "{}"}, {"step", "12x"}});
  EXPECT_THAT(load(path("step.safetensors")), HasSubstr("step = \"12x\", expected an integer >= 0"));
  write_safetensors(path("config.safetensors"), none,
                    {{"format", kCheckpointFormat}, {"config", "{model"}, {"step", "1"}});
  EXPECT_THAT(load(path("config.safetensors")), HasSubstr("config is not valid JSON"));
}

}  // namespace
}  // namespace scalelab
