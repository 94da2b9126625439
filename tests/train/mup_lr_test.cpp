// muP learning rates (train.mup_base_width; Tensor Programs V, table 3, Adam column): hidden and
// output matrices train with lr · base / width, every other tensor with lr.
#include <gtest/gtest.h>

#include "scalelab/core/error.hpp"
#include "scalelab/train/optimizer.hpp"
#include "scalelab/train/run_config.hpp"

namespace scalelab {
namespace {

OptimizerOptions mup(int64_t base, int64_t width) {
  OptimizerOptions o;
  o.mup_base_width = base;
  o.mup_width = width;
  return o;
}

TEST(MupLearningRates, OffGivesOneEverywhere) {
  const OptimizerOptions off;
  EXPECT_EQ(parameter_lr_multiplier(off, ParamRole::query_weight), 1.0);
  EXPECT_EQ(parameter_lr_multiplier(off, ParamRole::embedding_table), 1.0);
}

TEST(MupLearningRates, MatricesScaleByBaseOverWidthTablesAndVectorsDoNot) {
  const OptimizerOptions o = mup(32, 128);
  for (ParamRole matrix : {ParamRole::weight, ParamRole::query_weight, ParamRole::key_weight,
                           ParamRole::value_weight, ParamRole::readout_weight})
    EXPECT_DOUBLE_EQ(parameter_lr_multiplier(o, matrix), 0.25);
  for (ParamRole other : {ParamRole::embedding_table, ParamRole::learned_positions,  // input tables
                          ParamRole::relative_bias, ParamRole::bias, ParamRole::norm_gain,
                          ParamRole::norm_bias, ParamRole::embedding_scale,
                          ParamRole::attention_temperature})
    EXPECT_EQ(parameter_lr_multiplier(o, other), 1.0);
}

TEST(MupLearningRates, TheOptimizerAppliesTheMultiplierToTheStep) {
  // Adam's first step moves every entry by lr · sign(g) (bias-corrected m / sqrt(v) = ±1).
  Parameter<float> matrix("encoder.layers.0.ffn.w1.weight", {2, 2}), bias("encoder.layers.0.ffn.w1.bias", {2}, ParamRole::bias);
  for (float& g : matrix.grad) g = 1.0f;
  for (float& g : bias.grad) g = 1.0f;
  OptimizerOptions o = mup(16, 64);
  o.eps = 1e-12;
  Optimizer<float> opt({&matrix, &bias}, o);
  opt.step(0.1);
  EXPECT_NEAR(matrix.value[0], -0.1 * 16.0 / 64.0, 1e-6);
  EXPECT_NEAR(bias.value[0], -0.1, 1e-6);
}

TEST(MupLearningRates, ConfigKeyIsValidatedAndResolved) {
  Json tree = {{"model", {{"d_model", 64}, {"n_heads", 4}}}, {"train", {{"mup_base_width", 16}}}};
  const RunConfig c = parse_run_config(tree);
  EXPECT_EQ(c.train.optimizer.mup_base_width, 16);
  EXPECT_EQ(c.train.optimizer.mup_width, 64);
  EXPECT_EQ(run_config_to_json(c)["train"]["mup_base_width"], 16);
  tree["train"]["mup_base_width"] = -1;
  EXPECT_THROW(parse_run_config(tree), Error);
}

}  // namespace
}  // namespace scalelab
