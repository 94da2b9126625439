// Training-step throughput in target tokens per second and model GFLOP/s (model/flops.hpp): forward,
// label-smoothed loss, backward, clipping and an Adam step on a fixed random batch, dropout off.
//
// The step and the four standard configurations: bench/standard_step.hpp.
//
// bench/compare_train_step.sh runs it with the FMA peak and the peers (PyTorch 2 eager and
// torch.compile, JAX jit: bench/peers/peer_step.py) on the same shapes in one go. Run alone:
// build/bench/train_step_bench --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
#include <benchmark/benchmark.h>

#include "scalelab/core/parallel.hpp"
#include "scalelab/kernels/gemm.hpp"
#include "scalelab/kernels/bf16_dot_peak.hpp"
#include "scalelab/kernels/simd_dispatch.hpp"
#include "scalelab/kernels/simd_fma_peak.hpp"
#include "scalelab/model/flops.hpp"
#include "scalelab/model/transformer.hpp"
#include "scalelab/train/loss.hpp"
#include "scalelab/train/optimizer.hpp"
#include "standard_step.hpp"

namespace scalelab {
namespace {

using bench::BenchShape;

// The FP32 FMA peak of this run's machine at 1 and 2 threads: the denominator of "fraction of peak".
void fma_peak(benchmark::State& state) {
  const int threads = static_cast<int>(state.range(0));
  double flops = 0;
  for (auto _ : state) {
#pragma omp parallel num_threads(threads) reduction(+ : flops)
    flops += simd_fma_peak_run(2'000'000);
  }
  state.counters["flops"] = benchmark::Counter(flops, benchmark::Counter::kIsRate);
  state.counters["threads"] = threads;
  state.SetLabel(simd_target());
}
BENCHMARK(fma_peak)->Arg(1)->Arg(2)->UseRealTime()->Unit(benchmark::kMillisecond);

// The peak of AVX512-BF16's dot product (vdpbf16ps) at 1 and 2 threads: how far a bf16 GEMM without
// AMX could ever run ahead of f32 on this processor (kernels/bf16_dot_peak.hpp).
void bf16_dot_peak(benchmark::State& state) {
  if (!bf16_dot_peak_available()) {
    state.SkipWithError("no avx512bf16 (or SCALELAB_SIMD caps below AVX3)");
    return;
  }
  const int threads = static_cast<int>(state.range(0));
  double flops = 0;
  for (auto _ : state) {
#pragma omp parallel num_threads(threads) reduction(+ : flops)
    flops += bf16_dot_peak_run(1'000'000).flops;
  }
  state.counters["flops"] = benchmark::Counter(flops, benchmark::Counter::kIsRate);
  state.counters["threads"] = threads;
}
BENCHMARK(bf16_dot_peak)->Arg(1)->Arg(2)->UseRealTime()->Unit(benchmark::kMillisecond);

// Args: threads, matmul precision (0 f32, 1 bf16: train.matmul_precision, kernels/gemm.hpp).
void train_step(benchmark::State& state, BenchShape shape) {
  set_num_threads(static_cast<int>(state.range(0)));
  const ScopedMatmulPrecision matmul(state.range(1) ? MatmulPrecision::bf16 : MatmulPrecision::f32);
  bench::StandardStep standard(shape);
  auto step = [&] { standard.step(); };
  step();  // warm-up, untimed: the first step touches every buffer for the first time
  for (auto _ : state) step();
  state.SetItemsProcessed(state.iterations() * shape.batch * shape.tgt_len);
  state.counters["threads"] = static_cast<double>(num_threads());
  const StepFlops flops = step_flops(standard.model().config(), {shape.batch, shape.src_len, shape.tgt_len});
  state.counters["model_flops"] = benchmark::Counter(
      flops.training() * static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
  state.counters["flops_per_step"] = flops.training();
}

BENCHMARK_CAPTURE(train_step, encoder_decoder,
                  bench::kEncoderDecoder)
    ->ArgsProduct({{1, 2}, {0, 1}})->Unit(benchmark::kMillisecond)->UseRealTime()->MinTime(3.0);
BENCHMARK_CAPTURE(train_step, decoder_only,
                  bench::kDecoderOnly)
    ->ArgsProduct({{1, 2}, {0, 1}})->Unit(benchmark::kMillisecond)->UseRealTime()->MinTime(3.0);
BENCHMARK_CAPTURE(train_step, large_decoder,
                  bench::kLargeDecoder)
    ->ArgsProduct({{1, 2}, {0, 1}})->Unit(benchmark::kMillisecond)->UseRealTime()->MinTime(3.0);
BENCHMARK_CAPTURE(train_step, small,
                  bench::kSmall)
    ->ArgsProduct({{1, 2}, {0, 1}})->Unit(benchmark::kMillisecond)->UseRealTime()->MinTime(3.0);

}  // namespace
}  // namespace scalelab

BENCHMARK_MAIN();
