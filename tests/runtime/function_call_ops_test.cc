// The call ops in a DirectSession: calls by function name and through
// PartitionedCall, If with conditions of every kind, Case with indices out
// of range, While loops long, endless (stopped by a timeout or Close) and
// failing; a body's error names its caller; nested calls on one inter-op
// thread.
#include <google/protobuf/text_format.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <thread>

#include "runtime/common_runtime/session.h"
#include "runtime/framework/function_library.h"
#include "runtime/framework/op_kernel.h"
#include "tests/runtime/session_test_util.h"

namespace tensorweave {
namespace {

using namespace session_test;  // NOLINT: test helpers

// The id of the step it runs in.
REGISTER_OP("FunctionTestStepId").Output("id: int64").SetIsStateful().Doc("Test op: step id.");

class StepIdOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* c) override {
    Tensor* id = nullptr;
    OP_REQUIRES_OK(c, c->allocate_output(0, TensorShape(), &id));
    id->data<int64_t>()[0] = c->step_id();
  }
};
REGISTER_KERNEL_BUILDER(Name("FunctionTestStepId").Device(DEVICE_CPU), StepIdOp);

// Functions the graphs below call:
//   square(x: T) -> x * x
//   add_one(x: float) -> x + 1
//   fail(x: float) -> SessionTestFail(x)
//   wait() -> SessionTestWaitForCancel(), which ends when the step is cancelled
//   step_id() -> the id of the step the body runs in
//   below(i: int32, limit: int32) -> i < limit        (a While cond)
//   step(i: int32, limit: int32) -> (i + 1, limit)    (a While body)
//   forever(i: int32, limit: int32) -> true
constexpr char kLibrary[] = R"(
  function {
    signature { name: "square" input_arg { name: "x" type_attr: "T" }
                output_arg { name: "y" type_attr: "T" } attr { name: "T" type: "type" } }
    node_def { name: "sq" op: "Square" input: "x" attr { key: "T" value { placeholder: "T" } } }
    ret { key: "y" value: "sq:y:0" }
  }
  function {
    signature { name: "add_one" input_arg { name: "x" type: DT_FLOAT }
                output_arg { name: "y" type: DT_FLOAT } }
    node_def { name: "one" op: "Const" attr { key: "dtype" value { type: DT_FLOAT } }
               attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape { }
                                                    float_val: 1 } } } }
    node_def { name: "add" op: "AddV2" input: "x" input: "one:output:0"
               attr { key: "T" value { type: DT_FLOAT } } }
    ret { key: "y" value: "add:z:0" }
  }
  function {
    signature { name: "fail" input_arg { name: "x" type: DT_FLOAT }
                output_arg { name: "y" type: DT_FLOAT } }
    node_def { name: "broken" op: "SessionTestFail" input: "x" }
    ret { key: "y" value: "broken:y:0" }
  }
  function {
    signature { name: "wait" output_arg { name: "y" type: DT_FLOAT } }
    node_def { name: "blocked" op: "SessionTestWaitForCancel" }
    ret { key: "y" value: "blocked:y:0" }
  }
  function {
    signature { name: "step_id" output_arg { name: "id" type: DT_INT64 } }
    node_def { name: "read" op: "FunctionTestStepId" }
    ret { key: "id" value: "read:id:0" }
  }
  function {
    signature { name: "below" input_arg { name: "i" type: DT_INT32 }
                input_arg { name: "limit" type: DT_INT32 } output_arg { name: "go" type: DT_BOOL } }
    node_def { name: "less" op: "Less" input: "i" input: "limit"
               attr { key: "T" value { type: DT_INT32 } } }
    ret { key: "go" value: "less:z:0" }
  }
  function {
    signature { name: "step" input_arg { name: "i" type: DT_INT32 }
                input_arg { name: "limit" type: DT_INT32 }
                output_arg { name: "next" type: DT_INT32 } output_arg { name: "same" type: DT_INT32 } }
    node_def { name: "one" op: "Const" attr { key: "dtype" value { type: DT_INT32 } }
               attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape { } int_val: 1 } } } }
    node_def { name: "add" op: "AddV2" input: "i" input: "one:output:0"
               attr { key: "T" value { type: DT_INT32 } } }
    ret { key: "next" value: "add:z:0" }
    ret { key: "same" value: "limit" }
  }
  function {
    signature { name: "forever" input_arg { name: "i" type: DT_INT32 }
                input_arg { name: "limit" type: DT_INT32 } output_arg { name: "go" type: DT_BOOL } }
    node_def { name: "yes" op: "Const" attr { key: "dtype" value { type: DT_BOOL } }
               attr { key: "value" value { tensor { dtype: DT_BOOL tensor_shape { } bool_val: true } } } }
    ret { key: "go" value: "yes:output:0" }
  })";

