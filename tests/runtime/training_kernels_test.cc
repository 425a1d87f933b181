// Optimizer update kernels (ApplyGradientDescent, ApplyMomentum, ApplyAdam,
// ApplyRMSProp, ApplyCenteredRMSProp, ApplyAdagrad): each against a scalar
// reference written out element by element, over several steps, in float
// and double; in-place versus copy-on-write buffers; errors; shape
// functions.
#include <cmath>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "tests/runtime/kernel_test_util.h"

namespace tensorweave {
namespace test {
namespace {

class TrainingKernelTest : public ::testing::Test {
 protected:
  // A device variable named `name` holding `value` (its sole holder).
  Variable* MakeVariable(const std::string& name, Tensor value) {
    Variable* variable = device_->variables()->LookupOrCreate(name);
    variable->tensor = value.DeepCopy();
    return variable;
  }
  Variable* Uninitialized(const std::string& name) {
    return device_->variables()->LookupOrCreate(name);
  }

  // Runs `op` (attr T = dtype plus `attrs`) with `refs` as its leading
  // reference inputs and `values` after them; checks the output reference.
  Status Apply(const std::string& op, DataType dtype, const std::vector<Variable*>& refs,
               std::vector<Tensor> values,
               const std::function<void(NodeBuilder*)>& attrs = nullptr) {
    NodeBuilder builder(op, "apply");
    builder.Attr("T", dtype);
    if (attrs) attrs(&builder);
    KernelRunner runner(builder.Build(), device_.get());
    TW_RETURN_IF_ERROR(runner.construction_status());
    std::vector<TensorValue> inputs(refs.size() + values.size());
    for (size_t i = 0; i < refs.size(); ++i) inputs[i].ref = refs[i];
    for (size_t i = 0; i < values.size(); ++i)
      inputs[refs.size() + i].tensor = std::move(values[i]);
    const Status status = runner.ComputeValues(std::move(inputs));
    if (status.ok()) {
      EXPECT_TRUE(runner.output_value(0).is_ref());
      EXPECT_EQ(runner.output_value(0).ref, refs[0]) << "outputs the variable's reference";
    }
    return status;
  }

