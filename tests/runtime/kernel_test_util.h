// A small harness for kernel tests: builds a NodeDef, creates its kernel on
// a CPU Device (an Eigen thread pool of two threads) and calls Compute with
// an OpKernelContext, without graphs or executors.
//
//   KernelRunner run(NodeBuilder("Add").Attr("T", DT_FLOAT).Build());
//   ASSERT_OK(run.Compute({Vector<float>({1, 2}), Scalar<float>(3)}));
//   ExpectValues<float>(run.output(0), {2}, {4, 5});
#ifndef TENSORWEAVE_TESTS_RUNTIME_KERNEL_TEST_UTIL_H_
#define TENSORWEAVE_TESTS_RUNTIME_KERNEL_TEST_UTIL_H_

#ifndef EIGEN_USE_THREADS
#define EIGEN_USE_THREADS
#endif
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <memory>
#include <string>
#include <unsupported/Eigen/CXX11/Tensor>
#include <vector>

#include "runtime/framework/device.h"
#include "runtime/framework/node_def_util.h"
#include "runtime/framework/op_def.h"
#include "runtime/framework/op_kernel.h"
#include "runtime/framework/shape_inference.h"
#include "runtime/framework/tensor.h"

namespace tensorweave {
namespace test {

#define TW_ASSERT_OK(expr)                          \
  do {                                              \
    const ::tensorweave::Status tw_status = (expr); \
    ASSERT_TRUE(tw_status.ok()) << tw_status;       \
  } while (0)
#define TW_EXPECT_OK(expr)                          \
  do {                                              \
    const ::tensorweave::Status tw_status = (expr); \
    EXPECT_TRUE(tw_status.ok()) << tw_status;       \
  } while (0)

// A fresh CPU device (its own variables) over a shared two-thread pool.
inline std::unique_ptr<Device> NewTestDevice() {
  static Eigen::ThreadPool* pool = new Eigen::ThreadPool(2);
  static Eigen::ThreadPoolDevice* eigen_device = new Eigen::ThreadPoolDevice(pool, 2);
  return std::make_unique<Device>("/job:localhost/replica:0/task:0/device:CPU:0", DEVICE_CPU,
                                  eigen_device);
}

class NodeBuilder {
 public:
  explicit NodeBuilder(const std::string& op, const std::string& name = "node") {
    node_.set_op(op);
    node_.set_name(name);
  }
  NodeBuilder& Attr(const std::string& name, DataType value) { return Set(name, value); }
  NodeBuilder& Attr(const std::string& name, bool value) { return Set(name, value); }
  NodeBuilder& Attr(const std::string& name, int64_t value) { return Set(name, value); }
  NodeBuilder& Attr(const std::string& name, int value) { return Set(name, int64_t{value}); }
  NodeBuilder& Attr(const std::string& name, float value) { return Set(name, value); }
  NodeBuilder& Attr(const std::string& name, const char* value) {
    return Set(name, std::string(value));
  }
  NodeBuilder& Attr(const std::string& name, const std::string& value) { return Set(name, value); }
  NodeBuilder& Attr(const std::string& name, const PartialTensorShape& value) {
    return Set(name, value);
  }
  NodeBuilder& Attr(const std::string& name, const Tensor& value) { return Set(name, value); }
  // Data inputs named in0, in1, ... (only their number matters here).
  NodeBuilder& Inputs(int count) {
    for (int i = 0; i < count; ++i) node_.add_input("in" + std::to_string(i));
    return *this;
  }
  NodeDef Build() const { return node_; }