GraphDef WithLibrary(const std::string& nodes) {
  GraphDef graph;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(
      nodes + "\nlibrary { " + kLibrary + " }", &graph))
      << nodes;
  return graph;
}

std::string Placeholder(const std::string& name, const std::string& dtype) {
  return StrCat(R"(node { name: ")", name, R"(" op: "Placeholder"
                attr { key: "dtype" value { type: )",
                dtype, " } } }\n");
}

std::unique_ptr<Session> NewSessionWith(const GraphDef& graph, int inter_op_threads = 0) {
  SessionOptions options;
  options.config.set_inter_op_parallelism_threads(inter_op_threads);
  std::unique_ptr<Session> session;
  EXPECT_TRUE(NewSession(options, &session).ok());
  const Status created = session->Create(graph);
  EXPECT_TRUE(created.ok()) << created;
  return session;
}

Tensor IntScalar(int32_t value) {
  Tensor tensor(DT_INT32, TensorShape());
  tensor.data<int32_t>()[0] = value;
  return tensor;
}

TEST(FunctionCallOpsTest, CallsByNameAndThroughPartitionedCall) {
  const GraphDef graph = WithLibrary(Placeholder("x", "DT_FLOAT") + R"(
    node { name: "by_name" op: "square" input: "x" attr { key: "T" value { type: DT_FLOAT } } }
    node { name: "by_call" op: "StatefulPartitionedCall" input: "by_name"
           attr { key: "Tin" value { list { type: DT_FLOAT } } }
           attr { key: "Tout" value { list { type: DT_FLOAT } } }
           attr { key: "f" value { func { name: "add_one" } } } })");
  std::unique_ptr<Session> session = NewSessionWith(graph);
  std::vector<Tensor> out;
  SESSION_ASSERT_OK(session->Run({{"x", FloatVector({2, -3})}}, {"by_name", "by_call"}, {}, &out));
  EXPECT_EQ(Values(out[0]), std::vector<float>({4, 9}));
  EXPECT_EQ(Values(out[1]), std::vector<float>({5, 10}));
}

TEST(FunctionCallOpsTest, IfConvertsConditionsAsTensorFlowDoes) {
  struct Case {
    const char* dtype;
    Tensor cond;
    bool expect_then;
  };
  Tensor empty_vector(DT_FLOAT, TensorShape({0}));
  Tensor zeros_vector = FloatVector({0, 0});  // non-scalar: true when it has elements
  Tensor string_scalar(DT_STRING, TensorShape());
  string_scalar.data<std::string>()[0] = "";
  const std::vector<Case> cases = {
      {"DT_BOOL",
       [] {
         Tensor t(DT_BOOL, TensorShape());
         t.data<bool>()[0] = false;
         return t;
       }(),
       false},
      {"DT_INT32", IntScalar(-4), true},
      {"DT_INT32", IntScalar(0), false},
      {"DT_FLOAT", FloatScalar(0.5f), true},
      {"DT_FLOAT", zeros_vector, true},
      {"DT_FLOAT", empty_vector, false},
      {"DT_STRING", string_scalar, false},
  };
  for (const Case& c : cases) {
    const GraphDef graph =
        WithLibrary(Placeholder("x", "DT_FLOAT") + Placeholder("p", c.dtype) +
                    StrCat(R"(node { name: "choose" op: "If" input: "p" input: "x"
                    attr { key: "Tcond" value { type: )",
                           c.dtype, R"( } }
                    attr { key: "Tin" value { list { type: DT_FLOAT } } }
                    attr { key: "Tout" value { list { type: DT_FLOAT } } }
                    attr { key: "then_branch" value { func { name: "add_one" } } }
                    attr { key: "else_branch" value { func { name: "square"
                         attr { key: "T" value { type: DT_FLOAT } } } } } })"));
    std::unique_ptr<Session> session = NewSessionWith(graph);
    std::vector<Tensor> out;
    SESSION_ASSERT_OK(session->Run({{"x", FloatVector({3})}, {"p", c.cond}}, {"choose"}, {}, &out));
    EXPECT_EQ(Values(out[0])[0], c.expect_then ? 4.0f : 9.0f)
        << c.dtype << " " << c.cond.DebugString();
  }
}

TEST(FunctionCallOpsTest, CaseRunsTheLastBranchForAnIndexOutOfRange) {
  const GraphDef graph =
      WithLibrary(Placeholder("x", "DT_FLOAT") + Placeholder("k", "DT_INT32") + R"(
    node { name: "case" op: "Case" input: "k" input: "x"
           attr { key: "Tin" value { list { type: DT_FLOAT } } }
           attr { key: "Tout" value { list { type: DT_FLOAT } } }
           attr { key: "branches" value { list {
             func { name: "add_one" }
             func { name: "square" attr { key: "T" value { type: DT_FLOAT } } } } } } })");
  std::unique_ptr<Session> session = NewSessionWith(graph);
  for (const auto& [index, expected] : std::vector<std::pair<int, float>>{
           {0, 6.0f}, {1, 25.0f}, {2, 25.0f}, {-1, 25.0f}, {1000, 25.0f}}) {
    std::vector<Tensor> out;
    SESSION_ASSERT_OK(
        session->Run({{"x", FloatVector({5})}, {"k", IntScalar(index)}}, {"case"}, {}, &out));
    EXPECT_EQ(Values(out[0])[0], expected) << index;
  }
}

std::string WhileNode(const std::string& cond) {
  return StrCat(R"(node { name: "start" op: "Const" attr { key: "dtype" value { type: DT_INT32 } }
           attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape { } int_val: 0 } } } }
    node { name: "loop" op: "StatelessWhile" input: "start" input: "n"
           attr { key: "T" value { list { type: DT_INT32 type: DT_INT32 } } }
           attr { key: "cond" value { func { name: ")",
                cond, R"(" } } }
           attr { key: "body" value { func { name: "step" } } } })");
}

