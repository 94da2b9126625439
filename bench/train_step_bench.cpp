// Training-step throughput in target tokens per second and model GFLOP/s (model/flops.hpp): forward,
// label-smoothed loss, backward, clipping and an Adam step on a fixed random batch, dropout 0.1.
//
//   encoder_decoder: d_model 256, 8 heads, 3+3 layers, d_ff 1024, batch 64, 32 source and 32 target
//                    tokens, vocabulary 64                                  (issue 2's standard (a))
//   decoder_only:    6 layers, d_model 256, 8 heads, d_ff 1024, 128 tokens, batch 16, vocabulary 512 (b)
//   large_decoder:   8 layers, d_model 512, 8 heads, d_ff 2048, 256 tokens, batch 8, vocabulary 512 (c)
//   small:           d_model 64, 4 heads, 2+2 layers, d_ff 256, batch 64, 16 + 16 tokens,
//                    vocabulary 64: the ledger's kind of run, where per-step overhead decides
//
// bench/torch_train_step.py measures PyTorch on the same shapes; bench/compare_train_step.sh runs
// both and the FMA peak in one go. Run alone:
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

namespace scalelab {
namespace {

struct BenchShape {
  Architecture arch;
  int64_t d_model, heads, d_ff, layers, batch, src_len, tgt_len, vocab;
};

ModelConfig config_for(const BenchShape& s) {
  ModelConfig m;
  m.arch = s.arch;
  m.d_model = s.d_model;
  m.n_heads = s.heads;
  m.d_ff = s.d_ff;
  m.encoder_layers = s.layers;
  m.decoder_layers = s.layers;
  m.src_vocab = s.vocab;
  m.tgt_vocab = s.vocab;
  m.dropout = 0.1;
  m.max_len = 256;
  return m;
}

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
  Transformer<float> model(config_for(shape));
  Optimizer<float> optimizer(model.parameters(), {});
  Rng rng(1);
  auto random_ids = [&](int64_t n) {
    std::vector<int32_t> ids(n);
    for (int32_t& id : ids) id = 4 + static_cast<int32_t>(rng.below(shape.vocab - 4));
    return ids;
  };
  const auto src = random_ids(shape.batch * shape.src_len);
  const auto tgt_in = random_ids(shape.batch * shape.tgt_len);
  const auto tgt_out = random_ids(shape.batch * shape.tgt_len);
  const std::vector<int32_t> src_lengths(shape.batch, static_cast<int32_t>(shape.src_len));
  ModelInput in{.batch = shape.batch, .src_len = shape.src_len, .tgt_len = shape.tgt_len,
                .tgt = tgt_in.data()};
  if (shape.arch == Architecture::encoder_decoder) {
    in.src = src.data();
    in.src_lengths = src_lengths.data();
  }
  Tensor<float> dlogits;
  Rng dropout_rng(2);
  auto step = [&] {
    model.zero_grad();
    const Tensor<float>& logits = model.forward(in, {.training = true, .rng = &dropout_rng});
    dlogits.resize(logits.shape());
    cross_entropy<float>(logits.data(), tgt_out.data(), shape.batch * shape.tgt_len, shape.vocab,
                         0.1, /*pad_id=*/0, dlogits.data());
    model.backward(dlogits.data());
    clip_grad_norm(optimizer.params(), 1.0);
    optimizer.step(1e-4);
  };
  step();  // warm-up, untimed: the first step touches every buffer for the first time
  for (auto _ : state) step();
  state.SetItemsProcessed(state.iterations() * shape.batch * shape.tgt_len);
  state.counters["threads"] = static_cast<double>(num_threads());
  const StepFlops flops = step_flops(model.config(), {shape.batch, shape.src_len, shape.tgt_len});
  state.counters["model_flops"] = benchmark::Counter(
      flops.training() * static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
  state.counters["flops_per_step"] = flops.training();
}

BENCHMARK_CAPTURE(train_step, encoder_decoder,
                  BenchShape{Architecture::encoder_decoder, 256, 8, 1024, 3, 64, 32, 32, 64})
    ->ArgsProduct({{1, 2}, {0, 1}})->Unit(benchmark::kMillisecond)->UseRealTime()->MinTime(3.0);
BENCHMARK_CAPTURE(train_step, decoder_only,
                  BenchShape{Architecture::decoder_only, 256, 8, 1024, 6, 16, 0, 128, 512})
    ->ArgsProduct({{1, 2}, {0, 1}})->Unit(benchmark::kMillisecond)->UseRealTime()->MinTime(3.0);
BENCHMARK_CAPTURE(train_step, large_decoder,
                  BenchShape{Architecture::decoder_only, 512, 8, 2048, 8, 8, 0, 256, 512})
    ->ArgsProduct({{1, 2}, {0, 1}})->Unit(benchmark::kMillisecond)->UseRealTime()->MinTime(3.0);
BENCHMARK_CAPTURE(train_step, small,
                  BenchShape{Architecture::encoder_decoder, 64, 4, 256, 2, 64, 16, 16, 64})
    ->ArgsProduct({{1, 2}, {0, 1}})->Unit(benchmark::kMillisecond)->UseRealTime()->MinTime(3.0);

}  // namespace
}  // namespace scalelab

BENCHMARK_MAIN();
