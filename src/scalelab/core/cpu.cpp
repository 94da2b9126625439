#include "scalelab/core/cpu.hpp"

#include <algorithm>
#include <fstream>

namespace scalelab {

bool CpuInfo::has(const std::string& feature) const {
  return std::find(features.begin(), features.end(), feature) != features.end();
}

CpuInfo detect_cpu() {
  CpuInfo info;
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  while (std::getline(cpuinfo, line)) {
    if (info.model_name.empty() && line.rfind("model name", 0) == 0) {
      info.model_name = line.substr(line.find(':') + 2);
    }
  }
  if (info.model_name.empty()) info.model_name = "unknown";
#if defined(__x86_64__) || defined(__i386__)
  __builtin_cpu_init();
  // __builtin_cpu_supports needs string literals, hence the explicit list.
#define SL_FEATURE(name) \
  if (__builtin_cpu_supports(name)) info.features.push_back(name);
  SL_FEATURE("sse4.2")
  SL_FEATURE("avx")
  SL_FEATURE("avx2")
  SL_FEATURE("fma")
#ifndef __clang__  // clang 14 has no builtin name for f16c and avx512fp16: read below
  SL_FEATURE("f16c")
#endif
  SL_FEATURE("avx512f")
  SL_FEATURE("avx512bw")
  SL_FEATURE("avx512vl")
  SL_FEATURE("avx512bf16")
#ifndef __clang__
  SL_FEATURE("avx512fp16")
#endif
#undef SL_FEATURE
  // AMX has no __builtin_cpu_supports name in g++ 12: read it from /proc/cpuinfo's flags.
  std::ifstream flags_file("/proc/cpuinfo");
  while (std::getline(flags_file, line)) {
    if (line.rfind("flags", 0) == 0) {
      line += ' ';
      for (const char* amx : {"amx_bf16", "amx_tile", "amx_int8"}) {
        if (line.find(std::string(" ") + amx) != std::string::npos) info.features.push_back(amx);
      }
#ifdef __clang__  // the fuzz build (clang 14); /proc/cpuinfo spells avx512fp16 with an underscore
      if (line.find(" f16c ") != std::string::npos) info.features.push_back("f16c");
      if (line.find(" avx512_fp16 ") != std::string::npos) info.features.push_back("avx512fp16");
#endif
      break;
    }
  }
#endif
  return info;
}

}  // namespace scalelab
