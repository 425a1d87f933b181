#include "runtime/kernels/cpu_dispatch.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

namespace tensorweave {

// Each float_kernels_<isa>.cc defines its table in its own namespace.
namespace isa_baseline {
const FloatKernelTable& FloatKernels();
}
namespace isa_avx2 {
const FloatKernelTable& FloatKernels();
}
namespace isa_avx512 {
const FloatKernelTable& FloatKernels();
}

const char* CpuIsaName(CpuIsa isa) {
  switch (isa) {
    case CpuIsa::kBaseline:
      return "baseline";
    case CpuIsa::kAvx2:
      return "avx2";
    case CpuIsa::kAvx512:
      return "avx512";
  }
  return "baseline";
}

bool ParseCpuIsa(const std::string& name, CpuIsa* isa) {
  for (CpuIsa candidate : {CpuIsa::kBaseline, CpuIsa::kAvx2, CpuIsa::kAvx512}) {
    if (name == CpuIsaName(candidate)) {
      *isa = candidate;
      return true;
    }
  }
  return false;
}

CpuIsa DetectCpuIsa() {
  // libgcc's __builtin_cpu_supports also checks (through XGETBV) that the
  // OS saves the YMM and ZMM registers, so a feature it reports is usable.
  __builtin_cpu_init();
  const bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  const bool avx512 = avx2 && __builtin_cpu_supports("avx512f") &&
                      __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512bw") &&
                      __builtin_cpu_supports("avx512vl");
  return avx512 ? CpuIsa::kAvx512 : avx2 ? CpuIsa::kAvx2 : CpuIsa::kBaseline;
}

CpuIsa ChooseCpuIsa(CpuIsa detected, const char* cap, bool* cap_unknown) {
  *cap_unknown = false;
  if (cap == nullptr || *cap == '\0') return detected;
  CpuIsa limit;
  if (!ParseCpuIsa(cap, &limit)) {
    *cap_unknown = true;
    return detected;
  }
  return std::min(detected, limit);
}

CpuIsa ActiveCpuIsa() {
  static const CpuIsa active = [] {
    const char* cap = std::getenv("TW_CPU_ISA");
    bool cap_unknown = false;
    const CpuIsa isa = ChooseCpuIsa(DetectCpuIsa(), cap, &cap_unknown);
    if (cap_unknown) {
      std::fprintf(stderr,
                   "tensorweave: ignoring TW_CPU_ISA=%s (expected baseline, avx2 or avx512); "
                   "using %s\n",
                   cap, CpuIsaName(isa));
    }
    return isa;
  }();
  return active;
}

const FloatKernelTable& FloatKernelsFor(CpuIsa isa) {
  switch (isa) {
    case CpuIsa::kAvx512:
      return isa_avx512::FloatKernels();
    case CpuIsa::kAvx2:
      return isa_avx2::FloatKernels();
    case CpuIsa::kBaseline:
      break;
  }
  return isa_baseline::FloatKernels();
}

}  // namespace tensorweave
