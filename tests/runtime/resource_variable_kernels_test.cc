// Resource variable kernels (runtime/kernels/resource_variable_ops.cc) and
// the ResourceApply* twins of the optimizer kernels: each twin gives the
// values its reference op gives on the same inputs (one code path), and bad
// handles are clean errors.
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "runtime/kernels/resource_variable.h"
#include "tests/runtime/kernel_test_util.h"

namespace tensorweave {
namespace test {
namespace {

class ResourceVariableKernelTest : public ::testing::Test {
 protected:
  // A handle to the variable `name` of the default container of device_.
  Tensor Handle(const std::string& name, const std::string& type_name = Var::TypeName()) {
    ResourceHandle handle;
    handle.set_device(device_->name());
    handle.set_container("localhost");
    handle.set_name(name);
    handle.set_hash_code(ResourceTypeHash(type_name));
    handle.set_maybe_type_name(type_name);
    Tensor tensor(DT_RESOURCE, TensorShape());
    tensor.data<ResourceHandle>()[0] = handle;
    return tensor;
  }

  // Makes the resource variable `name` hold a copy of `value`.
  void MakeVar(const std::string& name, const Tensor& value) {
    auto var = std::make_shared<Var>(name);
    var->variable.tensor = value.DeepCopy();
    TW_ASSERT_OK(device_->resource_manager()->Create<Var>("localhost", name, var));
  }

  std::shared_ptr<Var> Lookup(const std::string& name) {
    std::shared_ptr<Var> var;
    TW_EXPECT_OK(device_->resource_manager()->Lookup<Var>("localhost", name, &var));
    return var;
  }

  Status Run(NodeDef node, std::vector<Tensor> inputs, KernelRunner** used = nullptr) {
    runner_ = std::make_unique<KernelRunner>(std::move(node), device_.get());
    if (used != nullptr) *used = runner_.get();
    return runner_->Compute(std::move(inputs));
  }

