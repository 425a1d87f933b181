#include "runtime/framework/element_size.h"

namespace tensorweave {

size_t TensorFlowElementSize(int dtype) {
  // Indexed by TensorFlow's DataType number (types.proto); TensorFlow 2.21's
  // DataTypeSize gives the same values (checked against its C API).
  static constexpr unsigned char kSizes[] = {
      0,   // DT_INVALID
      4,   // DT_FLOAT
      8,   // DT_DOUBLE
      4,   // DT_INT32
      1,   // DT_UINT8
      2,   // DT_INT16
      1,   // DT_INT8
      0,   // DT_STRING: variable length
      8,   // DT_COMPLEX64
      8,   // DT_INT64
      1,   // DT_BOOL
      1,   // DT_QINT8
      1,   // DT_QUINT8
      4,   // DT_QINT32
      2,   // DT_BFLOAT16
      2,   // DT_QINT16
      2,   // DT_QUINT16
      2,   // DT_UINT16
      16,  // DT_COMPLEX128
      2,   // DT_HALF
      0,   // DT_RESOURCE
      0,   // DT_VARIANT
      4,   // DT_UINT32
      8,   // DT_UINT64
      1,   // DT_FLOAT8_E5M2
      1,   // DT_FLOAT8_E4M3FN
      1,   // DT_FLOAT8_E4M3FNUZ
      1,   // DT_FLOAT8_E4M3B11FNUZ
      1,   // DT_FLOAT8_E5M2FNUZ
      1,   // DT_INT4: stored one per byte
      1,   // DT_UINT4
      1,   // DT_INT2
      1,   // DT_UINT2
      1,   // DT_FLOAT4_E2M1FN
  };
  if (dtype < 0 || dtype >= static_cast<int>(sizeof(kSizes))) return 0;
  return kSizes[dtype];
}

}  // namespace tensorweave
