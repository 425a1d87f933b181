// tensor_coding: messages with tensors (RecvTensorResponse, RunGraph,
// RunStep, RunCallable) written without copying the tensors and read
// straight into tensors, always equal to what the generated messages would
// write and read.
#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <grpcpp/support/proto_buffer_reader.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "runtime/distributed/tensor_coding.h"
#include "tensorweave/proto/master.pb.h"
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
  EncodeRecvTensorResponse(value, /*is_dead=*/false, 1234, &wire);
  RecvTensorResponse parsed;
  EXPECT_TRUE(parsed.ParseFromString(Flatten(wire)));
  EXPECT_EQ(parsed.send_start_micros(), 1234);
  TensorProto expected;
  value.AsProtoTensorContent(&expected);
  EXPECT_EQ(parsed.tensor().SerializeAsString(), expected.SerializeAsString());
  Tensor decoded;
  bool dead = false;
  Status status = DecodeRecvTensorResponse(wire, &decoded, &dead);
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
    EncodeRecvTensorResponse(value, /*is_dead=*/false, 0, &wire);
  }
  Tensor decoded;
  bool dead = false;
  ASSERT_TRUE(DecodeRecvTensorResponse(wire, &decoded, &dead).ok());
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
  bool dead = false;
  ASSERT_TRUE(
      DecodeRecvTensorResponse(BufferOf(response.SerializeAsString()), &decoded, &dead).ok());
  EXPECT_EQ(decoded.data<float>()[1], 2.5f);  // padded with the last value

  Floats({4, 5}, TensorShape({2})).AsProtoTensorContent(tensor);
  tensor->set_version_number(3);  // written after tensor_content
  ASSERT_TRUE(
      DecodeRecvTensorResponse(BufferOf(response.SerializeAsString()), &decoded, &dead).ok());
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
  ASSERT_TRUE(DecodeRecvTensorResponse(BufferOf(message), &decoded, &dead).ok());
  EXPECT_EQ(decoded.data<float>()[0], 4.0f);
}

TEST(TensorCodingTest, ADeadSenderTravelsAsTensorFlowSendsIt) {
  ::grpc::ByteBuffer wire;
  EncodeRecvTensorResponse(Floats({1, 2}, TensorShape({2})), /*is_dead=*/true, 7, &wire);
  // TensorFlow's empty tensor in the tensor field, so its receivers parse it.
  RecvTensorResponse parsed;
  ASSERT_TRUE(parsed.ParseFromString(Flatten(wire)));
  EXPECT_TRUE(parsed.is_dead());
  EXPECT_EQ(parsed.tensor().dtype(), DT_FLOAT);
  ASSERT_EQ(parsed.tensor().tensor_shape().dim_size(), 1);
  EXPECT_EQ(parsed.tensor().tensor_shape().dim(0).size(), 0);
  Tensor decoded = Floats({9}, TensorShape({1}));
  bool dead = false;
  ASSERT_TRUE(DecodeRecvTensorResponse(wire, &decoded, &dead).ok());
  EXPECT_TRUE(dead);
  EXPECT_EQ(decoded.dtype(), DT_INVALID);

  // Whatever a dead response's tensor field holds, or none, is not looked at.
  RecvTensorResponse bare;
  bare.set_is_dead(true);
  ASSERT_TRUE(DecodeRecvTensorResponse(BufferOf(bare.SerializeAsString()), &decoded, &dead).ok());
  EXPECT_TRUE(dead);
  // A live one still needs its tensor.
  bare.set_is_dead(false);
  EXPECT_EQ(DecodeRecvTensorResponse(BufferOf(bare.SerializeAsString()), &decoded, &dead).code(),
            Code::INVALID_ARGUMENT);
}