  std::unique_ptr<Device> device_ = NewTestDevice();
};

template <typename T>
Tensor Filled(const std::vector<double>& values) {
  std::vector<T> cast(values.begin(), values.end());
  return Vector<T>(cast);
}

template <typename T>
void ExpectClose(const Variable* variable, const std::vector<double>& want) {
  const double tolerance = std::is_same<T, float>::value ? 2e-5 : 1e-12;
  ExpectNear<T>(variable->tensor, TensorShape({static_cast<int64_t>(want.size())}),
                std::vector<T>(want.begin(), want.end()), tolerance);
}

std::vector<double> RandomValues(int64_t n, double low, double high, unsigned seed) {
  std::mt19937 generator(seed);
  std::uniform_real_distribution<double> distribution(low, high);
  std::vector<double> values(n);
  for (double& value : values) value = distribution(generator);
  return values;
}

// --- Values against the reference ---------------------------------------------

TEST_F(TrainingKernelTest, GradientDescentHandComputed) {
  Variable* var = MakeVariable("var", Vector<float>({1, 2, 3}));
  TW_ASSERT_OK(Apply("ApplyGradientDescent", DT_FLOAT, {var},
                     {Scalar<float>(0.5f), Vector<float>({2, -4, 0})}));
  ExpectValues<float>(var->tensor, {3}, {0, 4, 3});
}

template <typename T>
void CheckMomentum(TrainingKernelTest* test, Variable* var, Variable* accum, bool nesterov,
                   const std::function<Status(std::vector<Tensor>)>& apply) {
  std::vector<double> want_var = {1, -2, 3, 0.5}, want_accum = {0.1, 0.2, -0.3, 0};
  const double lr = 0.1, momentum = 0.9;
  for (int step = 0; step < 4; ++step) {
    const std::vector<double> grad = RandomValues(4, -1, 1, 10 + step);
    TW_ASSERT_OK(apply({Scalar<T>(lr), Filled<T>(grad), Scalar<T>(momentum)}));
    for (int i = 0; i < 4; ++i) {
      want_accum[i] = want_accum[i] * momentum + grad[i];
      want_var[i] -= nesterov ? lr * grad[i] + lr * momentum * want_accum[i] : lr * want_accum[i];
    }
    ExpectClose<T>(var, want_var);
    ExpectClose<T>(accum, want_accum);
  }
}

TEST_F(TrainingKernelTest, MomentumWithAndWithoutNesterov) {
  for (bool nesterov : {false, true}) {
    for (DataType dtype : {DT_FLOAT, DT_DOUBLE}) {
      SCOPED_TRACE(std::string(nesterov ? "nesterov " : "") + DataTypeString(dtype));
      const std::string suffix = std::to_string(nesterov) + DataTypeString(dtype);
      auto apply_with = [&](Variable* var, Variable* accum) {
        return [=](std::vector<Tensor> values) {
          return Apply("ApplyMomentum", dtype, {var, accum}, std::move(values),
                       [=](NodeBuilder* b) { b->Attr("use_nesterov", nesterov); });
        };
      };
      if (dtype == DT_FLOAT) {
        Variable* var = MakeVariable("var" + suffix, Filled<float>({1, -2, 3, 0.5}));
        Variable* accum = MakeVariable("accum" + suffix, Filled<float>({0.1, 0.2, -0.3, 0}));
        CheckMomentum<float>(this, var, accum, nesterov, apply_with(var, accum));
      } else {
        Variable* var = MakeVariable("var" + suffix, Filled<double>({1, -2, 3, 0.5}));
        Variable* accum = MakeVariable("accum" + suffix, Filled<double>({0.1, 0.2, -0.3, 0}));
        CheckMomentum<double>(this, var, accum, nesterov, apply_with(var, accum));
      }
    }
  }
}

// Adam over several steps on `n` elements (n past one chunk and past the
// parallel threshold exercises block and chunk edges).
template <typename T>
void CheckAdam(
    TrainingKernelTest* test, int64_t n, bool nesterov,
    const std::function<Variable*(const std::string&, Tensor)>& make,
    const std::function<Status(const std::vector<Variable*>&, std::vector<Tensor>, bool)>& apply) {
  std::vector<double> want_var = RandomValues(n, -1, 1, 1), want_m(n, 0.0), want_v(n, 0.0);
  Variable* var = make("var", Filled<T>(want_var));
  Variable* m = make("m", Filled<T>(want_m));
  Variable* v = make("v", Filled<T>(want_v));
  const double lr = 0.01, beta1 = 0.9, beta2 = 0.999, epsilon = 1e-8;
  double beta1_power = 1, beta2_power = 1;
  for (int step = 0; step < 3; ++step) {
    beta1_power *= beta1;
    beta2_power *= beta2;
    const std::vector<double> grad = RandomValues(n, -2, 2, 100 + step);
    TW_ASSERT_OK(apply({var, m, v},
                       {Scalar<T>(beta1_power), Scalar<T>(beta2_power), Scalar<T>(lr),
                        Scalar<T>(beta1), Scalar<T>(beta2), Scalar<T>(epsilon), Filled<T>(grad)},
                       nesterov));
    const double lr_t = lr * std::sqrt(1 - beta2_power) / (1 - beta1_power);
    for (int64_t i = 0; i < n; ++i) {
      want_m[i] = beta1 * want_m[i] + (1 - beta1) * grad[i];
      want_v[i] = beta2 * want_v[i] + (1 - beta2) * grad[i] * grad[i];
      const double m_used = nesterov ? beta1 * want_m[i] + (1 - beta1) * grad[i] : want_m[i];
      want_var[i] -= lr_t * m_used / (std::sqrt(want_v[i]) + epsilon);
    }
    ExpectClose<T>(var, want_var);
    ExpectClose<T>(m, want_m);
    ExpectClose<T>(v, want_v);
  }
}

TEST_F(TrainingKernelTest, AdamSmallAndLargeFloatAndDouble) {
  for (int64_t n : {int64_t{5}, int64_t{70001}}) {
    for (bool nesterov : {false, true}) {
      SCOPED_TRACE(std::to_string(n) + (nesterov ? " nesterov" : ""));
      const std::string suffix = std::to_string(n) + std::to_string(nesterov);
      auto make = [&](const std::string& name, Tensor value) {
        return MakeVariable(name + suffix + DataTypeString(value.dtype()), value);
      };
      for (DataType dtype : {DT_FLOAT, DT_DOUBLE}) {
        auto apply = [&, dtype](const std::vector<Variable*>& refs, std::vector<Tensor> values,
                                bool use_nesterov) {
          return Apply("ApplyAdam", dtype, refs, std::move(values),
                       [&](NodeBuilder* b) { b->Attr("use_nesterov", use_nesterov); });
        };
        if (dtype == DT_FLOAT) {
          CheckAdam<float>(this, n, nesterov, make, apply);
        } else {
          CheckAdam<double>(this, n, nesterov, make, apply);
        }
      }
    }
  }
}

template <typename T>
void CheckRMSProp(
    TrainingKernelTest* test, bool centered, int64_t n,
    const std::function<Variable*(const std::string&, Tensor)>& make,
    const std::function<Status(const std::vector<Variable*>&, std::vector<Tensor>)>& apply) {
  std::vector<double> want_var = RandomValues(n, -1, 1, 2), want_ms(n, 1.0), want_mom(n, 0.0),
                      want_mg(n, 0.0);
  Variable* var = make("var", Filled<T>(want_var));
  Variable* mg = centered ? make("mg", Filled<T>(want_mg)) : nullptr;
  Variable* ms = make("ms", Filled<T>(want_ms));
  Variable* mom = make("mom", Filled<T>(want_mom));
  const double lr = 0.01, rho = 0.9, momentum = 0.5, epsilon = 1e-6;
  for (int step = 0; step < 3; ++step) {
    const std::vector<double> grad = RandomValues(n, -2, 2, 200 + step);
    std::vector<Variable*> refs = {var, ms, mom};
    if (centered) refs = {var, mg, ms, mom};
    TW_ASSERT_OK(apply(refs, {Scalar<T>(lr), Scalar<T>(rho), Scalar<T>(momentum),
                              Scalar<T>(epsilon), Filled<T>(grad)}));
    for (int64_t i = 0; i < n; ++i) {
      want_ms[i] = rho * want_ms[i] + (1 - rho) * grad[i] * grad[i];
      want_mg[i] = rho * want_mg[i] + (1 - rho) * grad[i];
      const double denominator =
          centered ? want_ms[i] - want_mg[i] * want_mg[i] + epsilon : want_ms[i] + epsilon;
      want_mom[i] = momentum * want_mom[i] + lr * grad[i] / std::sqrt(denominator);
      want_var[i] -= want_mom[i];
    }
    ExpectClose<T>(var, want_var);
    ExpectClose<T>(ms, want_ms);
    ExpectClose<T>(mom, want_mom);
    if (centered) ExpectClose<T>(mg, want_mg);
  }
}

TEST_F(TrainingKernelTest, RMSPropPlainAndCentered) {
  for (bool centered : {false, true}) {
    for (int64_t n : {int64_t{7}, int64_t{40000}}) {
      SCOPED_TRACE(std::to_string(n) + (centered ? " centered" : ""));
      const std::string suffix = std::to_string(n) + std::to_string(centered);
      auto make = [&](const std::string& name, Tensor value) {
        return MakeVariable(name + suffix + DataTypeString(value.dtype()), value);
      };
      const char* op = centered ? "ApplyCenteredRMSProp" : "ApplyRMSProp";
      CheckRMSProp<float>(this, centered, n, make, [&](auto refs, auto values) {
        return Apply(op, DT_FLOAT, refs, std::move(values));
      });
      CheckRMSProp<double>(this, centered, n, make, [&](auto refs, auto values) {
        return Apply(op, DT_DOUBLE, refs, std::move(values));
      });
    }
  }
}

TEST_F(TrainingKernelTest, AdagradWithAndWithoutSlotUpdates) {
  for (bool update_slots : {true, false}) {
    SCOPED_TRACE(update_slots ? "update_slots" : "fixed accumulator");
    const std::string suffix = std::to_string(update_slots);
    std::vector<double> want_var = {1, 2, -3}, want_accum = {0.1, 0.1, 0.1};
    Variable* var = MakeVariable("var" + suffix, Filled<double>(want_var));
    Variable* accum = MakeVariable("accum" + suffix, Filled<double>(want_accum));
    for (int step = 0; step < 3; ++step) {
      const std::vector<double> grad = RandomValues(3, -1, 1, 300 + step);
      TW_ASSERT_OK(Apply("ApplyAdagrad", DT_DOUBLE, {var, accum},
                         {Scalar<double>(0.1), Filled<double>(grad)},
                         [&](NodeBuilder* b) { b->Attr("update_slots", update_slots); }));
      for (int i = 0; i < 3; ++i) {
        if (update_slots) want_accum[i] += grad[i] * grad[i];
        want_var[i] -= 0.1 * grad[i] / std::sqrt(want_accum[i]);
      }
      ExpectClose<double>(var, want_var);
      ExpectClose<double>(accum, want_accum);
    }
  }
}

// --- Buffers ------------------------------------------------------------------------

TEST_F(TrainingKernelTest, UpdatesInPlaceWhenUnsharedAndCopiesWhenAReaderHolds) {
  Variable* var = MakeVariable("var", Vector<float>({1, 2}));
  Variable* accum = MakeVariable("accum", Vector<float>({0, 0}));
  const void* var_buffer = var->tensor.raw_data();
  const void* accum_buffer = accum->tensor.raw_data();
  auto step = [&] {
    return Apply("ApplyMomentum", DT_FLOAT, {var, accum},
                 {Scalar<float>(1), Vector<float>({1, 1}), Scalar<float>(0.5)});
  };
  TW_ASSERT_OK(step());
  EXPECT_EQ(var->tensor.raw_data(), var_buffer) << "nobody else held the buffer";
  EXPECT_EQ(accum->tensor.raw_data(), accum_buffer);
  ExpectValues<float>(var->tensor, {2}, {0, 1});

  const Tensor read = var->tensor;  // what the executor hands a value consumer
  TW_ASSERT_OK(step());
  ExpectValues<float>(read, {2}, {0, 1});  // a value a reader holds never changes
  ExpectValues<float>(var->tensor, {2}, {-1.5, -0.5});
  EXPECT_FALSE(var->tensor.SharesBufferWith(read));
  EXPECT_EQ(accum->tensor.raw_data(), accum_buffer) << "the unshared slot stays in place";
  ExpectValues<float>(accum->tensor, {2}, {1.5, 1.5});
}

TEST_F(TrainingKernelTest, GradientSharingTheVariablesBufferReadsTheOldValue) {
  Variable* var = MakeVariable("var", Vector<double>({4, 8}));
  const Tensor grad = var->tensor;  // e.g. d(var^2/2)/d(var) = var
  TW_ASSERT_OK(Apply("ApplyGradientDescent", DT_DOUBLE, {var}, {Scalar<double>(0.25), grad}));
  ExpectValues<double>(var->tensor, {2}, {3, 6});
  ExpectValues<double>(grad, {2}, {4, 8});
}

TEST_F(TrainingKernelTest, EmptyVariablesAreFine) {
  Variable* var = MakeVariable("var", MakeTensor<float>({0, 3}, {}));
  Variable* m = MakeVariable("m", MakeTensor<float>({0, 3}, {}));
  Variable* v = MakeVariable("v", MakeTensor<float>({0, 3}, {}));
  TW_ASSERT_OK(
      Apply("ApplyAdam", DT_FLOAT, {var, m, v},
            {Scalar<float>(0.9f), Scalar<float>(0.999f), Scalar<float>(0.1f), Scalar<float>(0.9f),
             Scalar<float>(0.999f), Scalar<float>(1e-8f), MakeTensor<float>({0, 3}, {})}));
  EXPECT_EQ(var->tensor.shape(), TensorShape({0, 3}));
}

TEST_F(TrainingKernelTest, UpdatesSharingVariablesInOppositeOrdersNeitherDeadlockNorTear) {
  // Thread one updates a with slot b, thread two b with slot a: locking in
  // input order would deadlock; address order cannot.
  const int64_t n = 20000;
  Variable* a = MakeVariable("a", Filled<float>(std::vector<double>(n, 0.0)));
  Variable* b = MakeVariable("b", Filled<float>(std::vector<double>(n, 0.0)));
  const int kSteps = 200;
  auto train = [&](Variable* var, Variable* accum, Status* status) {
    for (int i = 0; i < kSteps && status->ok(); ++i) {
      // momentum 0: accum = grad = 1, var -= 1 * accum.
      *status =
          Apply("ApplyMomentum", DT_FLOAT, {var, accum},
                {Scalar<float>(1), Filled<float>(std::vector<double>(n, 1.0)), Scalar<float>(0)});
    }
  };
  Status first, second;
  std::thread one(train, a, b, &first), two(train, b, a, &second);
  one.join();
  two.join();
  TW_ASSERT_OK(first);
  TW_ASSERT_OK(second);
  // Every update covers all elements under the locks, so no variable is
  // ever left half from one step and half from another.
  for (Variable* variable : {a, b}) {
    const float value = variable->tensor.data<float>()[0];
    for (int64_t i = 1; i < n; ++i) ASSERT_EQ(variable->tensor.data<float>()[i], value) << i;
  }
}

// --- Errors -------------------------------------------------------------------------

TEST_F(TrainingKernelTest, UninitializedVariableOrSlotIsFailedPreconditionNamingIt) {
  Variable* var = MakeVariable("layer/weights", Vector<float>({1, 2}));
  Variable* accum = Uninitialized("layer/weights/Momentum");
  ExpectError(Apply("ApplyMomentum", DT_FLOAT, {var, accum},
                    {Scalar<float>(1), Vector<float>({1, 1}), Scalar<float>(0.5)}),
              Code::FAILED_PRECONDITION,
              "Attempting to use uninitialized value layer/weights/Momentum");
  ExpectError(Apply("ApplyGradientDescent", DT_FLOAT, {Uninitialized("fresh")},
                    {Scalar<float>(1), Vector<float>({1, 1})}),
              Code::FAILED_PRECONDITION, "Attempting to use uninitialized value fresh");
  ExpectValues<float>(var->tensor, {2}, {1, 2});
}

TEST_F(TrainingKernelTest, ShapeMismatchesAndNonScalarsAreInvalidArgument) {
  Variable* var = MakeVariable("var", Vector<float>({1, 2}));
  Variable* accum = MakeVariable("accum", Vector<float>({0, 0, 0}));
  Variable* good_accum = MakeVariable("good_accum", Vector<float>({0, 0}));
  ExpectError(
      Apply("ApplyGradientDescent", DT_FLOAT, {var}, {Scalar<float>(1), Vector<float>({1, 1, 1})}),
      Code::INVALID_ARGUMENT, "var and delta do not have the same shape: [2] vs. [3]");
  ExpectError(Apply("ApplyMomentum", DT_FLOAT, {var, accum},
                    {Scalar<float>(1), Vector<float>({1, 1}), Scalar<float>(0.5)}),
              Code::INVALID_ARGUMENT, "var and accum do not have the same shape: [2] vs. [3]");
  ExpectError(Apply("ApplyMomentum", DT_FLOAT, {var, good_accum},
                    {Vector<float>({1, 1}), Vector<float>({1, 1}), Scalar<float>(0.5)}),
              Code::INVALID_ARGUMENT, "lr is not a scalar: [2]");
  ExpectError(Apply("ApplyMomentum", DT_FLOAT, {var, good_accum},
                    {Scalar<float>(1), Vector<float>({1, 1}), Vector<float>({0.5})}),
              Code::INVALID_ARGUMENT, "momentum is not a scalar: [1]");
  ExpectError(
      Apply("ApplyGradientDescent", DT_FLOAT, {var}, {Scalar<double>(1), Vector<float>({1, 1})}),
      Code::INVALID_ARGUMENT, "alpha must be float, not double");
  ExpectValues<float>(var->tensor, {2}, {1, 2});  // a failed update changes nothing
  ExpectValues<float>(good_accum->tensor, {2}, {0, 0});
}

TEST_F(TrainingKernelTest, VariableInputsMustBeDistinctReferences) {
  Variable* var = MakeVariable("var", Vector<float>({1, 2}));
  ExpectError(Apply("ApplyMomentum", DT_FLOAT, {var, var},
                    {Scalar<float>(1), Vector<float>({1, 1}), Scalar<float>(0.5)}),
              Code::INVALID_ARGUMENT, "'var' and 'accum' must be different variables");
  KernelRunner runner(NodeBuilder("ApplyGradientDescent").Attr("T", DT_FLOAT).Build(),
                      device_.get());
  ExpectError(runner.Compute({Vector<float>({1, 2}), Scalar<float>(1), Vector<float>({1, 1})}),
              Code::INVALID_ARGUMENT, "Input 'var' must be a reference to a variable");
  // A variable holding another dtype than the node's T.
  Variable* doubles = MakeVariable("doubles", Vector<double>({1, 2}));
  ExpectError(
      Apply("ApplyGradientDescent", DT_FLOAT, {doubles}, {Scalar<float>(1), Vector<float>({1, 1})}),
      Code::INVALID_ARGUMENT, "Variable doubles holds double, not float");
}

TEST_F(TrainingKernelTest, IntegerTypesAreNotInTheOpDef) {
  KernelRunner runner(NodeBuilder("ApplyGradientDescent").Attr("T", DT_INT32).Build(),
                      device_.get());
  ExpectError(runner.construction_status(), Code::INVALID_ARGUMENT,
              "is int32, not in the allowed list [float, double, half, bfloat16]");
}

// --- Shape functions ----------------------------------------------------------------

TEST(TrainingShapes, OutputIsTheMergedVariableShape) {
  std::vector<PartialTensorShape> out;
  const NodeDef adam = NodeBuilder("ApplyAdam").Attr("T", DT_FLOAT).Build();
  std::vector<PartialTensorShape> inputs = {Partial({-1, 3}), Partial({2, -1}), Unknown()};
  for (int i = 0; i < 6; ++i) inputs.push_back(Partial({}));
  inputs.push_back(Partial({2, 3}));
  TW_ASSERT_OK(InferShapes(adam, inputs, {}, &out));
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].DebugString(), Partial({2, 3}).DebugString());

  inputs.back() = Partial({2, 4});
  ExpectError(InferShapes(adam, inputs, {}, &out), Code::INVALID_ARGUMENT,
              "Shapes of var and grad must match");
  inputs.back() = Partial({2, 3});
  inputs[5] = Partial({1});
  ExpectError(InferShapes(adam, inputs, {}, &out), Code::INVALID_ARGUMENT, "lr must be a scalar");

  const NodeDef descent = NodeBuilder("ApplyGradientDescent").Attr("T", DT_DOUBLE).Build();
  TW_ASSERT_OK(InferShapes(descent, {Unknown(), Unknown(), Partial({5})}, {}, &out));
  EXPECT_EQ(out[0].DebugString(), Partial({5}).DebugString());
}

}  // namespace
}  // namespace test
}  // namespace tensorweave
