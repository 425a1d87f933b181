#include "tests/runtime/session_test_util.h"

#include <chrono>
#include <thread>

#include "runtime/framework/op_def.h"
#include "runtime/framework/op_kernel.h"
#include "runtime/framework/shape_inference.h"

namespace tensorweave {
namespace session_test {

std::atomic<int> counter_runs{0};

namespace {

REGISTER_OP("SessionTestScalar")
    .Output("output: float")
    .Attr("value: float")
    .SetShapeFn(shape_fns::ScalarShape)
    .Doc("Test op: a float scalar.");
REGISTER_OP("SessionTestAffine")
    .Input("x: float")
    .Output("y: float")
    .Attr("scale: float = 1")
    .Attr("offset: float = 0")
    .SetShapeFn(shape_fns::UnchangedShape)
    .Doc("Test op: x * scale + offset.");
REGISTER_OP("SessionTestSum")
    .Input("a: float")
    .Input("b: float")
    .Output("c: float")
    .SetShapeFn(shape_fns::UnchangedShape)
    .Doc("Test op: a + b, where b is a scalar or has a's shape.");
REGISTER_OP("SessionTestFail").Input("x: float").Output("y: float").Doc("Test op: always fails.");
REGISTER_OP("SessionTestWaitForCancel")
    .Output("y: float")
    .Doc("Test op: blocks until the step is cancelled.");
REGISTER_OP("SessionTestCounter")
    .Output("count: int32")
    .SetIsStateful()
    .SetShapeFn(shape_fns::ScalarShape)
    .Doc("Test op: counts how often it ran.");
REGISTER_OP("SessionTestSleep")
    .Input("x: float")
    .Output("y: float")
    .Attr("millis: int = 10")
    .Doc("Test op: returns x after sleeping.");

class ScalarOp : public OpKernel {
 public:
  explicit ScalarOp(OpKernelConstruction* c) : OpKernel(c) {
    float value = 0;
    OP_REQUIRES_OK(c, c->GetAttr("value", &value));
    value_ = FloatScalar(value);
  }
  void Compute(OpKernelContext* c) override { c->set_output(0, value_); }
  bool IsExpensive() const override { return false; }

 private:
  Tensor value_;
};

class AffineOp : public OpKernel {
 public:
  explicit AffineOp(OpKernelConstruction* c) : OpKernel(c) {
    OP_REQUIRES_OK(c, c->GetAttr("scale", &scale_));
    OP_REQUIRES_OK(c, c->GetAttr("offset", &offset_));
  }
  void Compute(OpKernelContext* c) override {
    const Tensor& x = c->input(0);
    Tensor* y = nullptr;
    OP_REQUIRES_OK(c, c->forward_input_or_allocate_output({0}, 0, x.shape(), &y));
    const float* in = x.data<float>();
    float* out = y->data<float>();
    for (int64_t i = 0; i < x.NumElements(); ++i) out[i] = in[i] * scale_ + offset_;
  }

 private:
  float scale_ = 1, offset_ = 0;
};

class SumOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* c) override {
    const Tensor& a = c->input(0);
    const Tensor& b = c->input(1);
    const bool scalar = b.NumElements() == 1;
    OP_REQUIRES(c, scalar || a.shape() == b.shape(),
                errors::InvalidArgument("SessionTestSum: incompatible shapes"));
    Tensor* out = nullptr;
    OP_REQUIRES_OK(c, c->allocate_output(0, a.shape(), &out));
    for (int64_t i = 0; i < a.NumElements(); ++i) {
      out->data<float>()[i] = a.data<float>()[i] + b.data<float>()[scalar ? 0 : i];
    }
  }
  bool IsExpensive() const override { return false; }
};

class FailOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* c) override {
    c->SetStatus(errors::InvalidArgument("SessionTestFail always fails"));
  }
};

class CounterOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* c) override {
    Tensor out(DT_INT32, TensorShape());
    out.data<int32_t>()[0] = ++counter_runs;
    c->set_output(0, out);
  }
};

class SleepOp : public OpKernel {
 public:
  explicit SleepOp(OpKernelConstruction* c) : OpKernel(c) {
    OP_REQUIRES_OK(c, c->GetAttr("millis", &millis_));
  }
  void Compute(OpKernelContext* c) override {
    std::this_thread::sleep_for(std::chrono::milliseconds(millis_));
    c->set_output(0, c->input(0));
  }

 private:
  int64_t millis_ = 0;
};

// Finishes only when its step is cancelled (Close, a timeout, a deleted
// session), reporting CANCELLED; stands for any kernel blocked on input.
class WaitForCancelOp : public AsyncOpKernel {
 public:
  using AsyncOpKernel::AsyncOpKernel;
  void ComputeAsync(OpKernelContext* c, DoneCallback done) override {
    CancellationManager* cancellation = c->cancellation_manager();
    auto wake = [c, done] {
      c->SetStatus(errors::Cancelled("SessionTestWaitForCancel was cancelled"));
      done();
    };
    if (!cancellation->RegisterCallback(cancellation->get_cancellation_token(), wake)) wake();
  }
};

