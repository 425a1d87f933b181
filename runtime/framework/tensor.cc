#include "runtime/framework/tensor.h"

#include <unistd.h>

#include <Eigen/Core>
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>
#include <type_traits>

#include "runtime/framework/cpu_allocator.h"
#include "runtime/framework/resource_handle.h"
#include "runtime/framework/variant.h"

namespace tensorweave {
namespace {

static_assert(CpuAllocator::kAlignment == kTensorAlignment,
              "tensor buffers are as aligned as tensor.h promises");

// Fresh memory comes from the CpuAllocator (aligned, counted in its
// statistics, large blocks reused across steps); the buffer remembers its
// byte count to give the same figure back.
class AlignedBuffer : public TensorBuffer {
 public:
  AlignedBuffer(void* data, size_t size) : TensorBuffer(data, size) {}
  ~AlignedBuffer() override { CpuAllocator::Get()->DeallocateRaw(data(), size()); }
};

// `count` constructed objects of T (strings, resource handles), destroyed
// with the buffer.
template <typename T>
class ObjectBuffer : public TensorBuffer {
 public:
  ObjectBuffer(void* data, int64_t count) : TensorBuffer(data, count * sizeof(T)), count_(count) {}
  ~ObjectBuffer() override {
    auto* objects = static_cast<T*>(data());
    for (int64_t i = 0; i < count_; ++i) objects[i].~T();
    CpuAllocator::Get()->DeallocateRaw(data(), size());
  }

 private:
  int64_t count_;
};

class ForeignBuffer : public TensorBuffer {
 public:
  ForeignBuffer(void* data, size_t size, Deallocator deallocator)
      : TensorBuffer(data, size), deallocator_(std::move(deallocator)) {}
  ~ForeignBuffer() override {
    if (deallocator_) deallocator_(data(), size());
  }

