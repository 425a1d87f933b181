// Tensor: a dtype, a shape and a ref-counted buffer. Copying a Tensor shares
// the buffer. Buffers we allocate are 64-byte aligned; a buffer can also wrap
// memory owned by someone else (a numpy array, a TF_Tensor from C) and call
// their deallocator when the last Tensor using it goes away.
#ifndef TENSORWEAVE_FRAMEWORK_TENSOR_H_
#define TENSORWEAVE_FRAMEWORK_TENSOR_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "runtime/framework/status.h"
#include "runtime/framework/tensor_shape.h"
#include "runtime/framework/types.h"
#include "tensorweave/proto/tensor.pb.h"

namespace tensorweave {

constexpr size_t kTensorAlignment = 64;

class TensorBuffer {
 public:
  using Deallocator = std::function<void(void* data, size_t bytes)>;

  virtual ~TensorBuffer() = default;
  void* data() const { return data_; }
  size_t size() const { return size_; }

  // Fresh, uninitialized, 64-byte aligned memory. Null on allocation failure.
  static std::shared_ptr<TensorBuffer> Allocate(size_t bytes);
  // `bytes` std::string-sized slots holding `count` default strings.
  static std::shared_ptr<TensorBuffer> AllocateStrings(int64_t count);
  // Foreign memory; `deallocator` (may be empty) runs once, when the last
  // reference is dropped.
  static std::shared_ptr<TensorBuffer> Wrap(void* data, size_t bytes, Deallocator deallocator);

 protected:
  TensorBuffer(void* data, size_t size) : data_(data), size_(size) {}

 private:
  void* data_;
  size_t size_;
};

class Tensor {
 public:
  // DT_INVALID, no buffer: the value of an output never produced.
  Tensor() = default;
  // Allocates; for callers whose shape is already validated (a TensorShape
  // is always within kMaxElements). Aborts only if memory is exhausted;
  // use Allocate to get RESOURCE_EXHAUSTED instead.
  Tensor(DataType dtype, const TensorShape& shape);
  // Shares `buffer`, which must hold at least the bytes the shape needs.
  Tensor(DataType dtype, const TensorShape& shape, std::shared_ptr<TensorBuffer> buffer);

  // Checked allocation: unsupported dtype → INVALID_ARGUMENT, allocation
  // failure → RESOURCE_EXHAUSTED.
  static Status Allocate(DataType dtype, const TensorShape& shape, Tensor* out);

  DataType dtype() const { return dtype_; }
  const TensorShape& shape() const { return shape_; }
  int dims() const { return shape_.dims(); }
  int64_t dim_size(int i) const { return shape_.dim_size(i); }
  int64_t NumElements() const { return shape_.num_elements(); }
  // Bytes of element storage (for strings: the std::string slots).
  size_t TotalBytes() const;
  bool IsInitialized() const { return dtype_ != DT_INVALID && (buffer_ || NumElements() == 0); }
  bool IsScalar() const { return shape_.dims() == 0; }

  template <typename T>
  T* data() {
    return static_cast<T*>(raw_data());
  }
  template <typename T>
  const T* data() const {
    return static_cast<const T*>(raw_data());
  }
  void* raw_data() const { return buffer_ ? buffer_->data() : nullptr; }

  // Scalar value of a single-element tensor of type T.
  template <typename T>
  T scalar() const {
    return data<T>()[0];
  }

  const std::shared_ptr<TensorBuffer>& buffer() const { return buffer_; }
  bool SharesBufferWith(const Tensor& other) const {
    return buffer_ != nullptr && buffer_ == other.buffer_;
  }
  // True when this Tensor object is the only holder of its buffer, so the
  // buffer may be updated in place without anyone else seeing it.
  bool RefCountIsOne() const { return buffer_ != nullptr && buffer_.use_count() == 1; }

  // Same buffer, new shape with the same element count. False otherwise.
  bool CopyFrom(const Tensor& other, const TensorShape& shape);
  // A copy with its own buffer (deep copy of the elements).
  Tensor DeepCopy() const;

  // Decodes a TensorProto (tensor_content or the typed value fields, with
  // TensorFlow's rule that a single listed value fills the tensor). Any
  // inconsistency — wrong byte count, too many values, unsupported dtype,
  // bad shape — is INVALID_ARGUMENT.
  static Status FromProto(const TensorProto& proto, Tensor* out);
  // Encodes with tensor_content for fixed-size types, string_val for strings
  // (variants: dtype and shape only; FromProto refuses them).
  void AsProtoTensorContent(TensorProto* proto) const;

  // "Tensor<type: float shape: [2] values: 1 2>", at most `max_entries`.
  std::string DebugString(int max_entries = 6) const;
  // The first `max_entries` values separated by spaces.
  std::string SummarizeValue(int max_entries) const;

 private:
  DataType dtype_ = DT_INVALID;
  TensorShape shape_;
  std::shared_ptr<TensorBuffer> buffer_;
};

// Bool elements are bytes that C++ may only hold as 0 or 1 (reading any
// other value as a bool is undefined behaviour), while bytes from outside —
// a TensorProto's tensor_content, a C caller's buffer, a numpy view — may
// hold anything. Returns `tensor` itself unless it is a bool tensor with
// such a byte; then a copy with every non-zero byte made 1.
Tensor WithCanonicalBools(Tensor tensor);

}  // namespace tensorweave

#endif  // TENSORWEAVE_FRAMEWORK_TENSOR_H_
