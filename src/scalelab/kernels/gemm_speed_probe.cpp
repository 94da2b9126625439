// The bf16-against-f32 matmul probe (gemm_speed_probe.hpp).
#include "scalelab/kernels/gemm_speed_probe.hpp"

#include <algorithm>
#include <ctime>
#include <cmath>
#include <exception>
#include <vector>

#include "scalelab/core/parallel.hpp"
#include "scalelab/core/rng.hpp"

namespace scalelab {

MatmulPrecision auto_matmul_precision(double bf16_over_f32) {
  return bf16_over_f32 >= kAutoBf16MinSpeedup ? MatmulPrecision::bf16 : MatmulPrecision::f32;
}

bool bf16_matmul_pays(double bf16_over_f32) { return bf16_over_f32 >= 1.0; }

namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

double thread_cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return double(t.tv_sec) + 1e-9 * double(t.tv_nsec);
}

// The calling thread's CPU time for call(): the probe runs on this thread alone, and on a shared
// machine wall time would also count other processes' turns on the core.
template <class Call>
double seconds_of(Call&& call) {
  const double t0 = thread_cpu_seconds();
  call();
  return thread_cpu_seconds() - t0;
}

}  // namespace

MatmulSpeedProbe run_matmul_speed_probe() {
  MatmulSpeedProbe probe;
  probe.m = 512, probe.n = 1024, probe.k = 256;
  const GemmShape shape{.m = probe.m, .n = probe.n, .k = probe.k, .trans_b = true};  // x · Wᵀ
  Rng rng(7);
  auto random = [&](int64_t n) {
    std::vector<float> v(static_cast<size_t>(n));
    for (float& x : v) x = static_cast<float>(rng.normal());
    return v;
  };
  const std::vector<float> x = random(probe.m * probe.k), w = random(probe.n * probe.k);
  std::vector<float> c(static_cast<size_t>(probe.m * probe.n));
  const ScopedNumThreads one_thread(1);
  auto f32 = [&] { detail::gemm_f32(shape, x.data(), w.data(), c.data(), 1.0f, 0.0f); };
  auto bf16 = [&] { detail::gemm_bf16_hardware(shape, x.data(), w.data(), c.data(), 1.0f, 0.0f); };

  f32();  // builds the primitive (JIT), not timed
  bool bf16_runs = true;
  try {
    bf16();
  } catch (const std::exception& e) {  // oneDNN: "could not create a primitive descriptor ..."
    bf16_runs = false;
    probe.bf16_unavailable = std::string("oneDNN has no bf16 matmul for this ISA (") + e.what() + ")";
  }
  std::vector<double> f32_seconds, bf16_seconds;
  for (int i = 0; i < kProbeCalls; ++i) {  // alternated: a burst of load hits both alike
    f32_seconds.push_back(seconds_of(f32));
    if (bf16_runs) bf16_seconds.push_back(seconds_of(bf16));
  }
  const double flop = 2.0 * double(probe.m) * double(probe.n) * double(probe.k);
  probe.f32_gflops = flop / median(f32_seconds) * 1e-9;
  if (bf16_runs) probe.bf16_gflops = flop / median(bf16_seconds) * 1e-9;
  return probe;
}

const MatmulSpeedProbe& measured_matmul_speed() {
  static const MatmulSpeedProbe probe = run_matmul_speed_probe();
  return probe;
}

}  // namespace scalelab
