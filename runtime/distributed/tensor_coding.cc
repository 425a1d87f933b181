#include "runtime/distributed/tensor_coding.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <google/protobuf/wire_format_lite.h>
#include <grpcpp/support/proto_buffer_reader.h>
#include <grpcpp/support/slice.h>

#include <climits>

#include "runtime/framework/str_util.h"
#include "tensorweave/proto/master.pb.h"
#include "tensorweave/proto/worker.pb.h"

namespace tensorweave {
namespace {

using google::protobuf::MessageLite;
using google::protobuf::internal::WireFormatLite;
using google::protobuf::io::CodedInputStream;
using google::protobuf::io::CodedOutputStream;
using google::protobuf::io::StringOutputStream;

// Field numbers of NamedTensorProto (master.proto) and TensorProto
// (tensor.proto).
constexpr int kNamedName = 1;
constexpr int kNamedTensor = 2;
constexpr int kTensorDtype = 1;
constexpr int kTensorShape = 2;
constexpr int kTensorContent = 4;

// Contents up to this size are copied into the message bytes: a slice of
// their own costs more than the copy.
constexpr size_t kLargestCopiedContent = 4096;

uint32_t LengthDelimitedTag(int field) {
  return WireFormatLite::MakeTag(field, WireFormatLite::WIRETYPE_LENGTH_DELIMITED);
}

size_t LengthDelimitedSize(int field, size_t length) {
  return CodedOutputStream::VarintSize32(LengthDelimitedTag(field)) +
         CodedOutputStream::VarintSize64(length) + length;
}

// The tensor a slice points into, kept alive until gRPC lets go of it.
void ReleaseTensor(void* tensor) { delete static_cast<Tensor*>(tensor); }

// One entry to encode; `name` is null for bare TensorProto entries.
struct EntryRef {
  const std::string* name;
  const Tensor* value;
};

// Builds the slices of a message: bytes written through coded(), and
// tensor buffers appended as slices of their own.
class SliceWriter {
 public:
  SliceWriter() { Open(); }

  CodedOutputStream* coded() { return coded_.get(); }

  void AppendTensorBuffer(const Tensor& value, size_t bytes) {
    Flush();
    auto* shared = new Tensor(value);  // shares the buffer; the slice owns it
    slices_.emplace_back(shared->raw_data(), bytes, ReleaseTensor, shared);
    Open();
  }

  void Finish(::grpc::ByteBuffer* out) {
    Flush();
    *out = ::grpc::ByteBuffer(slices_.data(), slices_.size());
  }

 private:
  void Open() {
    pending_.clear();
    stream_ = std::make_unique<StringOutputStream>(&pending_);
    coded_ = std::make_unique<CodedOutputStream>(stream_.get());
  }
  void Flush() {
    coded_.reset();  // trims pending_ to what was written
    stream_.reset();
    if (!pending_.empty()) slices_.emplace_back(pending_);
  }

