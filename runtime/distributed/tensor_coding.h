// Messages that carry tensors (RunStep, RunCallable, RunGraph, RecvTensor)
// on the wire without extra copies of the tensor bytes.
//
//   // Sender: every field but the tensors in the message, the tensors
//   // given as Tensors; each large tensor's own buffer becomes a gRPC slice
//   // (kept alive, shared, until gRPC has sent it).
//   RunGraphResponse rest;                          // recv left empty
//   NamedTensors recvs = {{"key", value}};
//   ::grpc::ByteBuffer wire;
//   EncodeWithTensors(rest, RunGraphResponse::kRecvFieldNumber, recvs, &wire);
//
//   // Receiver: the other fields parsed into the message, the tensors read
//   // from gRPC's slices straight into aligned tensor buffers.
//   RunGraphResponse response;
//   NamedTensors received;
//   TW_RETURN_IF_ERROR(DecodeWithTensors(wire, RunGraphResponse::kRecvFieldNumber,
//                                        &response, &received));
//
// The tensor field's entries are NamedTensorProto{name, tensor} (RunStep's
// feed and tensor, RunGraph's send and recv) or bare TensorProto
// (RunCallable's feed and fetch, RecvTensorResponse.tensor). The bytes are
// exactly the serialized message (protobuf lets fields come in any order
// and concatenates repeated fields), so either side may be any other
// implementation of the protocol: TensorFlow's own, or a generated stub.
// Encoded tensors are TensorProto{dtype, tensor_shape, tensor_content};
// entries laid out otherwise (values in *_val fields, strings, fields in
// another order) are decoded through the generated messages and
// Tensor::FromProto, which also judges every malformed message
// (INVALID_ARGUMENT, allocations within Tensor's limits).
#ifndef TENSORWEAVE_DISTRIBUTED_TENSOR_CODING_H_
#define TENSORWEAVE_DISTRIBUTED_TENSOR_CODING_H_

#include <google/protobuf/message_lite.h>
#include <grpcpp/support/byte_buffer.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "runtime/framework/status.h"
#include "runtime/framework/tensor.h"

namespace tensorweave {

// Tensors with names: feeds and fetches by tensor name, RunGraph's sends and
// recvs by rendezvous key.
using NamedTensors = std::vector<std::pair<std::string, Tensor>>;

// Writes `rest` followed by `tensors` as NamedTensorProto entries of field
// `field` (`rest`'s own entries of that field, normally none, stay first).
void EncodeWithTensors(const google::protobuf::MessageLite& rest, int field,
                       const NamedTensors& tensors, ::grpc::ByteBuffer* out);
// The same with bare TensorProto entries.
void EncodeWithTensors(const google::protobuf::MessageLite& rest, int field,
                       const std::vector<Tensor>& tensors, ::grpc::ByteBuffer* out);

// Reads a message written as above (or by any encoder): the entries of
// field `field` into `tensors` (in order), everything else into `rest`.
// INVALID_ARGUMENT for bytes that are no such message or a tensor that
// Tensor::FromProto refuses; `rest` and `tensors` are then unspecified.
Status DecodeWithTensors(const ::grpc::ByteBuffer& in, int field,
                         google::protobuf::MessageLite* rest, NamedTensors* tensors);
Status DecodeWithTensors(const ::grpc::ByteBuffer& in, int field,
                         google::protobuf::MessageLite* rest, std::vector<Tensor>* tensors);

// What RecvTensorResponse.tensor holds when the sender was dead: an empty
// float tensor of shape [0], as TensorFlow sends, so any receiver parses it.
Tensor DeadTensorPlaceholder();

// RecvTensorResponse{tensor: value, is_dead, send_start_micros}; the
// tensor is DeadTensorPlaceholder() when `is_dead`.
void EncodeRecvTensorResponse(const Tensor& value, bool is_dead, int64_t send_start_micros,
                              ::grpc::ByteBuffer* out);
// The tensor and deadness of a serialized RecvTensorResponse; INVALID_ARGUMENT
// as above, and for a response without exactly one tensor. A dead response's
// tensor is not looked at and `value` is left empty.
Status DecodeRecvTensorResponse(const ::grpc::ByteBuffer& in, Tensor* value, bool* is_dead);

}  // namespace tensorweave

#endif  // TENSORWEAVE_DISTRIBUTED_TENSOR_CODING_H_
