// TensorFlow's element sizes for every DataType number, including the types
// this runtime cannot compute with (complex, quantized, 8-bit floats, 4- and
// 2-bit integers). DataTypeSize (types.h) answers "can a Tensor hold it, and
// how wide is it here" and is 0 for those; callers that must report what
// TensorFlow reports for a type number (TF_DataTypeSize) use this instead.
//
//   TensorFlowElementSize(DT_COMPLEX64)  // 8
//   TensorFlowElementSize(DT_STRING)     // 0: variable length
//   TensorFlowElementSize(33)            // 1: TF_FLOAT4_E2M1FN, one byte in TF
#ifndef TENSORWEAVE_FRAMEWORK_ELEMENT_SIZE_H_
#define TENSORWEAVE_FRAMEWORK_ELEMENT_SIZE_H_

#include <cstddef>

namespace tensorweave {

// Bytes per element in TensorFlow for the DataType number `dtype`; 0 for
// string, resource, variant, ref types and numbers TensorFlow does not know.
size_t TensorFlowElementSize(int dtype);

}  // namespace tensorweave

#endif  // TENSORWEAVE_FRAMEWORK_ELEMENT_SIZE_H_