  std::string pending_;
  std::unique_ptr<StringOutputStream> stream_;
  std::unique_ptr<CodedOutputStream> coded_;
  std::vector<::grpc::Slice> slices_;
};

void EncodeEntry(int field, const EntryRef& entry, SliceWriter* writer) {
  CodedOutputStream* coded = writer->coded();
  const Tensor& value = *entry.value;
  const size_t content_bytes = value.dtype() == DT_STRING ? 0 : value.TotalBytes();
  if (content_bytes <= kLargestCopiedContent) {
    // Small (or strings): the generated encoding.
    NamedTensorProto named;
    value.AsProtoTensorContent(named.mutable_tensor());
    const MessageLite* message = &named.tensor();
    if (entry.name != nullptr) {
      named.set_name(*entry.name);
      message = &named;
    }
    coded->WriteTag(LengthDelimitedTag(field));
    coded->WriteVarint64(message->ByteSizeLong());
    message->SerializeWithCachedSizes(coded);
    return;
  }
  TensorProto header;  // TensorProto{dtype, tensor_shape}; the content follows
  header.set_dtype(value.dtype());
  value.shape().AsProto(header.mutable_tensor_shape());
  const size_t header_bytes = header.ByteSizeLong();
  const size_t tensor_bytes = header_bytes + LengthDelimitedSize(kTensorContent, content_bytes);
  coded->WriteTag(LengthDelimitedTag(field));
  if (entry.name != nullptr) {
    coded->WriteVarint64(LengthDelimitedSize(kNamedName, entry.name->size()) +
                         LengthDelimitedSize(kNamedTensor, tensor_bytes));
    WireFormatLite::WriteString(kNamedName, *entry.name, coded);
    coded->WriteTag(LengthDelimitedTag(kNamedTensor));
  }
  coded->WriteVarint64(tensor_bytes);
  header.SerializeWithCachedSizes(coded);
  coded->WriteTag(LengthDelimitedTag(kTensorContent));
  coded->WriteVarint64(content_bytes);
  writer->AppendTensorBuffer(value, content_bytes);
}

void Encode(const MessageLite& rest, int field, const std::vector<EntryRef>& entries,
            ::grpc::ByteBuffer* out) {
  SliceWriter writer;
  rest.SerializeToCodedStream(writer.coded());
  for (const EntryRef& entry : entries) EncodeEntry(field, entry, &writer);
  writer.Finish(out);
}

// --- The direct path ----------------------------------------------------------
// Reads the layout Encode writes (and TensorFlow's encoders too). Returns
// false, having judged nothing, for anything else; the generated path then
// reads, or refuses, the whole message.

bool ReadLength(CodedInputStream* in, int* length) {
  uint32_t value = 0;
  if (!in->ReadVarint32(&value) || value > INT_MAX) return false;
  *length = static_cast<int>(value);
  return true;
}

// TensorProto{dtype, tensor_shape, tensor_content} up to the current limit,
// the content straight into the tensor's buffer.
bool ReadTensorDirectly(CodedInputStream* in, Tensor* value) {
  TensorProto header;
  while (true) {
    const uint32_t tag = in->ReadTag();
    if (tag == 0) {
      // No content (a tensor without elements): exactly what the generated
      // path would make of the same fields.
      return in->ConsumedEntireMessage() && Tensor::FromProto(header, value).ok();
    }
    if (tag == WireFormatLite::MakeTag(kTensorDtype, WireFormatLite::WIRETYPE_VARINT)) {
      uint32_t dtype = 0;
      if (!in->ReadVarint32(&dtype)) return false;
      header.set_dtype(static_cast<DataType>(dtype));
    } else if (tag == LengthDelimitedTag(kTensorShape)) {
      int length = 0;
      if (!ReadLength(in, &length)) return false;
      const CodedInputStream::Limit limit = in->PushLimit(length);
      if (!header.mutable_tensor_shape()->MergeFromCodedStream(in) ||
          !in->ConsumedEntireMessage()) {
        return false;
      }
      in->PopLimit(limit);
    } else if (tag == LengthDelimitedTag(kTensorContent)) {
      int length = 0;
      if (!ReadLength(in, &length)) return false;
      const DataType dtype = header.dtype();
      // Bools are canonicalized by FromProto; strings never use content.
      if (!DataType_IsValid(dtype) || IsRefType(dtype) || !DataTypeIsSupported(dtype) ||
          dtype == DT_BOOL || dtype == DT_STRING) {
        return false;
      }
      TensorShape shape;
      if (!TensorShape::FromProto(header.tensor_shape(), &shape).ok()) return false;
      // Allocated within Tensor's limits, not zeroed: the content fills it.
      Tensor result;
      if (!Tensor::Allocate(dtype, shape, &result).ok()) return false;
      if (result.TotalBytes() != static_cast<size_t>(length)) return false;
      if (length > 0 && !in->ReadRaw(result.raw_data(), length)) return false;
      // Fields after the content are unusual: the generated path decides.
      if (in->ReadTag() != 0 || !in->ConsumedEntireMessage()) return false;
      *value = std::move(result);
      return true;
    } else {
      return false;
    }
  }
}

// NamedTensorProto{name, tensor} (or a bare TensorProto) up to the current
// limit.
bool ReadEntryDirectly(CodedInputStream* in, bool named, std::pair<std::string, Tensor>* entry) {
  if (!named) return ReadTensorDirectly(in, &entry->second);
  bool has_tensor = false;
  while (true) {
    const uint32_t tag = in->ReadTag();
    if (tag == 0) return in->ConsumedEntireMessage() && has_tensor;
    int length = 0;
    if (has_tensor || !ReadLength(in, &length) || length > in->BytesUntilLimit()) return false;
    if (tag == LengthDelimitedTag(kNamedName)) {
      if (!in->ReadString(&entry->first, length)) return false;
    } else if (tag == LengthDelimitedTag(kNamedTensor)) {
      const CodedInputStream::Limit limit = in->PushLimit(length);
      if (!ReadTensorDirectly(in, &entry->second)) return false;
      in->PopLimit(limit);
      has_tensor = true;
    } else {
      return false;
    }
  }
}

bool DecodeDirectly(const ::grpc::ByteBuffer& in, int field, bool named, std::string* rest,
                    NamedTensors* tensors) {
  ::grpc::ByteBuffer shared(in);  // shares the slices
  ::grpc::ProtoBufferReader reader(&shared);
  CodedInputStream coded(&reader);
  StringOutputStream rest_stream(rest);
  CodedOutputStream rest_coded(&rest_stream);
  while (true) {
    const uint32_t tag = coded.ReadTag();
    if (tag == 0) return coded.ConsumedEntireMessage();
    if (tag != LengthDelimitedTag(field)) {
      if (!WireFormatLite::SkipField(&coded, tag, &rest_coded)) return false;
      continue;
    }
    int length = 0;
    if (!ReadLength(&coded, &length)) return false;
    const CodedInputStream::Limit limit = coded.PushLimit(length);
    tensors->emplace_back();
    if (!ReadEntryDirectly(&coded, named, &tensors->back())) return false;
    coded.PopLimit(limit);
  }
}

// --- The generated path -------------------------------------------------------

Status DecodeThroughProtos(const ::grpc::ByteBuffer& in, int field, bool named, std::string* rest,
                           NamedTensors* tensors) {
  ::grpc::ByteBuffer shared(in);
  ::grpc::ProtoBufferReader reader(&shared);
  CodedInputStream coded(&reader);
  StringOutputStream rest_stream(rest);
  CodedOutputStream rest_coded(&rest_stream);
  const Status malformed = errors::InvalidArgument("Malformed message: its bytes do not parse");
  while (true) {
    const uint32_t tag = coded.ReadTag();
    if (tag == 0) return coded.ConsumedEntireMessage() ? Status::OK() : malformed;
    if (tag != LengthDelimitedTag(field)) {
      if (!WireFormatLite::SkipField(&coded, tag, &rest_coded)) return malformed;
      continue;
    }
    int length = 0;
    if (!ReadLength(&coded, &length)) return malformed;
    const CodedInputStream::Limit limit = coded.PushLimit(length);
    NamedTensorProto entry;
    const bool parsed = named ? entry.MergeFromCodedStream(&coded)
                              : entry.mutable_tensor()->MergeFromCodedStream(&coded);
    if (!parsed || !coded.ConsumedEntireMessage()) return malformed;
    coded.PopLimit(limit);
    Tensor value;
    Status valid = Tensor::FromProto(entry.tensor(), &value);
    if (!valid.ok()) {
      return errors::InvalidArgument(
          "The tensor ", named ? StrCat("'", entry.name(), "'") : StrCat(tensors->size()),
          " of the message is not a valid tensor: ", valid.message());
    }
    tensors->emplace_back(std::move(*entry.mutable_name()), std::move(value));
  }
}

Status Decode(const ::grpc::ByteBuffer& in, int field, bool named, MessageLite* rest,
              NamedTensors* tensors) {
  std::string rest_bytes;
  tensors->clear();
  if (!DecodeDirectly(in, field, named, &rest_bytes, tensors)) {
    rest_bytes.clear();
    tensors->clear();
    TW_RETURN_IF_ERROR(DecodeThroughProtos(in, field, named, &rest_bytes, tensors));
  }
  if (!rest->ParseFromString(rest_bytes)) {
    return errors::InvalidArgument("Malformed message: its fields do not parse");
  }
  return Status::OK();
}

}  // namespace

void EncodeWithTensors(const MessageLite& rest, int field, const NamedTensors& tensors,
                       ::grpc::ByteBuffer* out) {
  std::vector<EntryRef> entries;
  entries.reserve(tensors.size());
  for (const auto& [name, value] : tensors) entries.push_back({&name, &value});
  Encode(rest, field, entries, out);
}

void EncodeWithTensors(const MessageLite& rest, int field, const std::vector<Tensor>& tensors,
                       ::grpc::ByteBuffer* out) {
  std::vector<EntryRef> entries;
  entries.reserve(tensors.size());
  for (const Tensor& value : tensors) entries.push_back({nullptr, &value});
  Encode(rest, field, entries, out);
}

Status DecodeWithTensors(const ::grpc::ByteBuffer& in, int field, MessageLite* rest,
                         NamedTensors* tensors) {
  return Decode(in, field, /*named=*/true, rest, tensors);
}

Status DecodeWithTensors(const ::grpc::ByteBuffer& in, int field, MessageLite* rest,
                         std::vector<Tensor>* tensors) {
  NamedTensors values;
  TW_RETURN_IF_ERROR(Decode(in, field, /*named=*/false, rest, &values));
  tensors->clear();
  tensors->reserve(values.size());
  for (auto& entry : values) tensors->push_back(std::move(entry.second));
  return Status::OK();
}

Tensor DeadTensorPlaceholder() { return Tensor(DT_FLOAT, TensorShape({0})); }

void EncodeRecvTensorResponse(const Tensor& value, bool is_dead, int64_t send_start_micros,
                              ::grpc::ByteBuffer* out) {
  RecvTensorResponse rest;
  rest.set_is_dead(is_dead);
  rest.set_send_start_micros(send_start_micros);
  EncodeWithTensors(rest, RecvTensorResponse::kTensorFieldNumber,
                    std::vector<Tensor>{is_dead ? DeadTensorPlaceholder() : value}, out);
}

Status DecodeRecvTensorResponse(const ::grpc::ByteBuffer& in, Tensor* value, bool* is_dead) {
  RecvTensorResponse rest;
  std::vector<Tensor> tensors;
  TW_RETURN_IF_ERROR(
      DecodeWithTensors(in, RecvTensorResponse::kTensorFieldNumber, &rest, &tensors));
  *is_dead = rest.is_dead();
  if (*is_dead) {
    *value = Tensor();
    return Status::OK();
  }
  if (tensors.size() != 1) {
    return errors::InvalidArgument("A RecvTensorResponse holds one tensor, not ", tensors.size());
  }
  *value = std::move(tensors[0]);
  return Status::OK();
}

}  // namespace tensorweave
