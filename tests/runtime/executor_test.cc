// The executor, the intra-process rendezvous, device-name parsing and the
// partitioner, below the session.
#include "runtime/common_runtime/executor.h"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "runtime/common_runtime/partition.h"
#include "runtime/common_runtime/placer.h"
#include "runtime/common_runtime/rendezvous_impl.h"
#include "runtime/common_runtime/thread_pools.h"
#include "runtime/framework/op_kernel.h"
#include "runtime/graph/graph_def_import.h"
#include "tests/runtime/session_test_util.h"

namespace tensorweave {
namespace {

using namespace session_test;  // NOLINT: test helpers

constexpr char kCpu0[] = "/job:localhost/replica:0/task:0/device:CPU:0";
constexpr char kCpu1[] = "/job:localhost/replica:0/task:0/device:CPU:1";

class ExecutorTest : public ::testing::Test {
 protected:
  ExecutorTest() : device_(kCpu0, DEVICE_CPU, TestIntraOpDevice()), runner_(TestRunner()) {}

  static const Eigen::ThreadPoolDevice* TestIntraOpDevice() {
    const Eigen::ThreadPoolDevice* device = nullptr;
    EXPECT_TRUE(IntraOpDevice(2, &device).ok());
    return device;
  }
  static Executor::Runner TestRunner() {
    Executor::Runner runner;
    EXPECT_TRUE(InterOpRunner(4, &runner).ok());
    return runner;
  }

  // An executor for `graph_def` on device_.
  std::unique_ptr<Executor> Build(const GraphDef& graph_def) {
    Graph graph(OpRegistry::Global());
    Status status = ConvertGraphDefToGraph(graph_def, &graph);
    EXPECT_TRUE(status.ok()) << status;
    std::unique_ptr<Executor> executor;
    LocalExecutorParams params;
    params.device = &device_;
    status = NewLocalExecutor(params, graph, &executor);
    EXPECT_TRUE(status.ok()) << status;
    return executor;
  }

  NodeDef* AddRetval(GraphDef* graph, const std::string& name, const std::string& input,
                     int index) {
    NodeDef* node = AddNode(graph, name, "_Retval", {input});
    SetAttr(node, "T", DT_FLOAT);
    SetAttr(node, "index", int64_t{index});
    return node;
  }

  Executor::Args ArgsFor(CallFrameInterface* frame) {
    Executor::Args args;
    args.call_frame = frame;
    args.rendezvous = &rendezvous_;
    args.cancellation_manager = &cancellation_;
    args.runner = &runner_;
    return args;
  }

