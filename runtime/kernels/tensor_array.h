// TensorArray: the resource behind TensorArrayV3 and its ops, an array of
// tensors of one dtype that lives in its step's container.
//
//   TensorArray::Options options;
//   options.dtype = DT_FLOAT;
//   options.size = 3;
//   auto array = std::make_shared<TensorArray>("ta_0", options);
//   TW_RETURN_IF_ERROR(array->Write(0, value));
//   Tensor read;
//   TW_RETURN_IF_ERROR(array->Read(0, &read));
//
// TensorFlow's rules (core/kernels/tensor_array.h), all errors
// INVALID_ARGUMENT naming the array: an index is written once, except in a
// gradient array where writes to one index add up; an index is not written
// after it was read; with clear_after_read an index is read once; an index
// never written reads as zeros when its shape is known (the element shape,
// or for a gradient array the shape the forward array had there) and is an
// error otherwise; a dynamic_size array grows to the largest index written;
// a closed array refuses everything.
//
// Elements are kept sparsely (by index), so a huge declared size costs
// nothing until something is written or materialized.
#ifndef TENSORWEAVE_KERNELS_TENSOR_ARRAY_H_
#define TENSORWEAVE_KERNELS_TENSOR_ARRAY_H_

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "runtime/framework/resource_mgr.h"
#include "runtime/framework/tensor.h"
#include "runtime/framework/tensor_shape.h"

namespace tensorweave {

class TensorArray : public ResourceBase {
 public:
  static const char* TypeName() { return "TensorArray"; }

  struct Options {
    DataType dtype = DT_FLOAT;
    int64_t size = 0;
    PartialTensorShape element_shape;  // unknown rank by default
    bool dynamic_size = false;
    bool clear_after_read = true;
    bool identical_element_shapes = false;
    bool multiple_writes_aggregate = false;  // gradient arrays
  };

  TensorArray(std::string name, const Options& options);
  ~TensorArray() override;

  // How many arrays exist in the process: what leak tests look at (every
  // array must end with its step).
  static int64_t NumAlive();

  const std::string& name() const { return name_; }
  DataType dtype() const { return options_.dtype; }
  std::string DebugString() const override;

  // Stores `value` at `index` (or adds it to what a gradient array holds).
  Status Write(int64_t index, const Tensor& value);
  // Writes values[i] at indices[i] in order; stops at the first error.
  Status WriteMany(const std::vector<int64_t>& indices, const std::vector<Tensor>& values);
  Status Read(int64_t index, Tensor* value);
  // Reads indices[i] for every i into one tensor of shape
  // [len(indices)] + element shape; every element must have the same shape.
  Status Gather(const std::vector<int64_t>& indices, Tensor* value);
  // Every element concatenated along dimension 0, with each one's length.
  // `shape_except0_if_empty` gives the result's shape for an empty array.
  Status Concat(const PartialTensorShape& shape_except0_if_empty, Tensor* value, Tensor* lengths);
  Status Size(int64_t* size);
  // Merges `shape` into the element shape ("Inconsistent shapes" if they
  // disagree).
  Status MergeElementShape(const PartialTensorShape& shape);
  // What TensorArraySplitV3 needs before writing `count` pieces: a fixed
  // size array must have exactly that many elements.
  Status CheckSplitCount(int64_t count) const;
  // `dtype` must be the array's: what an op expects to read or write.
  Status CheckDtype(DataType dtype, bool writing) const;

  // The options of this array's gradient for `prepend` (its element shapes
  // get `prepend` in front); stops this array from growing, as TensorFlow
  // does once gradients are taken.
  Status GradientOptions(const TensorShape& prepend, Options* options);
  // Marks every index written here as written in `grad` with the shape it
  // has here (prefixed by `prepend`), so unwritten gradients read as zeros.
  Status CopyShapesTo(const TensorShape& prepend, TensorArray* grad);

  // Frees every element; every later use is an error.
  void Close();

 private:
  struct Element {
    Tensor tensor;      // uninitialized when only the shape is known
    TensorShape shape;  // valid when written
    bool written = false;
    bool read = false;
    bool cleared = false;
  };

  Status CheckOpen() const;  // requires mu_
  Status WriteLocked(int64_t index, const Tensor& value);
  // The value at `index` (zeros when only its shape is known), marking it
  // read (and cleared with clear_after_read).
  Status ReadLocked(int64_t index, Tensor* value);
  // The shape `index` reads with, without reading it.
  Status ShapeAtLocked(int64_t index, TensorShape* shape) const;

  const std::string name_;
  mutable std::mutex mu_;
  Options options_;  // guarded by mu_ (size, element_shape, dynamic_size change)
  std::map<int64_t, Element> elements_;
  bool closed_ = false;
};

// Zeros of `dtype` and `shape` (empty strings, default handles).
Status MakeZeros(DataType dtype, const TensorShape& shape, Tensor* out);
// Copies every element of `src` into `dst` starting at flat element
// `offset` (same dtype; the caller checked it fits).
void CopyElementsInto(const Tensor& src, int64_t offset, Tensor* dst);
// Rows [begin, begin + rows) of `src` along dimension 0, copied.
Status SliceRows(const Tensor& src, int64_t begin, int64_t rows, Tensor* out);

}  // namespace tensorweave

#endif  // TENSORWEAVE_KERNELS_TENSOR_ARRAY_H_
