// The float kernel table built for AVX2 and FMA; the Makefile
// adds the -m flags (see float_kernels_body.h).
#if !defined(__AVX2__) || !defined(__FMA__)
#error "build with -mavx2 -mfma (the Makefile's rule for this file)"
#endif
#define TW_ISA_NAMESPACE isa_avx2
#define TW_ISA_NAME "avx2"
#define TW_ISA_EIGEN Eigen_isa_avx2
#include "runtime/kernels/float_kernels_body.h"
