// core/cpu: what the processor can do, detected at run time (never assumed at compile time).
#pragma once
#include <string>
#include <vector>

namespace scalelab {

struct CpuInfo {
  std::string model_name;
  std::vector<std::string> features;  // e.g. "avx2", "fma", "avx512f", "amx_bf16"
  bool has(const std::string& feature) const;
};

CpuInfo detect_cpu();

}  // namespace scalelab
