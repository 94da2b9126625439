// Every number of a run config is checked for finiteness and range, and every size for overflow
// before anything is allocated; the error names the key (docs/robustness.md, finding 9).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "scalelab/train/run_config.hpp"
#include "support/error_message.hpp"

namespace scalelab {
namespace {

using test::error_of;
using ::testing::HasSubstr;

Json copy_task() {
  return {{"model", {{"d_model", 32}, {"n_heads", 2}, {"d_ff", 64}, {"encoder_layers", 1},
                     {"decoder_layers", 1}, {"max_len", 16}}},
          {"data", {{"task", "copy"}}},
          {"train", {{"steps", 2}}}};
}

// The error of parsing copy_task() with these --set overrides (TOML values, as on the command line).
std::string error_with(std::initializer_list<const char*> overrides) {
  Json tree = copy_task();
  for (const char* o : overrides) apply_override(tree, o);
  return error_of([&] { parse_run_config(tree); });
}

TEST(ConfigValidation, TheCopyTaskParses) { EXPECT_EQ(error_with({}), "(no error)"); }

TEST(ConfigValidation, NonFiniteNumbersAreRefusedWithTheirKey) {
  EXPECT_EQ(error_with({"train.lr=inf"}), "config: train.lr = inf: must be a finite number");
  EXPECT_EQ(error_with({"train.lr=nan"}), "config: train.lr = nan: must be a finite number");
  EXPECT_EQ(error_with({"train.min_lr=nan"}), "config: train.min_lr = nan: must be a finite number");
  EXPECT_EQ(error_with({"train.weight_decay=inf"}), "config: train.weight_decay = inf: must be a finite number");
  EXPECT_EQ(error_with({"train.clip_norm=inf"}), "config: train.clip_norm = inf: must be a finite number");
  EXPECT_EQ(error_with({"model.embedding.scale=nan"}),
            "config: model.embedding.scale = nan: must be a finite number or a named rule");
  EXPECT_EQ(error_with({"model.attention.multiplier=-inf"}),
            "config: model.attention.multiplier = -inf: must be a finite number");
  EXPECT_EQ(error_with({"train.min_lr=-1e-3"}), "config: train.min_lr = -0.001: must be >= 0");
}

TEST(ConfigValidation, AbsurdSizesAreRefusedBeforeAllocation) {
  EXPECT_EQ(error_with({"model.d_model=1e18"}), "config: model.d_model = 1e+18: expected an integer within +-2^53");
  EXPECT_EQ(error_with({"model.d_model=1000000000000000000"}),
            "config: model.d_model = 1000000000000000000: must be <= 65536");
  EXPECT_EQ(error_with({"model.d_model=1e9"}), "config: model.d_model = 1000000000.0: must be <= 65536");
  EXPECT_THAT(error_with({"model.d_ff=9000000000000000000"}), HasSubstr("model.d_ff = 9000000000000000000: must be <= "));
  EXPECT_THAT(error_with({"model.decoder_layers=100000"}), HasSubstr("model.decoder_layers = 100000: must be <= 1024"));
  EXPECT_THAT(error_with({"model.max_len=4294967296"}), HasSubstr("model.max_len = 4294967296: must be <= "));
  EXPECT_THAT(error_with({"model.tgt_vocab=4294967296"}), HasSubstr("model.tgt_vocab = 4294967296: must be <= "));
  EXPECT_THAT(error_with({"train.batch_size=4294967296"}), HasSubstr("train.batch_size = 4294967296: must be <= "));
  EXPECT_THAT(error_with({"data.train_size=4294967296"}), HasSubstr("data.train_size = 4294967296: must be <= "));
  EXPECT_THAT(error_with({"data.symbols=4294967296"}), HasSubstr("data.symbols = 4294967296: must be <= "));
}

TEST(ConfigValidation, AModelLargerThanTheMachineIsRefusedNamingItsWidth) {
  // 1024 layers of width 2^16 and d_ff 2^20: each limit holds, the product does not fit anywhere.
  EXPECT_THAT(error_with({"model.d_model=65536", "model.d_ff=1048576", "model.decoder_layers=1024",
                          "model.encoder_layers=1024"}),
              HasSubstr("config: model.d_model = 65536: with d_ff = 1048576 and 2048 layers the model needs about"));
}

}  // namespace
}  // namespace scalelab