 private:
  Deallocator deallocator_;
};

size_t ElementBytes(DataType dtype) {
  if (dtype == DT_STRING) return sizeof(std::string);
  if (dtype == DT_RESOURCE) return sizeof(ResourceHandle);
  if (dtype == DT_VARIANT) return sizeof(Variant);
  return DataTypeSize(dtype);
}

// No single buffer can be larger than the machine's memory. Refusing such a
// request up front gives RESOURCE_EXHAUSTED instead of relying on malloc,
// which under overcommit may hand out memory that cannot be backed (and be
// killed later, while filling it).
size_t MaxBufferBytes() {
  static const size_t limit = [] {
    const long pages = sysconf(_SC_PHYS_PAGES);
    const long page_size = sysconf(_SC_PAGESIZE);
    if (pages <= 0 || page_size <= 0) return SIZE_MAX / 2;
    const uint64_t total = static_cast<uint64_t>(pages) * static_cast<uint64_t>(page_size);
    return static_cast<size_t>(std::min<uint64_t>(total, SIZE_MAX / 2));
  }();
  return limit;
}

// `count` elements of `element_bytes` each, or false when the product
// overflows or exceeds what one buffer may hold.
bool BufferBytes(int64_t count, size_t element_bytes, size_t* bytes) {
  if (count < 0) return false;
  size_t product = 0;
  if (__builtin_mul_overflow(static_cast<uint64_t>(count), element_bytes, &product)) return false;
  if (product > MaxBufferBytes()) return false;
  *bytes = product;
  return true;
}

}  // namespace

std::shared_ptr<TensorBuffer> TensorBuffer::Allocate(size_t bytes) {
  if (bytes > MaxBufferBytes()) return nullptr;
  void* data = CpuAllocator::Get()->AllocateRaw(bytes);
  if (data == nullptr) return nullptr;
  return std::make_shared<AlignedBuffer>(data, bytes);
}

namespace {
template <typename T>
std::shared_ptr<TensorBuffer> AllocateObjects(int64_t count) {
  size_t bytes = 0;
  if (!BufferBytes(count, sizeof(T), &bytes)) return nullptr;
  void* data = CpuAllocator::Get()->AllocateRaw(bytes);
  if (data == nullptr) return nullptr;
  auto* objects = static_cast<T*>(data);
  for (int64_t i = 0; i < count; ++i) new (&objects[i]) T();
  return std::make_shared<ObjectBuffer<T>>(data, count);
}
}  // namespace

std::shared_ptr<TensorBuffer> TensorBuffer::AllocateStrings(int64_t count) {
  return AllocateObjects<std::string>(count);
}

std::shared_ptr<TensorBuffer> TensorBuffer::Wrap(void* data, size_t bytes,
                                                 Deallocator deallocator) {
  return std::make_shared<ForeignBuffer>(data, bytes, std::move(deallocator));
}

Tensor::Tensor(DataType dtype, const TensorShape& shape) {
  Status status = Allocate(dtype, shape, this);
  if (!status.ok()) throw std::bad_alloc();
}

Tensor::Tensor(DataType dtype, const TensorShape& shape, std::shared_ptr<TensorBuffer> buffer)
    : dtype_(dtype), shape_(shape), buffer_(std::move(buffer)) {}

Status Tensor::Allocate(DataType dtype, const TensorShape& shape, Tensor* out) {
  if (!TensorCanHold(dtype) && dtype != DT_VARIANT) {
    return errors::InvalidArgument("Cannot allocate a tensor of type ", DataTypeString(dtype));
  }
  const int64_t count = shape.num_elements();
  size_t bytes = 0;
  std::shared_ptr<TensorBuffer> buffer;
  if (BufferBytes(count, ElementBytes(dtype), &bytes)) {
    if (dtype == DT_STRING) {
      buffer = TensorBuffer::AllocateStrings(count);
    } else if (dtype == DT_RESOURCE) {
      buffer = AllocateObjects<ResourceHandle>(count);
    } else if (dtype == DT_VARIANT) {
      buffer = AllocateObjects<Variant>(count);
    } else {
      buffer = TensorBuffer::Allocate(bytes);
    }
  }
  if (buffer == nullptr) {
    return errors::ResourceExhausted("Out of memory allocating a tensor of type ",
                                     DataTypeString(dtype), " and shape ", shape.DebugString(),
                                     " (", count, " elements of ", ElementBytes(dtype),
                                     " bytes; at most ", MaxBufferBytes(), " bytes per tensor)");
  }
  out->dtype_ = dtype;
  out->shape_ = shape;
  out->buffer_ = std::move(buffer);
  return Status::OK();
}

size_t Tensor::TotalBytes() const { return NumElements() * ElementBytes(dtype_); }

bool Tensor::CopyFrom(const Tensor& other, const TensorShape& shape) {
  if (other.NumElements() != shape.num_elements()) return false;
  dtype_ = other.dtype_;
  shape_ = shape;
  buffer_ = other.buffer_;
  return true;
}

Tensor Tensor::DeepCopy() const {
  Tensor copy(dtype_, shape_);
  if (dtype_ == DT_STRING) {
    for (int64_t i = 0; i < NumElements(); ++i)
      copy.data<std::string>()[i] = data<std::string>()[i];
  } else if (dtype_ == DT_RESOURCE) {
    for (int64_t i = 0; i < NumElements(); ++i)
      copy.data<ResourceHandle>()[i] = data<ResourceHandle>()[i];
  } else if (dtype_ == DT_VARIANT) {
    // Copies share their values; the list kernels copy a value before
    // changing one that is shared.
    for (int64_t i = 0; i < NumElements(); ++i) copy.data<Variant>()[i] = data<Variant>()[i];
  } else if (TotalBytes() > 0) {
    std::memcpy(copy.raw_data(), raw_data(), TotalBytes());
  }
  return copy;
}

namespace {

// Fills `out` (already allocated) from one of the proto's repeated fields.
// A single value is broadcast to every element.
template <typename T, typename Field>
Status FillFromValues(const Field& values, Tensor* out) {
  const int64_t n = out->NumElements();
  const int64_t given = values.size();
  if (given > n) {
    return errors::InvalidArgument("TensorProto holds ", given, " values for a tensor of shape ",
                                   out->shape().DebugString());
  }
  T* dst = out->data<T>();
  if (given == 0) {
    for (int64_t i = 0; i < n; ++i) dst[i] = T();
    return Status::OK();
  }
  for (int64_t i = 0; i < given; ++i) dst[i] = static_cast<T>(values.Get(i));
  // TensorFlow pads a short list with its last value.
  for (int64_t i = given; i < n; ++i) dst[i] = static_cast<T>(values.Get(given - 1));
  return Status::OK();
}

// TensorFlow writes half and bfloat16 values into half_val as their 16-bit
// patterns, one per int32.
Status FillFromHalfBits(const google::protobuf::RepeatedField<int32_t>& values, Tensor* out) {
  for (int32_t value : values) {
    if (value < 0 || value > 0xffff) {
      return errors::InvalidArgument("TensorProto half_val holds ", value,
                                     ", which is not a 16-bit pattern");
    }
  }
  return FillFromValues<uint16_t>(values, out);
}

}  // namespace

Status Tensor::FromProto(const TensorProto& proto, Tensor* out) {
  const DataType dtype = proto.dtype();
  // Variants (DT_VARIANT, not TensorCanHold) are refused too: TensorFlow
  // encodes them in variant_val as VariantTensorDataProtos of registered
  // types, and no variant value crosses a process boundary here.
  if (!DataType_IsValid(dtype) || IsRefType(dtype) || !TensorCanHold(dtype)) {
    return errors::InvalidArgument("TensorProto has unsupported dtype ", DataTypeString(dtype));
  }
  TensorShape shape;
  TW_RETURN_IF_ERROR(TensorShape::FromProto(proto.tensor_shape(), &shape));
  Tensor result;
  TW_RETURN_IF_ERROR(Allocate(dtype, shape, &result));

  if (dtype == DT_RESOURCE && !proto.tensor_content().empty()) {
    return errors::InvalidArgument(
        "TensorProto of dtype resource has tensor_content; handles travel in "
        "resource_handle_val");
  }
  if (dtype != DT_STRING && !proto.tensor_content().empty()) {
    const size_t expected = result.TotalBytes();
    if (proto.tensor_content().size() != expected) {
      return errors::InvalidArgument(
          "TensorProto tensor_content has ", proto.tensor_content().size(), " bytes but a ",
          DataTypeString(dtype), " tensor of shape ", shape.DebugString(), " needs ", expected);
    }
    std::memcpy(result.raw_data(), proto.tensor_content().data(), expected);
    *out = WithCanonicalBools(std::move(result));
    return Status::OK();
  }

  Status status;
  switch (dtype) {
    case DT_FLOAT:
      status = FillFromValues<float>(proto.float_val(), &result);
      break;
    case DT_DOUBLE:
      status = FillFromValues<double>(proto.double_val(), &result);
      break;
    case DT_INT32:
      status = FillFromValues<int32_t>(proto.int_val(), &result);
      break;
    case DT_INT16:
      status = FillFromValues<int16_t>(proto.int_val(), &result);
      break;
    case DT_INT8:
      status = FillFromValues<int8_t>(proto.int_val(), &result);
      break;
    case DT_UINT8:
      status = FillFromValues<uint8_t>(proto.int_val(), &result);
      break;
    case DT_UINT16:
      status = FillFromValues<uint16_t>(proto.int_val(), &result);
      break;
    case DT_INT64:
      status = FillFromValues<int64_t>(proto.int64_val(), &result);
      break;
    case DT_UINT32:
      status = FillFromValues<uint32_t>(proto.uint32_val(), &result);
      break;
    case DT_UINT64:
      status = FillFromValues<uint64_t>(proto.uint64_val(), &result);
      break;
    case DT_BOOL:
      status = FillFromValues<bool>(proto.bool_val(), &result);
      break;
    case DT_HALF:
    case DT_BFLOAT16:
      status = FillFromHalfBits(proto.half_val(), &result);
      break;
    case DT_STRING: {
      const int64_t n = result.NumElements();
      const int64_t given = proto.string_val_size();
      if (given > n) {
        return errors::InvalidArgument("TensorProto holds ", given,
                                       " strings for a tensor of shape ", shape.DebugString());
      }
      auto* dst = result.data<std::string>();
      for (int64_t i = 0; i < n; ++i) {
        if (given > 0) dst[i] = proto.string_val(i < given ? i : given - 1);
      }
      break;
    }
    case DT_RESOURCE: {
      const int64_t n = result.NumElements();
      const int64_t given = proto.resource_handle_val_size();
      if (given > n) {
        return errors::InvalidArgument("TensorProto holds ", given,
                                       " resource handles for a tensor of shape ",
                                       shape.DebugString());
      }
      auto* dst = result.data<ResourceHandle>();
      for (int64_t i = 0; i < n && given > 0; ++i) {
        dst[i].FromProto(proto.resource_handle_val(i < given ? i : given - 1));
      }
      break;
    }
    default:
      return errors::InvalidArgument("TensorProto has unsupported dtype ", DataTypeString(dtype));
  }
  TW_RETURN_IF_ERROR(status);
  *out = std::move(result);
  return Status::OK();
}

void Tensor::AsProtoTensorContent(TensorProto* proto) const {
  proto->Clear();
  proto->set_dtype(dtype_);
  shape_.AsProto(proto->mutable_tensor_shape());
  if (dtype_ == DT_STRING) {
    for (int64_t i = 0; i < NumElements(); ++i) proto->add_string_val(data<std::string>()[i]);
  } else if (dtype_ == DT_RESOURCE) {
    for (int64_t i = 0; i < NumElements(); ++i) {
      data<ResourceHandle>()[i].AsProto(proto->add_resource_handle_val());
    }
  } else if (dtype_ == DT_VARIANT) {
    // Only dtype and shape: variant values have no encoding here, and
    // FromProto refuses a variant TensorProto, so none is ever decoded.
  } else if (TotalBytes() > 0) {
    proto->set_tensor_content(raw_data(), TotalBytes());
  }
}

namespace {
// Prints one element; 8-bit integers as numbers, not characters.
template <typename T>
std::string ElementString(const T& value) {
  if constexpr (std::is_same_v<T, int8_t> || std::is_same_v<T, uint8_t>) {
    return std::to_string(static_cast<int>(value));
  } else {
    return StrCat(value);
  }
}
}  // namespace

std::string Tensor::SummarizeValue(int max_entries) const {
  std::string out;
  const int64_t n = std::min<int64_t>(NumElements(), max_entries);
  for (int64_t i = 0; i < n; ++i) {
    if (i > 0) out += ' ';
    switch (dtype_) {
#define TW_SUMMARIZE(T)                 \
  case DataTypeToEnum<T>::value:        \
    out += ElementString(data<T>()[i]); \
    break;
      TW_FOR_EACH_TYPE(TW_SUMMARIZE)
#undef TW_SUMMARIZE
      case DT_HALF:
        out += ElementString(static_cast<float>(data<Eigen::half>()[i]));
        break;
      case DT_BFLOAT16:
        out += ElementString(static_cast<float>(data<Eigen::bfloat16>()[i]));
        break;
      case DT_RESOURCE:
        out += data<ResourceHandle>()[i].DebugString();
        break;
      case DT_VARIANT:
        out += data<Variant>()[i].DebugString();
        break;
      default:
        out += "?";
    }
  }
  if (NumElements() > max_entries) out += "...";
  return out;
}

std::string Tensor::DebugString(int max_entries) const {
  return StrCat("Tensor<type: ", DataTypeString(dtype_), " shape: ", shape_.DebugString(),
                " values: ", SummarizeValue(max_entries), ">");
}

Tensor WithCanonicalBools(Tensor tensor) {
  if (tensor.dtype() != DT_BOOL) return tensor;
  const auto* bytes = static_cast<const uint8_t*>(tensor.raw_data());
  const int64_t n = tensor.NumElements();
  if (std::all_of(bytes, bytes + n, [](uint8_t b) { return b <= 1; })) return tensor;
  Tensor copy(DT_BOOL, tensor.shape());
  auto* canonical = static_cast<uint8_t*>(copy.raw_data());
  for (int64_t i = 0; i < n; ++i) canonical[i] = bytes[i] != 0;
  return copy;
}

}  // namespace tensorweave
