// TensorFlow's tf_tensor.h extras: moving a sole-owner tensor, bitcasting,
// reshaping in place, alignment, and filling a tensor from a TensorProto.
// String tensors' layout lives in c_api_tensor.cc.
#include <cstdint>
#include <utility>

#include "c_api/c_api_internal.h"
#include "runtime/framework/element_size.h"

using tensorweave::Status;
using tensorweave::TensorShape;
namespace errors = tensorweave::errors;
namespace c_api = tensorweave::c_api;

namespace {

// TensorFlow's alignment for tensor memory (EIGEN_MAX_ALIGN_BYTES on CPUs
// with AVX-512), which TensorBuffer::Allocate also uses.
constexpr size_t kTensorAlignment = 64;

Status Bitcast(const TF_Tensor* from, TF_DataType type, TF_Tensor* to, const int64_t* new_dims,
               int num_new_dims) {
  if (from == nullptr || to == nullptr) {
    return errors::InvalidArgument("TF_TensorBitcastFrom needs a source and a target tensor");
  }
  TensorShape shape;
  if (num_new_dims < 0 || (num_new_dims > 0 && new_dims == nullptr)) {
    return errors::InvalidArgument("Invalid number of dims ", num_new_dims);
  }
  TW_RETURN_IF_ERROR(TensorShape::Build(new_dims, num_new_dims, &shape));
  const auto from_type = from->dtype;
  const size_t from_size = tensorweave::DataTypeSize(from_type);
  const size_t to_size = tensorweave::DataTypeSize(static_cast<tensorweave::DataType>(type));
  // Both sides must be plain element bytes the runtime holds; the byte
  // counts must agree (TensorFlow's Tensor::BitcastFrom rule and message).
  if (from_size == 0 || to_size == 0 ||
      static_cast<uint64_t>(shape.num_elements()) * to_size !=
          static_cast<uint64_t>(from->shape.num_elements()) * from_size) {
    return errors::InvalidArgument("input and output shapes/data type sizes are not compatible");
  }
  to->dtype = static_cast<tensorweave::DataType>(type);
  to->shape = shape;
  to->buffer = from->buffer;
  return Status::OK();
}

}  // namespace

extern "C" {

TF_Tensor* TF_TensorMaybeMove(TF_Tensor* t) {
  // The caller may take `t` itself when nothing else (a session's variable,
  // another TF_Tensor) shares its memory; NULL tells it to copy instead.
  if (t == nullptr || t->buffer.use_count() != 1) return nullptr;
  if (t->dtype == tensorweave::DT_RESOURCE || t->dtype == tensorweave::DT_VARIANT) return nullptr;
  return t;
}

void TF_TensorBitcastFrom(const TF_Tensor* from, TF_DataType type, TF_Tensor* to,
                          const int64_t* new_dims, int num_new_dims, TF_Status* status) {
  c_api::GuardVoid(status,
                   [&] { c_api::Set(status, Bitcast(from, type, to, new_dims, num_new_dims)); });
}

void TF_SetShape(TF_Tensor* tensor, const int64_t* dims, int num_dims) {
  c_api::GuardVoid(nullptr, [&] {
    if (tensor == nullptr || num_dims < 0 || (num_dims > 0 && dims == nullptr)) return;
    TensorShape shape;
    if (!TensorShape::Build(dims, num_dims, &shape).ok()) return;
    // TensorFlow sets any shape; here a shape with another element count is
    // ignored, since the tensor's bytes could no longer hold it.
    if (shape.num_elements() != tensor->shape.num_elements()) return;
    tensor->shape = shape;
  });
}

bool TF_TensorIsAligned(const TF_Tensor* t) {
  return reinterpret_cast<uintptr_t>(t->buffer->data()) % kTensorAlignment == 0;
}

size_t TF_TensorDefaultAlignment(void) { return kTensorAlignment; }

void TF_TensorFromProto(const TF_Buffer* from, TF_Tensor* to, TF_Status* status) {
  c_api::GuardVoid(status, [&] {
    if (from == nullptr || to == nullptr) {
      return c_api::Set(status, errors::InvalidArgument("TF_TensorFromProto needs two arguments"));
    }
    tensorweave::TensorProto proto;
    if ((from->data == nullptr && from->length > 0) ||
        !proto.ParseFromArray(from->data, static_cast<int>(from->length))) {
      return c_api::Set(status, errors::InvalidArgument("Unparseable TensorProto"));
    }
    tensorweave::Tensor tensor;
    Status result = tensorweave::Tensor::FromProto(proto, &tensor);
    TF_Tensor* converted = nullptr;
    if (result.ok()) result = c_api::TensorToC(std::move(tensor), &converted);
    if (result.ok()) {
      *to = std::move(*converted);
      delete converted;
    }
    c_api::Set(status, std::move(result));
  });
}

}  // extern "C"
