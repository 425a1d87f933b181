// Function libraries: what FunctionLibraryDefinition accepts and refuses,
// how a FunctionDef instantiates for given attrs, and the runtime's cache of
// instantiations and its argument checks.
#include "runtime/framework/function_library.h"

#include <google/protobuf/text_format.h>
#include <gtest/gtest.h>

#include <condition_variable>
#include <mutex>

#include "runtime/common_runtime/function_instantiate.h"
#include "runtime/common_runtime/function_runtime.h"
#include "runtime/common_runtime/thread_pools.h"
#include "tests/runtime/session_test_util.h"

namespace tensorweave {
namespace {

using namespace session_test;  // NOLINT: test helpers

FunctionDefLibrary ParseLibrary(const std::string& text) {
  FunctionDefLibrary library;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &library)) << text;
  return library;
}

// square(x: T) -> y: T, with its Square node typed by the placeholder $T.
constexpr char kSquare[] = R"(
  function {
    signature { name: "square"
                input_arg { name: "x" type_attr: "T" } output_arg { name: "y" type_attr: "T" }
                attr { name: "T" type: "type" } }
    node_def { name: "sq" op: "Square" input: "x" attr { key: "T" value { placeholder: "T" } } }
    ret { key: "y" value: "sq:y:0" }
  })";

// A function calling `callee` (float -> float) through PartitionedCall.
std::string Caller(const std::string& name, const std::string& callee) {
  return StrCat(R"(
  function {
    signature { name: ")",
                name, R"(" input_arg { name: "x" type: DT_FLOAT }
                output_arg { name: "y" type: DT_FLOAT } }
    node_def { name: "call" op: "PartitionedCall" input: "x"
               attr { key: "Tin" value { list { type: DT_FLOAT } } }
               attr { key: "Tout" value { list { type: DT_FLOAT } } }
               attr { key: "f" value { func { name: ")",
                callee, R"(" attr { key: "T" value { type: DT_FLOAT } } } } } }
    ret { key: "y" value: "call:output:0" }
  })");
}

Status Add(FunctionLibraryDefinition* library, const std::string& text) {
  return library->AddLibrary(ParseLibrary(text));
}

// `named` is the function's name or the start of it.
void ExpectRejected(const std::string& text, const std::string& named, const std::string& why) {
  FunctionLibraryDefinition library(OpRegistry::Global());
  const Status status = Add(&library, text);
  EXPECT_EQ(status.code(), Code::INVALID_ARGUMENT) << status;
  EXPECT_NE(status.message().find("'" + named), std::string::npos) << status;
  EXPECT_NE(status.message().find(why), std::string::npos) << status;
  EXPECT_TRUE(library.empty()) << "a refused library adds nothing";
}

TEST(FunctionLibraryTest, HoldsFunctionsAndResolvesTheirNamesAsOps) {
  FunctionLibraryDefinition library(OpRegistry::Global());
  EXPECT_TRUE(library.empty());
  SESSION_ASSERT_OK(Add(&library, kSquare));
  ASSERT_NE(library.Find("square"), nullptr);
  EXPECT_EQ(library.Find("cube"), nullptr);
  const OpDef* signature = library.op_registry()->LookUp("square");
  ASSERT_NE(signature, nullptr);
  EXPECT_EQ(signature->inputs[0].type_attr, "T");
  // Every other op still resolves, through the fallback.
  EXPECT_NE(library.op_registry()->LookUp("MatMul"), nullptr);
  EXPECT_EQ(library.ToProto().function_size(), 1);
}

TEST(FunctionLibraryTest, TheSameFunctionTwiceIsKeptOnceAndADifferentOneIsRefused) {
  FunctionLibraryDefinition library(OpRegistry::Global());
  SESSION_ASSERT_OK(Add(&library, kSquare));
  SESSION_ASSERT_OK(Add(&library, kSquare));
  EXPECT_EQ(library.ToProto().function_size(), 1);
  std::string changed = kSquare;
  changed.replace(changed.find("Square"), 6, "Neg");
  const Status status = Add(&library, changed + Caller("uses_square", "square"));
  EXPECT_EQ(status.code(), Code::INVALID_ARGUMENT) << status;
  EXPECT_NE(status.message().find("'square'"), std::string::npos) << status;
  EXPECT_FALSE(library.Contains("uses_square")) << "nothing of a refused library is added";
}

