// scalelab info: what this build runs on.
#include <iomanip>
#include <iostream>

#include "commands.hpp"
#include "scalelab/core/cpu.hpp"
#include "scalelab/core/parallel.hpp"
#include "scalelab/kernels/gemm.hpp"
#include "scalelab/kernels/gemm_speed_probe.hpp"
#include "scalelab/kernels/simd_dispatch.hpp"

namespace scalelab::cli {
namespace {

// The bf16-against-f32 probe of this process and what train.matmul_precision does with it.
void print_matmul_probe(std::ostream& out) {
  const MatmulSpeedProbe& p = measured_matmul_speed();
  const double ratio = p.bf16_over_f32();
  out << "matmul probe (1 thread, " << p.m << " x " << p.k << " -> " << p.n << ", medians of "
      << kProbeCalls << " calls in CPU time, measured now): f32 " << std::fixed << std::setprecision(1)
      << p.f32_gflops << " GFLOP/s, bf16 ";
  if (p.bf16_unavailable.empty()) out << p.bf16_gflops << " GFLOP/s";
  else out << "not run: " << p.bf16_unavailable;
  out << "; bf16/f32 " << std::setprecision(2) << ratio << "\n";
  out.unsetf(std::ios::floatfield);
  out << "matmul_precision: \"auto\" runs " << matmul_precision_name(auto_matmul_precision(ratio))
      << " here (bf16 where bf16/f32 >= " << kAutoBf16MinSpeedup << "); \"bf16\" runs "
      << (bf16_matmul_uses_hardware() ? "oneDNN's bf16 matmul"
                                      : "the f32 matmul on operands rounded to bf16 (bf16/f32 < 1)")
      << "\n";
}

}  // namespace

void add_info(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand("info", "Version, detected CPU features, GEMM backend, threads");
  cmd->callback([] {
    apply_simd_environment();  // a bad SCALELAB_SIMD is an error here, before anything is printed
    const CpuInfo cpu = detect_cpu();
    std::cout << "scalelab " << SCALELAB_VERSION << "\n";
    std::cout << "cpu: " << cpu.model_name << "\n";
    std::cout << "cpu features:";
    for (const std::string& f : cpu.features) std::cout << " " << f;
    std::cout << "\n";
    std::cout << "simd: " << simd_target() << " (available:";
    for (const std::string& t : simd_targets()) std::cout << " " << t;
    std::cout << "; SCALELAB_SIMD=<target> caps every SIMD path)\n";
    std::cout << "gemm: " << gemm_backend_description() << "\n";
    print_matmul_probe(std::cout);
    std::cout << "threads: " << num_threads() << " (OpenMP; set OMP_NUM_THREADS or train.threads)\n";
    std::cout << "mpi: " << mpi_library_version()
              << (built_with_mpi() ? " (mpirun -np N scalelab train / check: docs/scaling.md)" : "")
              << "\n";
  });
}

}  // namespace scalelab::cli
