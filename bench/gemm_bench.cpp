// GEMM throughput, f32 against MatmulPrecision::bf16 (operands rounded to bf16, f32 sums; oneDNN's
// bf16 matmul where this process's probe measured it no slower than f32: bf16_hw = 1), on the shapes of a G2P training step
// (configs/g2p.toml: d_model 256, d_ff 1024, about 500-1000 token rows per batch) and of
// train_step_bench's standard configurations (2048 token rows: (a) and (b) d_model 256, d_ff 1024;
// (c) d_model 512, d_ff 2048; `small`: 1024 token rows, d_model 64, d_ff 256, q/k/v stacked into
// one 64 -> 192 map), whose fraction of the FMA peak these GEMMs bound. The bf16 figure
// includes rounding the two f32 operands into bf16 buffers on every call, as training does.
//
//   forward   x[rows, in] · W[out, in]ᵀ     (NT)
//   dX        dy[rows, out] · W[out, in]     (NN)
//   dW        dy[rows, out]ᵀ · x[rows, in]   (TN)
//
// Run: build/bench/gemm_bench --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
// (GFLOP/s is the `flops` counter; compare the two precisions of one shape in the same run.)
#include <benchmark/benchmark.h>

#include <tuple>
#include <vector>

#include "scalelab/core/parallel.hpp"
#include "scalelab/core/rng.hpp"
#include "scalelab/kernels/gemm.hpp"

namespace scalelab {
namespace {

enum Op { forward_nt = 0, dx_nn = 1, dw_tn = 2 };

// Args: threads, precision (0 f32, 1 bf16), op, rows, in, out.
void gemm_shape(benchmark::State& state) {
  set_num_threads(static_cast<int>(state.range(0)));
  const auto precision = state.range(1) ? MatmulPrecision::bf16 : MatmulPrecision::f32;
  const auto op = static_cast<Op>(state.range(2));
  const int64_t rows = state.range(3), in = state.range(4), out = state.range(5);
  Rng rng(1);
  auto random = [&](int64_t n) {
    std::vector<float> v(static_cast<size_t>(n));
    for (float& x : v) x = static_cast<float>(rng.normal());
    return v;
  };
  const auto x = random(rows * in), w = random(out * in), dy = random(rows * out);
  std::vector<float> c(static_cast<size_t>(std::max(rows, out) * std::max(in, out)));
  GemmShape s;
  const float *a = nullptr, *b = nullptr;
  switch (op) {
    case forward_nt: s = {.m = rows, .n = out, .k = in, .trans_b = true}, a = x.data(), b = w.data(); break;
    case dx_nn: s = {.m = rows, .n = in, .k = out}, a = dy.data(), b = w.data(); break;
    case dw_tn: s = {.m = out, .n = in, .k = rows, .trans_a = true}, a = dy.data(), b = x.data(); break;
  }
  const ScopedMatmulPrecision scoped(precision);
  gemm<float>(s, a, b, c.data());  // warm-up: primitive creation
  for (auto _ : state) gemm<float>(s, a, b, c.data());
  state.counters["flops"] = benchmark::Counter(2.0 * double(s.m) * double(s.n) * double(s.k),
                                               benchmark::Counter::kIsIterationInvariantRate);
  state.counters["bf16_hw"] = precision == MatmulPrecision::bf16 && bf16_matmul_uses_hardware();
}

void shapes(benchmark::internal::Benchmark* b) {
  for (int64_t threads : {1, 2})
    for (int64_t precision : {0, 1})
      for (int64_t op : {0, 1, 2})
        for (auto [rows, in, out] : {std::tuple<int64_t, int64_t, int64_t>{1024, 64, 64},
                                     {1024, 64, 192}, {1024, 64, 256}, {1024, 256, 64},  // small
                                     {832, 256, 256},
                                     {832, 256, 1024}, {832, 1024, 256},  // G2P
                                     {2048, 256, 256}, {2048, 256, 1024}, {2048, 1024, 256},  // (a), (b)
                                     {2048, 512, 512}, {2048, 512, 2048}, {2048, 2048, 512}})  // (c)
          b->Args({threads, precision, op, rows, in, out});
}

BENCHMARK(gemm_shape)
    ->ArgNames({"threads", "bf16", "op", "rows", "in", "out"})
    ->Apply(shapes)
    ->Unit(benchmark::kMicrosecond)
    ->UseRealTime()
    ->MinTime(0.3);

}  // namespace
}  // namespace scalelab

BENCHMARK_MAIN();
