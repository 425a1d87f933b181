// Conversions between TF_STRING tensors of the C API (arrays of TF_TString,
// as in TensorFlow 2.x) and the runtime's string tensors (one std::string
// per element). Every path that moves a string tensor across the C boundary
// (session feeds and fetches, attrs, py_func, checkpoint reads, numpy) goes
// through TensorFromC/TensorToC, which call these.
//
//   std::shared_ptr<TensorBuffer> buffer;
//   TW_RETURN_IF_ERROR(TStringBufferFromTensor(runtime_tensor, &buffer));
//   ... new TF_Tensor{DT_STRING, shape, buffer} ...
//   TW_RETURN_IF_ERROR(TensorFromTStrings(*c_tensor, &runtime_tensor));
#ifndef TENSORWEAVE_C_API_C_API_TSTRING_INTERNAL_H_
#define TENSORWEAVE_C_API_C_API_TSTRING_INTERNAL_H_

#include <cstddef>
#include <cstdint>
#include <memory>

#include "c_api/c_api.h"
#include "runtime/framework/status.h"
#include "runtime/framework/tensor.h"

namespace tensorweave {
namespace c_api {

// Zeroed, 64-byte aligned memory of `bytes` bytes holding TF_TStrings (zero
// is the empty string). When the last holder lets go, the first
// min(count, bytes / sizeof(TF_TString)) elements are deallocated, then the
// memory is freed. Null when out of memory.
std::shared_ptr<TensorBuffer> AllocateTStringBuffer(size_t bytes, int64_t count);

// A runtime string tensor from `in`'s TF_TString elements (copied). A buffer
// too small for its elements, or an element whose size or location is
// impossible (a SMALL size over 22, a LARGE size over its capacity, a NULL
// pointer with a nonzero size, an OFFSET reaching outside the buffer) is
// INVALID_ARGUMENT.
Status TensorFromTStrings(const TF_Tensor& in, Tensor* out);

// A TF_TString buffer (from AllocateTStringBuffer) holding copies of `in`'s
// strings.
Status TStringBufferFromTensor(const Tensor& in, std::shared_ptr<TensorBuffer>* out);

}  // namespace c_api
}  // namespace tensorweave

#endif  // TENSORWEAVE_C_API_C_API_TSTRING_INTERNAL_H_
