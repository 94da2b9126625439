// The GEMM table of docs/performance.md: the GEMM libraries at hand, on the standard
// configurations' shapes (bench/standard_step.hpp), f32 and bf16, 1 and 2 threads, each speed as a
// fraction of the FP32 FMA peak measured in the same run.
//
//   shapes    C[M × N] = A[M × K] · B[K × N], row-major (a Linear layer's dX = dy · W), with
//             M = the tokens of a step (2048 for (a), (b), (c); 1024 for small) and K, N from
//             d_model and d_ff: the attention projections (d → d), the FFN up (d → d_ff) and down
//             (d_ff → d). (The per-head products of attention run in the flash kernel, no GEMM.)
//   libraries oneDNN as scalelab calls it (kernels/gemm.hpp: one row band per thread; bf16: both
//             operands converted to bf16 on every call, oneDNN's bf16 × bf16 → f32 matmul);
//             scalelab's own packed GEMM (kernels/gemm_packed.hpp, f32 only) in the same bands;
//             libxsmm (libxsmmext's libxsmm_xgemm_omp, its tiled OpenMP GEMM), when CMake found it
//             (Debian's libxsmm-dev); MKL's cblas_sgemm / cblas_gemm_bf16bf16f32, when
//             SCALELAB_BENCH_MKL names a libmkl_rt.so (e.g. from pip's mkl in a throwaway venv);
//             oneDNN 3's matmul, when SCALELAB_BENCH_ONEDNN3 names a libdnnl.so.3 (pip's
//             onednn-cpu-gomp). Every bf16 cell includes converting both operands on every call.
//   timing    per cell one untimed call, then groups of calls (each group at least ~2 ms) until
//             --seconds have passed (at least 3 groups); each group timed in wall time and in the
//             CPU time of the OpenMP team that runs it (each thread's own clock, summed;
//             cpu_seconds) divided by the threads (on a shared machine the wall time also counts
//             other processes' turns; the CPU time counts only ours); the median group of each.
//             The FMA peak (kernels/simd_fma_peak.hpp) the same two ways, 21 short bursts
//             (median) at 1 and 2 threads, before and after every sweep over the cells; a cell's
//             fraction is of the mean of its sweep's two readings. --sweeps (3) sweeps; each
//             figure is the median over them. After each sweep also the packed GEMM's
//             micro-kernel alone, its panels in L1 (21 bursts, as the peak): the ceiling of
//             scalelab's own GEMM on this CPU.
//   check     after the timed calls, one more call into a C of NaN is compared with the exact
//             product (of bf16-rounded operands for bf16) at 64 sampled entries, relative to
//             sum |a·b|; above 1e-4 the cell prints "wrong".
//
// Run: build/bench/gemm_table [--seconds 0.3] [--sweeps 3] [--threads 1,2] [--libraries oneDNN,scalelab]
//      (bench/gemm_table.sh: with the peers; --libraries keeps those whose table name starts so);
//      --help prints the usage; a bad value is one line naming it, exit 2, before anything runs
//      (tests/bench/test_bench_args.sh).
#include <dlfcn.h>
#include <time.h>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "bench_args.hpp"
#include "scalelab/core/cpu.hpp"
#include "scalelab/core/error.hpp"
#include "scalelab/core/parallel.hpp"
#include "scalelab/core/rng.hpp"
#include "scalelab/kernels/bf16_convert.hpp"
#include "scalelab/kernels/gemm.hpp"
#include "scalelab/kernels/gemm_packed.hpp"
#include "scalelab/kernels/gemm_speed_probe.hpp"
#include "scalelab/kernels/precision.hpp"
#include "scalelab/kernels/simd_dispatch.hpp"
#include "scalelab/kernels/simd_fma_peak.hpp"

#ifdef SCALELAB_HAVE_LIBXSMM
#include <libxsmm.h>
#endif