 private:
  template <typename T>
  NodeBuilder& Set(const std::string& name, const T& value) {
    SetAttrValue(value, &(*node_.mutable_attr())[name]);
    return *this;
  }
  NodeDef node_;
};

// Holds one kernel so that it can run several times (Const sharing,
// IsExpensive adapting to sizes).
class KernelRunner {
 public:
  // Fills attr defaults, validates the node against its op (inputs are
  // named in0.. when the node has none) and creates the kernel;
  // construction_status() tells how that went.
  explicit KernelRunner(NodeDef node, Device* device = nullptr, int num_inputs = -1)
      : owned_device_(device ? nullptr : NewTestDevice()),
        device_(device ? device : owned_device_.get()) {
    const OpDef* op_def = nullptr;
    status_ = OpRegistry::Global()->LookUp(node.op(), &op_def);
    if (!status_.ok()) return;
    AddDefaultsToNodeDef(*op_def, &node);
    if (node.input_size() == 0 && num_inputs < 0) {
      DataTypeVector inputs, outputs;
      status_ = InOutTypesForNode(node, *op_def, &inputs, &outputs);
      if (!status_.ok()) return;
      num_inputs = static_cast<int>(inputs.size());
    }
    for (int i = 0; i < num_inputs; ++i) node.add_input("in" + std::to_string(i));
    node_ = node;
    status_ = ValidateNodeDef(node_, *op_def);
    if (!status_.ok()) return;
    status_ = CreateOpKernel(DEVICE_CPU, device_, node_, &kernel_);
  }

  const Status& construction_status() const { return status_; }
  OpKernel* kernel() const { return kernel_.get(); }
  // The step's cancellation and deadline as the executor would pass them.
  void set_cancellation_manager(CancellationManager* manager) { cancellation_ = manager; }
  void set_deadline(std::chrono::steady_clock::time_point deadline) { deadline_ = deadline; }
  Device* device() const { return device_; }

  // Runs Compute on value inputs; the status is the kernel's. (Tensors in
  // a braced list are copies, so their buffers are shared with the list
  // while Compute runs; pass a moved vector to test buffer reuse.)
  Status Compute(std::vector<Tensor> inputs) {
    std::vector<TensorValue> values(inputs.size());
    for (size_t i = 0; i < inputs.size(); ++i) values[i].tensor = std::move(inputs[i]);
    return ComputeValues(std::move(values));
  }
  // Runs Compute on inputs that may be references (TensorValue::ref).
  Status ComputeValues(std::vector<TensorValue> inputs) {
    if (!status_.ok()) return status_;
    inputs_ = std::move(inputs);
    OpKernelContext::Params params;
    params.device = device_;
    params.op_kernel = kernel_.get();
    params.inputs = &inputs_;
    params.cancellation_manager = cancellation_;
    params.deadline = deadline_;
    OpKernelContext ctx(&params);
    kernel_->Compute(&ctx);
    outputs_.clear();
    for (int i = 0; i < ctx.num_outputs(); ++i) outputs_.push_back(*ctx.mutable_output(i));
    return ctx.status();
  }

  const Tensor& output(int i) const { return outputs_[i].tensor; }
  const TensorValue& output_value(int i) const { return outputs_[i]; }
  int num_outputs() const { return static_cast<int>(outputs_.size()); }
  // The inputs as Compute left them (a forwarded buffer is shared).
  const std::vector<TensorValue>& inputs() const { return inputs_; }
  // Drops the inputs, as the executor does after a kernel ran.
  void ReleaseInputs() { inputs_.clear(); }

