// Attention speed and memory, in one run with the FP32 FMA peak of this processor.
//
//   attention_bench [google-benchmark flags]     FMA peak, flash and naive forward+backward
//       batch×heads = 64 (8×8), d = 64, N ∈ {128, 512, 2048}, 1 and 2 threads, and flash on one
//       head (batch×heads = 1) at N ∈ {2048, 8192}, and the small model's attention (batch 64,
//       4 heads, d = 16, N = 16); counters:
//       GFLOPs (flops/s / 1e9 with 4N²d forward + 10N²d backward per head, the FlashAttention-2
//       convention) and frac_peak (share of the FMA peak measured at the same thread count).
//   attention_bench --peak-memory N heads batch fwd|fwdbwd flash|naive [threads]
//       one call on fresh inputs; prints JSON: seconds and the process's peak resident memory.
#include <benchmark/benchmark.h>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "scalelab/core/parallel.hpp"
#include "scalelab/core/rng.hpp"
#include "scalelab/kernels/attention_flash.hpp"
#include "scalelab/kernels/simd_dispatch.hpp"
#include "scalelab/kernels/simd_fma_peak.hpp"

namespace scalelab {
namespace {

constexpr int64_t kBatch = 8, kHeads = 8, kDim = 64;
std::map<int, double> g_peak_flops;  // threads -> measured FMA peak (flops/s), set in main

double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// FMA peak with `threads` threads, each running the chain loop: the best of 7 runs (a peak is
// what the machine can do; other load on it only ever lowers a run).
double measure_peak(int threads) {
  std::vector<double> rates;
  for (int rep = 0; rep < 7; ++rep) {
    double flops = 0;
    const double t0 = now();
#pragma omp parallel num_threads(threads) reduction(+ : flops)
    flops += simd_fma_peak_run(20'000'000);
    rates.push_back(flops / (now() - t0));
  }
  return *std::max_element(rates.begin(), rates.end());
}

struct Inputs {
  AttentionShape shape;
  std::vector<float> q, k, v, out, dout, dq, dk, dv;
  Inputs(int64_t batch, int64_t heads, int64_t n, int64_t d) : shape{batch, heads, n, n, d} {
    const size_t size = batch * n * heads * d;
    Rng rng(1);
    for (auto* x : {&q, &k, &v, &dout}) {
      x->resize(size);
      for (float& e : *x) e = static_cast<float>(rng.normal());
    }
    for (auto* x : {&out, &dq, &dk, &dv}) x->assign(size, 0.0f);
  }
  void forward(AttentionKernel kernel, const AttentionOptions<float>& opt,
               AttentionSaved<float>& saved) {
    attention_forward(kernel, shape, opt, q.data(), k.data(), v.data(), out.data(), saved);
  }
  void backward(AttentionKernel kernel, const AttentionOptions<float>& opt,
                const AttentionSaved<float>& saved) {
    attention_backward(kernel, shape, opt, q.data(), k.data(), v.data(), out.data(), dout.data(),
                       saved, dq.data(), dk.data(), dv.data());
  }
};

void BM_FmaPeak(benchmark::State& state) {
  const int threads = static_cast<int>(state.range(0));
  double flops = 0;
  for (auto _ : state) {
#pragma omp parallel num_threads(threads) reduction(+ : flops)
    flops += simd_fma_peak_run(5'000'000);
  }
  state.counters["GFLOPs"] = benchmark::Counter(flops / 1e9, benchmark::Counter::kIsRate);
  state.SetLabel(simd_target());
}

void attention_case(benchmark::State& state, AttentionKernel kernel, bool backward,
                    int64_t batch = kBatch, int64_t heads = kHeads, int64_t dim = kDim) {
  const int64_t n = state.range(0);
  const int threads = static_cast<int>(state.range(1));
  set_num_threads(threads);
  Inputs in(batch, heads, n, dim);
  AttentionOptions<float> opt;
  opt.scale = 1.0 / std::sqrt(double(dim));
  AttentionSaved<float> saved;
  for (auto _ : state) {
    in.forward(kernel, opt, saved);
    if (backward) in.backward(kernel, opt, saved);
    benchmark::DoNotOptimize(in.dq.data());
  }
  const double flops = (backward ? 14.0 : 4.0) * n * n * dim * batch * heads;
  state.counters["GFLOPs"] =
      benchmark::Counter(flops / 1e9, benchmark::Counter::kIsIterationInvariantRate);
  if (g_peak_flops.count(threads))
    state.counters["frac_peak"] = benchmark::Counter(flops / g_peak_flops[threads],
                                                     benchmark::Counter::kIsIterationInvariantRate);
  state.SetLabel(kernel == AttentionKernel::flash ? simd_target()
                                                  : std::string("naive"));
}

void BM_FlashForwardBackward(benchmark::State& s) { attention_case(s, AttentionKernel::flash, true); }
void BM_FlashForward(benchmark::State& s) { attention_case(s, AttentionKernel::flash, false); }
void BM_NaiveForwardBackward(benchmark::State& s) { attention_case(s, AttentionKernel::naive, true); }
// One head (batch × heads = 1 < threads): the kernel splits the head into query / key ranges.
void BM_FlashOneHeadForwardBackward(benchmark::State& s) {
  attention_case(s, AttentionKernel::flash, true, 1, 1);
}

// The small standard configuration's attention (bench/standard_step.hpp): batch 64, 4 heads of
// d = 16, 16 tokens; per-(batch, head) overhead decides its speed.
void BM_FlashSmallHeadsForwardBackward(benchmark::State& s) {
  attention_case(s, AttentionKernel::flash, true, 64, 4, 16);
}
// Short sequences around the flash kernel's short-key path (kShortMaxKeys in
// kernels/attention_short-inl.hpp): batch 64, 4 heads, d = range(2), N = range(0) tokens.
void BM_FlashShortKeysForwardBackward(benchmark::State& s) {
  attention_case(s, AttentionKernel::flash, true, 64, 4, s.range(2));
}

BENCHMARK(BM_FmaPeak)->Arg(1)->Arg(2)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_FlashForwardBackward)
    ->ArgsProduct({{128, 512, 2048}, {1, 2}})
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_FlashForward)
    ->ArgsProduct({{128, 512, 2048}, {1, 2}})
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_FlashOneHeadForwardBackward)
    ->ArgsProduct({{2048, 8192}, {1, 2}})
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_FlashSmallHeadsForwardBackward)
    ->ArgsProduct({{16}, {1, 2}})
    ->UseRealTime()
    ->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_FlashShortKeysForwardBackward)
    ->ArgsProduct({{16, 32, 64, 128}, {1}, {16, 64}})
    ->UseRealTime()
    ->Unit(benchmark::kMicrosecond);