namespace scalelab {
namespace {

struct Shape {
  int64_t m, k, n;
  const char* used_by;
};
const Shape kShapes[] = {
    {1024, 64, 64, "small: attention projections"},  {1024, 64, 256, "small: FFN up"},
    {1024, 256, 64, "small: FFN down"},              {2048, 256, 256, "(a), (b): attention projections"},
    {2048, 256, 1024, "(a), (b): FFN up"},           {2048, 1024, 256, "(a), (b): FFN down"},
    {2048, 512, 512, "(c): attention projections"},  {2048, 512, 2048, "(c): FFN up"},
    {2048, 2048, 512, "(c): FFN down"},
};

// C = A · B (row-major, dense) on `threads` threads; false when the library cannot run it.
using GemmCall = std::function<bool(const Shape&, const float* a, const float* b, float* c, int threads)>;

struct Library {
  std::string name;
  GemmCall f32, bf16;  // bf16: operands given in f32, converted as the library needs
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

double now_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// The CPU seconds of the OpenMP team of `threads` threads (the pool every library here runs its
// threads in: scalelab's bands, oneDNN, libxsmm, and MKL and oneDNN 3 through GNU OpenMP), summed:
// each thread reads its own clock, which counts its time up to now. The process clock
// (CLOCK_PROCESS_CPUTIME_ID) adds another thread's time only when the scheduler next accounts it
// (at a tick or a switch), so a call shorter than a tick on 2 threads could read as one thread's
// time: the FMA peak on 2 threads read 843 GFLOP per CPU-second against 422 per wall second
// (Xeon family 6 model 207, 2026-12-07).
double cpu_seconds(int threads) {
  double total = 0;
#pragma omp parallel num_threads(threads) reduction(+ : total)
  {
    timespec t{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    total += double(t.tv_sec) + 1e-9 * double(t.tv_nsec);
  }
  return total;
}

// A speed counted two ways: per second of wall time, and per second of CPU time the process got
// divided by the threads (what the speed would be if every thread had its core to itself: on a
// shared machine the wall time also counts the other processes' turns).
struct Speed {
  double wall_gflops = 0, cpu_gflops = 0;
};

// Median of per-call speeds: flops / wall and flops / (CPU time / threads).
Speed median_speed(const std::vector<double>& wall, const std::vector<double>& cpu, double flops,
                   int threads) {
  return {flops / median(wall) * 1e-9, flops / (median(cpu) / threads) * 1e-9};
}

// The median of `bursts` bursts of run() on every thread of a team of `threads` (run returns the
// flops it did).
template <class Run>
Speed burst_speed(int threads, int bursts, const Run& run) {
  std::vector<double> wall, cpu;
  double flops = 0;
  for (int i = 0; i < bursts; ++i) {
    flops = 0;
    const double c0 = cpu_seconds(threads), w0 = now_seconds();
#pragma omp parallel num_threads(threads) reduction(+ : flops)
    flops += run();
    const double w1 = now_seconds();
    wall.push_back(w1 - w0), cpu.push_back(cpu_seconds(threads) - c0);
  }
  return median_speed(wall, cpu, flops, threads);
}

// The FMA peak: ~1 ms bursts of 12 independent FMA chains per thread.
Speed fma_peak(int threads, int bursts) {
  return burst_speed(threads, bursts, [] { return simd_fma_peak_run(500'000); });
}

// The packed GEMM's micro-kernel alone, its panels in L1 (~1 ms bursts): the packed GEMM's ceiling.
Speed micro_tile_speed(int threads, int bursts) {
  return burst_speed(threads, bursts, [] { return gemm_packed_micro_tile_run(1000); });
}

Library onednn_library() {
  Library lib;
  lib.name = gemm_backend_description();
  lib.f32 = [](const Shape& s, const float* a, const float* b, float* c, int threads) {
    const ScopedNumThreads scoped(threads);
    const ScopedGemmLibrary onednn(GemmLibrary::onednn);
    detail::gemm_f32(GemmShape{.m = s.m, .n = s.n, .k = s.k}, a, b, c, 1.0f, 0.0f);
    return true;
  };
  lib.bf16 = [](const Shape& s, const float* a, const float* b, float* c, int threads) {
    // Where oneDNN has no bf16 matmul for this ISA the probe says so (its one-thread call threw;
    // inside the bands' parallel region the throw could not be caught).
    if (!measured_matmul_speed().bf16_unavailable.empty()) return false;
    const ScopedNumThreads scoped(threads);
    detail::gemm_bf16_hardware(GemmShape{.m = s.m, .n = s.n, .k = s.k}, a, b, c, 1.0f, 0.0f);
    return true;
  };
  return lib;
}

// scalelab's own f32 GEMM (kernels/gemm_packed.hpp) in the same bands; it has no bf16 path.
Library packed_library() {
  Library lib;
  lib.name = "scalelab packed (Highway " + simd_target() + ")";
  lib.f32 = [](const Shape& s, const float* a, const float* b, float* c, int threads) {
    const ScopedNumThreads scoped(threads);
    const ScopedGemmLibrary packed(GemmLibrary::packed);
    detail::gemm_f32(GemmShape{.m = s.m, .n = s.n, .k = s.k}, a, b, c, 1.0f, 0.0f);
    return true;
  };
  lib.bf16 = [](const Shape&, const float*, const float*, float*, int) { return false; };
  return lib;
}

#ifdef SCALELAB_HAVE_LIBXSMM
// Row-major C = A · B is column-major Cᵀ = Bᵀ · Aᵀ: libxsmm (column-major, BLAS conventions) gets
// B as its first operand.
Library libxsmm_library() {
  Library lib;
  lib.name = "libxsmm " SCALELAB_LIBXSMM_VERSION " (libxsmm_xgemm_omp)";
  libxsmm_init();
  lib.f32 = [](const Shape& s, const float* a, const float* b, float* c, int threads) {
    omp_set_num_threads(threads);
    const libxsmm_blasint m = s.n, n = s.m, k = s.k;
    const float alpha = 1, beta = 0;
    libxsmm_sgemm_omp("N", "N", &m, &n, &k, &alpha, b, &m, a, &k, &beta, c, &m);
    return true;
  };
  lib.bf16 = [](const Shape& s, const float* a, const float* b, float* c, int threads) {
    thread_local std::vector<uint16_t> a16, b16;
    a16.resize(static_cast<size_t>(s.m * s.k)), b16.resize(static_cast<size_t>(s.k * s.n));
    f32_to_bf16_row(a, s.m * s.k, a16.data());
    f32_to_bf16_row(b, s.k * s.n, b16.data());
    omp_set_num_threads(threads);
    const libxsmm_blasint m = s.n, n = s.m, k = s.k;
    const float alpha = 1, beta = 0;
    libxsmm_xgemm_omp(LIBXSMM_GEMM_PRECISION_BF16, LIBXSMM_GEMM_PRECISION_F32, "N", "N", &m, &n, &k,
                      &alpha, b16.data(), &m, a16.data(), &k, &beta, c, &m);
    return true;
  };
  return lib;
}
#endif

// MKL through its single dynamic library, loaded at run time (not a build dependency).
std::optional<Library> mkl_library() {
  const char* path = std::getenv("SCALELAB_BENCH_MKL");
  if (!path || !*path) return std::nullopt;
  void* h = dlopen(path, RTLD_NOW | RTLD_GLOBAL);
  if (!h) {
    std::fprintf(stderr, "gemm_table: SCALELAB_BENCH_MKL=%s: %s\n", path, dlerror());
    std::exit(2);
  }
  using Sgemm = void (*)(int, int, int, int, int, int, float, const float*, int, const float*, int,
                         float, float*, int);
  using Bf16gemm = void (*)(int, int, int, int, int, int, float, const uint16_t*, int,
                            const uint16_t*, int, float, float*, int);
  using SetThreads = void (*)(int);
  using Version = void (*)(char*, int);
  auto sgemm = reinterpret_cast<Sgemm>(dlsym(h, "cblas_sgemm"));
  auto bf16gemm = reinterpret_cast<Bf16gemm>(dlsym(h, "cblas_gemm_bf16bf16f32"));
  auto set_threads = reinterpret_cast<SetThreads>(dlsym(h, "MKL_Set_Num_Threads"));
  auto version = reinterpret_cast<Version>(dlsym(h, "MKL_Get_Version_String"));
  if (!sgemm || !set_threads) {
    std::fprintf(stderr, "gemm_table: %s has no cblas_sgemm / MKL_Set_Num_Threads\n", path);
    std::exit(2);
  }
  char buf[256] = "MKL";
  if (version) version(buf, sizeof buf);
  Library lib;
  lib.name = buf;
  constexpr int kRowMajor = 101, kNoTrans = 111;
  lib.f32 = [=](const Shape& s, const float* a, const float* b, float* c, int threads) {
    set_threads(threads);
    sgemm(kRowMajor, kNoTrans, kNoTrans, int(s.m), int(s.n), int(s.k), 1.0f, a, int(s.k), b,
          int(s.n), 0.0f, c, int(s.n));
    return true;
  };
  lib.bf16 = [=](const Shape& s, const float* a, const float* b, float* c, int threads) {
    if (!bf16gemm) return false;
    thread_local std::vector<uint16_t> a16, b16;
    a16.resize(static_cast<size_t>(s.m * s.k)), b16.resize(static_cast<size_t>(s.k * s.n));
    f32_to_bf16_row(a, s.m * s.k, a16.data());
    f32_to_bf16_row(b, s.k * s.n, b16.data());
    set_threads(threads);
    bf16gemm(kRowMajor, kNoTrans, kNoTrans, int(s.m), int(s.n), int(s.k), 1.0f, a16.data(),
             int(s.k), b16.data(), int(s.n), 0.0f, c, int(s.n));
    return true;
  };
  return lib;
}

// oneDNN 3 (e.g. pip's onednn-cpu-gomp), loaded at run time from SCALELAB_BENCH_ONEDNN3 through its
// C API (the C++ API is headers: they would clash with oneDNN 2's that the engine is built with).
// RTLD_DEEPBIND keeps its calls to its own dnnl_* symbols inside it. The enum values are those of
// oneDNN 3's dnnl_types.h / dnnl_common_types.h.
std::optional<Library> onednn3_library() {
  const char* path = std::getenv("SCALELAB_BENCH_ONEDNN3");
  if (!path || !*path) return std::nullopt;
  void* h = dlopen(path, RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND);
  if (!h) {
    std::fprintf(stderr, "gemm_table: SCALELAB_BENCH_ONEDNN3=%s: %s\n", path, dlerror());
    std::exit(2);
  }
  auto sym = [&](const char* name) {
    void* f = dlsym(h, name);
    if (!f) {
      std::fprintf(stderr, "gemm_table: %s has no %s\n", path, name);
      std::exit(2);
    }
    return f;
  };
  using Handle = void*;
  struct Api {
    int (*engine_create)(Handle*, int kind, size_t index);
    int (*stream_create)(Handle*, Handle engine, unsigned flags);
    int (*md_create)(Handle*, int ndims, const int64_t* dims, int data_type, int tag);
    int (*matmul_pd_create)(Handle*, Handle engine, Handle src, Handle weights, Handle bias,
                            Handle dst, Handle attr);
    int (*primitive_create)(Handle*, Handle pd);
    int (*memory_create)(Handle*, Handle md, Handle engine, void* data);
    int (*set_handle)(Handle memory, void* data);
    int (*execute)(Handle primitive, Handle stream, int nargs, const void* args);
    int (*stream_wait)(Handle stream);
    const int* (*version)();
  };
  auto api = std::make_shared<Api>();
  api->engine_create = reinterpret_cast<decltype(api->engine_create)>(sym("dnnl_engine_create"));
  api->stream_create = reinterpret_cast<decltype(api->stream_create)>(sym("dnnl_stream_create"));
  api->md_create = reinterpret_cast<decltype(api->md_create)>(sym("dnnl_memory_desc_create_with_tag"));
  api->matmul_pd_create =
      reinterpret_cast<decltype(api->matmul_pd_create)>(sym("dnnl_matmul_primitive_desc_create"));
  api->primitive_create = reinterpret_cast<decltype(api->primitive_create)>(sym("dnnl_primitive_create"));
  api->memory_create = reinterpret_cast<decltype(api->memory_create)>(sym("dnnl_memory_create"));
  api->set_handle = reinterpret_cast<decltype(api->set_handle)>(sym("dnnl_memory_set_data_handle"));
  api->execute = reinterpret_cast<decltype(api->execute)>(sym("dnnl_primitive_execute"));
  api->stream_wait = reinterpret_cast<decltype(api->stream_wait)>(sym("dnnl_stream_wait"));
  api->version = reinterpret_cast<decltype(api->version)>(sym("dnnl_version"));
  constexpr int kCpu = 1, kInOrder = 1, kF32 = 3, kBf16 = 2, kTagAb = 3;
  constexpr int kArgSrc = 1, kArgDst = 17, kArgWeights = 33;
  Handle engine = nullptr, stream = nullptr;
  if (api->engine_create(&engine, kCpu, 0) != 0 || api->stream_create(&stream, engine, kInOrder) != 0) {
    std::fprintf(stderr, "gemm_table: %s: no CPU engine\n", path);
    std::exit(2);
  }
  const int* v = api->version();  // dnnl_version_t starts with major, minor, patch
  Library lib;
  lib.name = "oneDNN " + std::to_string(v[0]) + "." + std::to_string(v[1]) + "." + std::to_string(v[2]) +
             " (" + path + ")";
  struct Ready {
    Handle primitive = nullptr, a = nullptr, b = nullptr, c = nullptr;
  };
  auto cache = std::make_shared<std::vector<std::pair<std::string, Ready>>>();
  // C = A · B with A and B of data_type; false when oneDNN 3 has no such matmul here.
  auto matmul = [=](const Shape& s, const void* a, const void* b, float* c, int threads, int type) {
    const std::string key = std::to_string(s.m) + "x" + std::to_string(s.k) + "x" + std::to_string(s.n) +
                            "/" + std::to_string(type);
    auto it = std::find_if(cache->begin(), cache->end(), [&](const auto& e) { return e.first == key; });
    if (it == cache->end()) {
      const int64_t ad[2] = {s.m, s.k}, bd[2] = {s.k, s.n}, cd[2] = {s.m, s.n};
      Handle amd = nullptr, bmd = nullptr, cmd = nullptr, pd = nullptr;
      Ready r;
      api->md_create(&amd, 2, ad, type, kTagAb);
      api->md_create(&bmd, 2, bd, type, kTagAb);
      api->md_create(&cmd, 2, cd, kF32, kTagAb);
      if (api->matmul_pd_create(&pd, engine, amd, bmd, nullptr, cmd, nullptr) != 0) return false;
      api->primitive_create(&r.primitive, pd);
      api->memory_create(&r.a, amd, engine, nullptr);
      api->memory_create(&r.b, bmd, engine, nullptr);
      api->memory_create(&r.c, cmd, engine, nullptr);
      cache->emplace_back(key, r);
      it = cache->end() - 1;
    }
    const Ready& r = it->second;
    api->set_handle(r.a, const_cast<void*>(a));
    api->set_handle(r.b, const_cast<void*>(b));
    api->set_handle(r.c, c);
    struct Arg {
      int arg;
      Handle memory;
    };
    const Arg args[3] = {{kArgSrc, r.a}, {kArgWeights, r.b}, {kArgDst, r.c}};
    omp_set_num_threads(threads);
    const bool ok = api->execute(r.primitive, stream, 3, args) == 0;
    api->stream_wait(stream);
    return ok;
  };
  lib.f32 = [=](const Shape& s, const float* a, const float* b, float* c, int threads) {
    return matmul(s, a, b, c, threads, kF32);
  };
  lib.bf16 = [=](const Shape& s, const float* a, const float* b, float* c, int threads) {
    thread_local std::vector<uint16_t> a16, b16;
    a16.resize(static_cast<size_t>(s.m * s.k)), b16.resize(static_cast<size_t>(s.k * s.n));
    f32_to_bf16_row(a, s.m * s.k, a16.data());
    f32_to_bf16_row(b, s.k * s.n, b16.data());
    return matmul(s, a16.data(), b16.data(), c, threads, kBf16);
  };
  return lib;
}

// Max over 64 sampled entries of |C - twin| / sum |a b|, the twin on bf16-rounded operands when
// bf16. A GEMM that is right stays near f32 summation error (~1e-6).
double sampled_error(const Shape& s, const std::vector<float>& a, const std::vector<float>& b,
                     const std::vector<float>& c, bool bf16) {
  auto value = [&](float x) { return bf16 ? double(bf16_bits_to_f32(f32_to_bf16_bits(x))) : double(x); };
  Rng rng(3);
  double worst = 0;
  for (int t = 0; t < 64; ++t) {
    const int64_t i = static_cast<int64_t>(rng.below(s.m)), j = static_cast<int64_t>(rng.below(s.n));
    double exact = 0, scale = 0;
    for (int64_t p = 0; p < s.k; ++p) {
      const double prod = value(a[i * s.k + p]) * value(b[p * s.n + j]);
      exact += prod, scale += std::abs(prod);
    }
    const double error = std::abs(c[i * s.n + j] - exact) / std::max(scale, 1e-30);
    if (std::isnan(error)) return error;  // an entry never written
    worst = std::max(worst, error);
  }
  return worst;
}

struct Cell {
  bool ran = false, right = false;
  Speed speed;
};

Cell measure(const GemmCall& call, const Shape& s, int threads, double seconds, bool bf16) {
  Rng rng(1);
  std::vector<float> a(static_cast<size_t>(s.m * s.k)), b(static_cast<size_t>(s.k * s.n)),
      c(static_cast<size_t>(s.m * s.n), NAN);
  for (float& x : a) x = static_cast<float>(rng.normal());
  for (float& x : b) x = static_cast<float>(rng.normal());
  Cell cell;
  const double first = now_seconds();
  if (!call(s, a.data(), b.data(), c.data(), threads)) return cell;
  cell.ran = true;
  // Calls in groups of at least ~2 ms, so that reading the team's clocks (a parallel region of
  // its own) stays a small part of a group; a group's speed is its mean call's.
  const int group = std::max(1, static_cast<int>(std::ceil(0.002 / (now_seconds() - first))));
  std::vector<double> wall, cpu;
  const double start = now_seconds();
  while (wall.size() < 3 || now_seconds() - start < seconds) {
    const double c0 = cpu_seconds(threads), w0 = now_seconds();
    for (int i = 0; i < group; ++i) call(s, a.data(), b.data(), c.data(), threads);
    const double w1 = now_seconds();
    wall.push_back((w1 - w0) / group), cpu.push_back((cpu_seconds(threads) - c0) / group);
  }
  cell.speed = median_speed(wall, cpu, 2.0 * double(s.m) * double(s.n) * double(s.k), threads);
  // Checked on a call after the timed ones, into a C of NaN: a library that skips the work after
  // its first call (or never does it) is caught.
  std::fill(c.begin(), c.end(), NAN);
  call(s, a.data(), b.data(), c.data(), threads);
  cell.right = sampled_error(s, a, b, c, bf16) < 1e-4;
  return cell;
}

// A cell over the sweeps: each sweep's speed and its fraction of that sweep's FMA peak.
struct Result {
  bool ran = true, right = true;
  std::vector<double> cpu_gflops, cpu_fraction, wall_gflops, wall_fraction;
  void add(const Cell& cell, const Speed& peak) {
    ran = ran && cell.ran, right = right && cell.right;
    cpu_gflops.push_back(cell.speed.cpu_gflops);
    cpu_fraction.push_back(cell.speed.cpu_gflops / peak.cpu_gflops);
    wall_gflops.push_back(cell.speed.wall_gflops);
    wall_fraction.push_back(cell.speed.wall_gflops / peak.wall_gflops);
  }
};

// "GFLOP/s (fraction)" per CPU-second, and with wall = true also per wall second; medians over
// the sweeps.
std::string format_result(const Result& r, bool wall) {
  if (!r.ran) return "n/a";
  if (!r.right) return "wrong";
  char buf[96];
  if (wall)
    std::snprintf(buf, sizeof buf, "%.0f (%.2f) · %.0f (%.2f)", median(r.cpu_gflops),
                  median(r.cpu_fraction), median(r.wall_gflops), median(r.wall_fraction));
  else
    std::snprintf(buf, sizeof buf, "%.0f (%.2f)", median(r.cpu_gflops), median(r.cpu_fraction));
  return buf;
}

// "a,b,c" -> {"a", "b", "c"}.
std::vector<std::string> split_list(const std::string& list) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= list.size()) {
    const size_t comma = std::min(list.find(',', start), list.size());
    if (comma > start) out.push_back(list.substr(start, comma - start));
    start = comma + 1;
  }
  return out;
}

// "oneDNN 2.6.3 (OpenMP runtime, ISA avx2)" -> "oneDNN 2.6.3": the table's library column.
std::string short_name(const std::string& name) {
  if (name.rfind("Intel(R) oneAPI Math Kernel Library Version ", 0) == 0) {
    const std::string rest = name.substr(44);
    const std::string version = rest.substr(0, rest.find(' '));  // "2026.2-Product"
    return "MKL " + version.substr(0, version.find('-'));
  }
  return name.substr(0, name.find(" ("));
}

constexpr const char* kUsage =
    "usage: gemm_table [--seconds S] [--sweeps N] [--threads 1,2] [--libraries NAME,...] "
    "[--check-arguments] (libraries by the start of their table name: oneDNN, scalelab, libxsmm, "
    "MKL; --check-arguments: check the others and exit, measuring nothing)";

int run(int argc, char** argv) {
  double seconds = 0.3;
  int sweeps = 3;
  std::vector<int> thread_counts = {1, 2};
  std::vector<std::string> only;  // --libraries: name prefixes
  std::string libraries_text;
  bool check_only = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const auto value = [&] { return bench::value_after(argc, argv, i, kUsage); };
    if (arg == "--help" || arg == "-h") {
      std::printf("%s\n", kUsage);
      return 0;
    } else if (arg == "--check-arguments") {
      check_only = true;
    } else if (arg == "--seconds") {
      seconds = bench::parse_number("--seconds", value(), 0.01, 3600);
    } else if (arg == "--sweeps") {
      sweeps = bench::parse_whole_number("--sweeps", value(), 1, 100);
    } else if (arg == "--libraries") {
      libraries_text = value();
      only = split_list(libraries_text);
      SL_CHECK(!only.empty(), "--libraries = \"", libraries_text,
               "\" is not allowed: name at least one library; ", kUsage);
    } else if (arg == "--threads") {
      const std::string list = value();
      thread_counts.clear();
      for (const std::string& item : split_list(list))
        thread_counts.push_back(bench::parse_whole_number("--threads", item, 1, 1024));
      SL_CHECK(!thread_counts.empty(), "--threads = \"", list,
               "\" is not allowed: use whole numbers from 1 to 1024, comma-separated");
    } else {
      throw_error("unknown argument \"", arg, "\"; ", kUsage);
    }
  }
  if (check_only) return 0;  // (a library's name is matched once the libraries are loaded, below)
  apply_simd_environment();
  std::vector<Library> libraries = {onednn_library(), packed_library()};
#ifdef SCALELAB_HAVE_LIBXSMM
  libraries.push_back(libxsmm_library());
#endif
  if (auto mkl = mkl_library()) libraries.push_back(*mkl);
  if (auto onednn3 = onednn3_library()) libraries.push_back(*onednn3);
  if (!only.empty()) {
    std::erase_if(libraries, [&](const Library& lib) {
      return std::none_of(only.begin(), only.end(), [&](const std::string& prefix) {
        return short_name(lib.name).rfind(prefix, 0) == 0;
      });
    });
    SL_CHECK(!libraries.empty(), "--libraries = \"", libraries_text,
             "\" matched no library here; ", kUsage);
  }

  struct Row {
    const Shape* shape;
    const Library* library;
    int thread_index;
    Result f32, bf16;
  };
  std::vector<Row> rows;
  for (const Shape& s : kShapes)
    for (const Library& lib : libraries)
      for (size_t t = 0; t < thread_counts.size(); ++t) rows.push_back({&s, &lib, int(t), {}, {}});

  // Each sweep: the FMA peak, every cell, the FMA peak again; a cell's fraction is of the mean of
  // the two peak readings of its sweep.
  std::printf("cpu: %s; simd %s; libraries:", detect_cpu().model_name.c_str(), simd_target().c_str());
  for (const Library& lib : libraries) std::printf(" %s;", lib.name.c_str());
  std::printf("\n");
  for (int sweep = 0; sweep < sweeps; ++sweep) {
    std::vector<Speed> before(thread_counts.size());
    for (size_t t = 0; t < thread_counts.size(); ++t) before[t] = fma_peak(thread_counts[t], 21);
    std::vector<Cell> f32, bf16;
    for (const Row& r : rows) {
      f32.push_back(measure(r.library->f32, *r.shape, thread_counts[r.thread_index], seconds, false));
      bf16.push_back(measure(r.library->bf16, *r.shape, thread_counts[r.thread_index], seconds, true));
    }
    std::vector<Speed> peak(thread_counts.size());
    for (size_t t = 0; t < thread_counts.size(); ++t) {
      const Speed after = fma_peak(thread_counts[t], 21);
      peak[t] = {(before[t].wall_gflops + after.wall_gflops) / 2,
                 (before[t].cpu_gflops + after.cpu_gflops) / 2};
      std::printf("sweep %d: FMA peak, %d thread(s): %.0f GFLOP/s per CPU-second (%.0f before, %.0f "
                  "after), %.0f per wall second (%.0f, %.0f)\n",
                  sweep + 1, thread_counts[t], peak[t].cpu_gflops, before[t].cpu_gflops,
                  after.cpu_gflops, peak[t].wall_gflops, before[t].wall_gflops, after.wall_gflops);
      const Speed tile = micro_tile_speed(thread_counts[t], 21);
      std::printf("sweep %d: scalelab packed GEMM's micro-kernel alone (panels in L1), %d thread(s): "
                  "%.0f GFLOP/s per CPU-second (%.2f of the FMA peak)\n",
                  sweep + 1, thread_counts[t], tile.cpu_gflops, tile.cpu_gflops / peak[t].cpu_gflops);
    }
    for (size_t i = 0; i < rows.size(); ++i) {
      rows[i].f32.add(f32[i], peak[rows[i].thread_index]);
      rows[i].bf16.add(bf16[i], peak[rows[i].thread_index]);
    }
  }
  std::fflush(stdout);

  // The summary: one row per shape, f32 per library and thread count; then every cell in full.
  std::printf("\nf32, GFLOP/s per CPU-second (fraction of the FMA peak), medians of %d sweeps:\n\n"
              "| M × K → N | used by |", sweeps);
  for (const Library& lib : libraries)
    for (int t : thread_counts) std::printf(" %s, %d thr. |", short_name(lib.name).c_str(), t);
  std::printf("\n|---|---|");
  for (size_t i = 0; i < libraries.size() * thread_counts.size(); ++i) std::printf("---|");
  std::printf("\n");
  for (const Shape& s : kShapes) {
    std::printf("| %lld × %lld → %lld | %s |", (long long)s.m, (long long)s.k, (long long)s.n, s.used_by);
    for (const Row& r : rows)
      if (r.shape == &s) std::printf(" %s |", format_result(r.f32, false).c_str());
    std::printf("\n");
  }
  std::printf("\nEvery cell: GFLOP/s per CPU-second (fraction of the FMA peak) · GFLOP/s per wall "
              "second (fraction), medians of %d sweeps\n\n", sweeps);
  std::printf("| M × K → N | used by | library | threads | f32 | bf16 |\n");
  std::printf("|---|---|---|---|---|---|\n");
  for (const Row& r : rows)
    std::printf("| %lld × %lld → %lld | %s | %s | %d | %s | %s |\n", (long long)r.shape->m,
                (long long)r.shape->k, (long long)r.shape->n, r.shape->used_by,
                short_name(r.library->name).c_str(), thread_counts[r.thread_index],
                format_result(r.f32, true).c_str(), format_result(r.bf16, true).c_str());
  return 0;
}

}  // namespace
}  // namespace scalelab

int main(int argc, char** argv) {
  try {
    return scalelab::run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gemm_table: %s\n", e.what());
    return 2;
  }
}
