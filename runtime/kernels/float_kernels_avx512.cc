// The float kernel table built for AVX-512 F, DQ, BW and VL; the Makefile
// adds the -m flags (see float_kernels_body.h).
#if !defined(__AVX512F__) || !defined(__AVX512DQ__) || !defined(__AVX512BW__) || \
    !defined(__AVX512VL__)
#error "build with -mavx512f -mavx512dq -mavx512bw -mavx512vl (the Makefile's rule for this file)"
#endif
#define TW_ISA_NAMESPACE isa_avx512
#define TW_ISA_NAME "avx512"
#define TW_ISA_EIGEN Eigen_isa_avx512
#include "runtime/kernels/float_kernels_body.h"
