// DirectSession: lifecycle, the executor cache, pruning, placement across two
// CPU devices, cancellation by Close and by timeouts, concurrent runs, the
// error paths of Run, and callables (prepared runs).
#include "runtime/common_runtime/direct_session.h"

#include <google/protobuf/util/message_differencer.h>
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "runtime/common_runtime/session_factory.h"
#include "runtime/framework/op_kernel.h"
#include "tests/runtime/session_test_util.h"

namespace tensorweave {
namespace {

using namespace session_test;  // NOLINT: test helpers

constexpr char kCpu0[] = "/job:localhost/replica:0/task:0/device:CPU:0";
constexpr char kCpu1[] = "/job:localhost/replica:0/task:0/device:CPU:1";

std::unique_ptr<Session> NewDirectSession(const ConfigProto& config = ConfigProto()) {
  SessionOptions options;
  options.config = config;
  std::unique_ptr<Session> session;
  const Status status = NewSession(options, &session);
  EXPECT_TRUE(status.ok()) << status;
  return session;
}

ConfigProto TwoCpus() {
  ConfigProto config;
  (*config.mutable_device_count())["CPU"] = 2;
  return config;
}

// y = x * 2 + 1 from a fed "x", plus an unrelated branch.
GraphDef AffineGraph(const std::string& device = "") {
  GraphDef graph;
  AddScalar(&graph, "x", 0.0f);
  AddAffine(&graph, "y", "x", 2.0f, 1.0f, device);
  return graph;
}

int CountOps(const GraphDef& graph, const std::string& op) {
  int count = 0;
  for (const NodeDef& node : graph.node()) count += node.op() == op;
  return count;
}

// --- Factory ------------------------------------------------------------------

TEST(SessionFactoryTest, EmptyTargetMakesADirectSession) {
  std::unique_ptr<Session> session = NewDirectSession();
  ASSERT_NE(session, nullptr);
  EXPECT_NE(dynamic_cast<DirectSession*>(session.get()), nullptr);
}

TEST(SessionFactoryTest, AnUnknownSchemeListsTheRegisteredFactories) {
  SessionOptions options;
  options.target = "carrier-pigeon://localhost:2222";
  std::unique_ptr<Session> session;
  const Status status = NewSession(options, &session);
  EXPECT_EQ(status.code(), Code::NOT_FOUND);
  EXPECT_EQ(status.message(),
            "No session factory registered for the given session options: "
            "{target: \"carrier-pigeon://localhost:2222\"} Registered factories are "
            "{DIRECT_SESSION, GRPC_SESSION}.");
  EXPECT_EQ(session, nullptr);
}

// --- Lifecycle ----------------------------------------------------------------

TEST(DirectSessionTest, CreateRunExtendRerunClose) {
  std::unique_ptr<Session> session = NewDirectSession();
  SESSION_ASSERT_OK(session->Create(AffineGraph()));
  std::vector<Tensor> outputs;
  SESSION_ASSERT_OK(session->Run({{"x", FloatVector({1, 2})}}, {"y:0"}, {}, &outputs));
  ASSERT_EQ(outputs.size(), 1u);
  EXPECT_EQ(Values(outputs[0]), std::vector<float>({3, 5}));

  // Extend after a run: the new node reads an existing one.
  GraphDef more;
  AddAffine(&more, "z", "y", 1.0f, -1.0f);
  SESSION_ASSERT_OK(session->Extend(more));
  SESSION_ASSERT_OK(session->Run({{"x", FloatVector({1, 2})}}, {"z", "y"}, {}, &outputs));
  ASSERT_EQ(outputs.size(), 2u);
  EXPECT_EQ(Values(outputs[0]), std::vector<float>({2, 4}));
  EXPECT_EQ(Values(outputs[1]), std::vector<float>({3, 5}));

  // Rerun the first signature: still cached, still right.
  SESSION_ASSERT_OK(session->Run({{"x", FloatVector({0})}}, {"y:0"}, {}, &outputs));
  EXPECT_EQ(Values(outputs[0]), std::vector<float>({1}));

  SESSION_ASSERT_OK(session->Close());
  SESSION_EXPECT_OK(session->Close());  // closing twice is fine
  Status status = session->Run({{"x", FloatVector({0})}}, {"y:0"}, {}, &outputs);
  EXPECT_EQ(status.code(), Code::CANCELLED);
  EXPECT_EQ(status.message(), "Session has been closed.");
  EXPECT_EQ(session->Extend(GraphDef()).code(), Code::CANCELLED);
  EXPECT_EQ(session->Create(GraphDef()).code(), Code::CANCELLED);
  session.reset();  // delete after close
}

TEST(DirectSessionTest, CreateTwiceIsAlreadyExists) {
  std::unique_ptr<Session> session = NewDirectSession();
  SESSION_ASSERT_OK(session->Create(AffineGraph()));
  EXPECT_EQ(session->Create(GraphDef()).code(), Code::ALREADY_EXISTS);
}

TEST(DirectSessionTest, ExtendBeforeCreateActsAsCreate) {
  std::unique_ptr<Session> session = NewDirectSession();
  SESSION_ASSERT_OK(session->Extend(AffineGraph()));
  std::vector<Tensor> outputs;
  SESSION_ASSERT_OK(session->Run({}, {"y"}, {}, &outputs));
  EXPECT_EQ(Values(outputs[0]), std::vector<float>({1}));
  EXPECT_EQ(session->Create(GraphDef()).code(), Code::ALREADY_EXISTS);
}

TEST(DirectSessionTest, ExtendWithAnExistingNameChangesNothing) {
  std::unique_ptr<Session> session = NewDirectSession();
  SESSION_ASSERT_OK(session->Create(AffineGraph()));
  GraphDef clash;
  AddScalar(&clash, "fresh", 1.0f);
  AddScalar(&clash, "y", 1.0f);
  const Status status = session->Extend(clash);
  EXPECT_EQ(status.code(), Code::INVALID_ARGUMENT);
  EXPECT_NE(status.message().find("'y'"), std::string::npos) << status;
  std::vector<Tensor> outputs;
  EXPECT_EQ(session->Run({}, {"fresh"}, {}, &outputs).code(), Code::NOT_FOUND)
      << "a failed Extend adds nothing";
  // A bad GraphDef (unknown op) also leaves the graph as it was.
  GraphDef bad;
  AddScalar(&bad, "fresh", 1.0f);
  AddNode(&bad, "broken", "NoSuchOpAnywhere");
  EXPECT_FALSE(session->Extend(bad).ok());
  EXPECT_EQ(session->Run({}, {"fresh"}, {}, &outputs).code(), Code::NOT_FOUND);
  SESSION_EXPECT_OK(session->Run({}, {"y"}, {}, &outputs));
}

TEST(DirectSessionTest, RunBeforeCreateIsFailedPrecondition) {
  std::unique_ptr<Session> session = NewDirectSession();
  std::vector<Tensor> outputs;
  EXPECT_EQ(session->Run({}, {"y"}, {}, &outputs).code(), Code::FAILED_PRECONDITION);
}

TEST(DirectSessionTest, ListDevicesFollowsDeviceCount) {
  std::vector<DeviceAttributes> devices;
  SESSION_ASSERT_OK(NewDirectSession()->ListDevices(&devices));
  ASSERT_EQ(devices.size(), 1u);
  EXPECT_EQ(devices[0].name, kCpu0);
  EXPECT_EQ(devices[0].device_type, "CPU");
  SESSION_ASSERT_OK(NewDirectSession(TwoCpus())->ListDevices(&devices));
  ASSERT_EQ(devices.size(), 2u);
  EXPECT_EQ(devices[1].name, kCpu1);
}

// --- Executor cache -----------------------------------------------------------

TEST(DirectSessionTest, RepeatedSignaturesReuseExecutors) {
  std::unique_ptr<Session> session = NewDirectSession();
  GraphDef graph = AffineGraph();
  AddAffine(&graph, "w", "x", 3.0f, 0.0f);
  SESSION_ASSERT_OK(session->Create(graph));
  std::vector<Tensor> outputs;
  for (int i = 0; i < 3; ++i) {
    SESSION_ASSERT_OK(session->Run({{"x", FloatVector({1})}}, {"y", "w"}, {}, &outputs));
  }
  SessionStats stats = session->stats();
  EXPECT_EQ(stats.runs, 3);
  EXPECT_EQ(stats.executors_built, 1);
  EXPECT_EQ(stats.cache_hits, 2);

  // The same signature in another order hits the cache and keeps the order
  // of the outputs the caller asked for.
  SESSION_ASSERT_OK(session->Run({{"x", FloatVector({1})}}, {"w", "y"}, {}, &outputs));
  EXPECT_EQ(Values(outputs[0]), std::vector<float>({3}));
  EXPECT_EQ(Values(outputs[1]), std::vector<float>({3}));
  SESSION_ASSERT_OK(session->Run({{"x", FloatVector({2})}}, {"w", "y"}, {}, &outputs));
  EXPECT_EQ(Values(outputs[0]), std::vector<float>({6}));
  EXPECT_EQ(Values(outputs[1]), std::vector<float>({5}));
  stats = session->stats();
  EXPECT_EQ(stats.runs, 5);
  EXPECT_EQ(stats.executors_built, 1);
  EXPECT_EQ(stats.cache_hits, 4);

  // A different signature builds once more.
  SESSION_ASSERT_OK(session->Run({}, {"y"}, {}, &outputs));
  stats = session->stats();
  EXPECT_EQ(stats.executors_built, 2);
  EXPECT_EQ(stats.runs, 6);
  EXPECT_EQ(stats.cache_hits, 4);
}

// Two scalars a and b, sum = a + b and a10 = a * 10: two feeds and two
// fetches whose order can be permuted.
GraphDef SumAndScaledGraph() {
  GraphDef graph;
  AddScalar(&graph, "a", 0.0f);
  AddScalar(&graph, "b", 0.0f);
  AddNode(&graph, "sum", "SessionTestSum", {"a", "b"});
  AddAffine(&graph, "a10", "a", 10.0f, 0.0f);
  return graph;
}

TEST(DirectSessionTest, PermutedFeedsHitTheCacheAndLandInTheRightArgs) {
  std::unique_ptr<Session> session = NewDirectSession();
  SESSION_ASSERT_OK(session->Create(SumAndScaledGraph()));
  std::vector<Tensor> outputs;
  SESSION_ASSERT_OK(
      session->Run({{"a", FloatScalar(1)}, {"b", FloatScalar(2)}}, {"sum", "a10"}, {}, &outputs));
  EXPECT_EQ(Values(outputs[0]), std::vector<float>({3}));
  EXPECT_EQ(Values(outputs[1]), std::vector<float>({10}));
  SESSION_ASSERT_OK(
      session->Run({{"b", FloatScalar(5)}, {"a", FloatScalar(7)}}, {"a10", "sum"}, {}, &outputs));
  EXPECT_EQ(Values(outputs[0]), std::vector<float>({70}));
  EXPECT_EQ(Values(outputs[1]), std::vector<float>({12}));
  EXPECT_EQ(session->stats().executors_built, 1);
  EXPECT_EQ(session->stats().cache_hits, 1);
}

TEST(DirectSessionTest, FetchingOneTensorTwiceReturnsItTwice) {
  std::unique_ptr<Session> session = NewDirectSession();
  SESSION_ASSERT_OK(session->Create(AffineGraph()));
  std::vector<Tensor> outputs;
  SESSION_ASSERT_OK(session->Run({{"x", FloatVector({1})}}, {"y", "y:0", "y"}, {}, &outputs));
  ASSERT_EQ(outputs.size(), 3u);
  for (const Tensor& output : outputs) EXPECT_EQ(Values(output), std::vector<float>({3}));
}

// --- Pruning ------------------------------------------------------------------

TEST(DirectSessionTest, PruningSkipsNodesTheFetchesDoNotNeed) {
  std::unique_ptr<Session> session = NewDirectSession();
  GraphDef graph = AffineGraph();
  AddNode(&graph, "fails", "SessionTestFail", {"x"});
  AddPlaceholder(&graph, "unfed");
  AddAffine(&graph, "uses_unfed", "unfed", 1.0f, 0.0f);
  AddNode(&graph, "counter", "SessionTestCounter");
  SESSION_ASSERT_OK(session->Create(graph));

  const int counted = counter_runs.load();
  std::vector<Tensor> outputs;
  SESSION_ASSERT_OK(session->Run({{"x", FloatVector({1})}}, {"y"}, {}, &outputs));
  EXPECT_EQ(counter_runs.load(), counted) << "the counter is outside the fetched subgraph";
  SESSION_ASSERT_OK(session->Run({}, {}, {"counter"}, &outputs));
  EXPECT_EQ(counter_runs.load(), counted + 1) << "a target runs";
  EXPECT_TRUE(outputs.empty());

  const Status status = session->Run({}, {"fails"}, {}, &outputs);
  EXPECT_EQ(status.code(), Code::INVALID_ARGUMENT);
  EXPECT_EQ(status.message(), "SessionTestFail always fails (node 'fails', op SessionTestFail)");
}

TEST(DirectSessionTest, FeedingATensorCutsOffItsProducer) {
  std::unique_ptr<Session> session = NewDirectSession();
  GraphDef graph;
  AddScalar(&graph, "x", 0.0f);
  AddNode(&graph, "broken", "SessionTestFail", {"x"});
  AddAffine(&graph, "y", "broken", 2.0f, 0.0f);
  SESSION_ASSERT_OK(session->Create(graph));
  std::vector<Tensor> outputs;
  SESSION_ASSERT_OK(session->Run({{"broken", FloatVector({4})}}, {"y"}, {}, &outputs));
  EXPECT_EQ(Values(outputs[0]), std::vector<float>({8}));
}

// --- Errors of Run ------------------------------------------------------------

TEST(DirectSessionTest, RunErrors) {
  std::unique_ptr<Session> session = NewDirectSession();
  GraphDef graph = AffineGraph();
  AddPlaceholder(&graph, "p", [] {
    PartialTensorShape shape;
    PartialTensorShape::Build({-1, 4}, &shape);
    return shape;
  }());
  AddAffine(&graph, "py", "p", 1.0f, 0.0f);
  SESSION_ASSERT_OK(session->Create(graph));
  std::vector<Tensor> outputs;
  const Tensor one = FloatVector({1});

  Status status = session->Run({{"x", one}}, {}, {}, &outputs);
  EXPECT_EQ(status.code(), Code::INVALID_ARGUMENT) << "no fetch and no target";
  EXPECT_EQ(session->Run({{"nope", one}}, {"y"}, {}, &outputs).code(), Code::NOT_FOUND);
  EXPECT_EQ(session->Run({{"x:1", one}}, {"y"}, {}, &outputs).code(), Code::NOT_FOUND);
  EXPECT_EQ(session->Run({}, {"nope:0"}, {}, &outputs).code(), Code::NOT_FOUND);
  EXPECT_EQ(session->Run({}, {"y:3"}, {}, &outputs).code(), Code::NOT_FOUND);
  status = session->Run({}, {}, {"nope"}, &outputs);
  EXPECT_EQ(status.code(), Code::NOT_FOUND);
  EXPECT_EQ(status.message(), "Target node 'nope' not found in the graph");
  status = session->Run({{"x", one}, {"x:0", one}}, {"y"}, {}, &outputs);
  EXPECT_EQ(status.code(), Code::INVALID_ARGUMENT);
  EXPECT_EQ(status.message(), "Tensor 'x:0' is fed more than once");
  status = session->Run({{"x", one}}, {"x:0"}, {}, &outputs);
  EXPECT_EQ(status.code(), Code::INVALID_ARGUMENT);
  EXPECT_EQ(status.message(), "Tensor 'x:0' is both fed and fetched");

  Tensor ints(DT_INT32, TensorShape({1}));
  ints.data<int32_t>()[0] = 1;
  status = session->Run({{"x", ints}}, {"y"}, {}, &outputs);
  EXPECT_EQ(status.code(), Code::INVALID_ARGUMENT);
  EXPECT_EQ(status.message(), "Cannot feed a int32 value for tensor 'x', which is float");

  SESSION_EXPECT_OK(
      session->Run({{"p", Tensor(DT_FLOAT, TensorShape({3, 4}))}}, {"py"}, {}, &outputs));
  status = session->Run({{"p", Tensor(DT_FLOAT, TensorShape({3, 5}))}}, {"py"}, {}, &outputs);
  EXPECT_EQ(status.code(), Code::INVALID_ARGUMENT);
  EXPECT_EQ(status.message(),
            "Cannot feed a value of shape [3,5] for tensor 'p', which has shape [?,4]");

  // Failed validations neither run nor count as cache hits, and leave no
  // outputs behind.
  const SessionStats stats = session->stats();
  EXPECT_EQ(stats.runs, 1);
  EXPECT_EQ(stats.cache_hits, 0);
  EXPECT_TRUE(outputs.empty());
}

TEST(DirectSessionTest, UnfedPlaceholderInTheFetchedSubgraphNamesIt) {
  std::unique_ptr<Session> session = NewDirectSession();
  GraphDef graph;
  AddPlaceholder(&graph, "p");
  AddAffine(&graph, "q", "p", 1.0f, 0.0f);
  SESSION_ASSERT_OK(session->Create(graph));
  std::vector<Tensor> outputs;
  const Status status = session->Run({}, {"q"}, {}, &outputs);
  EXPECT_EQ(status.code(), Code::INVALID_ARGUMENT);
  EXPECT_NE(status.message().find("'p'"), std::string::npos) << status;
}

// --- Devices ------------------------------------------------------------------

TEST(DirectSessionTest, TwoCpusPartitionWithSendAndRecv) {
  GraphDef graph;
  AddScalar(&graph, "x", 0.0f);
  AddAffine(&graph, "on1", "x", 2.0f, 0.0f, "/device:CPU:1");
  AddAffine(&graph, "also_on1", "x", 3.0f, 0.0f, "/cpu:1");
  AddNode(&graph, "back_on0", "SessionTestSum", {"on1", "also_on1"});
  // A control edge across devices, too.
  AddNode(&graph, "counter", "SessionTestCounter", {}, "CPU:1");
  AddNode(&graph, "after_counter", "SessionTestAffine", {"back_on0", "^counter"});

  std::vector<Tensor> single_outputs, dual_outputs;
  ConfigProto soft;
  soft.set_allow_soft_placement(true);  // CPU:1 requests fall back to CPU:0
  std::unique_ptr<Session> single = NewDirectSession(soft);
  SESSION_ASSERT_OK(single->Create(graph));
  SESSION_ASSERT_OK(
      single->Run({{"x", FloatVector({1, 2})}}, {"after_counter"}, {}, &single_outputs));

  std::unique_ptr<Session> dual = NewDirectSession(TwoCpus());
  SESSION_ASSERT_OK(dual->Create(graph));
  const int counted = counter_runs.load();
  for (int i = 0; i < 3; ++i) {
    SESSION_ASSERT_OK(
        dual->Run({{"x", FloatVector({1, 2})}}, {"after_counter"}, {}, &dual_outputs));
  }
  EXPECT_EQ(counter_runs.load(), counted + 3);
  EXPECT_EQ(Values(dual_outputs[0]), std::vector<float>({5, 10}));
  EXPECT_EQ(Values(dual_outputs[0]), Values(single_outputs[0]));

  std::map<std::string, GraphDef> partitions;
  SESSION_ASSERT_OK(static_cast<DirectSession*>(dual.get())
                        ->GetPartitionGraphs({"x"}, {"after_counter"}, {}, &partitions));
  ASSERT_EQ(partitions.size(), 2u);
  const GraphDef& cpu0 = partitions[kCpu0];
  const GraphDef& cpu1 = partitions[kCpu1];
  // x goes to CPU:1 once (one pair for both consumers); on1, also_on1 and
  // the control signal of counter come back.
  EXPECT_EQ(CountOps(cpu0, "_Send"), 1);
  EXPECT_EQ(CountOps(cpu1, "_Recv"), 1);
  EXPECT_EQ(CountOps(cpu1, "_Send"), 3);
  EXPECT_EQ(CountOps(cpu0, "_Recv"), 3);
  for (const NodeDef& node : cpu1.node()) EXPECT_EQ(node.device(), kCpu1) << node.name();

  std::map<std::string, GraphDef> one_partition;
  SESSION_ASSERT_OK(static_cast<DirectSession*>(single.get())
                        ->GetPartitionGraphs({"x"}, {"after_counter"}, {}, &one_partition));
  ASSERT_EQ(one_partition.size(), 1u);
  EXPECT_EQ(CountOps(one_partition[kCpu0], "_Send"), 0);
}

// A signature placed on one device is its own partition (not copied) and
// its GraphDef is made only when a run or GetPartitionGraphs asks for it.
TEST(DirectSessionTest, AOneDevicePartitionIsReportedWhenAskedFor) {
  std::unique_ptr<Session> session = NewDirectSession();
  auto* direct = static_cast<DirectSession*>(session.get());
  SESSION_ASSERT_OK(session->Create(AffineGraph("/device:CPU:0")));
  std::vector<Tensor> outputs;
  RunMetadata untraced;
  SESSION_ASSERT_OK(
      direct->Run(RunOptions(), {{"x", FloatVector({1, 2})}}, {"y"}, {}, &outputs, &untraced));
  EXPECT_EQ(untraced.partition_graphs_size(), 0);
  RunOptions asking;
  asking.set_output_partition_graphs(true);
  RunMetadata traced;
  SESSION_ASSERT_OK(
      direct->Run(asking, {{"x", FloatVector({1, 2})}}, {"y"}, {}, &outputs, &traced));
  EXPECT_EQ(Values(outputs[0]), std::vector<float>({3, 5}));
  ASSERT_EQ(traced.partition_graphs_size(), 1);
  std::map<std::string, GraphDef> partitions;
  SESSION_ASSERT_OK(direct->GetPartitionGraphs({"x"}, {"y"}, {}, &partitions));
  ASSERT_EQ(partitions.size(), 1u);
  const GraphDef& partition = partitions[kCpu0];
  EXPECT_TRUE(
      google::protobuf::util::MessageDifferencer::Equals(partition, traced.partition_graphs(0)));
  EXPECT_EQ(CountOps(partition, "_Arg"), 1);
  EXPECT_EQ(CountOps(partition, "_Retval"), 1);
  for (const NodeDef& node : partition.node()) EXPECT_EQ(node.device(), kCpu0) << node.name();
}

TEST(DirectSessionTest, FeedsAndFetchesOnTheSecondDevice) {
  std::unique_ptr<Session> session = NewDirectSession(TwoCpus());
  GraphDef graph;
  AddScalar(&graph, "x", 0.0f, "/device:CPU:1");
  AddAffine(&graph, "y", "x", 2.0f, 1.0f, "/job:localhost/replica:0/task:0/device:CPU:1");
  AddAffine(&graph, "z", "y", 1.0f, 1.0f);
  SESSION_ASSERT_OK(session->Create(graph));
  std::vector<Tensor> outputs;
  SESSION_ASSERT_OK(session->Run({{"x", FloatVector({1})}}, {"y", "z"}, {}, &outputs));
  EXPECT_EQ(Values(outputs[0]), std::vector<float>({3}));
  EXPECT_EQ(Values(outputs[1]), std::vector<float>({4}));
}

TEST(DirectSessionTest, RequestForAMissingDeviceIsInvalidUnlessSoft) {
  GraphDef graph = AffineGraph("/device:CPU:7");
  std::unique_ptr<Session> strict = NewDirectSession(TwoCpus());
  SESSION_ASSERT_OK(strict->Create(graph));
  std::vector<Tensor> outputs;
  const Status status = strict->Run({}, {"y"}, {}, &outputs);
  EXPECT_EQ(status.code(), Code::INVALID_ARGUMENT);
  EXPECT_NE(status.message().find("'y'"), std::string::npos) << status;
  EXPECT_NE(status.message().find(kCpu1), std::string::npos) << "lists the devices: " << status;

  ConfigProto soft = TwoCpus();
  soft.set_allow_soft_placement(true);
  std::unique_ptr<Session> lenient = NewDirectSession(soft);
  SESSION_ASSERT_OK(lenient->Create(AffineGraph("/device:GPU:0")));
  SESSION_ASSERT_OK(lenient->Run({}, {"y"}, {}, &outputs));
  EXPECT_EQ(Values(outputs[0]), std::vector<float>({1}));
}

TEST(DirectSessionTest, LogDevicePlacementPrintsEachNode) {
  ConfigProto config = TwoCpus();
  config.set_log_device_placement(true);
  std::unique_ptr<Session> session = NewDirectSession(config);
  SESSION_ASSERT_OK(session->Create(AffineGraph("/cpu:1")));
  std::vector<Tensor> outputs;
  testing::internal::CaptureStderr();
  SESSION_ASSERT_OK(session->Run({}, {"y"}, {}, &outputs));
  const std::string log = testing::internal::GetCapturedStderr();
  EXPECT_NE(log.find(std::string("y -> ") + kCpu1), std::string::npos) << log;
  EXPECT_NE(log.find(std::string("x -> ") + kCpu0), std::string::npos) << log;
}

bool VariableKernelsLinked() {
  NodeDef variable;
  variable.set_op("VariableV2");
  SetAttr(&variable, "dtype", DT_FLOAT);
  return KernelExists(DEVICE_CPU, variable);
}

TEST(DirectSessionTest, VariablesKeepValuesAndReportUninitializedReads) {
  if (!VariableKernelsLinked()) GTEST_SKIP() << "VariableV2 kernel not linked";
  std::unique_ptr<Session> session = NewDirectSession(TwoCpus());
  GraphDef graph;
  NodeDef* variable = AddNode(&graph, "v", "VariableV2", {}, "/device:CPU:1");
  SetAttr(variable, "dtype", DT_FLOAT);
  PartialTensorShape shape;
  PartialTensorShape::Build({2}, &shape);
  SetAttr(variable, "shape", shape);
  NodeDef* initial = AddNode(&graph, "initial", "Const");
  SetAttr(initial, "dtype", DT_FLOAT);
  SetAttr(initial, "value", FloatVector({1, 2}));
  NodeDef* assign = AddNode(&graph, "assign", "Assign", {"v", "initial"});
  SetAttr(assign, "T", DT_FLOAT);
  NodeDef* read = AddNode(&graph, "read", "Identity", {"v"});
  SetAttr(read, "T", DT_FLOAT);
  AddAffine(&graph, "doubled", "read", 2.0f, 0.0f);
  SESSION_ASSERT_OK(session->Create(graph));

  std::vector<Tensor> outputs;
  Status status = session->Run({}, {"doubled"}, {}, &outputs);
  EXPECT_EQ(status.code(), Code::FAILED_PRECONDITION);
  EXPECT_NE(status.message().find("Attempting to use uninitialized value v"), std::string::npos)
      << status;
  // `read` is on CPU:0, so the value leaves CPU:1 through a _Send named
  // after its reader.
  EXPECT_NE(status.message().find("read"), std::string::npos) << status;

  SESSION_ASSERT_OK(session->Run({}, {}, {"assign"}, &outputs));
  SESSION_ASSERT_OK(session->Run({}, {"doubled", "v"}, {}, &outputs));
  EXPECT_EQ(Values(outputs[0]), std::vector<float>({2, 4}));
  EXPECT_EQ(Values(outputs[1]), std::vector<float>({1, 2}));

  // Assign takes v by reference, so it went to v's device.
  std::map<std::string, GraphDef> partitions;
  SESSION_ASSERT_OK(static_cast<DirectSession*>(session.get())
                        ->GetPartitionGraphs({}, {}, {"assign"}, &partitions));
  ASSERT_EQ(partitions.count(kCpu1), 1u);
  int assigns_on_cpu1 = 0;
  for (const NodeDef& node : partitions[kCpu1].node()) assigns_on_cpu1 += node.name() == "assign";
  EXPECT_EQ(assigns_on_cpu1, 1);
}

TEST(DirectSessionTest, AnAssignAskingForAnotherDeviceFollowsItsVariable) {
  if (!VariableKernelsLinked()) GTEST_SKIP() << "VariableV2 kernel not linked";
  std::unique_ptr<Session> session = NewDirectSession(TwoCpus());
  GraphDef graph;
  NodeDef* variable = AddNode(&graph, "v", "VariableV2", {}, "/device:CPU:1");
  SetAttr(variable, "dtype", DT_FLOAT);
  SetAttr(variable, "shape", PartialTensorShape());
  NodeDef* initial = AddNode(&graph, "initial", "Const", {}, "/device:CPU:0");
  SetAttr(initial, "dtype", DT_FLOAT);
  SetAttr(initial, "value", FloatScalar(5));
  // As a device function would place it: on another device than v.
  NodeDef* assign = AddNode(&graph, "assign", "Assign", {"v", "initial"}, "/device:CPU:0");
  SetAttr(assign, "T", DT_FLOAT);
  SESSION_ASSERT_OK(session->Create(graph));
  std::vector<Tensor> outputs;
  SESSION_ASSERT_OK(session->Run({}, {"assign"}, {}, &outputs));
  EXPECT_EQ(outputs[0].scalar<float>(), 5);
  std::map<std::string, GraphDef> partitions;
  SESSION_ASSERT_OK(static_cast<DirectSession*>(session.get())
                        ->GetPartitionGraphs({}, {"assign"}, {}, &partitions));
  int assigns_on_cpu1 = 0;
  for (const NodeDef& node : partitions[kCpu1].node()) assigns_on_cpu1 += node.name() == "assign";
  EXPECT_EQ(assigns_on_cpu1, 1) << "the ref reader's own request gives way to its variable's";
}

TEST(DirectSessionTest, UninitializedReadNamesVariableAndReader) {
  if (!VariableKernelsLinked()) GTEST_SKIP() << "VariableV2 kernel not linked";
  std::unique_ptr<Session> session = NewDirectSession();
  GraphDef graph;
  NodeDef* variable = AddNode(&graph, "weights", "VariableV2");
  SetAttr(variable, "dtype", DT_FLOAT);
  SetAttr(variable, "shape", PartialTensorShape());
  SetAttr(AddNode(&graph, "read", "Identity", {"weights"}), "T", DT_FLOAT);
  SESSION_ASSERT_OK(session->Create(graph));
  std::vector<Tensor> outputs;
  const Status status = session->Run({}, {"read"}, {}, &outputs);
  EXPECT_EQ(status.code(), Code::FAILED_PRECONDITION);
  EXPECT_EQ(status.message(),
            "Attempting to use uninitialized value weights (node 'read', op Identity)");
}

TEST(DirectSessionTest, UninitializedFetchNamesTheVariableNotTheRetval) {
  if (!VariableKernelsLinked()) GTEST_SKIP() << "VariableV2 kernel not linked";
  std::unique_ptr<Session> session = NewDirectSession();
  GraphDef graph;
  NodeDef* variable = AddNode(&graph, "weights", "VariableV2");
  SetAttr(variable, "dtype", DT_FLOAT);
  SetAttr(variable, "shape", PartialTensorShape());
  SESSION_ASSERT_OK(session->Create(graph));
  std::vector<Tensor> outputs;
  const Status status = session->Run({}, {"weights"}, {}, &outputs);
  EXPECT_EQ(status.code(), Code::FAILED_PRECONDITION);
  EXPECT_EQ(status.message(),
            "Attempting to use uninitialized value weights (node 'weights', op VariableV2)");
}

// --- Cancellation -------------------------------------------------------------

// A step that waits until it is cancelled. (User graphs may not hold the
// runtime's _Recv, so the waiting is done by a test op.)
GraphDef BlockingGraph() {
  GraphDef graph = AffineGraph();
  AddWaitForCancel(&graph, "never");
  AddAffine(&graph, "waits", "never", 1.0f, 0.0f);
  return graph;
}

TEST(DirectSessionTest, UserGraphsMayNotHoldInternalOps) {
  std::unique_ptr<Session> session = NewDirectSession();
  GraphDef graph = AffineGraph();
  AddBlockingRecv(&graph, "never");
  const Status status = session->Create(graph);
  EXPECT_EQ(status.code(), Code::INVALID_ARGUMENT) << status;
  EXPECT_NE(status.message().find("Node 'never' has op '_Recv'"), std::string::npos) << status;
  // Nothing was added: the graph without the _Recv is still welcome.
  SESSION_EXPECT_OK(session->Create(AffineGraph()));
}

TEST(DirectSessionTest, CloseCancelsARunningStep) {
  std::unique_ptr<Session> session = NewDirectSession();
  SESSION_ASSERT_OK(session->Create(BlockingGraph()));
  Status blocked_status;
  std::thread blocked([&] {
    std::vector<Tensor> outputs;
    blocked_status = session->Run({}, {"waits"}, {}, &outputs);
  });
  // Wait until the step is really in flight.
  while (session->stats().runs == 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  SESSION_ASSERT_OK(session->Close());
  blocked.join();
  EXPECT_EQ(blocked_status.code(), Code::CANCELLED) << blocked_status;
  EXPECT_EQ(blocked_status.message(), "Step was cancelled: Session has been closed.");
}

TEST(DirectSessionTest, DeletingASessionWithAStepInFlightCancelsIt) {
  auto session = NewDirectSession(TwoCpus());
  GraphDef graph = BlockingGraph();
  graph.mutable_node(graph.node_size() - 1)->set_device("/device:CPU:1");
  SESSION_ASSERT_OK(session->Create(graph));
  Status blocked_status;
  Session* raw = session.get();
  std::thread blocked([&] {
    std::vector<Tensor> outputs;
    blocked_status = raw->Run({}, {"waits"}, {}, &outputs);
  });
  while (raw->stats().runs == 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  session.reset();  // closes, then waits for the step to end
  blocked.join();
  EXPECT_EQ(blocked_status.code(), Code::CANCELLED) << blocked_status;
}

TEST(DirectSessionTest, OperationTimeoutEndsAStepWithDeadlineExceeded) {
  ConfigProto config;
  config.set_operation_timeout_in_ms(50);
  std::unique_ptr<Session> session = NewDirectSession(config);
  SESSION_ASSERT_OK(session->Create(BlockingGraph()));
  std::vector<Tensor> outputs;
  const auto start = std::chrono::steady_clock::now();
  const Status status = session->Run({}, {"waits"}, {}, &outputs);
  const auto elapsed = std::chrono::steady_clock::now() - start;
  EXPECT_EQ(status.code(), Code::DEADLINE_EXCEEDED) << status;
  EXPECT_EQ(status.message(), "Timed out after 50 ms");
  EXPECT_GE(elapsed, std::chrono::milliseconds(50));
  EXPECT_LT(elapsed, std::chrono::seconds(5));
  // The session is still usable, and quick steps meet the timeout.
  SESSION_ASSERT_OK(session->Run({{"x", FloatVector({1})}}, {"y"}, {}, &outputs));
  EXPECT_EQ(Values(outputs[0]), std::vector<float>({3}));
}

TEST(DirectSessionTest, RunOptionsTimeoutOverridesTheConfig) {
  ConfigProto config;
  config.set_operation_timeout_in_ms(60000);
  std::unique_ptr<Session> session = NewDirectSession(config);
  SESSION_ASSERT_OK(session->Create(BlockingGraph()));
  RunOptions options;
  options.set_timeout_in_ms(30);
  std::vector<Tensor> outputs;
  const Status status = session->Run(options, {}, {"waits"}, {}, &outputs);
  EXPECT_EQ(status.code(), Code::DEADLINE_EXCEEDED) << status;
  EXPECT_EQ(status.message(), "Timed out after 30 ms");
}

// Twenty 30 ms sleeps in a chain: about 600 ms of kernels that never block.
GraphDef SleepyChain() {
  GraphDef graph;
  AddScalar(&graph, "start", 1.0f);
  std::string previous = "start";
  for (int i = 0; i < 20; ++i) {
    const std::string name = "sleep" + std::to_string(i);
    SetAttr(AddNode(&graph, name, "SessionTestSleep", {previous}), "millis", int64_t{30});
    previous = name;
  }
  AddAffine(&graph, "end", previous, 1.0f, 0.0f);
  return graph;
}

TEST(DirectSessionTest, CloseStopsAChainOfBusyKernels) {
  std::unique_ptr<Session> session = NewDirectSession();
  SESSION_ASSERT_OK(session->Create(SleepyChain()));
  Status status;
  const auto start = std::chrono::steady_clock::now();
  std::thread running([&] {
    std::vector<Tensor> outputs;
    status = session->Run({}, {"end"}, {}, &outputs);
  });
  while (session->stats().runs == 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  SESSION_ASSERT_OK(session->Close());
  running.join();
  EXPECT_EQ(status.code(), Code::CANCELLED) << status;
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(400));
}

TEST(DirectSessionTest, TimeoutStopsAChainOfBusyKernels) {
  ConfigProto config;
  config.set_operation_timeout_in_ms(80);
  std::unique_ptr<Session> session = NewDirectSession(config);
  SESSION_ASSERT_OK(session->Create(SleepyChain()));
  std::vector<Tensor> outputs;
  const auto start = std::chrono::steady_clock::now();
  const Status status = session->Run({}, {"end"}, {}, &outputs);
  EXPECT_EQ(status.code(), Code::DEADLINE_EXCEEDED) << status;
  EXPECT_EQ(status.message(), "Timed out after 80 ms");
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(400));
}

// One kernel asked (by a 4-byte shape) for 2^30 normal draws, about 20 s of
// work: the timeout ends it mid-kernel, and Close would too.
TEST(DirectSessionTest, TimeoutStopsOneLongRandomKernel) {
  GraphDef graph;
  Tensor shape(DT_INT32, TensorShape({1}));
  shape.data<int32_t>()[0] = 1 << 30;
  NodeDef* shape_node = AddNode(&graph, "shape", "Const");
  SetAttr(shape_node, "dtype", DT_INT32);
  SetAttr(shape_node, "value", shape);
  NodeDef* normal = AddNode(&graph, "normal", "RandomStandardNormal", {"shape"});
  SetAttr(normal, "dtype", DT_FLOAT);
  SetAttr(normal, "T", DT_INT32);
  ConfigProto config;
  config.set_operation_timeout_in_ms(50);
  std::unique_ptr<Session> session = NewDirectSession(config);
  SESSION_ASSERT_OK(session->Create(graph));
  std::vector<Tensor> outputs;
  const auto start = std::chrono::steady_clock::now();
  const Status status = session->Run({}, {"normal"}, {}, &outputs);
  EXPECT_EQ(status.code(), Code::DEADLINE_EXCEEDED) << status;
  EXPECT_EQ(status.message(), "Timed out after 50 ms");
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
}

// --- Concurrency --------------------------------------------------------------

// x, y = x * 2 + 1 and z = y + 0.5; z on the second CPU when `config`
// gives the session more than one.
GraphDef AffineChainGraph(const ConfigProto& config) {
  GraphDef graph;
  AddScalar(&graph, "x", 0.0f);
  AddAffine(&graph, "y", "x", 2.0f, 1.0f);
  AddAffine(&graph, "z", "y", 1.0f, 0.5f, config.device_count().empty() ? "" : "/cpu:1");
  return graph;
}

TEST(DirectSessionTest, EightThreadsShareOneSession) {
  for (const ConfigProto& config : {ConfigProto(), TwoCpus()}) {
    std::unique_ptr<Session> session = NewDirectSession(config);
    SESSION_ASSERT_OK(session->Create(AffineChainGraph(config)));
    constexpr int kThreads = 8, kRuns = 300;
    std::atomic<int> failures{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&, t] {
        std::vector<Tensor> outputs;
        for (int i = 0; i < kRuns; ++i) {
          const float x = static_cast<float>(t * 1000 + i);
          // Half the threads spell the signature the other way round.
          const bool flip = t % 2 == 1;
          Status status = session->Run(
              {{"x", FloatVector({x, -x})}},
              flip ? std::vector<std::string>{"z", "y"} : std::vector<std::string>{"y", "z"}, {},
              &outputs);
          const Tensor& y = outputs.size() == 2 ? outputs[flip ? 1 : 0] : Tensor();
          const Tensor& z = outputs.size() == 2 ? outputs[flip ? 0 : 1] : Tensor();
          if (!status.ok() || Values(y) != std::vector<float>({2 * x + 1, -2 * x + 1}) ||
              Values(z) != std::vector<float>({2 * x + 1.5f, -2 * x + 1.5f})) {
            ++failures;
          }
        }
      });
    }
    for (std::thread& thread : threads) thread.join();
    EXPECT_EQ(failures.load(), 0);
    const SessionStats stats = session->stats();
    EXPECT_EQ(stats.runs, kThreads * kRuns);
    EXPECT_EQ(stats.executors_built + stats.cache_hits, stats.runs);
    EXPECT_EQ(stats.executors_built, 1);
  }
}

TEST(DirectSessionTest, HundredsOfSessionsShareThreadPools) {
  for (int i = 0; i < 200; ++i) {
    std::unique_ptr<Session> session = NewDirectSession();
    SESSION_ASSERT_OK(session->Create(AffineGraph()));
    std::vector<Tensor> outputs;
    SESSION_ASSERT_OK(session->Run({{"x", FloatVector({1})}}, {"y"}, {}, &outputs));
  }
}

// --- Callables ------------------------------------------------------------------

CallableOptions MakeOptions(const std::vector<std::string>& feeds,
                            const std::vector<std::string>& fetches,
                            const std::vector<std::string>& targets = {}) {
  CallableOptions options;
  for (const std::string& feed : feeds) options.add_feed(feed);
  for (const std::string& fetch : fetches) options.add_fetch(fetch);
  for (const std::string& target : targets) options.add_target(target);
  return options;
}

TEST(DirectSessionCallableTest, MakeRunRelease) {
  std::unique_ptr<Session> session = NewDirectSession();
  GraphDef graph = AffineGraph();
  AddAffine(&graph, "w", "x", 3.0f, 0.0f);
  AddNode(&graph, "counter", "SessionTestCounter");
  SESSION_ASSERT_OK(session->Create(graph));
  Session::CallableHandle handle = -1;
  // A fetch repeated and a target: the outputs follow the options' order.
  SESSION_ASSERT_OK(
      session->MakeCallable(MakeOptions({"x"}, {"w", "y", "w"}, {"counter"}), &handle));
  const int counted = counter_runs.load();
  std::vector<Tensor> fetches;
  for (float x : {1.0f, 2.0f}) {
    SESSION_ASSERT_OK(session->RunCallable(handle, {FloatVector({x})}, &fetches));
    ASSERT_EQ(fetches.size(), 3u);
    EXPECT_EQ(Values(fetches[0]), std::vector<float>({3 * x}));
    EXPECT_EQ(Values(fetches[1]), std::vector<float>({2 * x + 1}));
    EXPECT_EQ(Values(fetches[2]), std::vector<float>({3 * x}));
  }
  EXPECT_EQ(counter_runs.load(), counted + 2) << "the target runs on every call";
  SESSION_ASSERT_OK(session->ReleaseCallable(handle));
  Status status = session->RunCallable(handle, {FloatVector({1})}, &fetches);
  EXPECT_EQ(status.code(), Code::INVALID_ARGUMENT) << status;
  EXPECT_EQ(status.message(), "Callable handle 0 was released");
  EXPECT_TRUE(fetches.empty());
  // As in TensorFlow, releasing a released handle is not an error.
  SESSION_EXPECT_OK(session->ReleaseCallable(handle));
}

TEST(DirectSessionCallableTest, UnknownHandlesAreInvalidArgument) {
  std::unique_ptr<Session> session = NewDirectSession();
  SESSION_ASSERT_OK(session->Create(AffineGraph()));
  std::vector<Tensor> fetches;
  for (Session::CallableHandle handle : {int64_t{0}, int64_t{-1}, int64_t{1} << 40}) {
    Status status = session->RunCallable(handle, {}, &fetches);
    EXPECT_EQ(status.code(), Code::INVALID_ARGUMENT) << status;
    EXPECT_EQ(status.message(), "No such callable handle: " + std::to_string(handle));
    status = session->ReleaseCallable(handle);
    EXPECT_EQ(status.code(), Code::INVALID_ARGUMENT) << status;
  }
}

TEST(DirectSessionCallableTest, FeedCountAndValuesAreChecked) {
  std::unique_ptr<Session> session = NewDirectSession();
  SESSION_ASSERT_OK(session->Create(AffineGraph()));
  Session::CallableHandle handle = -1;
  SESSION_ASSERT_OK(session->MakeCallable(MakeOptions({"x"}, {"y"}), &handle));
  std::vector<Tensor> fetches;
  Status status = session->RunCallable(handle, {}, &fetches);
  EXPECT_EQ(status.code(), Code::INVALID_ARGUMENT) << status;
  EXPECT_EQ(status.message(), "Callable 0 takes 1 feed values, but got 0");
  status = session->RunCallable(handle, {FloatVector({1}), FloatVector({2})}, &fetches);
  EXPECT_EQ(status.code(), Code::INVALID_ARGUMENT) << status;
  Tensor ints(DT_INT32, TensorShape({1}));
  ints.data<int32_t>()[0] = 1;
  status = session->RunCallable(handle, {ints}, &fetches);
  EXPECT_EQ(status.code(), Code::INVALID_ARGUMENT);
  EXPECT_EQ(status.message(), "Cannot feed a int32 value for tensor 'x', which is float");
  EXPECT_EQ(session->stats().runs, 0) << "nothing ran";
  EXPECT_TRUE(fetches.empty());
}

TEST(DirectSessionCallableTest, MakeCallableReportsRunErrors) {
  std::unique_ptr<Session> session = NewDirectSession();
  SESSION_ASSERT_OK(session->Create(AffineGraph()));
  Session::CallableHandle handle = -1;
  EXPECT_EQ(session->MakeCallable(MakeOptions({"x"}, {}), &handle).code(), Code::INVALID_ARGUMENT);
  EXPECT_EQ(session->MakeCallable(MakeOptions({}, {"nope:0"}), &handle).code(), Code::NOT_FOUND);
  Status status = session->MakeCallable(MakeOptions({"x"}, {"x:0"}), &handle);
  EXPECT_EQ(status.code(), Code::INVALID_ARGUMENT);
  EXPECT_EQ(status.message(), "Tensor 'x:0' is both fed and fetched");
  EXPECT_EQ(handle, -1) << "no handle is written on failure";
  // Failed makes use no handle numbers.
  SESSION_ASSERT_OK(session->MakeCallable(MakeOptions({}, {"y"}), &handle));
  EXPECT_EQ(handle, 0);
}

TEST(DirectSessionCallableTest, UnsupportedOptionsAreRefusedNotIgnored) {
  std::unique_ptr<Session> session = NewDirectSession();
  SESSION_ASSERT_OK(session->Create(AffineGraph()));
  Session::CallableHandle handle = -1;
  CallableOptions connected = MakeOptions({}, {"y"});
  TensorConnection* connection = connected.add_tensor_connection();
  connection->set_from_tensor("y:0");
  connection->set_to_tensor("x:0");
  Status status = session->MakeCallable(connected, &handle);
  EXPECT_EQ(status.code(), Code::UNIMPLEMENTED) << status;
  EXPECT_NE(status.message().find("tensor_connection"), std::string::npos) << status;
  for (bool feed_side : {true, false}) {
    CallableOptions placed = MakeOptions({"x"}, {"y"});
    (*(feed_side ? placed.mutable_feed_devices() : placed.mutable_fetch_devices()))["x:0"] = kCpu0;
    status = session->MakeCallable(placed, &handle);
    EXPECT_EQ(status.code(), Code::UNIMPLEMENTED) << status;
    EXPECT_NE(status.message().find("feed_devices"), std::string::npos) << status;
  }
  // fetch_skip_sync has nothing to skip on CPU devices: accepted.
  CallableOptions skip_sync = MakeOptions({}, {"y"});
  skip_sync.set_fetch_skip_sync(true);
  SESSION_EXPECT_OK(session->MakeCallable(skip_sync, &handle));
  EXPECT_EQ(handle, 0);
}

TEST(DirectSessionCallableTest, RunOptionsTimeoutAppliesToEveryRun) {
  std::unique_ptr<Session> session = NewDirectSession();
  SESSION_ASSERT_OK(session->Create(BlockingGraph()));
  CallableOptions options = MakeOptions({}, {"waits"});
  options.mutable_run_options()->set_timeout_in_ms(30);
  Session::CallableHandle handle = -1;
  SESSION_ASSERT_OK(session->MakeCallable(options, &handle));
  std::vector<Tensor> fetches;
  for (int i = 0; i < 2; ++i) {
    const Status status = session->RunCallable(handle, {}, &fetches);
    EXPECT_EQ(status.code(), Code::DEADLINE_EXCEEDED) << status;
    EXPECT_EQ(status.message(), "Timed out after 30 ms");
  }
}

TEST(DirectSessionCallableTest, CloseMakesCallablesFailLikeRun) {
  std::unique_ptr<Session> session = NewDirectSession();
  SESSION_ASSERT_OK(session->Create(BlockingGraph()));  // also holds y = x * 2 + 1
  Session::CallableHandle blocking = -1, affine = -1;
  SESSION_ASSERT_OK(session->MakeCallable(MakeOptions({}, {"waits"}), &blocking));
  SESSION_ASSERT_OK(session->MakeCallable(MakeOptions({"x"}, {"y"}), &affine));
  Status blocked_status;
  std::thread blocked([&] {
    std::vector<Tensor> fetches;
    blocked_status = session->RunCallable(blocking, {}, &fetches);
  });
  while (session->stats().runs == 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  SESSION_ASSERT_OK(session->Close());
  blocked.join();
  EXPECT_EQ(blocked_status.code(), Code::CANCELLED) << blocked_status;
  EXPECT_EQ(blocked_status.message(), "Step was cancelled: Session has been closed.");

  std::vector<Tensor> fetches;
  Status status = session->RunCallable(affine, {FloatVector({1})}, &fetches);
  EXPECT_EQ(status.code(), Code::CANCELLED) << status;
  EXPECT_EQ(status.message(), "Session has been closed.");
  Session::CallableHandle late = -1;
  EXPECT_EQ(session->MakeCallable(MakeOptions({"x"}, {"y"}), &late).code(), Code::CANCELLED);
  SESSION_EXPECT_OK(session->ReleaseCallable(affine));
}

TEST(DirectSessionCallableTest, CallablesShareTheCacheWithRun) {
  std::unique_ptr<Session> session = NewDirectSession();
  SESSION_ASSERT_OK(session->Create(SumAndScaledGraph()));
  std::vector<Tensor> outputs;
  SESSION_ASSERT_OK(
      session->Run({{"a", FloatScalar(1)}, {"b", FloatScalar(2)}}, {"sum", "a10"}, {}, &outputs));
  // The same signature spelled the other way round compiles nothing and
  // binds feeds and fetches in the callable's own order.
  Session::CallableHandle handle = -1;
  SESSION_ASSERT_OK(session->MakeCallable(MakeOptions({"b", "a"}, {"a10", "sum"}), &handle));
  EXPECT_EQ(session->stats().executors_built, 1);
  SESSION_ASSERT_OK(session->RunCallable(handle, {FloatScalar(5), FloatScalar(7)}, &outputs));
  EXPECT_EQ(Values(outputs[0]), std::vector<float>({70}));
  EXPECT_EQ(Values(outputs[1]), std::vector<float>({12}));
  EXPECT_EQ(session->stats().cache_hits, 1);

  // A callable compiling a new signature: its first run is the compiling
  // one, the next is a hit, and Run then finds the compiled signature.
  SESSION_ASSERT_OK(session->MakeCallable(MakeOptions({"a"}, {"a10"}), &handle));
  EXPECT_EQ(session->stats().executors_built, 2);
  SESSION_ASSERT_OK(session->RunCallable(handle, {FloatScalar(2)}, &outputs));
  SESSION_ASSERT_OK(session->RunCallable(handle, {FloatScalar(3)}, &outputs));
  EXPECT_EQ(Values(outputs[0]), std::vector<float>({30}));
  SESSION_ASSERT_OK(session->Run({{"a", FloatScalar(4)}}, {"a10"}, {}, &outputs));
  EXPECT_EQ(Values(outputs[0]), std::vector<float>({40}));
  const SessionStats stats = session->stats();
  EXPECT_EQ(stats.executors_built, 2);
  EXPECT_EQ(stats.runs, 5);
  EXPECT_EQ(stats.cache_hits, 3);
}

TEST(DirectSessionCallableTest, ConcurrentRunsMakesAndReleases) {
  for (const ConfigProto& config : {ConfigProto(), TwoCpus()}) {
    std::unique_ptr<Session> session = NewDirectSession(config);
    SESSION_ASSERT_OK(session->Create(AffineChainGraph(config)));
    Session::CallableHandle shared = -1;
    SESSION_ASSERT_OK(session->MakeCallable(MakeOptions({"x"}, {"y", "z"}), &shared));
    constexpr int kThreads = 8, kRuns = 300;
    std::atomic<int> failures{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&, t] {
        // Odd threads also make and release callables of their own while
        // the others run the shared one.
        std::vector<Tensor> fetches;
        for (int i = 0; i < kRuns; ++i) {
          const float x = static_cast<float>(t * 1000 + i);
          Session::CallableHandle handle = shared;
          if (t % 2 == 1 && !session->MakeCallable(MakeOptions({"x"}, {"z", "y"}), &handle).ok()) {
            ++failures;
            continue;
          }
          const bool flip = handle != shared;
          const Status status = session->RunCallable(handle, {FloatVector({x, -x})}, &fetches);
          const Tensor& y = fetches.size() == 2 ? fetches[flip ? 1 : 0] : Tensor();
          const Tensor& z = fetches.size() == 2 ? fetches[flip ? 0 : 1] : Tensor();
          if (!status.ok() || Values(y) != std::vector<float>({2 * x + 1, -2 * x + 1}) ||
              Values(z) != std::vector<float>({2 * x + 1.5f, -2 * x + 1.5f})) {
            ++failures;
          }
          if (flip && !session->ReleaseCallable(handle).ok()) ++failures;
        }
      });
    }
    for (std::thread& thread : threads) thread.join();
    EXPECT_EQ(failures.load(), 0);
    const SessionStats stats = session->stats();
    EXPECT_EQ(stats.runs, kThreads * kRuns);
    EXPECT_EQ(stats.executors_built, 1);
    EXPECT_EQ(stats.executors_built + stats.cache_hits, stats.runs);
  }
}

}  // namespace
}  // namespace tensorweave