TEST(FunctionLibraryTest, RefusesBrokenFunctionsNamingThem) {
  ExpectRejected(R"(function { signature { name: "MatMul" } })", "MatMul", "op with the same name");
  ExpectRejected(R"(function { signature { name: "f" } node_def { name: "n" op: "NoSuchOp" } })",
                 "f", "NoSuchOp");
  ExpectRejected(R"(function { signature { name: "f" output_arg { name: "y" type: DT_FLOAT } }
                               ret { key: "y" value: "nowhere:output:0" } })",
                 "f", "names no body node");
  ExpectRejected(R"(function { signature { name: "f" input_arg { name: "x" type: DT_FLOAT }
                                           output_arg { name: "y" type: DT_FLOAT } }
                               node_def { name: "i" op: "Identity" input: "x"
                                          attr { key: "T" value { type: DT_FLOAT } } }
                               ret { key: "y" value: "i:no_such_output:0" } })",
                 "f", "no output 'no_such_output'");
  ExpectRejected(R"(function { signature { name: "f" output_arg { name: "y" type: DT_FLOAT } } })",
                 "f", "no return value");
  ExpectRejected(R"(function { signature { name: "f" input_arg { name: "x" type_attr: "T" } } })",
                 "f", "bad signature");
  ExpectRejected(R"(function { signature { name: "f" input_arg { name: "x" type: DT_FLOAT } }
                               node_def { name: "a" op: "Identity" input: "b:output:0"
                                          attr { key: "T" value { type: DT_FLOAT } } }
                               node_def { name: "b" op: "Identity" input: "a:output:0"
                                          attr { key: "T" value { type: DT_FLOAT } } } })",
                 "f", "cycle");
  ExpectRejected(Caller("f", "missing_function"), "f", "missing_function");
}

TEST(FunctionLibraryTest, RefusesRecursionThroughCallsAndBranches) {
  ExpectRejected(Caller("ping", "pong") + Caller("pong", "ping"), "ping", "calls itself");
  ExpectRejected(Caller("self", "self"), "self", "calls itself");
}

std::string Chain(int depth) {
  std::string text = kSquare;
  std::string callee = "square";
  for (int k = 0; k < depth; ++k) {
    const std::string name = StrCat("level_", k);
    text += Caller(name, callee);
    callee = name;
  }
  return text;
}

TEST(FunctionLibraryTest, BoundsHowDeepCallsNest) {
  FunctionLibraryDefinition library(OpRegistry::Global());
  SESSION_EXPECT_OK(Add(&library, Chain(kMaxFunctionCallDepth - 1)));
  ExpectRejected(Chain(kMaxFunctionCallDepth + 5), "level_", "nests calls");
  // Far deeper: still refused by a check that does not recurse.
  ExpectRejected(Chain(20000), "level_", "nests calls");
}

// --- Instantiation ---------------------------------------------------------

AttrMap TypeAttr(DataType type) {
  AttrMap attrs;
  attrs["T"].set_type(type);
  return attrs;
}

TEST(FunctionInstantiateTest, PlaceholdersTakeTheCallsAttrs) {
  FunctionLibraryDefinition library(OpRegistry::Global());
  SESSION_ASSERT_OK(Add(&library, kSquare));
  const OpDef* signature = library.op_registry()->LookUp("square");
  for (DataType type : {DT_FLOAT, DT_INT32}) {
    InstantiatedFunction body;
    SESSION_ASSERT_OK(InstantiateFunction(*library.Find("square"), *signature, TypeAttr(type),
                                          *library.op_registry(), &body));
    EXPECT_EQ(body.arg_types, DataTypeVector({type}));
    EXPECT_EQ(body.ret_types, DataTypeVector({type}));
    std::map<std::string, const NodeDef*> nodes;
    for (const NodeDef& node : body.graph.node()) nodes[node.op()] = &node;
    ASSERT_EQ(nodes.size(), 3u);
    EXPECT_EQ(nodes["Square"]->attr().at("T").type(), type);
    EXPECT_EQ(nodes["Square"]->input(0), nodes["_Arg"]->name() + ":0");
    EXPECT_EQ(nodes["_Retval"]->input(0), "sq:0");
    EXPECT_EQ(nodes["_Arg"]->attr().at("index").i(), 0);
  }
  InstantiatedFunction body;
  const Status missing = InstantiateFunction(*library.Find("square"), *signature, AttrMap(),
                                             *library.op_registry(), &body);
  EXPECT_EQ(missing.code(), Code::INVALID_ARGUMENT) << missing;
  EXPECT_NE(missing.message().find("'T'"), std::string::npos) << missing;
}

