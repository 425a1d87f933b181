// TF_Tensor: construction, accessors, TensorFlow 1.x's string encoding
// functions (kept for old programs), and the conversions between TF_Tensor
// and runtime Tensors. String elements are TF_TStrings: c_api_tstring.cc.
#include <charconv>
#include <cstdint>
#include <cstring>

#include "c_api/c_api_internal.h"
#include "c_api/c_api_tstring_internal.h"
#include "runtime/framework/element_size.h"
#include "runtime/framework/resource_handle.h"
#include "runtime/framework/types.h"

using tensorweave::DataType;
using tensorweave::Status;
using tensorweave::Tensor;
using tensorweave::TensorBuffer;
using tensorweave::TensorShape;
namespace errors = tensorweave::errors;
namespace c_api = tensorweave::c_api;

namespace {

// Kernels read elements through typed pointers, which needs each element at
// an address that is a multiple of its size. TF_TString elements are read
// with memcpy, so any address does (and copying them elsewhere would break
// OFFSET elements and the caller's deallocator, which frees LARGE ones).
bool IsAlignedFor(DataType dtype, const void* data) {
  const size_t alignment = dtype == tensorweave::DT_STRING ? 1 : tensorweave::DataTypeSize(dtype);
  return reinterpret_cast<uintptr_t>(data) % alignment == 0;
}

// Checks dtype, dims and byte length for a new tensor; `shape` gets the dims.
Status CheckTensorArguments(TF_DataType dtype, const int64_t* dims, int num_dims, size_t len,
                            TensorShape* shape) {
  const DataType dt = static_cast<DataType>(dtype);
  const bool resource = dt == tensorweave::DT_RESOURCE;
  if (tensorweave::IsRefType(dt) || (!tensorweave::DataTypeIsSupported(dt) && !resource)) {
    return errors::InvalidArgument("Unsupported tensor dtype ", static_cast<int>(dtype));
  }
  if (num_dims < 0 || (num_dims > 0 && dims == nullptr)) {
    return errors::InvalidArgument("Invalid number of dims ", num_dims);
  }
  TW_RETURN_IF_ERROR(TensorShape::Build(dims, num_dims, shape));
  // A resource tensor is one serialized ResourceHandleProto, checked when fed.
  if (resource) {
    if (shape->dims() != 0) return errors::InvalidArgument("A TF_RESOURCE tensor is a scalar");
    return Status::OK();
  }
  // TF_STRING: TF_DataTypeSize is 0, so TensorFlow 2.x takes any length
  // here; a buffer too small for its TF_TStrings is refused when read.
  if (dt == tensorweave::DT_STRING) return Status::OK();
  const uint64_t count = static_cast<uint64_t>(shape->num_elements());
  uint64_t expected = 0;
  if (__builtin_mul_overflow(count, tensorweave::DataTypeSize(dt), &expected) || expected != len) {
    return errors::InvalidArgument("A ", tensorweave::DataTypeString(dt), " tensor of shape ",
                                   shape->DebugString(), " needs ", count, " elements, got ", len,
                                   " bytes");
  }
  return Status::OK();
}

size_t VarintLength(uint64_t value) {
  size_t length = 1;
  while (value >= 0x80) {
    value >>= 7;
    ++length;
  }
  return length;
}

char* WriteVarint(uint64_t value, char* out) {
  while (value >= 0x80) {
    *out++ = static_cast<char>((value & 0x7f) | 0x80);
    value >>= 7;
  }
  *out++ = static_cast<char>(value);
  return out;
}

// Reads a varint from [*in, end); false when it is truncated or too long.
bool ReadVarint(const char** in, const char* end, uint64_t* value) {
  uint64_t result = 0;
  for (int shift = 0; shift < 64 && *in < end; shift += 7) {
    const uint8_t byte = static_cast<uint8_t>(*(*in)++);
    result |= static_cast<uint64_t>(byte & 0x7f) << shift;
    if ((byte & 0x80) == 0) {
      *value = result;
      return true;
    }
  }
  return false;
}

// Decodes one encoded string at [begin, end); false when malformed.
bool DecodeString(const char* begin, const char* end, const char** data, uint64_t* length,
                  size_t* consumed) {
  const char* cursor = begin;
  uint64_t size = 0;
  if (!ReadVarint(&cursor, end, &size)) return false;
  if (size > static_cast<uint64_t>(end - cursor)) return false;
  *data = cursor;
  *length = size;
  *consumed = static_cast<size_t>(cursor - begin) + size;
  return true;
}

}  // namespace

