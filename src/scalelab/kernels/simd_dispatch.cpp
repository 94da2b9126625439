#include "scalelab/kernels/simd_dispatch.hpp"

#include <cstdlib>
#include <mutex>

#include <dnnl.hpp>
#include <hwy/highway.h>
#include <hwy/targets.h>

#include "scalelab/core/error.hpp"

namespace scalelab {
namespace {

std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

// Compiled and supported targets, read before main(): force_simd_target narrows what Highway
// reports afterwards, and the full list must stay the reference.
const std::vector<int64_t> kAvailableTargets = hwy::SupportedAndGeneratedTargets();

int64_t target_bit(const std::string& name) {
  for (int64_t t : kAvailableTargets)
    if (name == hwy::TargetName(t)) return t;
  return 0;
}

dnnl::cpu_isa onednn_isa(const std::string& isa) {
  if (isa == "avx512_core_bf16") return dnnl::cpu_isa::avx512_core_bf16;
  if (isa == "avx512_core_vnni") return dnnl::cpu_isa::avx512_core_vnni;
  if (isa == "avx512_core") return dnnl::cpu_isa::avx512_core;
  if (isa == "avx2") return dnnl::cpu_isa::avx2;
  if (isa == "sse41") return dnnl::cpu_isa::sse41;
  return dnnl::cpu_isa::all;
}

}  // namespace

std::vector<std::string> simd_targets() {
  std::vector<std::string> names;
  for (int64_t t : kAvailableTargets) names.push_back(hwy::TargetName(t));
  return names;
}

std::string simd_target() {
  // The best target among the compiled and supported ones is what dispatch picks.
  const std::vector<int64_t> targets = hwy::SupportedAndGeneratedTargets();
  return targets.empty() ? "none" : hwy::TargetName(targets.front());
}

std::string onednn_isa_for(const std::string& target) {
  if (target == "AVX3_SPR" || target.empty() || target == "best") return "all";
  if (target == "AVX3_ZEN4") return "avx512_core_bf16";
  if (target == "AVX3_DL") return "avx512_core_vnni";
  if (target == "AVX3") return "avx512_core";
  if (target == "AVX2") return "avx2";
  return "sse41";  // SSE4, SSSE3, SCALAR, EMU128: oneDNN's lowest
}

void force_simd_target(const std::string& target) {
  hwy::SetSupportedTargetsForTest(0);
  if (!target.empty() && target != "best") {
    const int64_t chosen = target_bit(target);
    SL_CHECK(chosen != 0, "SIMD target \"", target, "\" is not compiled or not supported here (",
             joined(simd_targets()), ")");
    hwy::SetSupportedTargetsForTest(chosen);
  }
  hwy::GetChosenTarget().Update(hwy::SupportedTargets());
}

void apply_simd_environment() {
  static std::once_flag once;
  static std::string failure;
  std::call_once(once, [] {
    const char* value = std::getenv("SCALELAB_SIMD");
    if (value == nullptr || *value == '\0' || std::string(value) == "best") return;
    const std::string target(value);
    if (target_bit(target) == 0) {
      failure = "SCALELAB_SIMD = \"" + target + "\" is not a SIMD target of this machine and build (allowed: best, " +
                joined(simd_targets()) + ")";
      return;
    }
    force_simd_target(target);
    dnnl::set_max_cpu_isa(onednn_isa(onednn_isa_for(target)));
  });
  SL_CHECK(failure.empty(), failure);
}

std::string simd_library_version() {
  return "Highway " + std::to_string(HWY_MAJOR) + "." + std::to_string(HWY_MINOR) + "." + std::to_string(HWY_PATCH);
}

}  // namespace scalelab