  Device device_;
  Executor::Runner runner_;
  IntraProcessRendezvous rendezvous_;
  CancellationManager cancellation_;
};

TEST_F(ExecutorTest, RunsAChainAndFillsTheFrame) {
  GraphDef graph;
  NodeDef* arg = AddNode(&graph, "in", "_Arg");
  SetAttr(arg, "T", DT_FLOAT);
  SetAttr(arg, "index", int64_t{0});
  AddAffine(&graph, "a", "in", 2.0f, 1.0f);
  AddAffine(&graph, "b", "a", 10.0f, 0.0f);
  AddScalar(&graph, "c", 5.0f);
  AddNode(&graph, "sum", "SessionTestSum", {"b", "c"});
  AddRetval(&graph, "out0", "sum", 0);
  AddRetval(&graph, "out1", "a", 1);
  std::unique_ptr<Executor> executor = Build(graph);
  ASSERT_NE(executor, nullptr);
  for (float x : {1.0f, 2.0f, 3.0f}) {
    Tensor feeds[] = {FloatVector({x, -x})};
    SimpleCallFrame frame(feeds, 1, 2);
    SESSION_ASSERT_OK(executor->Run(ArgsFor(&frame)));
    EXPECT_EQ(Values((*frame.retvals())[0]),
              std::vector<float>({(2 * x + 1) * 10 + 5, (-2 * x + 1) * 10 + 5}));
    EXPECT_EQ(Values((*frame.retvals())[1]), std::vector<float>({2 * x + 1, -2 * x + 1}));
  }
}

TEST_F(ExecutorTest, FeedsAreNeverOverwrittenInPlace) {
  GraphDef graph;
  NodeDef* arg = AddNode(&graph, "in", "_Arg");
  SetAttr(arg, "T", DT_FLOAT);
  SetAttr(arg, "index", int64_t{0});
  AddAffine(&graph, "a", "in", 2.0f, 0.0f);
  AddRetval(&graph, "out", "a", 0);
  std::unique_ptr<Executor> executor = Build(graph);
  Tensor feeds[] = {FloatVector({1, 2})};
  SimpleCallFrame frame(feeds, 1, 1);
  SESSION_ASSERT_OK(executor->Run(ArgsFor(&frame)));
  EXPECT_EQ(Values(feeds[0]), std::vector<float>({1, 2})) << "the caller still holds the feed";
  EXPECT_EQ(Values((*frame.retvals())[0]), std::vector<float>({2, 4}));
}

TEST_F(ExecutorTest, AKernelErrorNamesTheNodeAndStopsItsConsumers) {
  GraphDef graph;
  AddScalar(&graph, "x", 1.0f);
  AddNode(&graph, "bad", "SessionTestFail", {"x"});
  AddNode(&graph, "after", "SessionTestCounter", {"^bad"});
  AddRetval(&graph, "out", "bad", 0);
  std::unique_ptr<Executor> executor = Build(graph);
  const int counted = counter_runs.load();
  SimpleCallFrame frame(nullptr, 0, 1);
  const Status status = executor->Run(ArgsFor(&frame));
  EXPECT_EQ(status.code(), Code::INVALID_ARGUMENT);
  EXPECT_EQ(status.message(), "SessionTestFail always fails (node 'bad', op SessionTestFail)");
  EXPECT_EQ(counter_runs.load(), counted);
  EXPECT_TRUE(cancellation_.IsCancelled()) << "an error cancels the step";
}

TEST_F(ExecutorTest, ExpensiveNodesRunInParallel) {
  GraphDef graph;
  AddScalar(&graph, "x", 1.0f);
  for (int i = 0; i < 4; ++i) {
    NodeDef* sleep = AddNode(&graph, "sleep" + std::to_string(i), "SessionTestSleep", {"x"});
    SetAttr(sleep, "millis", int64_t{100});
  }
  AddNode(&graph, "s01", "SessionTestSum", {"sleep0", "sleep1"});
  AddNode(&graph, "s23", "SessionTestSum", {"sleep2", "sleep3"});
  AddNode(&graph, "total", "SessionTestSum", {"s01", "s23"});
  AddRetval(&graph, "out", "total", 0);
  std::unique_ptr<Executor> executor = Build(graph);
  SimpleCallFrame frame(nullptr, 0, 1);
  const auto start = std::chrono::steady_clock::now();
  SESSION_ASSERT_OK(executor->Run(ArgsFor(&frame)));
  const auto elapsed = std::chrono::steady_clock::now() - start;
  EXPECT_EQ(Values((*frame.retvals())[0]), std::vector<float>({4}));
  EXPECT_LT(elapsed, std::chrono::milliseconds(350)) << "four 100 ms sleeps overlap";
}

TEST_F(ExecutorTest, ConcurrentStepsOfOneExecutorStayApart) {
  GraphDef graph;
  NodeDef* arg = AddNode(&graph, "in", "_Arg");
  SetAttr(arg, "T", DT_FLOAT);
  SetAttr(arg, "index", int64_t{0});
  AddAffine(&graph, "a", "in", 3.0f, 0.0f);
  AddRetval(&graph, "out", "a", 0);
  std::unique_ptr<Executor> executor = Build(graph);
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 500; ++i) {
        const float x = static_cast<float>(t * 1000 + i);
        Tensor feeds[] = {FloatVector({x})};
        SimpleCallFrame frame(feeds, 1, 1);
        Executor::Args args;
        args.call_frame = &frame;
        if (!executor->Run(args).ok() ||
            Values((*frame.retvals())[0]) != std::vector<float>{3 * x}) {
          ++wrong;
        }
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(wrong.load(), 0);
}

TEST_F(ExecutorTest, RecvWakesUpCancelledWhenTheStepIsCancelled) {
  GraphDef graph;
  AddBlockingRecv(&graph, "never");
  AddRetval(&graph, "out", "never", 0);
  std::unique_ptr<Executor> executor = Build(graph);
  SimpleCallFrame frame(nullptr, 0, 1);
  std::thread canceller([this] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    cancellation_.StartCancel();
  });
  const Status status = executor->Run(ArgsFor(&frame));
  canceller.join();
  EXPECT_EQ(status.code(), Code::CANCELLED) << status;
  EXPECT_NE(status.message().find("(node 'never', op _Recv)"), std::string::npos) << status;
}

TEST_F(ExecutorTest, ReadingAnUninitializedVariableIsFailedPrecondition) {
  if (!KernelExists(DEVICE_CPU, [] {
        NodeDef def;
        def.set_op("VariableV2");
        SetAttr(&def, "dtype", DT_FLOAT);
        return def;
      }())) {
    GTEST_SKIP() << "VariableV2 kernel not linked";
  }
  GraphDef graph;
  NodeDef* variable = AddNode(&graph, "weights", "VariableV2");
  SetAttr(variable, "dtype", DT_FLOAT);
  SetAttr(variable, "shape", PartialTensorShape());
  AddAffine(&graph, "use", "weights", 1.0f, 0.0f);
  AddRetval(&graph, "out", "use", 0);
  std::unique_ptr<Executor> executor = Build(graph);
  SimpleCallFrame frame(nullptr, 0, 1);
  const Status status = executor->Run(ArgsFor(&frame));
  EXPECT_EQ(status.code(), Code::FAILED_PRECONDITION);
  EXPECT_EQ(status.message(),
            "Attempting to use uninitialized value weights (node 'use', op SessionTestAffine)");
}

// --- Rendezvous ---------------------------------------------------------------

TEST(IntraProcessRendezvousTest, SendThenRecvAndRecvThenSend) {
  IntraProcessRendezvous rendezvous;
  const std::string key = Rendezvous::CreateKey(kCpu0, 0x75bcd15, kCpu1, "t");
  EXPECT_EQ(key, std::string(kCpu0) + ";00000000075bcd15;" + kCpu1 + ";t;0:0");
  SESSION_ASSERT_OK(rendezvous.Send(key, FloatScalar(1), false));
  float received = 0;
  rendezvous.RecvAsync(key, [&](const Status& status, const Tensor& value, bool) {
    EXPECT_TRUE(status.ok());
    received = value.scalar<float>();
  });
  EXPECT_EQ(received, 1);
  EXPECT_EQ(rendezvous.Send(key, FloatScalar(2), false).code(), Code::ALREADY_EXISTS);

  const std::string other = Rendezvous::CreateKey(kCpu0, 1, kCpu1, "u");
  rendezvous.RecvAsync(other, [&](const Status& status, const Tensor& value, bool) {
    received = value.scalar<float>();
  });
  EXPECT_EQ(received, 1) << "waits for the send";
  SESSION_ASSERT_OK(rendezvous.Send(other, FloatScalar(3), false));
  EXPECT_EQ(received, 3);
}

TEST(IntraProcessRendezvousTest, AbortFailsPendingAndLaterOperations) {
  IntraProcessRendezvous rendezvous;
  Status pending_status;
  rendezvous.RecvAsync("a",
                       [&](const Status& status, const Tensor&, bool) { pending_status = status; });
  rendezvous.StartAbort(errors::Cancelled("stop"));
  EXPECT_EQ(pending_status.code(), Code::CANCELLED);
  EXPECT_EQ(rendezvous.Send("b", FloatScalar(1), false).code(), Code::CANCELLED);
  Status later_status;
  rendezvous.RecvAsync("c",
                       [&](const Status& status, const Tensor&, bool) { later_status = status; });
  EXPECT_EQ(later_status.message(), "stop");
}

// --- Device names and partitioning --------------------------------------------

TEST(PlacerTest, ParsesTheUsualSpellings) {
  DeviceSpec spec;
  for (const char* name : {"/device:CPU:1", "/cpu:1", "CPU:1", "/CPU:1",
                           "/job:localhost/replica:0/task:0/device:CPU:1"}) {
    SESSION_ASSERT_OK(ParseDeviceSpec(name, &spec));
    EXPECT_EQ(spec.type, "CPU") << name;
    EXPECT_EQ(spec.id, 1) << name;
  }
  SESSION_ASSERT_OK(ParseDeviceSpec("/job:localhost/device:CPU:*", &spec));
  EXPECT_EQ(spec.job, "localhost");
  EXPECT_EQ(spec.id, -1);
  SESSION_ASSERT_OK(ParseDeviceSpec("", &spec));
  EXPECT_EQ(spec.ToString(), "");
  EXPECT_EQ(ParseDeviceSpec("/device:CPU:x", &spec).code(), Code::INVALID_ARGUMENT);
  EXPECT_EQ(ParseDeviceSpec("/whatever", &spec).code(), Code::INVALID_ARGUMENT);

  DeviceSpec full, partial;
  SESSION_ASSERT_OK(ParseDeviceSpec(kCpu1, &full));
  SESSION_ASSERT_OK(ParseDeviceSpec("/cpu:1", &partial));
  EXPECT_TRUE(partial.Matches(full));
  SESSION_ASSERT_OK(ParseDeviceSpec("/cpu:0", &partial));
  EXPECT_FALSE(partial.Matches(full));
  DeviceSpec merged;
  SESSION_ASSERT_OK(ParseDeviceSpec("/job:localhost", &merged));
  EXPECT_TRUE(merged.MergeFrom(partial));
  EXPECT_EQ(merged.ToString(), "/job:localhost/device:CPU:0");
  EXPECT_FALSE(merged.MergeFrom(full));
}

TEST(PartitionTest, CopiesAskForThePlacedDeviceAndTheSourceKeepsItsRequest) {
  // Kernels read the device from their NodeDef: a partition's copy of a
  // node asks for the device it was placed on, while the graph partitioned
  // keeps what the user requested.
  GraphDef graph_def;
  AddScalar(&graph_def, "x", 1.0f);
  AddAffine(&graph_def, "a", "x", 2.0f, 0.0f);
  graph_def.mutable_node(1)->set_device("/device:CPU:1");
  Graph graph(OpRegistry::Global());
  SESSION_ASSERT_OK(ConvertGraphDefToGraph(graph_def, &graph));
  for (Node* node : graph.op_nodes()) {
    node->set_assigned_device_name(node->name() == "x" ? kCpu0 : kCpu1);
  }
  std::map<std::string, std::unique_ptr<Graph>> partitions;
  SESSION_ASSERT_OK(PartitionGraph(PartitionOptions(), graph, &partitions));
  ASSERT_EQ(partitions.size(), 2u);
  Node* x = partitions[kCpu0]->FindNode("x");
  Node* a = partitions[kCpu1]->FindNode("a");
  ASSERT_NE(x, nullptr);
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(x->def().device(), kCpu0);
  EXPECT_EQ(x->assigned_device_name(), kCpu0);
  EXPECT_EQ(a->def().device(), kCpu1);
  EXPECT_EQ(a->def().input_size(), 0);
  EXPECT_EQ(graph.FindNode("x")->requested_device(), "");
  EXPECT_EQ(graph.FindNode("a")->requested_device(), "/device:CPU:1");
}

TEST(PartitionTest, OnePairPerTensorAndDestination) {
  GraphDef graph_def;
  AddScalar(&graph_def, "x", 1.0f);
  AddAffine(&graph_def, "a", "x", 1.0f, 0.0f);
  AddAffine(&graph_def, "b", "x", 1.0f, 0.0f);
  AddNode(&graph_def, "c", "SessionTestSum", {"a", "x"});
  Graph graph(OpRegistry::Global());
  SESSION_ASSERT_OK(ConvertGraphDefToGraph(graph_def, &graph));
  for (Node* node : graph.op_nodes()) {
    node->set_assigned_device_name(node->name() == "x" ? kCpu0 : kCpu1);
  }
  std::map<std::string, std::unique_ptr<Graph>> partitions;
  PartitionOptions options;
  options.device_incarnation = [](const std::string& device) {
    return device == kCpu0 ? uint64_t{0xfeedface12345678} : uint64_t{7};
  };
  SESSION_ASSERT_OK(PartitionGraph(options, graph, &partitions));
  ASSERT_EQ(partitions.size(), 2u);
  GraphDef cpu0, cpu1;
  partitions[kCpu0]->ToGraphDef(&cpu0);
  partitions[kCpu1]->ToGraphDef(&cpu1);
  // x feeds three consumers on CPU:1 through one pair.
  ASSERT_EQ(cpu0.node_size(), 2);
  ASSERT_EQ(cpu1.node_size(), 4);
  const NodeDef& send = cpu0.node(1);
  EXPECT_EQ(send.op(), "_Send");
  std::string recv_device;
  SESSION_ASSERT_OK(GetNodeAttr(send, "recv_device", &recv_device));
  EXPECT_EQ(recv_device, kCpu1);
  for (const NodeDef& node : cpu1.node()) EXPECT_EQ(node.device(), kCpu1);
  // Both ends name the sending device's incarnation, so their keys agree.
  std::vector<const NodeDef*> transfers = {&send};
  for (const NodeDef& node : cpu1.node()) {
    if (node.op() == "_Recv") transfers.push_back(&node);
  }
  ASSERT_EQ(transfers.size(), 2u);
  for (const NodeDef* transfer : transfers) {
    SCOPED_TRACE(transfer->name());
    int64_t incarnation = 0;
    SESSION_ASSERT_OK(GetNodeAttr(*transfer, "send_device_incarnation", &incarnation));
    EXPECT_EQ(static_cast<uint64_t>(incarnation), uint64_t{0xfeedface12345678});
  }
}

TEST(PartitionTest, ByTaskKeepsEdgesWithinATaskAndCutsTheOthers) {
  const std::string task0_cpu0 = "/job:worker/replica:0/task:0/device:CPU:0";
  const std::string task0_cpu1 = "/job:worker/replica:0/task:0/device:CPU:1";
  const std::string task1_cpu0 = "/job:ps/replica:0/task:0/device:CPU:0";
  GraphDef graph_def;
  AddScalar(&graph_def, "x", 1.0f);
  AddAffine(&graph_def, "a", "x", 1.0f, 0.0f);
  AddAffine(&graph_def, "b", "x", 1.0f, 0.0f);
  Graph graph(OpRegistry::Global());
  SESSION_ASSERT_OK(ConvertGraphDefToGraph(graph_def, &graph));
  graph.FindNode("x")->set_assigned_device_name(task0_cpu0);
  graph.FindNode("a")->set_assigned_device_name(task0_cpu1);
  graph.FindNode("b")->set_assigned_device_name(task1_cpu0);
  PartitionOptions options;
  options.node_to_location = [](const Node& node) {
    const std::string& device = node.assigned_device_name();
    return device.substr(0, device.find("/device:"));
  };
  std::map<std::string, std::unique_ptr<Graph>> partitions;
  SESSION_ASSERT_OK(PartitionGraph(options, graph, &partitions));
  ASSERT_EQ(partitions.size(), 2u);
  GraphDef worker, ps;
  partitions["/job:worker/replica:0/task:0"]->ToGraphDef(&worker);
  partitions["/job:ps/replica:0/task:0"]->ToGraphDef(&ps);
  // x → a stays an edge between two devices of one task; x → b is cut.
  std::map<std::string, const NodeDef*> by_name;
  for (const NodeDef& node : worker.node()) by_name[node.name()] = &node;
  ASSERT_EQ(worker.node_size(), 3);
  ASSERT_TRUE(by_name.count("a"));
  EXPECT_EQ(by_name["a"]->device(), task0_cpu1);
  EXPECT_EQ(by_name["a"]->input(0), "x");
  ASSERT_EQ(ps.node_size(), 2);
  for (const NodeDef& node : ps.node()) EXPECT_EQ(node.device(), task1_cpu0);
  const NodeDef& recv = ps.node(0).op() == "_Recv" ? ps.node(0) : ps.node(1);
  ASSERT_EQ(recv.op(), "_Recv");
  std::string send_device;
  SESSION_ASSERT_OK(GetNodeAttr(recv, "send_device", &send_device));
  EXPECT_EQ(send_device, task0_cpu0);
}

TEST(RendezvousKeyTest, ParsesWhatItCreates) {
  const std::string key = Rendezvous::CreateKey(kCpu0, 0xfeedface12345678, kCpu1, "edge_3_x");
  Rendezvous::ParsedKey parsed;
  SESSION_ASSERT_OK(Rendezvous::ParseKey(key, &parsed));
  EXPECT_EQ(parsed.send_device, kCpu0);
  EXPECT_EQ(parsed.send_device_incarnation, uint64_t{0xfeedface12345678});
  EXPECT_EQ(parsed.recv_device, kCpu1);
  EXPECT_EQ(parsed.tensor_name, "edge_3_x");
  EXPECT_EQ(parsed.frame_iter, "0:0");
}

TEST(RendezvousKeyTest, RejectsMalformedKeys) {
  const std::string good_incarnation = "00000000075bcd15";
  for (const std::string& key : std::vector<std::string>{
           "",
           "a;b;c",
           std::string(kCpu0) + ";" + good_incarnation + ";" + kCpu1 + ";t",  // four parts
           std::string(kCpu0) + ";" + good_incarnation + ";" + kCpu1 + ";t;0:0;x",
           std::string(kCpu0) + ";xyz;" + kCpu1 + ";t;0:0",                      // not hex
           std::string(kCpu0) + ";00000000075bcd15ff;" + kCpu1 + ";t;0:0",       // 72 bits
           std::string(kCpu0) + ";" + good_incarnation + ";" + kCpu1 + ";;0:0",  // no name
           "/device:CPU:0;" + good_incarnation + ";" + kCpu1 + ";t;0:0",         // short name
           std::string(kCpu0) + ";" + good_incarnation +
               ";/job:w/replica:x/task:0/device:CPU:0;t;0:0",
       }) {
    SCOPED_TRACE(key);
    Rendezvous::ParsedKey parsed;
    EXPECT_EQ(Rendezvous::ParseKey(key, &parsed).code(), Code::INVALID_ARGUMENT);
  }
}

}  // namespace
}  // namespace tensorweave