namespace tensorweave {
namespace c_api {

namespace {

// A DT_RESOURCE TF_Tensor holds, as in TensorFlow's C API, the serialized
// ResourceHandleProto of one scalar handle: the runtime's handle objects
// never leave it, so a program can keep, copy or feed back only bytes.
Status ResourceTensorToC(const Tensor& in, std::shared_ptr<TensorBuffer>* buffer) {
  if (in.shape().dims() != 0) {
    return errors::InvalidArgument(
        "Unexpected non-scalar DT_RESOURCE tensor seen (shape: ", in.shape().DebugString(), ")");
  }
  const std::string bytes = in.data<tensorweave::ResourceHandle>()[0].SerializeAsString();
  *buffer = TensorBuffer::Allocate(bytes.size());
  if (*buffer == nullptr) return errors::ResourceExhausted("Out of memory copying a tensor");
  if (!bytes.empty()) std::memcpy((*buffer)->data(), bytes.data(), bytes.size());
  return Status::OK();
}

Status ResourceTensorFromC(const TF_Tensor& in, Tensor* out) {
  if (in.shape.dims() != 0) {
    return errors::InvalidArgument(
        "Unexpected non-scalar DT_RESOURCE tensor seen (shape: ", in.shape.DebugString(), ")");
  }
  tensorweave::ResourceHandleProto proto;
  const size_t size = in.buffer ? in.buffer->size() : 0;
  if (size > static_cast<size_t>(INT32_MAX) ||
      !proto.ParseFromArray(size > 0 ? in.buffer->data() : "", static_cast<int>(size))) {
    return errors::InvalidArgument("Malformed TF_RESOURCE tensor: unable to parse resource handle");
  }
  TW_RETURN_IF_ERROR(Tensor::Allocate(tensorweave::DT_RESOURCE, TensorShape(), out));
  out->data<tensorweave::ResourceHandle>()[0].FromProto(proto);
  return Status::OK();
}

}  // namespace

Status TensorFromC(const TF_Tensor& in, Tensor* out) {
  if (in.dtype == DT_STRING) return TensorFromTStrings(in, out);
  if (in.dtype == tensorweave::DT_RESOURCE) return ResourceTensorFromC(in, out);
  *out = tensorweave::WithCanonicalBools(Tensor(in.dtype, in.shape, in.buffer));
  return Status::OK();
}

Status TensorToC(Tensor in, TF_Tensor** out) {
  if (!in.IsInitialized()) return errors::Internal("The runtime returned an empty tensor");
  const DataType dtype = BaseType(in.dtype());
  std::shared_ptr<TensorBuffer> buffer;
  if (dtype == DT_STRING) {
    TW_RETURN_IF_ERROR(TStringBufferFromTensor(in, &buffer));
  } else if (dtype == tensorweave::DT_RESOURCE) {
    TW_RETURN_IF_ERROR(ResourceTensorToC(in, &buffer));
  } else if (!tensorweave::DataTypeIsSupported(dtype)) {
    // A variant (a TensorList) holds runtime objects with no byte layout.
    return errors::Unimplemented("Unsupported dtype ", DataTypeString(dtype),
                                 ": the C API cannot hand out such a tensor");
  } else if (in.RefCountIsOne()) {
    // Nobody else holds these bytes: the caller may have them as they are.
    buffer = in.buffer();
  } else {
    buffer = TensorBuffer::Allocate(in.TotalBytes());
    if (buffer == nullptr) return errors::ResourceExhausted("Out of memory copying a tensor");
    if (in.TotalBytes() > 0) std::memcpy(buffer->data(), in.raw_data(), in.TotalBytes());
  }
  *out = new TF_Tensor{dtype, in.shape(), std::move(buffer)};
  return Status::OK();
}

std::string OutputName(const TF_Output& output) {
  const std::string& node = ToNode(output.oper)->name();
  char digits[16];
  const auto end = std::to_chars(digits, digits + sizeof(digits), output.index).ptr;
  std::string name;
  name.reserve(node.size() + 1 + (end - digits));
  name.append(node).push_back(':');
  name.append(digits, end);
  return name;
}

}  // namespace c_api
}  // namespace tensorweave

