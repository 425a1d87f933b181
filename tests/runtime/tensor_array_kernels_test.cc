// DT_RESOURCE tensors, the resource manager and step container, and the
// TensorArrayV3 / Stack kernels with every error path TensorFlow has; the
// last tests run TensorArray graphs in a DirectSession to check that a
// step's arrays end with the step.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "runtime/common_runtime/session_factory.h"
#include "runtime/framework/resource_mgr.h"
#include "runtime/kernels/tensor_array.h"
#include "tests/runtime/kernel_test_util.h"
#include "tests/runtime/session_test_util.h"

namespace tensorweave {
namespace {

using test::MakeTensor;
using test::NodeBuilder;
using test::Scalar;
using test::Values;
using test::Vector;

// --- DT_RESOURCE tensors ----------------------------------------------------

ResourceHandle SampleHandle(const std::string& name) {
  ResourceHandle handle;
  handle.set_device("/job:localhost/replica:0/task:0/device:CPU:0");
  handle.set_container("__per_step_7");
  handle.set_name(name);
  handle.set_hash_code(ResourceTypeHash("TensorArray"));
  handle.set_maybe_type_name("TensorArray");
  return handle;
}

TEST(ResourceTensorTest, ProtoRoundTripKeepsEveryField) {
  Tensor tensor(DT_RESOURCE, TensorShape({2}));
  tensor.data<ResourceHandle>()[0] = SampleHandle("a");
  tensor.data<ResourceHandle>()[1] = SampleHandle("b");
  TensorProto proto;
  tensor.AsProtoTensorContent(&proto);
  ASSERT_EQ(proto.resource_handle_val_size(), 2);
  EXPECT_EQ(proto.resource_handle_val(1).name(), "b");
  EXPECT_EQ(proto.resource_handle_val(0).container(), "__per_step_7");
  Tensor back;
  TW_ASSERT_OK(Tensor::FromProto(proto, &back));
  EXPECT_EQ(back.dtype(), DT_RESOURCE);
  EXPECT_EQ(back.data<ResourceHandle>()[1].name(), "b");
  EXPECT_EQ(back.data<ResourceHandle>()[0].hash_code(), ResourceTypeHash("TensorArray"));
  EXPECT_EQ(back.data<ResourceHandle>()[0].maybe_type_name(), "TensorArray");
  Tensor copy = back.DeepCopy();
  EXPECT_EQ(copy.data<ResourceHandle>()[0].device(), back.data<ResourceHandle>()[0].device());
  EXPECT_NE(back.DebugString().find("__per_step_7/a"), std::string::npos) << back.DebugString();
}

TEST(ResourceTensorTest, OneHandleFillsTheTensor) {
  TensorProto proto;
  proto.set_dtype(DT_RESOURCE);
  proto.mutable_tensor_shape()->add_dim()->set_size(3);
  SampleHandle("only").AsProto(proto.add_resource_handle_val());
  Tensor tensor;
  TW_ASSERT_OK(Tensor::FromProto(proto, &tensor));
  EXPECT_EQ(tensor.data<ResourceHandle>()[2].name(), "only");
}

TEST(ResourceTensorTest, MalformedProtosAreInvalidArgument) {
  TensorProto too_many;
  too_many.set_dtype(DT_RESOURCE);
  SampleHandle("a").AsProto(too_many.add_resource_handle_val());
  SampleHandle("b").AsProto(too_many.add_resource_handle_val());  // a scalar holds one
  Tensor tensor;
  EXPECT_EQ(Tensor::FromProto(too_many, &tensor).code(), Code::INVALID_ARGUMENT);

  TensorProto content;
  content.set_dtype(DT_RESOURCE);
  content.set_tensor_content(std::string(64, 'x'));
  EXPECT_EQ(Tensor::FromProto(content, &tensor).code(), Code::INVALID_ARGUMENT);

  // Handle bytes that do not parse as a ResourceHandleProto make the whole
  // TensorProto unparsable: the caller's parse fails, nothing crashes.
  std::string bytes = too_many.SerializeAsString();
  bytes.resize(bytes.size() - 3);
  TensorProto truncated;
  EXPECT_FALSE(truncated.ParseFromString(bytes));
}

TEST(ResourceTensorTest, RuntimeWideTypeChecksStillRefuseResources) {
  // Resource handles stay inside the process: the C API, checkpoints and
  // the wire ask DataTypeIsSupported, which says no.
  EXPECT_FALSE(DataTypeIsSupported(DT_RESOURCE));
  EXPECT_TRUE(TensorCanHold(DT_RESOURCE));
  EXPECT_FALSE(TensorCanHold(DT_VARIANT));
}

// --- ResourceMgr and ScopedStepContainer ---------------------------------

class Counter : public ResourceBase {
 public:
  static const char* TypeName() { return "Counter"; }
  std::string DebugString() const override { return "Counter"; }
  int value = 0;
};

class OtherKind : public ResourceBase {
 public:
  static const char* TypeName() { return "OtherKind"; }
  std::string DebugString() const override { return "OtherKind"; }
};

TEST(ResourceMgrTest, CreateLookupDeleteCleanup) {
  ResourceMgr manager;
  auto counter = std::make_shared<Counter>();
  TW_ASSERT_OK(manager.Create("c", "n", counter));
  EXPECT_EQ(manager.Create("c", "n", std::make_shared<Counter>()).code(), Code::ALREADY_EXISTS);
  // The same name in another container or of another type is another resource.
  TW_EXPECT_OK(manager.Create("d", "n", std::make_shared<Counter>()));
  TW_EXPECT_OK(manager.Create("c", "n", std::make_shared<OtherKind>()));
  std::shared_ptr<Counter> found;
  TW_ASSERT_OK(manager.Lookup("c", "n", &found));
  EXPECT_EQ(found, counter);
  EXPECT_EQ(manager.Lookup("c", "missing", &found).code(), Code::NOT_FOUND);
  EXPECT_EQ(manager.NumResources(), 3);
  TW_EXPECT_OK(manager.Delete<Counter>("d", "n"));
  EXPECT_EQ(manager.Delete<Counter>("d", "n").code(), Code::NOT_FOUND);
  manager.Cleanup("c");
  manager.Cleanup("never-made");
  EXPECT_EQ(manager.NumResources(), 0);
  // A holder keeps the resource alive after its container went away.
  found->value = 5;
  EXPECT_EQ(counter->value, 5);
  EXPECT_EQ(counter.use_count(), 2);
}

TEST(ResourceMgrTest, LookupOrCreateMakesOnceAndKeepsCreatorErrors) {
  ResourceMgr manager;
  int made = 0;
  std::function<Status(std::shared_ptr<Counter>*)> creator =
      [&made](std::shared_ptr<Counter>* out) {
        ++made;
        *out = std::make_shared<Counter>();
        return Status::OK();
      };
  std::shared_ptr<Counter> first, second;
  TW_ASSERT_OK(manager.LookupOrCreate<Counter>("c", "n", &first, creator));
  TW_ASSERT_OK(manager.LookupOrCreate<Counter>("c", "n", &second, creator));
  EXPECT_EQ(made, 1);
  EXPECT_EQ(first, second);
  std::function<Status(std::shared_ptr<Counter>*)> failing = [](std::shared_ptr<Counter>*) {
    return errors::InvalidArgument("no");
  };
  EXPECT_EQ(manager.LookupOrCreate<Counter>("c", "other", &first, failing).code(),
            Code::INVALID_ARGUMENT);
  EXPECT_EQ(manager.NumResources(), 1);
}

TEST(ScopedStepContainerTest, ResourcesEndWithTheContainer) {
  auto counter = std::make_shared<Counter>();
  std::weak_ptr<Counter> watcher = counter;
  {
    ScopedStepContainer step(42);
    EXPECT_EQ(step.name(), "__per_step_42");
    TW_ASSERT_OK(step.resources()->Create("dev", "n", std::move(counter)));
    EXPECT_FALSE(watcher.expired());
  }
  EXPECT_TRUE(watcher.expired());
}

// --- Kernels ------------------------------------------------------------------

// Runs kernels on one device inside one step container, the way the
// executor does.
class StepHarness {
 public:
  explicit StepHarness(int64_t step_id = 1)
      : device_(test::NewTestDevice()), step_(std::make_unique<ScopedStepContainer>(step_id)) {}

