// The standard training step (bench/standard_step.hpp) run for a few steps, written out so that the
// peers of bench/compare_train_step.py can prove they compute the same step: the initial weights
// (a checkpoint, docs/checkpoint.md), the batch, and the loss of every step and after the last
// update, as one JSON object on stdout; then the same steps from the same weights with
// train.matmul_precision = "bf16" (kernels/gemm.hpp), their losses under "bf16", for the peers' bf16
// ports.
//
// Usage: train_step_check <encoder_decoder|decoder_only|large_decoder|small> <checkpoint-out> [steps]
#include <cstdlib>
#include <iostream>
#include <string>

#include "scalelab/core/error.hpp"
#include "scalelab/kernels/gemm.hpp"
#include "scalelab/model/checkpoint.hpp"
#include "bench_args.hpp"
#include "standard_step.hpp"

namespace scalelab {
namespace {

constexpr const char* kUsage =
    "usage: train_step_check <encoder_decoder|decoder_only|large_decoder|small> <checkpoint-out> "
    "[steps]";

int run(int argc, char** argv) {
  if (argc == 2 && (std::string(argv[1]) == "--help" || std::string(argv[1]) == "-h")) {
    std::cout << kUsage << "\n";
    return 0;
  }
  SL_CHECK(argc == 3 || argc == 4, kUsage);
  const int steps = argc == 4 ? bench::parse_whole_number("steps", argv[3], 1, 100) : 3;
  const bench::BenchShape shape = bench::shape_named(argv[1]);
  bench::StandardStep standard(shape);
  const Json model_json = model_config_to_json(standard.model().config());
  save_checkpoint(argv[2], standard.model(), Json{{"model", model_json}}, 0);
  Json losses = Json::array();
  for (int s = 0; s < steps; ++s) losses.push_back(standard.step());
  // A second model built as the first (the same seeds, so the same initial weights and batch).
  Json bf16 = {{"step_losses", Json::array()}};
  {
    const ScopedMatmulPrecision matmul(MatmulPrecision::bf16);
    bench::StandardStep twin(shape);
    for (int s = 0; s < steps; ++s) bf16["step_losses"].push_back(twin.step());
    bf16["loss_after"] = twin.loss();
    bf16["matmul_in_hardware"] = bf16_matmul_uses_hardware();
  }
  const Json out = {{"config", argv[1]},        {"model", model_json},
                    {"batch", shape.batch},     {"src_len", shape.src_len},
                    {"tgt_len", shape.tgt_len},
                    {"src", standard.src()},    {"tgt_in", standard.tgt_in()},
                    {"tgt_out", standard.tgt_out()}, {"label_smoothing", 0.1},
                    {"lr", 1e-4},               {"clip", 1.0},
                    {"step_losses", losses},    {"loss_after", standard.loss()},
                    {"bf16", bf16}};
  std::cout << out.dump() << "\n";
  return 0;
}

}  // namespace
}  // namespace scalelab

int main(int argc, char** argv) {
  try {
    return scalelab::run(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "train_step_check: " << e.what() << "\n";
    return 2;
  }
}