extern "C" {

size_t TF_DataTypeSize(TF_DataType dt) { return tensorweave::TensorFlowElementSize(dt); }

TF_Tensor* TF_NewTensor(TF_DataType dtype, const int64_t* dims, int num_dims, void* data,
                        size_t len, void (*deallocator)(void* data, size_t len, void* arg),
                        void* deallocator_arg) {
  // The deallocator runs exactly once: from here while `data` is still ours,
  // or from the buffer once the buffer has taken it over.
  bool handed_over = false;
  auto release = [&] {
    if (!handed_over && deallocator != nullptr) deallocator(data, len, deallocator_arg);
    handed_over = true;
  };
  try {
    TensorShape shape;
    if (!CheckTensorArguments(dtype, dims, num_dims, len, &shape).ok()) {
      release();
      return nullptr;
    }
    std::shared_ptr<TensorBuffer> buffer;
    if (!IsAlignedFor(static_cast<DataType>(dtype), data)) {
      buffer = TensorBuffer::Allocate(len);
      if (buffer == nullptr) {
        release();
        return nullptr;
      }
      std::memcpy(buffer->data(), data, len);
      release();
    } else {
      TensorBuffer::Deallocator free_data;
      if (deallocator != nullptr) {
        free_data = [deallocator, deallocator_arg](void* bytes, size_t size) {
          deallocator(bytes, size, deallocator_arg);
        };
      }
      buffer = TensorBuffer::Wrap(data, len, std::move(free_data));
      handed_over = true;
    }
    return new TF_Tensor{static_cast<DataType>(dtype), shape, std::move(buffer)};
  } catch (...) {
    // Only allocation can throw; a buffer that took `data` released it as it
    // unwound.
    release();
    return nullptr;
  }
}

TF_Tensor* TF_AllocateTensor(TF_DataType dtype, const int64_t* dims, int num_dims, size_t len) {
  return c_api::Guard(nullptr, static_cast<TF_Tensor*>(nullptr), [&]() -> TF_Tensor* {
    TensorShape shape;
    if (!CheckTensorArguments(dtype, dims, num_dims, len, &shape).ok()) return nullptr;
    // String elements start as empty TF_TStrings, and the tensor
    // deallocates them when it goes.
    std::shared_ptr<TensorBuffer> buffer =
        dtype == TF_STRING ? c_api::AllocateTStringBuffer(len, shape.num_elements())
                           : TensorBuffer::Allocate(len);
    if (buffer == nullptr) return nullptr;
    return new TF_Tensor{static_cast<DataType>(dtype), shape, std::move(buffer)};
  });
}

void TF_DeleteTensor(TF_Tensor* t) { delete t; }

TF_DataType TF_TensorType(const TF_Tensor* t) { return static_cast<TF_DataType>(t->dtype); }

int TF_NumDims(const TF_Tensor* t) { return t->shape.dims(); }

int64_t TF_Dim(const TF_Tensor* t, int dim_index) {
  if (dim_index < 0 || dim_index >= t->shape.dims()) return -1;
  return t->shape.dim_size(dim_index);
}

size_t TF_TensorByteSize(const TF_Tensor* t) {
  if (t->dtype == tensorweave::DT_STRING || t->dtype == tensorweave::DT_RESOURCE) {
    return t->buffer->size();
  }
  return t->shape.num_elements() * tensorweave::DataTypeSize(t->dtype);
}

void* TF_TensorData(const TF_Tensor* t) { return t->buffer->data(); }

int64_t TF_TensorElementCount(const TF_Tensor* t) { return t->shape.num_elements(); }

size_t TF_StringEncodedSize(size_t len) { return VarintLength(len) + len; }

size_t TF_StringEncode(const char* src, size_t src_len, char* dst, size_t dst_len,
                       TF_Status* status) {
  const size_t needed = TF_StringEncodedSize(src_len);
  if (dst_len < needed) {
    c_api::Set(status, errors::InvalidArgument("TF_StringEncode needs ", needed,
                                               " bytes of output, got ", dst_len));
    return 0;
  }
  char* cursor = WriteVarint(src_len, dst);
  if (src_len > 0) std::memcpy(cursor, src, src_len);
  c_api::Set(status, Status::OK());
  return needed;
}

size_t TF_StringDecode(const char* src, size_t src_len, const char** dst, size_t* dst_len,
                       TF_Status* status) {
  const char* data = nullptr;
  uint64_t length = 0;
  size_t consumed = 0;
  if (!DecodeString(src, src + src_len, &data, &length, &consumed)) {
    c_api::Set(status, errors::InvalidArgument("TF_StringDecode: malformed or truncated string "
                                               "in ",
                                               src_len, " bytes"));
    return 0;
  }
  *dst = data;
  *dst_len = length;
  c_api::Set(status, Status::OK());
  return consumed;
}

}  // extern "C"
