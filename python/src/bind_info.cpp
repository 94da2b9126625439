// scalelab.info(): what `scalelab info` prints, as a dict.
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "bindings.hpp"
#include "scalelab/core/comm.hpp"
#include "scalelab/core/cpu.hpp"
#include "scalelab/core/parallel.hpp"
#include "scalelab/kernels/gemm.hpp"
#include "scalelab/kernels/simd_dispatch.hpp"

namespace nb = nanobind;

namespace scalelab::python {

void bind_info(nb::module_& m) {
  m.def(
      "info",
      [] {
        apply_simd_environment();  // a bad SCALELAB_SIMD is a ValueError, as it is an error in the CLI
        const CpuInfo cpu = detect_cpu();
        nb::dict d;
        d["version"] = SCALELAB_VERSION;
        d["cpu"] = cpu.model_name;
        d["cpu_features"] = cpu.features;
        d["simd_target"] = simd_target();
        d["simd_targets"] = simd_targets();
        d["gemm_backend"] = gemm_backend_description();
        d["bf16_matmul_in_hardware"] = bf16_matmul_uses_hardware();
        d["threads"] = num_threads();
        d["mpi"] = mpi_library_version();
        return d;
      },
      "Version, CPU, SIMD target, GEMM backend, threads (as `scalelab info`).");
}

}  // namespace scalelab::python