TEST(FunctionCallOpsTest, AWhileLoopOfAHundredThousandIterationsNeedsNoStackPerIteration) {
  const GraphDef graph = WithLibrary(Placeholder("n", "DT_INT32") + WhileNode("below"));
  for (int threads : {1, 2}) {
    std::unique_ptr<Session> session = NewSessionWith(graph, threads);
    std::vector<Tensor> out;
    SESSION_ASSERT_OK(session->Run({{"n", IntScalar(3)}}, {"loop:0"}, {}, &out));
    EXPECT_EQ(out[0].scalar<int32_t>(), 3);
    const auto start = std::chrono::steady_clock::now();
    SESSION_ASSERT_OK(session->Run({{"n", IntScalar(100000)}}, {"loop:0", "loop:1"}, {}, &out));
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    EXPECT_EQ(out[0].scalar<int32_t>(), 100000);
    EXPECT_EQ(out[1].scalar<int32_t>(), 100000);
    std::printf("StatelessWhile, 100000 iterations, %d inter-op thread(s): %.3f s (%.2f us each)\n",
                threads, seconds, seconds * 1e6 / 100000);
  }
}

TEST(FunctionCallOpsTest, AnEndlessWhileStopsAtTheTimeoutAndOnClose) {
  const GraphDef graph = WithLibrary(Placeholder("n", "DT_INT32") + WhileNode("forever"));
  std::unique_ptr<Session> session = NewSessionWith(graph, 1);
  RunOptions options;
  options.set_timeout_in_ms(200);
  std::vector<Tensor> out;
  const auto start = std::chrono::steady_clock::now();
  Status status = session->Run(options, {{"n", IntScalar(1)}}, {"loop:0"}, {}, &out);
  EXPECT_EQ(status.code(), Code::DEADLINE_EXCEEDED) << status;
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));

  std::thread closer([&session] {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    SESSION_EXPECT_OK(session->Close());
  });
  status = session->Run({{"n", IntScalar(1)}}, {"loop:0"}, {}, &out);
  closer.join();
  EXPECT_EQ(status.code(), Code::CANCELLED) << status;
}