TEST(FunctionInstantiateTest, ListArgsExpandToOneArgPerTensor) {
  FunctionLibraryDefinition library(OpRegistry::Global());
  SESSION_ASSERT_OK(Add(&library, R"(
    function {
      signature { name: "sum_all"
                  input_arg { name: "xs" type: DT_FLOAT number_attr: "N" }
                  output_arg { name: "total" type: DT_FLOAT }
                  attr { name: "N" type: "int" } }
      node_def { name: "add" op: "AddN" input: "xs"
                 attr { key: "N" value { placeholder: "N" } }
                 attr { key: "T" value { type: DT_FLOAT } } }
      ret { key: "total" value: "add:sum:0" }
    })"));
  AttrMap attrs;
  attrs["N"].set_i(3);
  InstantiatedFunction body;
  SESSION_ASSERT_OK(InstantiateFunction(*library.Find("sum_all"),
                                        *library.op_registry()->LookUp("sum_all"), attrs,
                                        *library.op_registry(), &body));
  EXPECT_EQ(body.arg_types, DataTypeVector({DT_FLOAT, DT_FLOAT, DT_FLOAT}));
  int add_n_nodes = 0;
  for (const NodeDef& node : body.graph.node()) {
    if (node.op() != "AddN") continue;
    ++add_n_nodes;
    EXPECT_EQ(node.input_size(), 3);
  }
  EXPECT_EQ(add_n_nodes, 1);
}

// --- The runtime -------------------------------------------------------------

class FunctionRuntimeTest : public ::testing::Test {
 protected:
  FunctionRuntimeTest()
      : library_(OpRegistry::Global()),
        device_("/job:localhost/replica:0/task:0/device:CPU:0", DEVICE_CPU, IntraOp()) {}

  static const Eigen::ThreadPoolDevice* IntraOp() {
    const Eigen::ThreadPoolDevice* device = nullptr;
    EXPECT_TRUE(IntraOpDevice(1, &device).ok());
    return device;
  }

  // Runs and waits (the body runs inline: no runner).
  Status RunAndWait(FunctionLibraryRuntime* runtime, FunctionLibraryRuntime::Handle handle,
                    std::vector<Tensor> args, std::vector<Tensor>* results) {
    std::mutex mu;
    std::condition_variable cv;
    bool done = false;
    Status status;
    runtime->Run(FunctionLibraryRuntime::Options(), handle, std::move(args), results,
                 [&](const Status& s) {
                   std::lock_guard<std::mutex> lock(mu);
                   status = s;
                   done = true;
                   cv.notify_one();
                 });
    std::unique_lock<std::mutex> lock(mu);
    cv.wait(lock, [&] { return done; });
    return status;
  }

  FunctionLibraryDefinition library_;
  Device device_;
};

TEST_F(FunctionRuntimeTest, CachesOneInstantiationPerFunctionAndAttrs) {
  SESSION_ASSERT_OK(Add(&library_, std::string(kSquare) + Caller("outer", "square")));
  FunctionLibraryRuntime runtime(&library_, &device_);
  FunctionLibraryRuntime::Handle a, b, c;
  SESSION_ASSERT_OK(runtime.Instantiate("square", TypeAttr(DT_FLOAT), &a));
  AttrMap with_extra = TypeAttr(DT_FLOAT);
  with_extra["_unused"].set_i(7);  // attrs the signature does not declare do not count
  SESSION_ASSERT_OK(runtime.Instantiate("square", with_extra, &b));
  SESSION_ASSERT_OK(runtime.Instantiate("square", TypeAttr(DT_INT32), &c));
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  EXPECT_EQ(runtime.num_instantiations(), 2);
  // Instantiating the caller instantiates (or finds) what it calls.
  FunctionLibraryRuntime::Handle outer;
  SESSION_ASSERT_OK(runtime.Instantiate("outer", AttrMap(), &outer));
  EXPECT_EQ(runtime.num_instantiations(), 3);

  std::vector<Tensor> results;
  SESSION_ASSERT_OK(RunAndWait(&runtime, outer, {FloatVector({3, -2})}, &results));
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(Values(results[0]), std::vector<float>({9, 4}));
}

TEST_F(FunctionRuntimeTest, ChecksTheArgumentsOfACall) {
  SESSION_ASSERT_OK(Add(&library_, kSquare));
  FunctionLibraryRuntime runtime(&library_, &device_);
  FunctionLibraryRuntime::Handle handle;
  SESSION_ASSERT_OK(runtime.Instantiate("square", TypeAttr(DT_FLOAT), &handle));
  std::vector<Tensor> results;
  Status status = RunAndWait(&runtime, handle, {}, &results);
  EXPECT_EQ(status.code(), Code::INVALID_ARGUMENT) << status;
  Tensor int_arg(DT_INT32, TensorShape());
  int_arg.data<int32_t>()[0] = 2;
  status = RunAndWait(&runtime, handle, {int_arg}, &results);
  EXPECT_EQ(status.code(), Code::INVALID_ARGUMENT) << status;
  EXPECT_NE(status.message().find("int32"), std::string::npos) << status;
  EXPECT_EQ(runtime.Instantiate("nope", AttrMap(), &handle).code(), Code::NOT_FOUND);
}

TEST_F(FunctionRuntimeTest, NestingThroughAttrsTheCallerGivesIsBoundedWhenInstantiated) {
  // pick(x) = If(true, x) with both branches $branch: the library cannot see
  // which function that is. A caller nesting pick{branch: pick{branch: ...}}
  // a hundred deep makes calls nest that deep.
  SESSION_ASSERT_OK(Add(&library_, R"(
    function {
      signature { name: "pick" input_arg { name: "x" type: DT_FLOAT }
                  output_arg { name: "y" type: DT_FLOAT } attr { name: "branch" type: "func" } }
      node_def { name: "yes" op: "Const" attr { key: "dtype" value { type: DT_BOOL } }
                 attr { key: "value" value { tensor { dtype: DT_BOOL tensor_shape { } bool_val: true } } } }
      node_def { name: "if" op: "If" input: "yes:output:0" input: "x"
                 attr { key: "Tcond" value { type: DT_BOOL } }
                 attr { key: "Tin" value { list { type: DT_FLOAT } } }
                 attr { key: "Tout" value { list { type: DT_FLOAT } } }
                 attr { key: "then_branch" value { placeholder: "branch" } }
                 attr { key: "else_branch" value { placeholder: "branch" } } }
      ret { key: "y" value: "if:output:0" }
    })"));
  SESSION_ASSERT_OK(Add(&library_, kSquare));
  auto nested = [](int depth) {
    AttrValue branch;
    branch.mutable_func()->set_name("square");
    (*branch.mutable_func()->mutable_attr())["T"].set_type(DT_FLOAT);
    for (int k = 0; k < depth; ++k) {
      AttrValue outer;
      outer.mutable_func()->set_name("pick");
      (*outer.mutable_func()->mutable_attr())["branch"] = branch;
      branch = outer;
    }
    return branch.func().attr();
  };
  FunctionLibraryRuntime runtime(&library_, &device_);
  FunctionLibraryRuntime::Handle handle;
  SESSION_ASSERT_OK(runtime.Instantiate("pick", nested(3), &handle));
  std::vector<Tensor> results;
  SESSION_ASSERT_OK(RunAndWait(&runtime, handle, {FloatVector({3})}, &results));
  EXPECT_EQ(Values(results[0]), std::vector<float>({9}));

  const Status status = runtime.Instantiate("pick", nested(100), &handle);
  EXPECT_EQ(status.code(), Code::INVALID_ARGUMENT) << status;
  EXPECT_NE(status.message().find("'pick'"), std::string::npos) << status;
  EXPECT_NE(status.message().find("nested calls"), std::string::npos) << status;
}

}  // namespace
}  // namespace tensorweave