// Naive materialises 64·N² floats (1 GiB at N = 2048): small N only.
BENCHMARK(BM_NaiveForwardBackward)
    ->ArgsProduct({{128, 512}, {1, 2}})
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

int64_t peak_rss_kib() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line))
    if (line.rfind("VmHWM:", 0) == 0) return std::stoll(line.substr(6));
  return -1;
}

int peak_memory_main(int argc, char** argv) {
  if (argc < 7) {
    std::fprintf(stderr, "usage: %s --peak-memory N heads batch fwd|fwdbwd flash|naive [threads]\n",
                 argv[0]);
    return 2;
  }
  const int64_t n = std::stoll(argv[2]), heads = std::stoll(argv[3]), batch = std::stoll(argv[4]);
  const bool backward = std::strcmp(argv[5], "fwdbwd") == 0;
  const AttentionKernel kernel = parse_attention_kernel(argv[6]);
  if (argc > 7) set_num_threads(std::stoi(argv[7]));
  Inputs in(batch, heads, n, kDim);
  const int64_t inputs_kib = peak_rss_kib();
  AttentionOptions<float> opt;
  opt.scale = 1.0 / std::sqrt(double(kDim));
  AttentionSaved<float> saved;
  const double t0 = now();
  in.forward(kernel, opt, saved);
  const double t1 = now();
  if (backward) in.backward(kernel, opt, saved);
  const double t2 = now();
  const int64_t peak_kib = peak_rss_kib();
  double checksum = 0;
  for (float x : in.out) checksum += x;
  std::printf(
      "{\"n\": %lld, \"heads\": %lld, \"batch\": %lld, \"d\": %lld, \"kernel\": \"%s\", "
      "\"pass\": \"%s\", \"threads\": %d, \"forward_s\": %.3f, \"backward_s\": %.3f, "
      "\"peak_rss_gib\": %.4f, \"rss_after_inputs_gib\": %.4f, \"out_finite\": %s}\n",
      (long long)n, (long long)heads, (long long)batch, (long long)kDim, argv[6], argv[5],
      num_threads(), t1 - t0, t2 - t1, peak_kib / 1048576.0, inputs_kib / 1048576.0,
      std::isfinite(checksum) ? "true" : "false");
  return 0;
}

}  // namespace
}  // namespace scalelab

int main(int argc, char** argv) {
  if (argc > 1 && std::strcmp(argv[1], "--peak-memory") == 0)
    return scalelab::peak_memory_main(argc, argv);
  for (int threads : {1, 2}) scalelab::g_peak_flops[threads] = scalelab::measure_peak(threads);
  std::printf("FMA peak (%s, %d f32 lanes): 1 thread %.1f GFLOP/s, 2 threads %.1f GFLOP/s\n",
              scalelab::simd_target().c_str(), scalelab::simd_fma_peak_lanes(),
              scalelab::g_peak_flops[1] / 1e9, scalelab::g_peak_flops[2] / 1e9);
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
