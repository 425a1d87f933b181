// TF_TString (c_api/tf_tstring.h) and the conversions between TF_TString
// arrays and the runtime's string tensors.
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string>

#include "c_api/c_api_internal.h"
#include "c_api/c_api_tstring_internal.h"

static_assert(sizeof(TF_TString) == 24, "TF_TString must keep TensorFlow's 24-byte layout");
static_assert(sizeof(TF_TString_Small) == 24, "a SMALL element fills the whole struct");
static_assert(alignof(TF_TString) == alignof(size_t), "TF_TString aligns as TensorFlow's");

namespace {

using tensorweave::Status;
namespace errors = tensorweave::errors;

// Sizes are stored shifted left by two, the element's form in the low bits.
size_t Tagged(size_t size, TF_TString_Type type) { return (size << 2) | type; }
size_t Untagged(size_t stored) { return stored >> 2; }

// TensorFlow sizes LARGE buffers so that capacity + 1 (the NUL) is a
// multiple of 16; using the same rule keeps our elements byte-equal to
// TensorFlow's for the same calls.
size_t RoundedCapacity(size_t size) { return ((size + 1 + 15) & ~size_t{15}) - 1; }

// A string longer than a 48-bit address space, or one that would wrap
// around it, cannot be in memory: its size or pointer is garbage.
constexpr uint64_t kAddressSpaceLimit = uint64_t{1} << 48;

bool FitsInAddressSpace(const char* ptr, size_t size) {
  const uint64_t address = reinterpret_cast<uintptr_t>(ptr);
  return size <= kAddressSpaceLimit && address <= kAddressSpaceLimit - size;
}

// Frees what a LARGE element owns, and empties it; other forms stay as they are.
void ReleaseLarge(TF_TString* str) {
  if (TF_StringGetType(str) == TF_TSTR_LARGE && str->u.large.ptr != nullptr) {
    std::free(str->u.large.ptr);
    TF_StringInit(str);
  }
}

// Copies element `index`, which starts at `element` inside the buffer
// [begin, end), into `out`. The element is read with memcpy, so the buffer
// need not be aligned.
Status ReadElement(const char* element, const char* end, int64_t index, std::string* out) {
  TF_TString str;
  std::memcpy(&str, element, sizeof(str));
  const auto malformed = [index](auto... why) {
    return errors::InvalidArgument("Malformed TF_STRING tensor: element ", index, " ", why...);
  };
  switch (TF_StringGetType(&str)) {
    case TF_TSTR_SMALL: {
      const size_t size = Untagged(str.u.smll.size);
      if (size > TF_TString_SmallCapacity) {
        return malformed("is SMALL with size ", size, " over its capacity of ",
                         static_cast<int>(TF_TString_SmallCapacity));
      }
      out->assign(element + offsetof(TF_TString_Small, str), size);
      return Status::OK();
    }
    case TF_TSTR_LARGE: {
      const size_t size = Untagged(str.u.large.size);
      if (size > str.u.large.cap) {
        return malformed("is LARGE with size ", size, " over its capacity of ", str.u.large.cap);
      }
      if ((str.u.large.ptr == nullptr && size > 0) || !FitsInAddressSpace(str.u.large.ptr, size)) {
        return malformed("is LARGE with size ", size, " at an impossible address");
      }
      out->assign(str.u.large.ptr, size);
      return Status::OK();
    }
    case TF_TSTR_VIEW: {
      const size_t size = Untagged(str.u.view.size);
      if ((str.u.view.ptr == nullptr && size > 0) || !FitsInAddressSpace(str.u.view.ptr, size)) {
        return malformed("is a VIEW of size ", size, " at an impossible address");
      }
      out->assign(str.u.view.ptr, size);
      return Status::OK();
    }
    default: {  // TF_TSTR_OFFSET: bytes further on in the same buffer.
      const size_t size = Untagged(str.u.offset.size);
      const size_t offset = str.u.offset.offset;
      const size_t room = static_cast<size_t>(end - element);
      if (offset > room || size > room - offset) {
        return malformed("is an OFFSET of ", size, " bytes at ", offset,
                         " reaching outside the tensor's ", room, " remaining bytes");
      }
      out->assign(element + offset, size);
      return Status::OK();
    }
  }
}

}  // namespace