namespace tensorweave {
namespace {

using namespace session_test;  // NOLINT: test helpers

// The session overhead benchmark, in C++: y = x * 2 + 1 on a 1x4
// float feed. Prints microseconds per Run on a cache hit.
TEST(DirectSessionBenchmark, XTimesTwoPlusOne) {
  GraphDef graph;
  PartialTensorShape shape;
  PartialTensorShape::Build({-1, 4}, &shape);
  AddPlaceholder(&graph, "x", shape);
  NodeDef* two = AddNode(&graph, "two", "Const");
  SetAttr(two, "dtype", DT_FLOAT);
  SetAttr(two, "value", FloatScalar(2));
  NodeDef* one = AddNode(&graph, "one", "Const");
  SetAttr(one, "dtype", DT_FLOAT);
  SetAttr(one, "value", FloatScalar(1));
  SetAttr(AddNode(&graph, "mul", "Mul", {"x", "two"}), "T", DT_FLOAT);
  SetAttr(AddNode(&graph, "y", "AddV2", {"mul", "one"}), "T", DT_FLOAT);
  for (const NodeDef& node : graph.node()) {
    if (node.op() != "Placeholder" && !KernelExists(DEVICE_CPU, node)) {
      GTEST_SKIP() << "no kernel for " << node.op();
    }
  }
  SessionOptions options;
  std::unique_ptr<Session> session;
  SESSION_ASSERT_OK(NewSession(options, &session));
  SESSION_ASSERT_OK(session->Create(graph));
  Tensor x(DT_FLOAT, TensorShape({1, 4}));
  for (int i = 0; i < 4; ++i) x.data<float>()[i] = static_cast<float>(i);
  const std::vector<std::pair<std::string, Tensor>> feeds = {{"x:0", x}};
  const std::vector<std::string> fetches = {"y:0"};
  std::vector<Tensor> outputs;
  SESSION_ASSERT_OK(session->Run(feeds, fetches, {}, &outputs));
  ASSERT_EQ(Values(outputs[0]), std::vector<float>({1, 3, 5, 7}));

  constexpr int kRuns = 20000;
  double best = 1e9;
  for (int round = 0; round < 3; ++round) {
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < kRuns; ++i) session->Run(feeds, fetches, {}, &outputs);
    const double micros =
        std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start)
            .count() /
        kRuns;
    best = std::min(best, micros);
  }
  EXPECT_EQ(Values(outputs[0]), std::vector<float>({1, 3, 5, 7}));
  EXPECT_EQ(session->stats().executors_built, 1);
  std::printf("[ bench    ] DirectSession::Run of x*2+1 on 1x4 float: %.2f us per run\n", best);
}

}  // namespace
}  // namespace tensorweave