TEST(FunctionCallOpsTest, TheBodyRunsInTheCallersStep) {
  const GraphDef graph = WithLibrary(R"(
    node { name: "outside" op: "FunctionTestStepId" }
    node { name: "inside" op: "PartitionedCall"
           attr { key: "Tin" value { list { } } }
           attr { key: "Tout" value { list { type: DT_INT64 } } }
           attr { key: "f" value { func { name: "step_id" } } } })");
  std::unique_ptr<Session> session = NewSessionWith(graph);
  std::vector<Tensor> first, second;
  SESSION_ASSERT_OK(session->Run({}, {"outside", "inside"}, {}, &first));
  SESSION_ASSERT_OK(session->Run({}, {"outside", "inside"}, {}, &second));
  EXPECT_EQ(first[0].scalar<int64_t>(), first[1].scalar<int64_t>());
  EXPECT_EQ(second[0].scalar<int64_t>(), second[1].scalar<int64_t>());
  EXPECT_NE(first[1].scalar<int64_t>(), second[1].scalar<int64_t>());
}

TEST(FunctionCallOpsTest, ABodyUsesTheCallersTensorArray) {
  // The array lives in the caller's step container; the body writes it and
  // the caller reads what the body wrote.
  GraphDef graph;
  ASSERT_TRUE(google::protobuf::TextFormat::ParseFromString(R"(
    node { name: "size" op: "Const" attr { key: "dtype" value { type: DT_INT32 } }
           attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape { } int_val: 2 } } } }
    node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } } }
    node { name: "ta" op: "TensorArrayV3" input: "size"
           attr { key: "dtype" value { type: DT_FLOAT } } }
    node { name: "call" op: "PartitionedCall" input: "ta" input: "ta:1" input: "x"
           attr { key: "Tin" value { list { type: DT_RESOURCE type: DT_FLOAT type: DT_FLOAT } } }
           attr { key: "Tout" value { list { type: DT_FLOAT } } }
           attr { key: "f" value { func { name: "write_first" } } } }
    node { name: "zero" op: "Const" attr { key: "dtype" value { type: DT_INT32 } }
           attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape { } int_val: 0 } } } }
    node { name: "read" op: "TensorArrayReadV3" input: "ta" input: "zero" input: "call"
           attr { key: "dtype" value { type: DT_FLOAT } } }
    library { function {
      signature { name: "write_first" input_arg { name: "handle" type: DT_RESOURCE }
                  input_arg { name: "flow" type: DT_FLOAT } input_arg { name: "value" type: DT_FLOAT }
                  output_arg { name: "flow_out" type: DT_FLOAT } }
      node_def { name: "index" op: "Const" attr { key: "dtype" value { type: DT_INT32 } }
                 attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape { } int_val: 0 } } } }
      node_def { name: "write" op: "TensorArrayWriteV3"
                 input: "handle" input: "index:output:0" input: "value" input: "flow"
                 attr { key: "T" value { type: DT_FLOAT } } }
      ret { key: "flow_out" value: "write:flow_out:0" }
    } })",
                                                            &graph));
  std::unique_ptr<Session> session = NewSessionWith(graph);
  for (float x : {2.5f, -1.0f}) {  // a fresh array every step
    std::vector<Tensor> out;
    SESSION_ASSERT_OK(session->Run({{"x", FloatVector({x})}}, {"read"}, {}, &out));
    EXPECT_EQ(Values(out[0]), std::vector<float>({x}));
  }
}

TEST(FunctionCallOpsTest, TheCallersCancellationReachesTheBody) {
  const GraphDef graph = WithLibrary(R"(
    node { name: "call" op: "PartitionedCall"
           attr { key: "Tin" value { list { } } }
           attr { key: "Tout" value { list { type: DT_FLOAT } } }
           attr { key: "f" value { func { name: "wait" } } } })");
  std::unique_ptr<Session> session = NewSessionWith(graph, 1);
  RunOptions options;
  options.set_timeout_in_ms(200);
  std::vector<Tensor> out;
  Status status = session->Run(options, {}, {"call"}, {}, &out);
  EXPECT_EQ(status.code(), Code::DEADLINE_EXCEEDED) << status;

  std::thread closer([&session] {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    SESSION_EXPECT_OK(session->Close());
  });
  status = session->Run({}, {"call"}, {}, &out);
  closer.join();
  EXPECT_EQ(status.code(), Code::CANCELLED) << status;
}