namespace tensorweave {
namespace c_api {

std::shared_ptr<TensorBuffer> AllocateTStringBuffer(size_t bytes, int64_t count) {
  const size_t rounded =
      (std::max<size_t>(bytes, 1) + kTensorAlignment - 1) & ~(size_t{kTensorAlignment} - 1);
  if (rounded < bytes) return nullptr;
  void* data = std::aligned_alloc(kTensorAlignment, rounded);
  if (data == nullptr) return nullptr;
  std::memset(data, 0, rounded);
  const size_t elements = std::min<size_t>(count, bytes / sizeof(TF_TString));
  return TensorBuffer::Wrap(data, bytes, [elements](void* memory, size_t) {
    auto* strings = static_cast<TF_TString*>(memory);
    for (size_t i = 0; i < elements; ++i) TF_StringDealloc(&strings[i]);
    std::free(memory);
  });
}

Status TensorFromTStrings(const TF_Tensor& in, Tensor* out) {
  const int64_t count = in.shape.num_elements();
  const size_t size = in.buffer ? in.buffer->size() : 0;
  if (static_cast<uint64_t>(count) > size / sizeof(TF_TString)) {
    return errors::InvalidArgument(
        "Malformed TF_STRING tensor: ", count, " elements need ", count, " TF_TStrings of ",
        sizeof(TF_TString), " bytes (TensorFlow 2.x's layout), got ", size,
        " bytes; TensorFlow 1.x's offset table is not a TF_STRING tensor's layout");
  }
  Tensor result;
  TW_RETURN_IF_ERROR(Tensor::Allocate(DT_STRING, in.shape, &result));
  const char* base = count > 0 ? static_cast<const char*>(in.buffer->data()) : nullptr;
  auto* strings = result.data<std::string>();
  for (int64_t i = 0; i < count; ++i) {
    TW_RETURN_IF_ERROR(ReadElement(base + i * sizeof(TF_TString), base + size, i, &strings[i]));
  }
  *out = std::move(result);
  return Status::OK();
}

Status TStringBufferFromTensor(const Tensor& in, std::shared_ptr<TensorBuffer>* out) {
  const int64_t count = in.NumElements();
  std::shared_ptr<TensorBuffer> buffer =
      AllocateTStringBuffer(static_cast<size_t>(count) * sizeof(TF_TString), count);
  if (buffer == nullptr) return errors::ResourceExhausted("Out of memory copying strings");
  const std::string* strings = in.data<std::string>();
  auto* elements = static_cast<TF_TString*>(buffer->data());
  for (int64_t i = 0; i < count; ++i) {
    TF_StringCopy(&elements[i], strings[i].data(), strings[i].size());
    if (TF_StringGetSize(&elements[i]) != strings[i].size()) {
      return errors::ResourceExhausted("Out of memory copying a string of ", strings[i].size(),
                                       " bytes");
    }
  }
  *out = std::move(buffer);
  return Status::OK();
}

}  // namespace c_api
}  // namespace tensorweave

extern "C" {

void TF_StringInit(TF_TString* t) { std::memset(t, 0, sizeof(*t)); }

void TF_StringCopy(TF_TString* dst, const char* src, size_t size) {
  const TF_TString_Type type = TF_StringGetType(dst);
  if (size <= TF_TString_SmallCapacity) {
    // `src` may lie in dst's own bytes or LARGE buffer: move first, free after.
    char* old_buffer = type == TF_TSTR_LARGE ? dst->u.large.ptr : nullptr;
    if (size > 0) std::memmove(dst->u.smll.str, src, size);
    dst->u.smll.size = static_cast<uint8_t>(Tagged(size, TF_TSTR_SMALL));
    dst->u.smll.str[size] = '\0';
    std::free(old_buffer);
    return;
  }
  size_t capacity = RoundedCapacity(size);
  if (type == TF_TSTR_LARGE) {
    // As TensorFlow: keep the buffer unless it must grow or is over twice
    // too big, then halve it.
    const size_t old_capacity = dst->u.large.cap;
    const size_t old_size = Untagged(dst->u.large.size);
    if (size < old_size && size < old_capacity / 2) {
      capacity = RoundedCapacity(old_capacity / 2);
    } else if (size <= old_capacity) {
      capacity = old_capacity;
    }
    if (capacity == old_capacity) {
      std::memmove(dst->u.large.ptr, src, size);
      dst->u.large.size = Tagged(size, TF_TSTR_LARGE);
      dst->u.large.ptr[size] = '\0';
      return;
    }
  }
  char* buffer = static_cast<char*>(std::malloc(capacity + 1));
  if (buffer == nullptr) {
    // No status to report through: leave the empty string, whose size tells.
    ReleaseLarge(dst);
    TF_StringInit(dst);
    return;
  }
  std::memcpy(buffer, src, size);
  buffer[size] = '\0';
  ReleaseLarge(dst);
  dst->u.large.size = Tagged(size, TF_TSTR_LARGE);
  dst->u.large.cap = capacity;
  dst->u.large.ptr = buffer;
}

void TF_StringAssignView(TF_TString* dst, const char* src, size_t size) {
  ReleaseLarge(dst);
  dst->u.view.size = Tagged(size, TF_TSTR_VIEW);
  dst->u.view.ptr = src;
}

const char* TF_StringGetDataPointer(const TF_TString* tstr) {
  switch (TF_StringGetType(tstr)) {
    case TF_TSTR_SMALL:
      return tstr->u.smll.str;
    case TF_TSTR_LARGE:
      return tstr->u.large.ptr;
    case TF_TSTR_OFFSET:
      return reinterpret_cast<const char*>(tstr) + tstr->u.offset.offset;
    default:
      return tstr->u.view.ptr;
  }
}

TF_TString_Type TF_StringGetType(const TF_TString* str) {
  return static_cast<TF_TString_Type>(str->u.raw.raw[0] & TF_TSTR_TYPE_MASK);
}

size_t TF_StringGetSize(const TF_TString* tstr) {
  switch (TF_StringGetType(tstr)) {
    case TF_TSTR_SMALL:
      return Untagged(tstr->u.smll.size);
    case TF_TSTR_LARGE:
      return Untagged(tstr->u.large.size);
    case TF_TSTR_OFFSET:
      return Untagged(tstr->u.offset.size);
    default:
      return Untagged(tstr->u.view.size);
  }
}

size_t TF_StringGetCapacity(const TF_TString* str) {
  switch (TF_StringGetType(str)) {
    case TF_TSTR_SMALL:
      return TF_TString_SmallCapacity;
    case TF_TSTR_LARGE:
      return str->u.large.cap;
    default:
      return 0;
  }
}

void TF_StringDealloc(TF_TString* tstr) {
  if (tstr != nullptr) ReleaseLarge(tstr);
}

}  // extern "C"