REGISTER_KERNEL_BUILDER(Name("SessionTestScalar").Device(DEVICE_CPU), ScalarOp);
REGISTER_KERNEL_BUILDER(Name("SessionTestWaitForCancel").Device(DEVICE_CPU), WaitForCancelOp);
REGISTER_KERNEL_BUILDER(Name("SessionTestAffine").Device(DEVICE_CPU), AffineOp);
REGISTER_KERNEL_BUILDER(Name("SessionTestSum").Device(DEVICE_CPU), SumOp);
REGISTER_KERNEL_BUILDER(Name("SessionTestFail").Device(DEVICE_CPU), FailOp);
REGISTER_KERNEL_BUILDER(Name("SessionTestCounter").Device(DEVICE_CPU), CounterOp);
REGISTER_KERNEL_BUILDER(Name("SessionTestSleep").Device(DEVICE_CPU), SleepOp);

}  // namespace

NodeDef* AddNode(GraphDef* graph, const std::string& name, const std::string& op,
                 std::initializer_list<std::string> inputs, const std::string& device) {
  NodeDef* node = graph->add_node();
  node->set_name(name);
  node->set_op(op);
  for (const std::string& input : inputs) node->add_input(input);
  node->set_device(device);
  return node;
}

void SetAttr(NodeDef* node, const std::string& name, float value) {
  SetAttrValue(value, &(*node->mutable_attr())[name]);
}
void SetAttr(NodeDef* node, const std::string& name, int64_t value) {
  SetAttrValue(value, &(*node->mutable_attr())[name]);
}
void SetAttr(NodeDef* node, const std::string& name, bool value) {
  SetAttrValue(value, &(*node->mutable_attr())[name]);
}
void SetAttr(NodeDef* node, const std::string& name, DataType value) {
  SetAttrValue(value, &(*node->mutable_attr())[name]);
}
void SetAttr(NodeDef* node, const std::string& name, const std::string& value) {
  SetAttrValue(value, &(*node->mutable_attr())[name]);
}
void SetAttr(NodeDef* node, const std::string& name, const Tensor& value) {
  SetAttrValue(value, &(*node->mutable_attr())[name]);
}
void SetAttr(NodeDef* node, const std::string& name, const PartialTensorShape& value) {
  SetAttrValue(value, &(*node->mutable_attr())[name]);
}

NodeDef* AddScalar(GraphDef* graph, const std::string& name, float value,
                   const std::string& device) {
  NodeDef* node = AddNode(graph, name, "SessionTestScalar", {}, device);
  SetAttr(node, "value", value);
  return node;
}

NodeDef* AddAffine(GraphDef* graph, const std::string& name, const std::string& input, float scale,
                   float offset, const std::string& device) {
  NodeDef* node = AddNode(graph, name, "SessionTestAffine", {input}, device);
  SetAttr(node, "scale", scale);
  SetAttr(node, "offset", offset);
  return node;
}

NodeDef* AddPlaceholder(GraphDef* graph, const std::string& name, const PartialTensorShape& shape,
                        DataType dtype) {
  NodeDef* node = AddNode(graph, name, "Placeholder");
  SetAttr(node, "dtype", dtype);
  SetAttr(node, "shape", shape);
  return node;
}

NodeDef* AddWaitForCancel(GraphDef* graph, const std::string& name) {
  return AddNode(graph, name, "SessionTestWaitForCancel");
}

NodeDef* AddBlockingRecv(GraphDef* graph, const std::string& name) {
  NodeDef* node = AddNode(graph, name, "_Recv");
  SetAttr(node, "tensor_type", DT_FLOAT);
  SetAttr(node, "tensor_name", name + "_never_sent");
  SetAttr(node, "send_device", std::string("/job:localhost/replica:0/task:0/device:CPU:0"));
  SetAttr(node, "send_device_incarnation", int64_t{1});
  SetAttr(node, "recv_device", std::string("/job:localhost/replica:0/task:0/device:CPU:0"));
  SetAttr(node, "client_terminated", true);
  return node;
}

Tensor FloatVector(const std::vector<float>& values) {
  Tensor tensor(DT_FLOAT, TensorShape({static_cast<int64_t>(values.size())}));
  for (size_t i = 0; i < values.size(); ++i) tensor.data<float>()[i] = values[i];
  return tensor;
}

Tensor FloatScalar(float value) {
  Tensor tensor(DT_FLOAT, TensorShape());
  tensor.data<float>()[0] = value;
  return tensor;
}

std::vector<float> Values(const Tensor& tensor) {
  if (tensor.dtype() != DT_FLOAT) return {};
  return std::vector<float>(tensor.data<float>(), tensor.data<float>() + tensor.NumElements());
}

}  // namespace session_test
}  // namespace tensorweave
