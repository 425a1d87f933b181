// The float kernel table built for baseline x86-64 (SSE2), the fallback every x86-64 CPU runs; the
// Makefile adds the -m flags (see float_kernels_body.h).
#define TW_ISA_NAMESPACE isa_baseline
#define TW_ISA_NAME "baseline"
#define TW_ISA_EIGEN Eigen_isa_baseline
#include "runtime/kernels/float_kernels_body.h"