TEST(TensorCodingTest, MalformedBytesAreInvalidArgument) {
  Tensor decoded;
  bool dead = false;
  for (const std::string& bytes :
       {std::string("\xff\xff\xff", 3), std::string("\x0a\x7f", 2), std::string()}) {
    Status status = DecodeRecvTensorResponse(BufferOf(bytes), &decoded, &dead);
    EXPECT_EQ(status.code(), Code::INVALID_ARGUMENT) << status;
  }
  // Content that does not fill the shape.
  RecvTensorResponse response;
  Floats({1, 2}, TensorShape({2})).AsProtoTensorContent(response.mutable_tensor());
  response.mutable_tensor()->mutable_tensor_shape()->mutable_dim(0)->set_size(3);
  Status status = DecodeRecvTensorResponse(BufferOf(response.SerializeAsString()), &decoded, &dead);
  EXPECT_EQ(status.code(), Code::INVALID_ARGUMENT) << status;
  // A shape too large to allocate.
  response.mutable_tensor()->mutable_tensor_shape()->mutable_dim(0)->set_size(int64_t{1} << 60);
  status = DecodeRecvTensorResponse(BufferOf(response.SerializeAsString()), &decoded, &dead);
  EXPECT_NE(status.code(), Code::OK);
  // An unknown dtype.
  response.mutable_tensor()->set_dtype(static_cast<DataType>(999));
  status = DecodeRecvTensorResponse(BufferOf(response.SerializeAsString()), &decoded, &dead);
  EXPECT_EQ(status.code(), Code::INVALID_ARGUMENT) << status;
}

// --- The generic codec ---------------------------------------------------------

Tensor Strings(std::vector<std::string> values) {
  Tensor tensor(DT_STRING, TensorShape({static_cast<int64_t>(values.size())}));
  for (size_t i = 0; i < values.size(); ++i) tensor.data<std::string>()[i] = values[i];
  return tensor;
}

Tensor BigFloats(int64_t n) {
  Tensor tensor(DT_FLOAT, TensorShape({1, n}));
  for (int64_t i = 0; i < n; ++i) tensor.data<float>()[i] = static_cast<float>(i) * 0.5f;
  return tensor;
}

// Every kind of tensor: tiny, large (a slice of its own), strings, bools,
// no elements.
NamedTensors EveryKind() {
  Tensor bools(DT_BOOL, TensorShape({5000}));
  for (int i = 0; i < 5000; ++i) bools.data<bool>()[i] = i % 3 == 0;
  return {{"tiny", Floats({1, 2}, TensorShape({2}))},
          {"large", BigFloats(262144)},
          {"strings", Strings({"a", std::string("\0b", 2), ""})},
          {"bools", bools},
          {"", Tensor(DT_INT32, TensorShape({0, 3}))}};
}

void ExpectSameTensor(const Tensor& expected, const Tensor& actual) {
  TensorProto a, b;
  expected.AsProtoTensorContent(&a);
  actual.AsProtoTensorContent(&b);
  EXPECT_EQ(a.SerializeAsString(), b.SerializeAsString());
}

TEST(TensorCodingTest, NamedTensorsRoundTripAsTheGeneratedMessage) {
  RunGraphResponse rest;
  rest.set_status_code(3);
  rest.set_status_error_message("in the rest");
  const NamedTensors tensors = EveryKind();
  ::grpc::ByteBuffer wire;
  EncodeWithTensors(rest, RunGraphResponse::kRecvFieldNumber, tensors, &wire);

  // The generated parser reads the same message.
  RunGraphResponse parsed;
  ASSERT_TRUE(parsed.ParseFromString(Flatten(wire)));
  EXPECT_EQ(parsed.status_error_message(), "in the rest");
  ASSERT_EQ(parsed.recv_size(), static_cast<int>(tensors.size()));
  for (size_t i = 0; i < tensors.size(); ++i) {
    EXPECT_EQ(parsed.recv(i).name(), tensors[i].first);
    TensorProto expected;
    tensors[i].second.AsProtoTensorContent(&expected);
    EXPECT_EQ(parsed.recv(i).tensor().SerializeAsString(), expected.SerializeAsString());
  }

  RunGraphResponse decoded_rest;
  NamedTensors decoded;
  Status status =
      DecodeWithTensors(wire, RunGraphResponse::kRecvFieldNumber, &decoded_rest, &decoded);
  ASSERT_TRUE(status.ok()) << status;
  EXPECT_EQ(decoded_rest.status_code(), 3);
  EXPECT_EQ(decoded_rest.status_error_message(), "in the rest");
  EXPECT_EQ(decoded_rest.recv_size(), 0);
  ASSERT_EQ(decoded.size(), tensors.size());
  for (size_t i = 0; i < tensors.size(); ++i) {
    EXPECT_EQ(decoded[i].first, tensors[i].first);
    ExpectSameTensor(tensors[i].second, decoded[i].second);
  }
  // Read into an aligned buffer of its own, not into gRPC's slices.
  EXPECT_EQ(reinterpret_cast<uintptr_t>(decoded[1].second.raw_data()) % 64, 0u);
}