 private:
  std::unique_ptr<Device> owned_device_;
  Device* device_;
  NodeDef node_;
  Status status_;
  std::unique_ptr<OpKernel> kernel_;
  std::vector<TensorValue> inputs_;
  std::vector<TensorValue> outputs_;
  CancellationManager* cancellation_ = nullptr;
  std::chrono::steady_clock::time_point deadline_ = std::chrono::steady_clock::time_point::max();
};

// --- Tensors --------------------------------------------------------------

template <typename T>
Tensor MakeTensor(const TensorShape& shape, const std::vector<T>& values) {
  Tensor tensor(DataTypeToEnum<T>::value, shape);
  EXPECT_EQ(static_cast<int64_t>(values.size()), shape.num_elements()) << "test data size";
  for (int64_t i = 0; i < shape.num_elements() && i < static_cast<int64_t>(values.size()); ++i) {
    tensor.data<T>()[i] = values[i];
  }
  return tensor;
}
// std::vector<bool> has no element pointers; build bool tensors from ints.
inline Tensor MakeBoolTensor(const TensorShape& shape, const std::vector<int>& values) {
  Tensor tensor(DT_BOOL, shape);
  for (int64_t i = 0; i < shape.num_elements(); ++i) tensor.data<bool>()[i] = values[i] != 0;
  return tensor;
}
template <typename T>
Tensor Scalar(T value) {
  return MakeTensor<T>(TensorShape(), {value});
}
template <typename T>
Tensor Vector(const std::vector<T>& values) {
  return MakeTensor<T>(TensorShape({static_cast<int64_t>(values.size())}), values);
}

template <typename T>
std::vector<T> Values(const Tensor& tensor) {
  std::vector<T> values;
  for (int64_t i = 0; i < tensor.NumElements(); ++i) values.push_back(tensor.data<T>()[i]);
  return values;
}
inline std::vector<int> BoolValues(const Tensor& tensor) {
  std::vector<int> values;
  for (int64_t i = 0; i < tensor.NumElements(); ++i) values.push_back(tensor.data<bool>()[i]);
  return values;
}

// Exact comparison of dtype, shape and values.
template <typename T>
void ExpectValues(const Tensor& tensor, const TensorShape& shape, const std::vector<T>& values) {
  EXPECT_EQ(tensor.dtype(), DataTypeToEnum<T>::value) << DataTypeString(tensor.dtype());
  EXPECT_EQ(tensor.shape(), shape) << tensor.shape().DebugString();
  EXPECT_EQ(Values<T>(tensor), values);
}
inline void ExpectBools(const Tensor& tensor, const TensorShape& shape,
                        const std::vector<int>& values) {
  EXPECT_EQ(tensor.dtype(), DT_BOOL);
  EXPECT_EQ(tensor.shape(), shape) << tensor.shape().DebugString();
  EXPECT_EQ(BoolValues(tensor), values);
}
// Floating comparison with a relative tolerance; NaNs must match NaNs.
template <typename T>
void ExpectNear(const Tensor& tensor, const TensorShape& shape, const std::vector<T>& values,
                double tolerance = 1e-5) {
  EXPECT_EQ(tensor.dtype(), DataTypeToEnum<T>::value) << DataTypeString(tensor.dtype());
  ASSERT_EQ(tensor.shape(), shape) << tensor.shape().DebugString();
  for (int64_t i = 0; i < tensor.NumElements(); ++i) {
    const double got = tensor.data<T>()[i], want = values[i];
    if (std::isnan(want)) {
      EXPECT_TRUE(std::isnan(got)) << "element " << i << " is " << got;
    } else if (std::isinf(want)) {
      EXPECT_EQ(got, want) << "element " << i;
    } else {
      EXPECT_NEAR(got, want, tolerance * std::max(1.0, std::fabs(want))) << "element " << i;
    }
  }
}

// Expects an error of `code` whose message contains `fragment`.
inline void ExpectError(const Status& status, Code code, const std::string& fragment) {
  EXPECT_EQ(status.code(), code) << status;
  EXPECT_NE(status.message().find(fragment), std::string::npos)
      << "'" << fragment << "' not in: " << status.message();
}

// --- Shape functions ------------------------------------------------------

// Runs the op's shape function on `node` (defaults filled) with the given
// input shapes and known input values, through the runner ShapeRefiner uses.
inline Status InferShapes(NodeDef node, const std::vector<PartialTensorShape>& input_shapes,
                          const std::vector<const Tensor*>& input_values,
                          std::vector<PartialTensorShape>* outputs) {
  const OpDef* op_def = nullptr;
  TW_RETURN_IF_ERROR(OpRegistry::Global()->LookUp(node.op(), &op_def));
  AddDefaultsToNodeDef(*op_def, &node);
  DataTypeVector inputs, output_types;
  TW_RETURN_IF_ERROR(InOutTypesForNode(node, *op_def, &inputs, &output_types));
  return shape_inference::RunShapeFunction(node, *op_def, input_shapes, input_values,
                                           static_cast<int>(output_types.size()), outputs);
}

// A partial shape from dims (-1 unknown); Unknown() for unknown rank.
inline PartialTensorShape Partial(const std::vector<int64_t>& dims) {
  PartialTensorShape shape;
  EXPECT_TRUE(PartialTensorShape::Build(dims, &shape).ok());
  return shape;
}
inline PartialTensorShape Unknown() { return PartialTensorShape(); }

}  // namespace test
}  // namespace tensorweave

#endif  // TENSORWEAVE_TESTS_RUNTIME_KERNEL_TEST_UTIL_H_
