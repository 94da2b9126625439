// The standard training step (bench/standard_step.hpp) in a plain loop, for profilers: it builds the
// model, runs warm-up steps (the first touches every buffer), then steps for the time asked and
// prints one JSON object naming the steady window in CLOCK_MONOTONIC nanoseconds. A profiler that
// stamps its samples with the same clock (`perf record -k CLOCK_MONOTONIC`) keeps only the samples
// inside the window, so construction, first-touch page faults and warm-up are not charged to the
// step (bench/op_breakdown.py does this). The matrix flops of one step (model/flops.hpp) come with it,
// split into linear maps and attention, so a profile's shares become rates.
//
// Usage: train_step_loop <encoder_decoder|decoder_only|large_decoder|small>
//                        [--threads N] [--precision f32|bf16] [--seconds S] [--warmup N]
#include <time.h>

#include <cstdlib>
#include <iostream>
#include <string>

#include "scalelab/core/error.hpp"
#include "scalelab/core/parallel.hpp"
#include "scalelab/kernels/gemm.hpp"
#include "scalelab/kernels/simd_dispatch.hpp"
#include "scalelab/model/flops.hpp"
#include "bench_args.hpp"
#include "standard_step.hpp"

namespace scalelab {
namespace {

constexpr const char* kUsage =
    "usage: train_step_loop <encoder_decoder|decoder_only|large_decoder|small> [--threads N] "
    "[--precision f32|bf16] [--seconds S] [--warmup N]";

int64_t monotonic_ns() {
  timespec t{};
  clock_gettime(CLOCK_MONOTONIC, &t);
  return int64_t{t.tv_sec} * 1'000'000'000 + t.tv_nsec;
}

int run(int argc, char** argv) {
  SL_CHECK(argc >= 2, kUsage);
  const std::string config = argv[1];
  if (config == "--help" || config == "-h") {
    std::cout << kUsage << "\n";
    return 0;
  }
  const bench::BenchShape shape = bench::shape_named(config);
  int threads = 1, warmup = 2;
  double seconds = 3.0;
  MatmulPrecision precision = MatmulPrecision::f32;
  for (int i = 2; i < argc; ++i) {
    const std::string flag = argv[i];
    const auto value = [&] { return bench::value_after(argc, argv, i, kUsage); };
    if (flag == "--threads") {
      threads = bench::parse_whole_number(flag, value(), 1, 1024);
    } else if (flag == "--seconds") {
      seconds = bench::parse_number(flag, value(), 0.01, 3600);
    } else if (flag == "--warmup") {
      warmup = bench::parse_whole_number(flag, value(), 1, 100);
    } else if (flag == "--precision") {
      const std::string name = value();
      SL_CHECK(name == "f32" || name == "bf16", "--precision = \"", name,
               "\" is not allowed: use f32 or bf16");
      precision = name == "bf16" ? MatmulPrecision::bf16 : MatmulPrecision::f32;
    } else {
      throw_error("unknown argument \"", flag, "\"; ", kUsage);
    }
  }
  set_num_threads(threads);
  const ScopedMatmulPrecision matmul(precision);
  bench::StandardStep standard(shape);
  for (int s = 0; s < warmup; ++s) standard.step();
  const int64_t begin = monotonic_ns();
  const int64_t budget = static_cast<int64_t>(seconds * 1e9);
  int64_t steps = 0, end = begin;
  while (end - begin < budget || steps == 0) {
    standard.step();
    ++steps;
    end = monotonic_ns();
  }
  const StepFlops flops =
      step_flops(standard.model().config(), {shape.batch, shape.src_len, shape.tgt_len});
  const Json out = {{"config", config},
                    {"threads", num_threads()},
                    {"precision", precision == MatmulPrecision::bf16 ? "bf16" : "f32"},
                    {"simd", simd_target()},
                    {"steps", steps},
                    {"steady_begin_ns", begin},
                    {"steady_end_ns", end},
                    {"seconds_per_step", 1e-9 * static_cast<double>(end - begin) / steps},
                    {"linear_flops_per_step", 3.0 * flops.linear_forward},
                    {"attention_flops_per_step", 3.5 * flops.attention_forward},
                    {"flops_per_step", flops.training()}};
  std::cout << out.dump() << "\n";
  return 0;
}

}  // namespace
}  // namespace scalelab

int main(int argc, char** argv) {
  try {
    return scalelab::run(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "train_step_loop: " << e.what() << "\n";
    return 2;
  }
}