TEST(TensorCodingTest, BareTensorsRoundTripAsTheGeneratedMessage) {
  RunCallableRequest rest;
  rest.set_session_handle("s");
  rest.set_handle(7);
  std::vector<Tensor> tensors;
  for (auto& entry : EveryKind()) tensors.push_back(entry.second);
  ::grpc::ByteBuffer wire;
  EncodeWithTensors(rest, RunCallableRequest::kFeedFieldNumber, tensors, &wire);
  RunCallableRequest parsed;
  ASSERT_TRUE(parsed.ParseFromString(Flatten(wire)));
  EXPECT_EQ(parsed.handle(), 7);
  ASSERT_EQ(parsed.feed_size(), static_cast<int>(tensors.size()));

  RunCallableRequest decoded_rest;
  std::vector<Tensor> decoded;
  Status status =
      DecodeWithTensors(wire, RunCallableRequest::kFeedFieldNumber, &decoded_rest, &decoded);
  ASSERT_TRUE(status.ok()) << status;
  EXPECT_EQ(decoded_rest.session_handle(), "s");
  EXPECT_EQ(decoded_rest.handle(), 7);
  ASSERT_EQ(decoded.size(), tensors.size());
  for (size_t i = 0; i < tensors.size(); ++i) ExpectSameTensor(tensors[i], decoded[i]);
}

TEST(TensorCodingTest, LargeTensorsAreSentFromTheirOwnBuffer) {
  const Tensor large = BigFloats(4096);
  ::grpc::ByteBuffer wire;
  EncodeWithTensors(RunStepResponse(), RunStepResponse::kTensorFieldNumber,
                    NamedTensors{{"y:0", large}}, &wire);
  std::vector<::grpc::Slice> slices;
  ASSERT_TRUE(wire.Dump(&slices).ok());
  bool shared = false;
  for (const ::grpc::Slice& slice : slices) {
    shared |= slice.begin() == static_cast<const uint8_t*>(large.raw_data());
  }
  EXPECT_TRUE(shared);
}

TEST(TensorCodingTest, DecodesMessagesTheGeneratedCodeWrites) {
  // Values in *_val fields, content, and the tensor field between others.
  RunStepRequest request;
  request.set_session_handle("session");
  NamedTensorProto* in_vals = request.add_feed();
  in_vals->set_name("x:0");
  in_vals->mutable_tensor()->set_dtype(DT_FLOAT);
  in_vals->mutable_tensor()->mutable_tensor_shape()->add_dim()->set_size(3);
  in_vals->mutable_tensor()->add_float_val(1.5f);
  NamedTensorProto* in_content = request.add_feed();
  in_content->set_name("z:0");
  BigFloats(2000).AsProtoTensorContent(in_content->mutable_tensor());
  request.add_fetch("y:0");
  request.mutable_options()->set_timeout_in_ms(1234);
  request.set_store_errors_in_response_body(true);
  for (const std::string& bytes : {request.SerializeAsString(), [&] {
                                     // The name after the tensor, and dtype after the shape.
                                     RunStepRequest reordered = request;
                                     NamedTensorProto* feed = reordered.mutable_feed(1);
                                     const std::string name = feed->name();
                                     feed->clear_name();
                                     std::string entry = feed->SerializeAsString();
                                     NamedTensorProto name_only;
                                     name_only.set_name(name);
                                     entry += name_only.SerializeAsString();
                                     reordered.mutable_feed()->RemoveLast();
                                     std::string message = reordered.SerializeAsString();
                                     message += '\x12';  // field 2, length-delimited
                                     google::protobuf::io::StringOutputStream stream(&message);
                                     {
                                       google::protobuf::io::CodedOutputStream coded(&stream);
                                       coded.WriteVarint32(static_cast<uint32_t>(entry.size()));
                                       coded.WriteString(entry);
                                     }
                                     return message;
                                   }()}) {
    RunStepRequest rest;
    NamedTensors feeds;
    Status status =
        DecodeWithTensors(BufferOf(bytes), RunStepRequest::kFeedFieldNumber, &rest, &feeds);
    ASSERT_TRUE(status.ok()) << status;
    EXPECT_EQ(rest.session_handle(), "session");
    EXPECT_EQ(rest.fetch(0), "y:0");
    EXPECT_EQ(rest.options().timeout_in_ms(), 1234);
    EXPECT_TRUE(rest.store_errors_in_response_body());
    EXPECT_EQ(rest.feed_size(), 0);
    ASSERT_EQ(feeds.size(), 2u);
    EXPECT_EQ(feeds[0].first, "x:0");
    EXPECT_EQ(feeds[0].second.data<float>()[2], 1.5f);
    EXPECT_EQ(feeds[1].first, "z:0");
    ExpectSameTensor(BigFloats(2000), feeds[1].second);
  }
}

