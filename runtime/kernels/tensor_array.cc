#include "runtime/kernels/tensor_array.h"

#include <cstring>
#include <limits>

#include "runtime/framework/resource_handle.h"
#include "runtime/kernels/kernel_util.h"

namespace tensorweave {
namespace {

// The largest size an array may reach: its size travels as an int32.
constexpr int64_t kMaxSize = std::numeric_limits<int32_t>::max();

template <typename T>
void AddElements(const Tensor& a, const Tensor& b, Tensor* sum) {
  const T* x = a.data<T>();
  const T* y = b.data<T>();
  T* z = sum->data<T>();
  for (int64_t i = 0; i < a.NumElements(); ++i) z[i] = WrappingAdd(x[i], y[i]);
}

// a + b for the numeric dtypes a gradient array may hold.
Status AddTensors(const Tensor& a, const Tensor& b, Tensor* sum) {
  TW_RETURN_IF_ERROR(Tensor::Allocate(a.dtype(), a.shape(), sum));
  switch (a.dtype()) {
#define TW_ADD_CASE(T)           \
  case DataTypeToEnum<T>::value: \
    AddElements<T>(a, b, sum);   \
    return Status::OK();
    TW_FOR_EACH_REAL_NUMBER(TW_ADD_CASE)
    TW_FOR_EACH_SMALL_INT(TW_ADD_CASE)
#undef TW_ADD_CASE
    default:
      return errors::InvalidArgument("Cannot add up ", DataTypeString(a.dtype()),
                                     " values written twice to a gradient TensorArray");
  }
}

TensorShape Prepended(const TensorShape& prepend, const TensorShape& shape, Status* status) {
  std::vector<int64_t> dims = prepend.dim_sizes();
  dims.insert(dims.end(), shape.dim_sizes().begin(), shape.dim_sizes().end());
  TensorShape out;
  *status = TensorShape::Build(dims, &out);
  return out;
}

}  // namespace

Status MakeZeros(DataType dtype, const TensorShape& shape, Tensor* out) {
  TW_RETURN_IF_ERROR(Tensor::Allocate(dtype, shape, out));
  if (dtype != DT_STRING && dtype != DT_RESOURCE && out->TotalBytes() > 0) {
    std::memset(out->raw_data(), 0, out->TotalBytes());
  }
  return Status::OK();
}

void CopyElementsInto(const Tensor& src, int64_t offset, Tensor* dst) {
  const int64_t n = src.NumElements();
  if (src.dtype() == DT_STRING) {
    for (int64_t i = 0; i < n; ++i)
      dst->data<std::string>()[offset + i] = src.data<std::string>()[i];
  } else if (src.dtype() == DT_RESOURCE) {
    for (int64_t i = 0; i < n; ++i) {
      dst->data<ResourceHandle>()[offset + i] = src.data<ResourceHandle>()[i];
    }
  } else if (n > 0) {
    const size_t bytes = DataTypeSize(src.dtype());
    std::memcpy(static_cast<char*>(dst->raw_data()) + offset * bytes, src.raw_data(), n * bytes);
  }
}

Status SliceRows(const Tensor& src, int64_t begin, int64_t rows, Tensor* out) {
  TensorShape shape = src.shape();
  TW_RETURN_IF_ERROR(shape.SetDim(0, rows));
  TW_RETURN_IF_ERROR(Tensor::Allocate(src.dtype(), shape, out));
  const int64_t row_elements = src.dim_size(0) == 0 ? 0 : src.NumElements() / src.dim_size(0);
  const int64_t first = begin * row_elements;
  const int64_t n = rows * row_elements;
  if (src.dtype() == DT_STRING) {
    for (int64_t i = 0; i < n; ++i)
      out->data<std::string>()[i] = src.data<std::string>()[first + i];
  } else if (src.dtype() == DT_RESOURCE) {
    for (int64_t i = 0; i < n; ++i) {
      out->data<ResourceHandle>()[i] = src.data<ResourceHandle>()[first + i];
    }
  } else if (n > 0) {
    const size_t bytes = DataTypeSize(src.dtype());
    std::memcpy(out->raw_data(), static_cast<const char*>(src.raw_data()) + first * bytes,
                n * bytes);
  }
  return Status::OK();
}

namespace {
std::atomic<int64_t> arrays_alive{0};
}  // namespace

TensorArray::TensorArray(std::string name, const Options& options)
    : name_(std::move(name)), options_(options) {
  arrays_alive.fetch_add(1, std::memory_order_relaxed);
}

TensorArray::~TensorArray() { arrays_alive.fetch_sub(1, std::memory_order_relaxed); }

int64_t TensorArray::NumAlive() { return arrays_alive.load(std::memory_order_relaxed); }

std::string TensorArray::DebugString() const { return StrCat("TensorArray ", name_); }

Status TensorArray::CheckOpen() const {
  if (closed_) return errors::InvalidArgument("TensorArray ", name_, " has already been closed.");
  return Status::OK();
}

Status TensorArray::CheckDtype(DataType dtype, bool writing) const {
  if (dtype == options_.dtype) return Status::OK();
  if (writing) {
    return errors::InvalidArgument("TensorArray dtype is ", DataTypeString(options_.dtype),
                                   " but Op is trying to write dtype ", DataTypeString(dtype), ".");
  }
  return errors::InvalidArgument("TensorArray dtype is ", DataTypeString(options_.dtype),
                                 " but Op requested dtype ", DataTypeString(dtype), ".");
}

Status TensorArray::Write(int64_t index, const Tensor& value) {
  std::lock_guard<std::mutex> lock(mu_);
  return WriteLocked(index, value);
}

Status TensorArray::WriteMany(const std::vector<int64_t>& indices,
                              const std::vector<Tensor>& values) {
  std::lock_guard<std::mutex> lock(mu_);
  for (size_t i = 0; i < indices.size(); ++i)
    TW_RETURN_IF_ERROR(WriteLocked(indices[i], values[i]));
  return Status::OK();
}

Status TensorArray::WriteLocked(int64_t index, const Tensor& value) {
  TW_RETURN_IF_ERROR(CheckOpen());
  if (index < 0 || (!options_.dynamic_size && index >= options_.size)) {
    return errors::InvalidArgument("TensorArray ", name_, ": Tried to write to index ", index,
                                   " but array is not resizeable and size is: ", options_.size);
  }
  if (index >= kMaxSize) {
    return errors::InvalidArgument("TensorArray ", name_, ": Tried to write to index ", index,
                                   " but an array holds at most ", kMaxSize, " elements");
  }
  if (value.dtype() != options_.dtype) {
    return errors::InvalidArgument("TensorArray ", name_, ": Could not write to TensorArray index ",
                                   index, " because the value dtype is ",
                                   DataTypeString(value.dtype()), " but TensorArray dtype is ",
                                   DataTypeString(options_.dtype), ".");
  }
  if (!options_.element_shape.IsCompatibleWith(value.shape())) {
    return errors::InvalidArgument(
        "TensorArray ", name_, ": Could not write to TensorArray index ", index,
        " because the value shape is ", value.shape().DebugString(),
        " which is incompatible with the TensorArray's inferred element shape: ",
        options_.element_shape.DebugString(), " (consider setting infer_shape=False).");
  }
  if (options_.identical_element_shapes && !options_.element_shape.IsFullyDefined()) {
    options_.element_shape = PartialTensorShape::FromShape(value.shape());
  }
  Element& element = elements_[index];
  if (element.read) {
    return errors::InvalidArgument("TensorArray ", name_, ": Could not write to TensorArray index ",
                                   index, " because it has already been read.");
  }
  if (element.written && !options_.multiple_writes_aggregate) {
    return errors::InvalidArgument("TensorArray ", name_, ": Could not write to TensorArray index ",
                                   index, " because it has already been written to.");
  }
  if (element.written) {
    if (value.shape() != element.shape) {
      return errors::InvalidArgument(
          "TensorArray ", name_, ": Could not aggregate to TensorArray index ", index,
          " because the existing shape is ", element.shape.DebugString(),
          " but the new input shape is ", value.shape().DebugString(), ".");
    }
    if (!element.tensor.IsInitialized()) {
      element.tensor = value;  // only the shape was known: the sum is the value
      return Status::OK();
    }
    Tensor sum;
    TW_RETURN_IF_ERROR(AddTensors(element.tensor, value, &sum));
    element.tensor = std::move(sum);
    return Status::OK();
  }
  element.tensor = value;
  element.shape = value.shape();
  element.written = true;
  if (index >= options_.size) options_.size = index + 1;
  return Status::OK();
}

Status TensorArray::ShapeAtLocked(int64_t index, TensorShape* shape) const {
  if (index < 0 || index >= options_.size) {
    return errors::InvalidArgument("Tried to read from index ", index,
                                   " but array size is: ", options_.size);
  }
  auto found = elements_.find(index);
  if (found != elements_.end()) {
    const Element& element = found->second;
    if (element.cleared) {
      return errors::InvalidArgument(
          "TensorArray ", name_, ": Could not read index ", index,
          " twice because it was cleared after a previous read (perhaps try setting "
          "clear_after_read = false?).");
    }
    if (element.written) {
      *shape = element.shape;
      return Status::OK();
    }
  }
  if (!options_.element_shape.IsFullyDefined()) {
    return errors::InvalidArgument(
        "TensorArray ", name_, ": Could not read from TensorArray index ", index,
        ".  Furthermore, the element shape is not fully defined: ",
        options_.element_shape.DebugString(),
        ".  It is possible you are working with a resizeable TensorArray and stop_gradients "
        "is not allowing the gradients to be written.  If you set the full element_shape "
        "property on the forward TensorArray, the proper all-zeros tensor will be returned "
        "instead of incurring this error.");
  }
  return options_.element_shape.AsTensorShape(shape);
}

Status TensorArray::ReadLocked(int64_t index, Tensor* value) {
  TW_RETURN_IF_ERROR(CheckOpen());
  TensorShape shape;
  TW_RETURN_IF_ERROR(ShapeAtLocked(index, &shape));
  Element& element = elements_[index];
  if (element.tensor.IsInitialized()) {
    *value = element.tensor;
  } else {
    TW_RETURN_IF_ERROR(MakeZeros(options_.dtype, shape, value));
  }
  element.read = true;
  if (options_.clear_after_read) {
    element.cleared = true;
    element.tensor = Tensor();
  }
  return Status::OK();
}

Status TensorArray::Read(int64_t index, Tensor* value) {
  std::lock_guard<std::mutex> lock(mu_);
  return ReadLocked(index, value);
}

Status TensorArray::Gather(const std::vector<int64_t>& indices, Tensor* value) {
  std::lock_guard<std::mutex> lock(mu_);
  TW_RETURN_IF_ERROR(CheckOpen());
  if (indices.empty()) {
    if (!options_.element_shape.IsFullyDefined()) {
      return errors::InvalidArgument(
          "TensorArray has size zero, but element shape ", options_.element_shape.DebugString(),
          " is not fully defined. Currently only static shapes are supported when packing "
          "zero-size TensorArrays.");
    }
    TensorShape element_shape;
    TW_RETURN_IF_ERROR(options_.element_shape.AsTensorShape(&element_shape));
    TW_RETURN_IF_ERROR(element_shape.InsertDim(0, 0));
    return Tensor::Allocate(options_.dtype, element_shape, value);
  }
  // Shapes first, so a bad index or a mismatch fails before anything is
  // allocated or cleared.
  TensorShape first_shape;
  TW_RETURN_IF_ERROR(ShapeAtLocked(indices[0], &first_shape));
  for (size_t i = 1; i < indices.size(); ++i) {
    TensorShape shape;
    TW_RETURN_IF_ERROR(ShapeAtLocked(indices[i], &shape));
    if (shape != first_shape) {
      return errors::InvalidArgument(
          "TensorArray has inconsistent shapes.  Index 0 has shape: ", first_shape.DebugString(),
          " but index ", i, " has shape: ", shape.DebugString());
    }
  }
  TensorShape out_shape = first_shape;
  TW_RETURN_IF_ERROR(out_shape.InsertDim(0, static_cast<int64_t>(indices.size())));
  TW_RETURN_IF_ERROR(MakeZeros(options_.dtype, out_shape, value));
  const int64_t stride = first_shape.num_elements();
  for (size_t i = 0; i < indices.size(); ++i) {
    Tensor element;
    // A repeated index with clear_after_read fails here, as in TensorFlow.
    TW_RETURN_IF_ERROR(ReadLocked(indices[i], &element));
    CopyElementsInto(element, static_cast<int64_t>(i) * stride, value);
  }
  return Status::OK();
}

Status TensorArray::Concat(const PartialTensorShape& shape_except0_if_empty, Tensor* value,
                           Tensor* lengths) {
  std::lock_guard<std::mutex> lock(mu_);
  TW_RETURN_IF_ERROR(CheckOpen());
  const int64_t size = options_.size;
  if (size == 0) {
    if (!shape_except0_if_empty.IsFullyDefined()) {
      return errors::InvalidArgument(
          "TensorArray has size zero, but element_shape_except0 ",
          shape_except0_if_empty.DebugString(),
          " is not fully defined. Currently only static shapes are supported when "
          "concatenating zero-size TensorArrays.");
    }
    TensorShape shape;
    TW_RETURN_IF_ERROR(shape_except0_if_empty.AsTensorShape(&shape));
    TW_RETURN_IF_ERROR(shape.InsertDim(0, 0));
    TW_RETURN_IF_ERROR(Tensor::Allocate(options_.dtype, shape, value));
    return Tensor::Allocate(DT_INT64, TensorShape({0}), lengths);
  }
  // Every index's shape: written ones from the map, the others (zeros)
  // all have the element shape, so they are counted, not visited.
  TensorShape unwritten_shape;
  TensorShape except0;
  bool have_except0 = false;
  auto check = [&](int64_t index, const TensorShape& shape) -> Status {
    if (shape.dims() == 0) {
      return errors::InvalidArgument(
          "Concat saw a scalar shape at index ", index,
          " but requires at least vectors.  Did you mean to call TensorArray.stack instead?");
    }
    TensorShape rest = shape;
    rest.RemoveDim(0);
    if (!have_except0) {
      except0 = rest;
      have_except0 = true;
    } else if (rest != except0) {
      return errors::InvalidArgument(
          "TensorArray has inconsistent shapes.  Index 0 has (excepting dimension 0) shape: ",
          except0.DebugString(), " but index ", index,
          " has (excepting dimension 0) shape: ", rest.DebugString());
    }
    return Status::OK();
  };
  int64_t rows = 0;
  int64_t unwritten = size;
  for (int64_t index = 0; index < size;) {
    auto next = elements_.lower_bound(index);
    const int64_t gap_end = next == elements_.end() ? size : next->first;
    if (gap_end > index) {
      TensorShape shape;
      TW_RETURN_IF_ERROR(ShapeAtLocked(index, &shape));
      TW_RETURN_IF_ERROR(check(index, shape));
      index = gap_end;
      continue;
    }
    TensorShape shape;
    TW_RETURN_IF_ERROR(ShapeAtLocked(index, &shape));
    TW_RETURN_IF_ERROR(check(index, shape));
    if (next->second.written) {
      rows += shape.dim_size(0);
      --unwritten;
    }
    ++index;
  }
  if (unwritten > 0) {
    TW_RETURN_IF_ERROR(options_.element_shape.AsTensorShape(&unwritten_shape));
    const int64_t per = unwritten_shape.dim_size(0);
    if (per > 0 && unwritten > std::numeric_limits<int64_t>::max() / per) {
      return errors::InvalidArgument("TensorArray ", name_, " is too large to concatenate");
    }
    rows += unwritten * per;
  }
  TensorShape out_shape = except0;
  TW_RETURN_IF_ERROR(out_shape.InsertDim(0, rows));
  TW_RETURN_IF_ERROR(MakeZeros(options_.dtype, out_shape, value));
  TW_RETURN_IF_ERROR(Tensor::Allocate(DT_INT64, TensorShape({size}), lengths));
  const int64_t unwritten_rows = unwritten > 0 ? unwritten_shape.dim_size(0) : 0;
  int64_t* length = lengths->data<int64_t>();
  for (int64_t i = 0; i < size; ++i) length[i] = unwritten_rows;
  const int64_t row_elements = except0.num_elements();
  int64_t row = 0;
  int64_t previous = -1;
  // Written elements in index order; the zeros of the gaps are already
  // there. Reading marks each one read (and cleared with clear_after_read).
  std::vector<int64_t> written;
  for (const auto& entry : elements_) {
    if (entry.first < size && entry.second.written) written.push_back(entry.first);
  }
  for (int64_t index : written) {
    row += (index - previous - 1) * unwritten_rows;
    Tensor element;
    TW_RETURN_IF_ERROR(ReadLocked(index, &element));
    CopyElementsInto(element, row * row_elements, value);
    length[index] = element.dim_size(0);
    row += element.dim_size(0);
    previous = index;
  }
  return Status::OK();
}

Status TensorArray::Size(int64_t* size) {
  std::lock_guard<std::mutex> lock(mu_);
  TW_RETURN_IF_ERROR(CheckOpen());
  *size = options_.size;
  return Status::OK();
}

Status TensorArray::CheckSplitCount(int64_t count) const {
  std::lock_guard<std::mutex> lock(mu_);
  TW_RETURN_IF_ERROR(CheckOpen());
  if (!options_.dynamic_size && options_.size != count) {
    return errors::InvalidArgument("TensorArray's size is not equal to the size of lengths (",
                                   options_.size, " vs. ", count,
                                   "), and the TensorArray is not marked as dynamically "
                                   "resizeable");
  }
  return Status::OK();
}

Status TensorArray::MergeElementShape(const PartialTensorShape& shape) {
  std::lock_guard<std::mutex> lock(mu_);
  TW_RETURN_IF_ERROR(CheckOpen());
  PartialTensorShape merged;
  if (!options_.element_shape.MergeWith(shape, &merged).ok()) {
    return errors::InvalidArgument("Inconsistent shapes: saw ", shape.DebugString(),
                                   " but expected ", options_.element_shape.DebugString());
  }
  options_.element_shape = merged;
  return Status::OK();
}

Status TensorArray::GradientOptions(const TensorShape& prepend, Options* options) {
  std::lock_guard<std::mutex> lock(mu_);
  TW_RETURN_IF_ERROR(CheckOpen());
  options_.dynamic_size = false;
  *options = Options();
  options->dtype = options_.dtype;
  options->size = options_.size;
  options->identical_element_shapes = options_.identical_element_shapes;
  options->multiple_writes_aggregate = true;
  options->clear_after_read = true;
  if (options_.element_shape.unknown_rank()) {
    options->element_shape = PartialTensorShape();
  } else {
    std::vector<int64_t> dims = prepend.dim_sizes();
    dims.insert(dims.end(), options_.element_shape.dim_sizes().begin(),
                options_.element_shape.dim_sizes().end());
    TW_RETURN_IF_ERROR(PartialTensorShape::Build(dims, &options->element_shape));
  }
  return Status::OK();
}

Status TensorArray::CopyShapesTo(const TensorShape& prepend, TensorArray* grad) {
  std::scoped_lock lock(mu_, grad->mu_);
  for (const auto& entry : elements_) {
    if (!entry.second.written || entry.first >= grad->options_.size) continue;
    Element& target = grad->elements_[entry.first];
    if (target.written) continue;  // the gradient array existed already
    Status status;
    target.shape = Prepended(prepend, entry.second.shape, &status);
    TW_RETURN_IF_ERROR(status);
    target.written = true;
  }
  return Status::OK();
}

void TensorArray::Close() {
  std::map<int64_t, Element> freed;
  std::lock_guard<std::mutex> lock(mu_);
  freed.swap(elements_);
  closed_ = true;
}

}  // namespace tensorweave
