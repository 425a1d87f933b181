// Which instruction set the hot float kernels run with, chosen once per
// process from what the CPU (and the OS, which must save the wider
// registers) supports:
//   baseline  x86-64 as the library is compiled (SSE2),
//   avx2      AVX2 and FMA (Haswell, Zen and later),
//   avx512    AVX-512 F, DQ, BW and VL (Skylake-SP, Ice Lake, Zen 4).
// TW_CPU_ISA=baseline|avx2|avx512 caps the choice (never above what the CPU
// has), so every path can be run and compared on one machine.
//
// oneDNN (MatMul's sgemm, the convolutions) is not covered here: Debian's
// libdnnl is built for baseline x86-64 and JIT-compiles its kernels for the
// CPU it finds (avx512_core on this machine); ONEDNN_MAX_CPU_ISA caps it.
#ifndef TENSORWEAVE_KERNELS_CPU_DISPATCH_H_
#define TENSORWEAVE_KERNELS_CPU_DISPATCH_H_

#include <string>

#include "runtime/kernels/float_kernel_table.h"

namespace tensorweave {

enum class CpuIsa { kBaseline = 0, kAvx2 = 1, kAvx512 = 2 };

const char* CpuIsaName(CpuIsa isa);

// False (leaving *isa alone) unless `name` is one of the names above.
bool ParseCpuIsa(const std::string& name, CpuIsa* isa);

// The widest instruction set this CPU and OS run.
CpuIsa DetectCpuIsa();

// `detected` capped by a TW_CPU_ISA value (`cap` may be null or empty: no
// cap). An unknown value is an error for the caller to report; the choice
// is then `detected`.
CpuIsa ChooseCpuIsa(CpuIsa detected, const char* cap, bool* cap_unknown);

// The instruction set of this process (fixed at the first call; an
// unknown TW_CPU_ISA is reported once on stderr and ignored).
CpuIsa ActiveCpuIsa();

// The float kernels built for `isa`, which the CPU must support
// (isa <= DetectCpuIsa()).
const FloatKernelTable& FloatKernelsFor(CpuIsa isa);

// The float kernels of ActiveCpuIsa().
inline const FloatKernelTable& ActiveFloatKernels() {
  static const FloatKernelTable& table = FloatKernelsFor(ActiveCpuIsa());
  return table;
}

}  // namespace tensorweave

#endif  // TENSORWEAVE_KERNELS_CPU_DISPATCH_H_