TEST(FunctionCallOpsTest, ABodysErrorKeepsItsCodeAndNamesTheCaller) {
  const GraphDef graph = WithLibrary(Placeholder("x", "DT_FLOAT") + R"(
    node { name: "outer_call" op: "PartitionedCall" input: "x"
           attr { key: "Tin" value { list { type: DT_FLOAT } } }
           attr { key: "Tout" value { list { type: DT_FLOAT } } }
           attr { key: "f" value { func { name: "fail" } } } })");
  std::unique_ptr<Session> session = NewSessionWith(graph);
  std::vector<Tensor> out;
  const Status status = session->Run({{"x", FloatVector({1})}}, {"outer_call"}, {}, &out);
  EXPECT_EQ(status.code(), Code::INVALID_ARGUMENT) << status;
  EXPECT_NE(status.message().find("SessionTestFail always fails"), std::string::npos) << status;
  EXPECT_NE(status.message().find("'fail'"), std::string::npos) << status;
  EXPECT_NE(status.message().find("'outer_call'"), std::string::npos) << status;
}

TEST(FunctionCallOpsTest, AWhileBodyReturningTheWrongTypesIsInvalidArgument) {
  // step returns (int32, int32); the node claims float loop variables.
  const GraphDef graph = WithLibrary(Placeholder("x", "DT_FLOAT") + R"(
    node { name: "loop" op: "While" input: "x" input: "x"
           attr { key: "T" value { list { type: DT_FLOAT type: DT_FLOAT } } }
           attr { key: "cond" value { func { name: "below" } } }
           attr { key: "body" value { func { name: "step" } } } })");
  std::unique_ptr<Session> session = NewSessionWith(graph);
  std::vector<Tensor> out;
  const Status status = session->Run({{"x", FloatScalar(1)}}, {"loop:0"}, {}, &out);
  EXPECT_EQ(status.code(), Code::INVALID_ARGUMENT) << status;
  EXPECT_NE(status.message().find("'loop'"), std::string::npos) << status;
}

TEST(FunctionCallOpsTest, CallsNestedDeepRunOnOneInterOpThread) {
  // chain_k(x) = PartitionedCall(chain_{k+1})(x) ... chain_40(x) = x + 1.
  std::string library;
  constexpr int kDepth = 40;
  for (int k = 0; k < kDepth; ++k) {
    library += StrCat(R"(function { signature { name: "chain_)", k,
                      R"(" input_arg { name: "x" type: DT_FLOAT }
                  output_arg { name: "y" type: DT_FLOAT } }
      node_def { name: "c" op: "PartitionedCall" input: "x"
                 attr { key: "Tin" value { list { type: DT_FLOAT } } }
                 attr { key: "Tout" value { list { type: DT_FLOAT } } }
                 attr { key: "f" value { func { name: ")",
                      k + 1 < kDepth ? StrCat("chain_", k + 1) : std::string("add_one"),
                      R"(" } } } }
      ret { key: "y" value: "c:output:0" } }
    )");
  }
  GraphDef graph = WithLibrary(Placeholder("x", "DT_FLOAT") + R"(
    node { name: "top" op: "chain_0" input: "x" })");
  FunctionDefLibrary chain;
  ASSERT_TRUE(google::protobuf::TextFormat::ParseFromString(library, &chain));
  graph.mutable_library()->MergeFrom(chain);
  std::unique_ptr<Session> session = NewSessionWith(graph, 1);
  std::vector<Tensor> out;
  SESSION_ASSERT_OK(session->Run({{"x", FloatVector({1, 2})}}, {"top"}, {}, &out));
  EXPECT_EQ(Values(out[0]), std::vector<float>({2, 3}));
}

}  // namespace
}  // namespace tensorweave