  // Builds and runs one node (attr defaults filled); outputs in `outputs`.
  Status Run(NodeDef node, std::vector<Tensor> inputs, std::vector<Tensor>* outputs = nullptr) {
    const OpDef* op_def = nullptr;
    TW_RETURN_IF_ERROR(OpRegistry::Global()->LookUp(node.op(), &op_def));
    AddDefaultsToNodeDef(*op_def, &node);
    for (size_t i = 0; i < inputs.size(); ++i) node.add_input("in" + std::to_string(i));
    TW_RETURN_IF_ERROR(ValidateNodeDef(node, *op_def));
    std::unique_ptr<OpKernel> kernel;
    TW_RETURN_IF_ERROR(CreateOpKernel(DEVICE_CPU, device_.get(), node, &kernel));
    std::vector<TensorValue> values(inputs.size());
    for (size_t i = 0; i < inputs.size(); ++i) values[i].tensor = inputs[i];
    OpKernelContext::Params params;
    params.step_id = step_ ? step_->step_id() : 0;
    params.device = device_.get();
    params.op_kernel = kernel.get();
    params.inputs = &values;
    params.step_container = step_.get();
    OpKernelContext ctx(&params);
    kernel->Compute(&ctx);
    if (outputs != nullptr) {
      outputs->clear();
      for (int i = 0; i < ctx.num_outputs(); ++i) outputs->push_back(ctx.mutable_output(i)->tensor);
    }
    return ctx.status();
  }