TEST(TensorCodingTest, TruncatedOrGarbledMessagesAreInvalidArgument) {
  RunGraphRequest rest;
  rest.set_graph_handle("g");
  rest.add_recv_key("k");
  ::grpc::ByteBuffer wire;
  EncodeWithTensors(rest, RunGraphRequest::kSendFieldNumber, EveryKind(), &wire);
  const std::string bytes = Flatten(wire);
  // Every cut inside a tensor entry leaves a message that does not parse.
  for (size_t cut = 1; cut < bytes.size(); cut += 997) {
    RunGraphRequest decoded_rest;
    NamedTensors decoded;
    Status status = DecodeWithTensors(BufferOf(bytes.substr(0, cut)),
                                      RunGraphRequest::kSendFieldNumber, &decoded_rest, &decoded);
    RunGraphRequest generated;
    if (!generated.ParseFromString(bytes.substr(0, cut))) {
      EXPECT_EQ(status.code(), Code::INVALID_ARGUMENT) << "cut at " << cut;
    }
  }
  // Flipped bytes: decoded or refused, never a crash.
  for (size_t at = 0; at < bytes.size(); at += 331) {
    std::string garbled = bytes;
    garbled[at] = static_cast<char>(garbled[at] ^ 0xa5);
    RunGraphRequest decoded_rest;
    NamedTensors decoded;
    Status status = DecodeWithTensors(BufferOf(garbled), RunGraphRequest::kSendFieldNumber,
                                      &decoded_rest, &decoded);
    EXPECT_TRUE(status.ok() || status.code() == Code::INVALID_ARGUMENT) << status;
  }
  // A tensor whose content does not fill its shape.
  RunGraphRequest bad;
  NamedTensorProto* send = bad.add_send();
  BigFloats(2000).AsProtoTensorContent(send->mutable_tensor());
  send->mutable_tensor()->mutable_tensor_shape()->mutable_dim(1)->set_size(2001);
  RunGraphRequest decoded_rest;
  NamedTensors decoded;
  Status status = DecodeWithTensors(BufferOf(bad.SerializeAsString()),
                                    RunGraphRequest::kSendFieldNumber, &decoded_rest, &decoded);
  EXPECT_EQ(status.code(), Code::INVALID_ARGUMENT) << status;
  // A shape far too large to allocate.
  send->mutable_tensor()->mutable_tensor_shape()->mutable_dim(1)->set_size(int64_t{1} << 50);
  status = DecodeWithTensors(BufferOf(bad.SerializeAsString()), RunGraphRequest::kSendFieldNumber,
                             &decoded_rest, &decoded);
  EXPECT_NE(status.code(), Code::OK);
}

TEST(TensorCodingTest, AnEmptyMessageRoundTrips) {
  ::grpc::ByteBuffer wire;
  EncodeWithTensors(RunStepResponse(), RunStepResponse::kTensorFieldNumber, NamedTensors(), &wire);
  EXPECT_EQ(Flatten(wire), "");
  RunStepResponse rest;
  NamedTensors decoded = {{"stale", Tensor()}};
  ASSERT_TRUE(DecodeWithTensors(wire, RunStepResponse::kTensorFieldNumber, &rest, &decoded).ok());
  EXPECT_TRUE(decoded.empty());
}

}  // namespace
}  // namespace tensorweave
