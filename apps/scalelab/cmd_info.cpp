// scalelab info: what this build runs on.
#include <iostream>

#include "commands.hpp"
#include "scalelab/core/cpu.hpp"
#include "scalelab/core/parallel.hpp"
#include "scalelab/kernels/gemm.hpp"
#include "scalelab/kernels/simd_dispatch.hpp"

namespace scalelab::cli {

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
    std::cout << "bf16 matmul (train.matmul_precision = \"bf16\"): "
              << (bf16_matmul_uses_hardware()
                      ? "in hardware (AMX)"
                      : bf16_matmul_in_hardware()
                      ? "operands rounded to bf16, f32 GEMM (AVX512-BF16 without AMX: oneDNN's "
                        "bf16 matmul is slower than its f32 one here, docs/performance.md)"
                      : "emulated (operands rounded, f32 GEMM: no speed-up)")
              << "; \"auto\" runs "
              << matmul_precision_name(auto_matmul_precision(bf16_matmul_uses_hardware())) << " here\n";
    std::cout << "threads: " << num_threads() << " (OpenMP; set OMP_NUM_THREADS or train.threads)\n";
    std::cout << "mpi: " << mpi_library_version()
              << (built_with_mpi() ? " (mpirun -np N scalelab train / check: docs/scaling.md)" : "")
              << "\n";
  });
}

}  // namespace scalelab::cli
