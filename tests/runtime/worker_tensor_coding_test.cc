// tensor_coding: RecvTensorResponse bytes written without copying the
// tensor and read straight into a tensor, always equal to what the
// generated message would write and read.
#include <grpcpp/support/proto_buffer_reader.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "runtime/distributed/tensor_coding.h"
#include "tensorweave/proto/worker.pb.h"

namespace tensorweave {
namespace {

std::string Flatten(const ::grpc::ByteBuffer& buffer) {
  std::vector<::grpc::Slice> slices;
  EXPECT_TRUE(buffer.Dump(&slices).ok());
  std::string bytes;
  for (const ::grpc::Slice& slice : slices) {
    bytes.append(reinterpret_cast<const char*>(slice.begin()), slice.size());
  }
  return bytes;
}

::grpc::ByteBuffer BufferOf(const std::string& bytes) {
  ::grpc::Slice slice(bytes);
  return ::grpc::ByteBuffer(&slice, 1);
}

Tensor Floats(std::vector<float> values, TensorShape shape) {
  Tensor tensor(DT_FLOAT, shape);
  for (size_t i = 0; i < values.size(); ++i) tensor.data<float>()[i] = values[i];
  return tensor;
}

// Encodes, checks the bytes parse as the generated message with the same
// tensor, and decodes them back.
Tensor RoundTrip(const Tensor& value) {
  ::grpc::ByteBuffer wire;
  EncodeRecvTensorResponse(value, 1234, &wire);
  RecvTensorResponse parsed;
  EXPECT_TRUE(parsed.ParseFromString(Flatten(wire)));
  EXPECT_EQ(parsed.send_start_micros(), 1234);
  TensorProto expected;
  value.AsProtoTensorContent(&expected);
  EXPECT_EQ(parsed.tensor().SerializeAsString(), expected.SerializeAsString());
  Tensor decoded;
  Status status = DecodeRecvTensorResponse(wire, &decoded);
  EXPECT_TRUE(status.ok()) << status;
  return decoded;
}

TEST(TensorCodingTest, RoundTripsEveryLayout) {
  Tensor floats = RoundTrip(Floats({1, 2, 3, 4, 5, 6}, TensorShape({2, 3})));
  ASSERT_EQ(floats.dtype(), DT_FLOAT);
  EXPECT_EQ(floats.shape().DebugString(), TensorShape({2, 3}).DebugString());
  EXPECT_EQ(floats.data<float>()[5], 6.0f);

  Tensor scalar = RoundTrip(Floats({7}, TensorShape({})));
  EXPECT_EQ(scalar.data<float>()[0], 7.0f);

  Tensor empty = RoundTrip(Tensor(DT_FLOAT, TensorShape({0, 4})));
  EXPECT_EQ(empty.NumElements(), 0);
  EXPECT_EQ(empty.shape().dims(), 2);

  Tensor strings(DT_STRING, TensorShape({2}));
  strings.data<std::string>()[0] = "ab";
  strings.data<std::string>()[1] = std::string("\0z", 2);
  Tensor decoded_strings = RoundTrip(strings);
  ASSERT_EQ(decoded_strings.dtype(), DT_STRING);
  EXPECT_EQ(decoded_strings.data<std::string>()[1], std::string("\0z", 2));

  Tensor bools(DT_BOOL, TensorShape({3}));
  bools.data<bool>()[0] = true;
  bools.data<bool>()[1] = false;
  bools.data<bool>()[2] = true;
  Tensor decoded_bools = RoundTrip(bools);
  EXPECT_TRUE(decoded_bools.data<bool>()[2]);

  Tensor big(DT_INT64, TensorShape({1 << 16}));
  for (int64_t i = 0; i < big.NumElements(); ++i) big.data<int64_t>()[i] = i * 3;
  Tensor decoded_big = RoundTrip(big);
  EXPECT_EQ(decoded_big.data<int64_t>()[(1 << 16) - 1], ((1 << 16) - 1) * 3);
}

TEST(TensorCodingTest, TheEncodedBufferOutlivesTheTensor) {
  ::grpc::ByteBuffer wire;
  {
    Tensor value = Floats({1, 2, 3}, TensorShape({3}));
    EncodeRecvTensorResponse(value, 0, &wire);
  }
  Tensor decoded;
  ASSERT_TRUE(DecodeRecvTensorResponse(wire, &decoded).ok());
  EXPECT_EQ(decoded.data<float>()[2], 3.0f);
}

TEST(TensorCodingTest, DecodesWhatAnyEncoderWrites) {
  // Values in float_val, fields after the content, content before the
  // shape: the generated message's layout rules, all accepted.
  RecvTensorResponse response;
  TensorProto* tensor = response.mutable_tensor();
  tensor->set_dtype(DT_FLOAT);
  tensor->mutable_tensor_shape()->add_dim()->set_size(2);
  tensor->add_float_val(2.5f);
  response.set_is_dead(false);
  Tensor decoded;
  ASSERT_TRUE(DecodeRecvTensorResponse(BufferOf(response.SerializeAsString()), &decoded).ok());
  EXPECT_EQ(decoded.data<float>()[1], 2.5f);  // padded with the last value

  Floats({4, 5}, TensorShape({2})).AsProtoTensorContent(tensor);
  tensor->set_version_number(3);  // written after tensor_content
  ASSERT_TRUE(DecodeRecvTensorResponse(BufferOf(response.SerializeAsString()), &decoded).ok());
  EXPECT_EQ(decoded.data<float>()[1], 5.0f);

  // Content first, then dtype and shape, written by hand.
  TensorProto content_only;
  content_only.set_tensor_content(tensor->tensor_content());
  TensorProto rest;
  rest.set_dtype(DT_FLOAT);
  rest.mutable_tensor_shape()->add_dim()->set_size(2);
  const std::string tensor_bytes = content_only.SerializeAsString() + rest.SerializeAsString();
  std::string message = "\x0a";  // field 1, length-delimited
  message += static_cast<char>(tensor_bytes.size());
  message += tensor_bytes;
  ASSERT_TRUE(DecodeRecvTensorResponse(BufferOf(message), &decoded).ok());
  EXPECT_EQ(decoded.data<float>()[0], 4.0f);
}

TEST(TensorCodingTest, MalformedBytesAreInvalidArgument) {
  Tensor decoded;
  for (const std::string& bytes :
       {std::string("\xff\xff\xff", 3), std::string("\x0a\x7f", 2), std::string()}) {
    Status status = DecodeRecvTensorResponse(BufferOf(bytes), &decoded);
    EXPECT_EQ(status.code(), Code::INVALID_ARGUMENT) << status;
  }
  // Content that does not fill the shape.
  RecvTensorResponse response;
  Floats({1, 2}, TensorShape({2})).AsProtoTensorContent(response.mutable_tensor());
  response.mutable_tensor()->mutable_tensor_shape()->mutable_dim(0)->set_size(3);
  Status status = DecodeRecvTensorResponse(BufferOf(response.SerializeAsString()), &decoded);
  EXPECT_EQ(status.code(), Code::INVALID_ARGUMENT) << status;
  // A shape too large to allocate.
  response.mutable_tensor()->mutable_tensor_shape()->mutable_dim(0)->set_size(int64_t{1} << 60);
  status = DecodeRecvTensorResponse(BufferOf(response.SerializeAsString()), &decoded);
  EXPECT_NE(status.code(), Code::OK);
  // An unknown dtype.
  response.mutable_tensor()->set_dtype(static_cast<DataType>(999));
  status = DecodeRecvTensorResponse(BufferOf(response.SerializeAsString()), &decoded);
  EXPECT_EQ(status.code(), Code::INVALID_ARGUMENT) << status;
}

}  // namespace
}  // namespace tensorweave