  // A TensorArrayV3 of `size` float elements; returns its handle.
  Tensor NewArray(int size, NodeBuilder builder = NodeBuilder("TensorArrayV3")) {
    std::vector<Tensor> out;
    const Status status =
        Run(builder.Attr("dtype", DT_FLOAT).Build(), {Scalar<int32_t>(size)}, &out);
    EXPECT_TRUE(status.ok()) << status;
    return status.ok() ? out[0] : Tensor();
  }
  Status Write(const Tensor& handle, int index, const Tensor& value) {
    return Run(NodeBuilder("TensorArrayWriteV3").Attr("T", value.dtype()).Build(),
               {handle, Scalar<int32_t>(index), value, Scalar<float>(0)});
  }
  Status Read(const Tensor& handle, int index, Tensor* value, DataType dtype = DT_FLOAT) {
    std::vector<Tensor> out;
    TW_RETURN_IF_ERROR(Run(NodeBuilder("TensorArrayReadV3").Attr("dtype", dtype).Build(),
                           {handle, Scalar<int32_t>(index), Scalar<float>(0)}, &out));
    *value = out[0];
    return Status::OK();
  }
  Status Gather(const Tensor& handle, const std::vector<int32_t>& indices, Tensor* value,
                const PartialTensorShape& element_shape = PartialTensorShape()) {
    std::vector<Tensor> out;
    TW_RETURN_IF_ERROR(Run(NodeBuilder("TensorArrayGatherV3")
                               .Attr("dtype", DT_FLOAT)
                               .Attr("element_shape", element_shape)
                               .Build(),
                           {handle, Vector<int32_t>(indices), Scalar<float>(0)}, &out));
    *value = out[0];
    return Status::OK();
  }
  Status Concat(const Tensor& handle, Tensor* value, Tensor* lengths,
                const PartialTensorShape& except0 = PartialTensorShape()) {
    std::vector<Tensor> out;
    TW_RETURN_IF_ERROR(Run(NodeBuilder("TensorArrayConcatV3")
                               .Attr("dtype", DT_FLOAT)
                               .Attr("element_shape_except0", except0)
                               .Build(),
                           {handle, Scalar<float>(0)}, &out));
    *value = out[0];
    *lengths = out[1];
    return Status::OK();
  }
  Status Size(const Tensor& handle, int* size) {
    std::vector<Tensor> out;
    TW_RETURN_IF_ERROR(
        Run(NodeBuilder("TensorArraySizeV3").Build(), {handle, Scalar<float>(0)}, &out));
    *size = out[0].scalar<int32_t>();
    return Status::OK();
  }
  Tensor Grad(const Tensor& handle, const std::string& source = "gradients") {
    std::vector<Tensor> out;
    const Status status = Run(NodeBuilder("TensorArrayGradV3").Attr("source", source).Build(),
                              {handle, Scalar<float>(0)}, &out);
    EXPECT_TRUE(status.ok()) << status;
    return status.ok() ? out[0] : Tensor();
  }

  ScopedStepContainer* step() { return step_.get(); }
  void EndStep() { step_.reset(); }
  void NewStep(int64_t id) { step_ = std::make_unique<ScopedStepContainer>(id); }

