// RecvTensorResponse on the wire without extra copies of the tensor bytes.
//
//   // Worker serving RecvTensor: the tensor's own buffer becomes a gRPC
//   // slice (it stays alive, shared, until gRPC has sent it).
//   ::grpc::ByteBuffer wire;
//   EncodeRecvTensorResponse(value, send_start_micros, &wire);
//
//   // Peer receiving it: the bytes go from gRPC's slices straight into an
//   // aligned tensor buffer.
//   Tensor value;
//   TW_RETURN_IF_ERROR(DecodeRecvTensorResponse(wire, &value));
//
// The bytes are exactly a serialized RecvTensorResponse (tensorflow's
// worker.proto) whose TensorProto carries dtype, tensor_shape and
// tensor_content, so either side may be any other implementation of the
// protocol (TensorFlow's own, or a generated stub). Responses laid out
// differently (values in *_val fields, strings, fields in another order)
// are decoded through the generated message instead.
#ifndef TENSORWEAVE_DISTRIBUTED_TENSOR_CODING_H_
#define TENSORWEAVE_DISTRIBUTED_TENSOR_CODING_H_

#include <grpcpp/support/byte_buffer.h>

#include <cstdint>

#include "runtime/framework/status.h"
#include "runtime/framework/tensor.h"

namespace tensorweave {

// Writes RecvTensorResponse{tensor: value, send_start_micros} to `out`.
// Tensors of a plain dtype are not copied: their buffer is referenced.
void EncodeRecvTensorResponse(const Tensor& value, int64_t send_start_micros,
                              ::grpc::ByteBuffer* out);

// Reads the tensor of a serialized RecvTensorResponse. INVALID_ARGUMENT
// for bytes that are no RecvTensorResponse, or a tensor that is not valid
// (as Tensor::FromProto would refuse it).
Status DecodeRecvTensorResponse(const ::grpc::ByteBuffer& in, Tensor* value);

}  // namespace tensorweave

#endif  // TENSORWEAVE_DISTRIBUTED_TENSOR_CODING_H_
