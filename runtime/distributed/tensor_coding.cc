#include "runtime/distributed/tensor_coding.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <google/protobuf/wire_format_lite.h>
#include <grpcpp/support/proto_buffer_reader.h>
#include <grpcpp/support/slice.h>

#include <climits>
#include <string>

#include "tensorweave/proto/worker.pb.h"

namespace tensorweave {
namespace {

using google::protobuf::internal::WireFormatLite;
using google::protobuf::io::CodedInputStream;
using google::protobuf::io::CodedOutputStream;
using google::protobuf::io::StringOutputStream;

// Field numbers of RecvTensorResponse and TensorProto (worker.proto,
// tensor.proto).
constexpr int kResponseTensor = 1;
constexpr int kTensorDtype = 1;
constexpr int kTensorShape = 2;
constexpr int kTensorContent = 4;

uint32_t LengthDelimitedTag(int field) {
  return WireFormatLite::MakeTag(field, WireFormatLite::WIRETYPE_LENGTH_DELIMITED);
}

// The tensor a slice points into, kept alive until gRPC lets go of it.
void ReleaseTensor(void* tensor) { delete static_cast<Tensor*>(tensor); }

// The whole message through the generated parser: the path for responses
// this file does not lay out itself.
Status DecodeThroughProto(const ::grpc::ByteBuffer& in, Tensor* value) {
  ::grpc::ByteBuffer copy(in);  // shares the slices
  ::grpc::ProtoBufferReader reader(&copy);
  RecvTensorResponse response;
  if (!response.ParseFromZeroCopyStream(&reader)) {
    return errors::InvalidArgument("RecvTensor response is not a RecvTensorResponse");
  }
  return Tensor::FromProto(response.tensor(), value);
}

// What the fast path found: done (value set), or "use the proto path".
enum class Decoded { kValue, kUseProto };

// Reads TensorProto{dtype, tensor_shape, tensor_content} in that order
// (how every encoder of tensor_content writes it), the content straight
// into the tensor's buffer.
Status DecodeTensorProto(CodedInputStream* in, Tensor* value, Decoded* decoded) {
  *decoded = Decoded::kUseProto;
  TensorProto header;
  bool has_shape = false;
  while (true) {
    const uint32_t tag = in->ReadTag();
    if (tag == 0) return Status::OK();  // no content: tiny, or values in *_val
    const int field = WireFormatLite::GetTagFieldNumber(tag);
    const auto wire_type = WireFormatLite::GetTagWireType(tag);
    if (field == kTensorDtype && wire_type == WireFormatLite::WIRETYPE_VARINT) {
      uint32_t dtype = 0;
      if (!in->ReadVarint32(&dtype)) return errors::InvalidArgument("truncated TensorProto");
      header.set_dtype(static_cast<DataType>(dtype));
    } else if (field == kTensorShape && tag == LengthDelimitedTag(kTensorShape)) {
      uint32_t length = 0;
      if (!in->ReadVarint32(&length)) return errors::InvalidArgument("truncated TensorProto");
      const CodedInputStream::Limit limit = in->PushLimit(static_cast<int>(length));
      if (!header.mutable_tensor_shape()->MergeFromCodedStream(in) ||
          !in->ConsumedEntireMessage()) {
        return errors::InvalidArgument("malformed TensorShapeProto");
      }
      in->PopLimit(limit);
      has_shape = true;
    } else if (field == kTensorContent && tag == LengthDelimitedTag(kTensorContent)) {
      uint32_t length = 0;
      if (!in->ReadVarint32(&length)) return errors::InvalidArgument("truncated TensorProto");
      // Bools are canonicalized by FromProto; strings never use content.
      if (!has_shape || header.dtype() == DT_BOOL || header.dtype() == DT_STRING) {
        return Status::OK();
      }
      // FromProto validates dtype and shape and allocates (aligned, within
      // the allocation limits); the content then overwrites the zeros.
      Tensor result;
      TW_RETURN_IF_ERROR(Tensor::FromProto(header, &result));
      if (result.TotalBytes() != length) {
        return errors::InvalidArgument("TensorProto tensor_content has ", length, " bytes but a ",
                                       DataTypeString(header.dtype()), " tensor of shape ",
                                       result.shape().DebugString(), " needs ",
                                       result.TotalBytes());
      }
      if (length > 0 && !in->ReadRaw(result.raw_data(), static_cast<int>(length))) {
        return errors::InvalidArgument("truncated tensor_content");
      }
      // Anything after the content (version_number, *_val) is unusual:
      // let the proto path judge the whole message.
      if (in->ReadTag() != 0) return Status::OK();
      *value = std::move(result);
      *decoded = Decoded::kValue;
      return Status::OK();
    } else {
      return Status::OK();  // another field or order: the proto path decides
    }
  }
}

}  // namespace

void EncodeRecvTensorResponse(const Tensor& value, int64_t send_start_micros,
                              ::grpc::ByteBuffer* out) {
  RecvTensorResponse rest;  // every field but the tensor
  rest.set_send_start_micros(send_start_micros);
  const size_t content_bytes = value.dtype() == DT_STRING ? 0 : value.TotalBytes();
  if (content_bytes == 0 || content_bytes > INT_MAX) {
    // Nothing worth sharing (or more than one protobuf message may hold):
    // the ordinary encoding.
    value.AsProtoTensorContent(rest.mutable_tensor());
    ::grpc::Slice whole(rest.SerializeAsString());
    *out = ::grpc::ByteBuffer(&whole, 1);
    return;
  }
  TensorProto header;
  header.set_dtype(value.dtype());
  value.shape().AsProto(header.mutable_tensor_shape());
  const std::string header_bytes = header.SerializeAsString();
  const size_t tensor_proto_bytes =
      header_bytes.size() + CodedOutputStream::VarintSize32(LengthDelimitedTag(kTensorContent)) +
      CodedOutputStream::VarintSize64(content_bytes) + content_bytes;
  std::string prefix;
  {
    StringOutputStream stream(&prefix);
    CodedOutputStream coded(&stream);
    coded.WriteTag(LengthDelimitedTag(kResponseTensor));
    coded.WriteVarint64(tensor_proto_bytes);
    coded.WriteRaw(header_bytes.data(), static_cast<int>(header_bytes.size()));
    coded.WriteTag(LengthDelimitedTag(kTensorContent));
    coded.WriteVarint64(content_bytes);
  }
  auto* shared = new Tensor(value);  // shares the buffer; the slice owns it
  ::grpc::Slice slices[3] = {
      ::grpc::Slice(prefix),
      ::grpc::Slice(shared->raw_data(), content_bytes, ReleaseTensor, shared),
      ::grpc::Slice(rest.SerializeAsString()),
  };
  *out = ::grpc::ByteBuffer(slices, 3);
}

Status DecodeRecvTensorResponse(const ::grpc::ByteBuffer& in, Tensor* value) {
  Decoded decoded = Decoded::kUseProto;
  {
    ::grpc::ByteBuffer copy(in);  // shares the slices
    ::grpc::ProtoBufferReader reader(&copy);
    CodedInputStream coded(&reader);
    while (decoded == Decoded::kUseProto) {
      const uint32_t tag = coded.ReadTag();
      if (tag == 0) break;
      if (tag == LengthDelimitedTag(kResponseTensor)) {
        uint32_t length = 0;
        if (!coded.ReadVarint32(&length)) return errors::InvalidArgument("truncated response");
        const CodedInputStream::Limit limit = coded.PushLimit(static_cast<int>(length));
        TW_RETURN_IF_ERROR(DecodeTensorProto(&coded, value, &decoded));
        if (decoded == Decoded::kUseProto) break;
        coded.PopLimit(limit);
      } else if (!WireFormatLite::SkipField(&coded, tag)) {
        return errors::InvalidArgument("RecvTensor response is not a RecvTensorResponse");
      }
    }
  }
  if (decoded == Decoded::kValue) return Status::OK();
  return DecodeThroughProto(in, value);
}

}  // namespace tensorweave