 private:
  std::unique_ptr<Device> device_;
  std::unique_ptr<ScopedStepContainer> step_;
};

Tensor Floats(const std::vector<float>& values) { return Vector<float>(values); }

void ExpectInvalid(const Status& status, const std::string& fragment) {
  EXPECT_EQ(status.code(), Code::INVALID_ARGUMENT) << status;
  EXPECT_NE(status.message().find(fragment), std::string::npos)
      << "'" << status.message() << "' lacks '" << fragment << "'";
}

TEST(TensorArrayKernelsTest, WriteReadAndTheHandle) {
  StepHarness h(9);
  Tensor handle = h.NewArray(2, NodeBuilder("TensorArrayV3", "ta"));
  ASSERT_EQ(handle.dtype(), DT_RESOURCE);
  const ResourceHandle& named = handle.data<ResourceHandle>()[0];
  EXPECT_EQ(named.container(), "__per_step_9");
  EXPECT_EQ(named.name().rfind("ta_", 0), 0u) << named.name();
  TW_ASSERT_OK(h.Write(handle, 1, Floats({3, 4})));
  Tensor value;
  TW_ASSERT_OK(h.Read(handle, 1, &value));
  EXPECT_EQ(Values<float>(value), std::vector<float>({3, 4}));
  int size = 0;
  TW_ASSERT_OK(h.Size(handle, &size));
  EXPECT_EQ(size, 2);
  EXPECT_EQ(h.step()->resources()->NumResources(), 1);
}

TEST(TensorArrayKernelsTest, WriteErrors) {
  StepHarness h;
  Tensor handle = h.NewArray(2);
  TW_ASSERT_OK(h.Write(handle, 0, Floats({1})));
  ExpectInvalid(h.Write(handle, 0, Floats({2})), "because it has already been written to.");
  ExpectInvalid(h.Write(handle, 2, Floats({2})),
                "Tried to write to index 2 but array is not resizeable and size is: 2");
  ExpectInvalid(h.Write(handle, -1, Floats({2})), "Tried to write to index -1");
  ExpectInvalid(h.Write(handle, 1, Vector<int32_t>({2})),
                "TensorArray dtype is float but Op is trying to write dtype int32.");
  Tensor value;
  TW_ASSERT_OK(h.Read(handle, 0, &value));
  // Index 0 was read (and cleared): writing it again is refused.
  ExpectInvalid(h.Write(handle, 0, Floats({5})), "because it has already been read.");
  // A non-scalar index.
  ExpectInvalid(h.Run(NodeBuilder("TensorArrayWriteV3").Attr("T", DT_FLOAT).Build(),
                      {handle, Vector<int32_t>({0, 1}), Floats({1}), Scalar<float>(0)}),
                "must be a scalar");
}

TEST(TensorArrayKernelsTest, ReadErrorsAndClearAfterRead) {
  StepHarness h;
  Tensor handle = h.NewArray(3);
  TW_ASSERT_OK(h.Write(handle, 0, Floats({1, 2})));
  Tensor value;
  ExpectInvalid(h.Read(handle, 3, &value), "Tried to read from index 3 but array size is: 3");
  ExpectInvalid(h.Read(handle, -1, &value), "Tried to read from index -1");
  ExpectInvalid(h.Read(handle, 0, &value, DT_INT32),
                "TensorArray dtype is float but Op requested dtype int32.");
  ExpectInvalid(h.Read(handle, 1, &value),
                "Could not read from TensorArray index 1.  Furthermore, the element shape is not "
                "fully defined");
  TW_ASSERT_OK(h.Read(handle, 0, &value));
  ExpectInvalid(h.Read(handle, 0, &value),
                "Could not read index 0 twice because it was cleared after a previous read "
                "(perhaps try setting clear_after_read = false?).");

  Tensor keep =
      h.NewArray(1, std::move(NodeBuilder("TensorArrayV3").Attr("clear_after_read", false)));
  TW_ASSERT_OK(h.Write(keep, 0, Floats({7})));
  TW_ASSERT_OK(h.Read(keep, 0, &value));
  TW_ASSERT_OK(h.Read(keep, 0, &value));
  EXPECT_EQ(Values<float>(value), std::vector<float>({7}));
}

TEST(TensorArrayKernelsTest, UnwrittenIndexReadsZerosOnlyWithAKnownElementShape) {
  StepHarness h;
  PartialTensorShape two;
  TW_ASSERT_OK(PartialTensorShape::Build({2}, &two));
  Tensor handle = h.NewArray(3, std::move(NodeBuilder("TensorArrayV3").Attr("element_shape", two)));
  Tensor value;
  TW_ASSERT_OK(h.Read(handle, 1, &value));
  EXPECT_EQ(value.shape(), TensorShape({2}));
  EXPECT_EQ(Values<float>(value), std::vector<float>({0, 0}));
  ExpectInvalid(h.Write(handle, 2, Floats({1, 2, 3})),
                "which is incompatible with the TensorArray's inferred element shape: [2]");
}

TEST(TensorArrayKernelsTest, IdenticalElementShapesFixesTheFirstWrittenShape) {
  StepHarness h;
  Tensor handle =
      h.NewArray(3, std::move(NodeBuilder("TensorArrayV3").Attr("identical_element_shapes", true)));
  TW_ASSERT_OK(h.Write(handle, 0, Floats({1, 2})));
  ExpectInvalid(h.Write(handle, 1, Floats({1, 2, 3})), "incompatible");
  Tensor value;
  TW_ASSERT_OK(h.Read(handle, 2, &value));  // the inferred shape gives zeros
  EXPECT_EQ(value.shape(), TensorShape({2}));
}

TEST(TensorArrayKernelsTest, DynamicSizeGrows) {
  StepHarness h;
  Tensor handle = h.NewArray(0, std::move(NodeBuilder("TensorArrayV3").Attr("dynamic_size", true)));
  TW_ASSERT_OK(h.Write(handle, 4, Floats({1, 2})));
  int size = 0;
  TW_ASSERT_OK(h.Size(handle, &size));
  EXPECT_EQ(size, 5);
  PartialTensorShape two;
  TW_ASSERT_OK(PartialTensorShape::Build({2}, &two));
  Tensor stacked;
  TW_ASSERT_OK(h.Gather(handle, {0, 4}, &stacked, two));
  EXPECT_EQ(stacked.shape(), TensorShape({2, 2}));
  EXPECT_EQ(Values<float>(stacked), std::vector<float>({0, 0, 1, 2}));
  // A huge declared index costs nothing until it is materialized.
  TW_ASSERT_OK(h.Write(handle, 2000000000, Floats({5, 6})));
  TW_ASSERT_OK(h.Size(handle, &size));
  EXPECT_EQ(size, 2000000001);
}

TEST(TensorArrayKernelsTest, GatherErrors) {
  StepHarness h;
  Tensor handle = h.NewArray(3);
  TW_ASSERT_OK(h.Write(handle, 0, Floats({1, 2})));
  TW_ASSERT_OK(h.Write(handle, 1, Floats({1, 2, 3})));
  Tensor value;
  ExpectInvalid(h.Gather(handle, {0, 1}, &value),
                "TensorArray has inconsistent shapes.  Index 0 has shape: [2] but index 1 has "
                "shape: [3]");
  ExpectInvalid(h.Gather(handle, {0, 5}, &value), "Tried to read from index 5");
  PartialTensorShape three;
  TW_ASSERT_OK(PartialTensorShape::Build({3}, &three));
  PartialTensorShape two;
  TW_ASSERT_OK(PartialTensorShape::Build({2}, &two));
  TW_ASSERT_OK(h.Gather(handle, {0}, &value, two));
  ExpectInvalid(h.Gather(handle, {1}, &value, three),
                "Inconsistent shapes: saw [3] but expected [2]");
  ExpectInvalid(h.Run(NodeBuilder("TensorArrayGatherV3").Attr("dtype", DT_FLOAT).Build(),
                      {handle, Scalar<int32_t>(0), Scalar<float>(0)}),
                "Expected indices to be a vector");

  Tensor empty = h.NewArray(0);
  ExpectInvalid(h.Gather(empty, {}, &value), "TensorArray has size zero, but element shape");
  TW_ASSERT_OK(h.Gather(empty, {}, &value, two));
  EXPECT_EQ(value.shape(), TensorShape({0, 2}));
}

TEST(TensorArrayKernelsTest, ScatterAndItsErrors) {
  StepHarness h;
  Tensor handle = h.NewArray(3);
  Tensor rows = MakeTensor<float>(TensorShape({2, 2}), {1, 2, 3, 4});
  ExpectInvalid(h.Run(NodeBuilder("TensorArrayScatterV3").Attr("T", DT_FLOAT).Build(),
                      {handle, Vector<int32_t>({0, 1, 2}), rows, Scalar<float>(0)}),
                "Expected len(indices) == values.shape[0], but saw: 3 vs. 2");
  ExpectInvalid(h.Run(NodeBuilder("TensorArrayScatterV3").Attr("T", DT_FLOAT).Build(),
                      {handle, Vector<int32_t>({0}), Scalar<float>(1), Scalar<float>(0)}),
                "Expected value to be at least a vector");
  TW_ASSERT_OK(h.Run(NodeBuilder("TensorArrayScatterV3").Attr("T", DT_FLOAT).Build(),
                     {handle, Vector<int32_t>({2, 0}), rows, Scalar<float>(0)}));
  Tensor value;
  TW_ASSERT_OK(h.Read(handle, 2, &value));
  EXPECT_EQ(Values<float>(value), std::vector<float>({1, 2}));
  TW_ASSERT_OK(h.Read(handle, 0, &value));
  EXPECT_EQ(Values<float>(value), std::vector<float>({3, 4}));
  ExpectInvalid(h.Run(NodeBuilder("TensorArrayScatterV3").Attr("T", DT_FLOAT).Build(),
                      {handle, Vector<int32_t>({7}), MakeTensor<float>(TensorShape({1, 2}), {1, 2}),
                       Scalar<float>(0)}),
                "Tried to write to index 7");
}

TEST(TensorArrayKernelsTest, ConcatSplitAndTheirErrors) {
  StepHarness h;
  Tensor handle = h.NewArray(3);
  Tensor value = Floats({1, 2, 3, 4, 5, 6});
  ExpectInvalid(h.Run(NodeBuilder("TensorArraySplitV3").Attr("T", DT_FLOAT).Build(),
                      {handle, value, Vector<int64_t>({1, 2}), Scalar<float>(0)}),
                "Expected sum of lengths to be equal to values.shape[0], but sum of lengths is: 3");
  ExpectInvalid(h.Run(NodeBuilder("TensorArraySplitV3").Attr("T", DT_FLOAT).Build(),
                      {handle, value, Vector<int64_t>({4, 2}), Scalar<float>(0)}),
                "TensorArray's size is not equal to the size of lengths (3 vs. 2)");
  ExpectInvalid(h.Run(NodeBuilder("TensorArraySplitV3").Attr("T", DT_FLOAT).Build(),
                      {handle, value, Vector<int64_t>({-1, 4, 3}), Scalar<float>(0)}),
                "non-negative");
  ExpectInvalid(h.Run(NodeBuilder("TensorArraySplitV3").Attr("T", DT_FLOAT).Build(),
                      {handle, Scalar<float>(1), Vector<int64_t>({1}), Scalar<float>(0)}),
                "Expected value to be at least a vector");
  TW_ASSERT_OK(h.Run(NodeBuilder("TensorArraySplitV3").Attr("T", DT_FLOAT).Build(),
                     {handle, value, Vector<int64_t>({1, 0, 5}), Scalar<float>(0)}));
  Tensor joined, lengths;
  TW_ASSERT_OK(h.Concat(handle, &joined, &lengths));
  EXPECT_EQ(Values<float>(joined), std::vector<float>({1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(Values<int64_t>(lengths), std::vector<int64_t>({1, 0, 5}));

  Tensor scalars = h.NewArray(2);
  TW_ASSERT_OK(h.Write(scalars, 0, Scalar<float>(1)));
  ExpectInvalid(h.Concat(scalars, &joined, &lengths),
                "Concat saw a scalar shape at index 0 but requires at least vectors.");
  Tensor ragged = h.NewArray(2);
  TW_ASSERT_OK(h.Write(ragged, 0, MakeTensor<float>(TensorShape({1, 2}), {1, 2})));
  TW_ASSERT_OK(h.Write(ragged, 1, MakeTensor<float>(TensorShape({1, 3}), {1, 2, 3})));
  ExpectInvalid(h.Concat(ragged, &joined, &lengths),
                "TensorArray has inconsistent shapes.  Index 0 has (excepting dimension 0) shape: "
                "[2] but index 1 has (excepting dimension 0) shape: [3]");
  Tensor empty = h.NewArray(0);
  ExpectInvalid(h.Concat(empty, &joined, &lengths), "TensorArray has size zero");
  PartialTensorShape two;
  TW_ASSERT_OK(PartialTensorShape::Build({2}, &two));
  TW_ASSERT_OK(h.Concat(empty, &joined, &lengths, two));
  EXPECT_EQ(joined.shape(), TensorShape({0, 2}));
}

TEST(TensorArrayKernelsTest, ConcatFillsUnwrittenElementsWithZerosOfTheElementShape) {
  StepHarness h;
  PartialTensorShape two;
  TW_ASSERT_OK(PartialTensorShape::Build({2}, &two));
  Tensor handle = h.NewArray(3, std::move(NodeBuilder("TensorArrayV3").Attr("element_shape", two)));
  TW_ASSERT_OK(h.Write(handle, 1, Floats({5, 6})));
  Tensor joined, lengths;
  TW_ASSERT_OK(h.Concat(handle, &joined, &lengths));
  EXPECT_EQ(Values<float>(joined), std::vector<float>({0, 0, 5, 6, 0, 0}));
  EXPECT_EQ(Values<int64_t>(lengths), std::vector<int64_t>({2, 2, 2}));
}

TEST(TensorArrayKernelsTest, CloseAndBadHandles) {
  StepHarness h;
  Tensor handle = h.NewArray(1);
  TW_ASSERT_OK(h.Run(NodeBuilder("TensorArrayCloseV3").Build(), {handle}));
  ExpectInvalid(h.Write(handle, 0, Floats({1})), "has already been closed.");
  int size = 0;
  ExpectInvalid(h.Size(handle, &size), "has already been closed.");
  // Not a handle, and a handle of a stack.
  ExpectInvalid(h.Size(Scalar<float>(0), &size), "must be a single resource handle");
  std::vector<Tensor> out;
  TW_ASSERT_OK(h.Run(NodeBuilder("StackV2").Attr("elem_type", DT_FLOAT).Build(),
                     {Scalar<int32_t>(-1)}, &out));
  ExpectInvalid(h.Size(out[0], &size), "as a TensorArray");
  // Negative size; a dtype no tensor can hold.
  ExpectInvalid(
      h.Run(NodeBuilder("TensorArrayV3").Attr("dtype", DT_FLOAT).Build(), {Scalar<int32_t>(-1)}),
      "Size should be >= 0.");
  EXPECT_EQ(
      h.Run(NodeBuilder("TensorArrayV3").Attr("dtype", DT_VARIANT).Build(), {Scalar<int32_t>(1)})
          .code(),
      Code::INVALID_ARGUMENT);
}

TEST(TensorArrayKernelsTest, HandlesDoNotOutliveTheirStep) {
  StepHarness h(1);
  Tensor handle = h.NewArray(1);
  h.NewStep(2);
  int size = 0;
  ExpectInvalid(h.Size(handle, &size), "which is not this step's");
  h.EndStep();
  EXPECT_EQ(
      h.Run(NodeBuilder("TensorArrayV3").Attr("dtype", DT_FLOAT).Build(), {Scalar<int32_t>(1)})
          .code(),
      Code::FAILED_PRECONDITION);
}

TEST(TensorArrayKernelsTest, GradientArraysAddUpAndReadZerosWhereTheForwardWrote) {
  StepHarness h;
  Tensor handle = h.NewArray(3);
  TW_ASSERT_OK(h.Write(handle, 0, Floats({1, 2})));
  TW_ASSERT_OK(h.Write(handle, 1, Floats({3, 4})));
  Tensor grad = h.Grad(handle);
  Tensor again = h.Grad(handle);  // the same gradient array
  EXPECT_EQ(grad.data<ResourceHandle>()[0].name(), again.data<ResourceHandle>()[0].name());
  EXPECT_NE(grad.data<ResourceHandle>()[0].name().find("@gradients"), std::string::npos);
  TW_ASSERT_OK(h.Write(grad, 0, Floats({1, 1})));
  TW_ASSERT_OK(h.Write(again, 0, Floats({2, 3})));
  ExpectInvalid(h.Write(grad, 0, Floats({1, 2, 3})),
                "Could not aggregate to TensorArray index 0 because the existing shape is [2] but "
                "the new input shape is [3].");
  Tensor value;
  TW_ASSERT_OK(h.Read(grad, 0, &value));
  EXPECT_EQ(Values<float>(value), std::vector<float>({3, 4}));
  TW_ASSERT_OK(h.Read(grad, 1, &value));  // never written: zeros of the forward shape
  EXPECT_EQ(Values<float>(value), std::vector<float>({0, 0}));
  ExpectInvalid(h.Read(grad, 2, &value), "the element shape is not fully defined");
  // A separate gradient computation has its own array.
  Tensor other = h.Grad(handle, "gradients_1");
  EXPECT_NE(other.data<ResourceHandle>()[0].name(), grad.data<ResourceHandle>()[0].name());
  // Once gradients are taken the forward array no longer grows.
  Tensor dynamic =
      h.NewArray(1, std::move(NodeBuilder("TensorArrayV3").Attr("dynamic_size", true)));
  h.Grad(dynamic);
  ExpectInvalid(h.Write(dynamic, 3, Floats({1})), "not resizeable");
}

TEST(TensorArrayKernelsTest, GradWithShapePrependsToEveryElementShape) {
  StepHarness h;
  Tensor handle = h.NewArray(1);
  TW_ASSERT_OK(h.Write(handle, 0, Floats({1, 2})));
  std::vector<Tensor> out;
  TW_ASSERT_OK(h.Run(NodeBuilder("TensorArrayGradWithShape").Attr("source", "g").Build(),
                     {handle, Scalar<float>(0), Vector<int32_t>({3})}, &out));
  Tensor value;
  TW_ASSERT_OK(h.Read(out[0], 0, &value));
  EXPECT_EQ(value.shape(), TensorShape({3, 2}));
  ExpectInvalid(h.Run(NodeBuilder("TensorArrayGradWithShape").Attr("source", "h").Build(),
                      {handle, Scalar<float>(0), Vector<int32_t>({-3})}),
                "");
}

// --- Stacks ---------------------------------------------------------------------

TEST(StackKernelsTest, PushPopCloseAndErrors) {
  StepHarness h;
  std::vector<Tensor> out;
  TW_ASSERT_OK(h.Run(NodeBuilder("StackV2", "s").Attr("elem_type", DT_FLOAT).Build(),
                     {Scalar<int32_t>(2)}, &out));
  Tensor stack = out[0];
  auto push = [&](const Tensor& value) {
    return h.Run(NodeBuilder("StackPushV2").Attr("T", value.dtype()).Build(), {stack, value}, &out);
  };
  auto pop = [&](Tensor* value) {
    TW_RETURN_IF_ERROR(
        h.Run(NodeBuilder("StackPopV2").Attr("elem_type", DT_FLOAT).Build(), {stack}, &out));
    *value = out[0];
    return Status::OK();
  };
  Tensor value;
  ExpectInvalid(pop(&value), "] is empty.");
  TW_ASSERT_OK(push(Scalar<float>(1)));
  EXPECT_EQ(out[0].scalar<float>(), 1);  // the pushed value comes out
  TW_ASSERT_OK(push(Scalar<float>(2)));
  ExpectInvalid(push(Scalar<float>(3)), "overflowed its max_size (2)");
  ExpectInvalid(push(Scalar<int32_t>(3)), "holds float elements, not int32");
  TW_ASSERT_OK(pop(&value));
  EXPECT_EQ(value.scalar<float>(), 2);
  TW_ASSERT_OK(pop(&value));
  EXPECT_EQ(value.scalar<float>(), 1);
  TW_ASSERT_OK(h.Run(NodeBuilder("StackCloseV2").Build(), {stack}));
  ExpectInvalid(push(Scalar<float>(1)), "has already been closed.");
  ExpectInvalid(
      h.Run(NodeBuilder("StackV2").Attr("elem_type", DT_FLOAT).Build(), {Vector<int32_t>({1, 2})}),
      "max_size must be a scalar");
}

TEST(StackKernelsTest, NegativeMaxSizeIsUnbounded) {
  StepHarness h;
  std::vector<Tensor> out;
  TW_ASSERT_OK(h.Run(NodeBuilder("StackV2").Attr("elem_type", DT_INT32).Build(),
                     {Scalar<int32_t>(-1)}, &out));
  Tensor stack = out[0];
  for (int i = 0; i < 100; ++i) {
    TW_ASSERT_OK(
        h.Run(NodeBuilder("StackPushV2").Attr("T", DT_INT32).Build(), {stack, Scalar<int32_t>(i)}));
  }
}

// --- In a session: per-step containers --------------------------------------------

using session_test::AddNode;
using session_test::SetAttr;

// size -> TensorArrayV3 -> write(0, value) -> read(0), and size(); a fed
// "handle" (resource) can be read from too.
GraphDef ArrayGraph() {
  GraphDef graph;
  NodeDef* size = AddNode(&graph, "size", "Const");
  SetAttr(size, "dtype", DT_INT32);
  SetAttr(size, "value", Scalar<int32_t>(1));
  NodeDef* value = AddNode(&graph, "value", "Const");
  SetAttr(value, "dtype", DT_FLOAT);
  SetAttr(value, "value", Floats({4, 5}));
  NodeDef* index = AddNode(&graph, "index", "Const");
  SetAttr(index, "dtype", DT_INT32);
  SetAttr(index, "value", Scalar<int32_t>(0));
  NodeDef* ta = AddNode(&graph, "ta", "TensorArrayV3", {"size"});
  SetAttr(ta, "dtype", DT_FLOAT);
  NodeDef* write = AddNode(&graph, "write", "TensorArrayWriteV3", {"ta", "index", "value", "ta:1"});
  SetAttr(write, "T", DT_FLOAT);
  NodeDef* read = AddNode(&graph, "read", "TensorArrayReadV3", {"ta", "index", "write"});
  SetAttr(read, "dtype", DT_FLOAT);
  NodeDef* fed = AddNode(&graph, "fed", "Placeholder");
  SetAttr(fed, "dtype", DT_RESOURCE);
  NodeDef* zero = AddNode(&graph, "zero", "Const");
  SetAttr(zero, "dtype", DT_FLOAT);
  SetAttr(zero, "value", Scalar<float>(0));
  AddNode(&graph, "fed_size", "TensorArraySizeV3", {"fed", "zero"});
  return graph;
}

std::unique_ptr<Session> NewSessionOrDie() {
  std::unique_ptr<Session> session;
  const Status status = NewSession(SessionOptions(), &session);
  EXPECT_TRUE(status.ok()) << status;
  return session;
}

TEST(TensorArraySessionTest, EveryRunStartsWithAFreshArray) {
  std::unique_ptr<Session> session = NewSessionOrDie();
  TW_ASSERT_OK(session->Create(ArrayGraph()));
  std::vector<Tensor> outputs;
  const int64_t alive_before = TensorArray::NumAlive();
  for (int run = 0; run < 3; ++run) {
    // Writing index 0 twice in one array is an error: a second run can
    // only write it because its array is a new one.
    TW_ASSERT_OK(session->Run({}, {"read:0", "ta:0"}, {}, &outputs));
    EXPECT_EQ(Values<float>(outputs[0]), std::vector<float>({4, 5}));
    EXPECT_EQ(TensorArray::NumAlive(), alive_before) << "run " << run << " left its array";
  }
  // The handle of an earlier run names a step container that is gone.
  const Tensor old_handle = outputs[1];
  ASSERT_EQ(old_handle.dtype(), DT_RESOURCE);
  Status status = session->Run({{"fed", old_handle}}, {"fed_size:0"}, {}, &outputs);
  EXPECT_EQ(status.code(), Code::INVALID_ARGUMENT) << status;
  EXPECT_NE(status.message().find("which is not this step's"), std::string::npos) << status;
  EXPECT_NE(status.message().find("fed_size"), std::string::npos) << status;
}

TEST(TensorArraySessionTest, AFailedStepStillEndsItsArrays) {
  std::unique_ptr<Session> session = NewSessionOrDie();
  GraphDef graph = ArrayGraph();
  // A second write to index 0 fails the step after the array was made.
  NodeDef* again =
      AddNode(&graph, "again", "TensorArrayWriteV3", {"ta", "index", "value", "write"});
  SetAttr(again, "T", DT_FLOAT);
  TW_ASSERT_OK(session->Create(graph));
  std::vector<Tensor> outputs;
  const int64_t alive_before = TensorArray::NumAlive();
  Status status = session->Run({}, {"again:0"}, {}, &outputs);
  EXPECT_EQ(status.code(), Code::INVALID_ARGUMENT) << status;
  EXPECT_NE(status.message().find("already been written to"), std::string::npos) << status;
  EXPECT_NE(status.message().find("again"), std::string::npos) << status;
  EXPECT_EQ(TensorArray::NumAlive(), alive_before);
  TW_ASSERT_OK(session->Run({}, {"read:0"}, {}, &outputs));
}

TEST(TensorArraySessionTest, ATimedOutStepStillEndsItsArrays) {
  std::unique_ptr<Session> session = NewSessionOrDie();
  GraphDef graph = ArrayGraph();
  session_test::AddWaitForCancel(&graph, "wait");
  // The wait starts after the array holds a value.
  graph.mutable_node(graph.node_size() - 1)->add_input("^write");
  TW_ASSERT_OK(session->Create(graph));
  const int64_t alive_before = TensorArray::NumAlive();
  RunOptions options;
  options.set_timeout_in_ms(50);
  std::vector<Tensor> outputs;
  Status status = session->Run(options, {}, {"wait:0"}, {}, &outputs);
  EXPECT_EQ(status.code(), Code::DEADLINE_EXCEEDED) << status;
  EXPECT_EQ(TensorArray::NumAlive(), alive_before);
}

}  // namespace
}  // namespace tensorweave