  std::unique_ptr<Device> device_ = NewTestDevice();
  std::unique_ptr<KernelRunner> runner_;
};

// One optimizer op: its name, how many variables it takes (var and slots),
// its hyperparameter and gradient inputs after them, and extra attrs.
struct ApplyCase {
  std::string op;
  int num_variables;
  std::vector<Tensor> values;
  std::function<void(NodeBuilder*)> attrs;
};

std::vector<ApplyCase> ApplyCases() {
  const Tensor grad = Vector<float>({0.5f, -1.0f, 2.0f});
  return {
      {"ApplyGradientDescent", 1, {Scalar<float>(0.1f), grad}, nullptr},
      {"ApplyMomentum",
       2,
       {Scalar<float>(0.1f), grad, Scalar<float>(0.9f)},
       [](NodeBuilder* b) { b->Attr("use_nesterov", true); }},
      {"ApplyAdam",
       3,
       {Scalar<float>(0.81f), Scalar<float>(0.998f), Scalar<float>(0.01f), Scalar<float>(0.9f),
        Scalar<float>(0.999f), Scalar<float>(1e-7f), grad},
       nullptr},
      {"ApplyRMSProp",
       3,
       {Scalar<float>(0.01f), Scalar<float>(0.9f), Scalar<float>(0.5f), Scalar<float>(1e-6f), grad},
       nullptr},
      {"ApplyCenteredRMSProp",
       4,
       {Scalar<float>(0.01f), Scalar<float>(0.9f), Scalar<float>(0.5f), Scalar<float>(1e-6f), grad},
       nullptr},
      {"ApplyAdagrad",
       2,
       {Scalar<float>(0.1f), grad},
       [](NodeBuilder* b) { b->Attr("update_slots", true); }},
  };
}

// Variable (or slot) i of an ApplyCase: positive, and growing fast enough
// with i that each second-moment slot exceeds the square of the mean slot
// before it (centered RMSProp takes the square root of their difference).
Tensor InitialValue(int i) {
  const float scale = static_cast<float>(1 << (2 * i));
  return Vector<float>({0.5f * scale, 0.25f * scale, 0.75f * scale});
}

TEST_F(ResourceVariableKernelTest, EachResourceApplyTwinGivesItsReferenceOpsValues) {
  for (const ApplyCase& c : ApplyCases()) {
    SCOPED_TRACE(c.op);
    // Reference variables and resource variables with the same values.
    std::vector<Variable*> refs;
    std::vector<std::string> names;
    for (int i = 0; i < c.num_variables; ++i) {
      const Tensor value = InitialValue(i);
      names.push_back(c.op + "_" + std::to_string(i));
      Variable* ref = device_->variables()->LookupOrCreate(names.back());
      ref->tensor = value.DeepCopy();
      refs.push_back(ref);
      MakeVar(names.back(), value);
    }
    for (int step = 0; step < 3; ++step) {
      NodeBuilder ref_builder(c.op, "ref");
      ref_builder.Attr("T", DT_FLOAT);
      NodeBuilder resource_builder("Resource" + c.op, "resource");
      resource_builder.Attr("T", DT_FLOAT);
      if (c.attrs) {
        c.attrs(&ref_builder);
        c.attrs(&resource_builder);
      }
      KernelRunner ref_runner(ref_builder.Build(), device_.get());
      std::vector<TensorValue> ref_inputs;
      for (Variable* ref : refs) ref_inputs.push_back(TensorValue{Tensor(), ref});
      for (const Tensor& value : c.values) ref_inputs.push_back(TensorValue{value, nullptr});
      TW_ASSERT_OK(ref_runner.ComputeValues(std::move(ref_inputs)));

      std::vector<Tensor> resource_inputs;
      for (const std::string& name : names) resource_inputs.push_back(Handle(name));
      for (const Tensor& value : c.values) resource_inputs.push_back(value);
      KernelRunner* used = nullptr;
      TW_ASSERT_OK(Run(resource_builder.Build(), resource_inputs, &used));
      EXPECT_EQ(used->num_outputs(), 0);
    }
    for (int i = 0; i < c.num_variables; ++i) {
      const std::vector<float> want = Values<float>(refs[i]->tensor);
      EXPECT_EQ(Values<float>(Lookup(names[i])->variable.tensor), want) << "variable " << i;
      EXPECT_NE(want, Values<float>(InitialValue(i))) << "the update changed variable " << i;
    }
  }
}

TEST_F(ResourceVariableKernelTest, ResourceApplyErrorsAreClean) {
  const Tensor grad = Vector<float>({1.0f, 2.0f});
  const NodeDef descent =
      NodeBuilder("ResourceApplyGradientDescent", "apply").Attr("T", DT_FLOAT).Build();
  Status status = Run(descent, {Handle("missing"), Scalar<float>(0.1f), grad});
  EXPECT_EQ(status.code(), Code::FAILED_PRECONDITION) << status;
  EXPECT_NE(status.message().find("Could not find variable missing"), std::string::npos);

  MakeVar("w", Vector<float>({1.0f, 2.0f}));
  status = Run(descent, {Handle("w"), Scalar<float>(0.1f), Vector<float>({1.0f})});
  EXPECT_EQ(status.code(), Code::INVALID_ARGUMENT) << status;

  const NodeDef momentum =
      NodeBuilder("ResourceApplyMomentum", "apply").Attr("T", DT_FLOAT).Build();
  status =
      Run(momentum, {Handle("w"), Handle("w"), Scalar<float>(0.1f), grad, Scalar<float>(0.9f)});
  EXPECT_EQ(status.code(), Code::INVALID_ARGUMENT) << status;
  EXPECT_NE(status.message().find("must be different variables"), std::string::npos) << status;

  // A Stack's handle, and a float where the handle goes.
  status = Run(descent, {Handle("w", "Stack"), Scalar<float>(0.1f), grad});
  EXPECT_EQ(status.code(), Code::INVALID_ARGUMENT) << status;
  status = Run(descent, {Scalar<float>(1.0f), Scalar<float>(0.1f), grad});
  EXPECT_EQ(status.code(), Code::INVALID_ARGUMENT) << status;
  EXPECT_EQ(Values<float>(Lookup("w")->variable.tensor), std::vector<float>({1.0f, 2.0f}));
}

TEST_F(ResourceVariableKernelTest, SparseApplyUpdatesOnlyItsRowsAndKeepsAReadersValue) {
  const Tensor start = MakeTensor<float>(TensorShape({3, 2}), {1, 1, 2, 2, 3, 3});
  MakeVar("var", start);
  MakeVar("accum", MakeTensor<float>(TensorShape({3, 2}), {0, 0, 0, 0, 0, 0}));
  const Tensor read = Lookup("var")->variable.tensor;  // a reader holds the buffer
  const NodeDef momentum = NodeBuilder("ResourceSparseApplyMomentum", "apply")
                               .Attr("T", DT_FLOAT)
                               .Attr("Tindices", DT_INT64)
                               .Build();
  // Row 2 twice: accum 0 -> 1 -> 1 * 0.5 + 1 = 1.5; var 3 -> 2.9 -> 2.75.
  TW_ASSERT_OK(Run(momentum, {Handle("var"), Handle("accum"), Scalar<float>(0.1f),
                              MakeTensor<float>(TensorShape({2, 2}), {1, 1, 1, 1}),
                              Vector<int64_t>({2, 2}), Scalar<float>(0.5f)}));
  ExpectNear<float>(Lookup("var")->variable.tensor, TensorShape({3, 2}), {1, 1, 2, 2, 2.75f, 2.75f},
                    1e-6);
  EXPECT_EQ(Values<float>(read), Values<float>(start)) << "the reader's value is unchanged";

  const std::vector<std::pair<std::vector<Tensor>, std::string>> bad = {
      {{MakeTensor<float>(TensorShape({1, 2}), {1, 1}), Vector<int64_t>({3})}, "out of range"},
      {{MakeTensor<float>(TensorShape({1, 2}), {1, 1}), Vector<int64_t>({-1})}, "out of range"},
      {{MakeTensor<float>(TensorShape({2, 2}), {1, 1, 1, 1}), Vector<int64_t>({0})},
       "one row of var per index"},
      {{MakeTensor<float>(TensorShape({1, 3}), {1, 1, 1}), Vector<int64_t>({0})},
       "one row of var per index"},
      {{MakeTensor<float>(TensorShape({1, 2}), {1, 1}),
        MakeTensor<int64_t>(TensorShape({1, 1}), {0})},
       "one-dimensional"},
  };
  for (const auto& [inputs, words] : bad) {
    const Status status = Run(momentum, {Handle("var"), Handle("accum"), Scalar<float>(0.1f),
                                         inputs[0], inputs[1], Scalar<float>(0.5f)});
    EXPECT_EQ(status.code(), Code::INVALID_ARGUMENT) << status;
    EXPECT_NE(status.message().find(words), std::string::npos) << status;
  }
}

TEST_F(ResourceVariableKernelTest, VarHandleOpNamesTheVariableOnItsDevice) {
  KernelRunner* used = nullptr;
  TW_ASSERT_OK(Run(NodeBuilder("VarHandleOp", "v")
                       .Attr("dtype", DT_FLOAT)
                       .Attr("shape", PartialTensorShape::FromShape(TensorShape({2})))
                       .Attr("shared_name", "shared")
                       .Build(),
                   {}, &used));
  const ResourceHandle& handle = used->output(0).data<ResourceHandle>()[0];
  EXPECT_EQ(handle.device(), device_->name());
  EXPECT_EQ(handle.container(), "localhost");
  EXPECT_EQ(handle.name(), "shared");
  EXPECT_EQ(handle.hash_code(), ResourceTypeHash(Var::TypeName()));
}

TEST_F(ResourceVariableKernelTest, AssignCreatesReadSharesAndUpdatesCopyOnWrite) {
  const Tensor handle = Handle("v");
  TW_ASSERT_OK(Run(NodeBuilder("AssignVariableOp", "assign").Attr("dtype", DT_FLOAT).Build(),
                   {handle, Vector<float>({1.0f, 2.0f})}));
  KernelRunner* reader = nullptr;
  TW_ASSERT_OK(Run(NodeBuilder("ReadVariableOp", "read").Attr("dtype", DT_FLOAT).Build(), {handle},
                   &reader));
  const Tensor read = reader->output(0);
  EXPECT_TRUE(read.SharesBufferWith(Lookup("v")->variable.tensor)) << "a read copies nothing";
  TW_ASSERT_OK(Run(NodeBuilder("AssignAddVariableOp", "add").Attr("dtype", DT_FLOAT).Build(),
                   {handle, Vector<float>({1.0f, 1.0f})}));
  EXPECT_EQ(Values<float>(read), std::vector<float>({1.0f, 2.0f})) << "the read keeps its value";
  EXPECT_EQ(Values<float>(Lookup("v")->variable.tensor), std::vector<float>({2.0f, 3.0f}));
}

TEST_F(ResourceVariableKernelTest, GatherAndScatterCheckTheirIndices) {
  MakeVar("table", MakeTensor<float>(TensorShape({3, 2}), {0, 1, 2, 3, 4, 5}));
  const Tensor handle = Handle("table");
  const NodeDef gather = NodeBuilder("ResourceGather", "gather")
                             .Attr("dtype", DT_FLOAT)
                             .Attr("Tindices", DT_INT64)
                             .Build();
  KernelRunner* used = nullptr;
  TW_ASSERT_OK(Run(gather, {handle, Vector<int64_t>({2, 0})}, &used));
  EXPECT_EQ(Values<float>(used->output(0)), std::vector<float>({4, 5, 0, 1}));
  for (int64_t bad : {int64_t{3}, int64_t{-1}, int64_t{1} << 40}) {
    const Status status = Run(gather, {handle, Vector<int64_t>({bad})});
    EXPECT_EQ(status.code(), Code::INVALID_ARGUMENT) << bad;
  }
  const NodeDef scatter = NodeBuilder("ResourceScatterAdd", "scatter")
                              .Attr("dtype", DT_FLOAT)
                              .Attr("Tindices", DT_INT32)
                              .Build();
  Status status = Run(scatter, {handle, Vector<int32_t>({3}), MakeTensor<float>({1, 2}, {1, 1})});
  EXPECT_EQ(status.code(), Code::INVALID_ARGUMENT) << status;
  status = Run(scatter, {handle, Vector<int32_t>({0}), MakeTensor<float>({1, 3}, {1, 1, 1})});
  EXPECT_EQ(status.code(), Code::INVALID_ARGUMENT) << status;
  EXPECT_EQ(Values<float>(Lookup("table")->variable.tensor),
            std::vector<float>({0, 1, 2, 3, 4, 5}));
}

}  // namespace
}  // namespace test
}  // namespace tensorweave
