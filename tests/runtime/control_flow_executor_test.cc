// The executor on graphs with TensorFlow 1.x control flow, built by hand:
// conds (Switch/Merge), dead tensors, while loops (Enter/Exit/NextIteration/
// LoopCond) nested and with parallel_iterations, loops stopped by deadlines
// and cancellation; and the importer's rules for cycles and frames.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <future>
#include <map>
#include <thread>

#include "runtime/common_runtime/executor.h"
#include "runtime/common_runtime/partition.h"
#include "runtime/common_runtime/rendezvous_impl.h"
#include "runtime/common_runtime/thread_pools.h"
#include "runtime/framework/shape_inference.h"
#include "runtime/graph/algorithm.h"
#include "runtime/graph/control_flow.h"
#include "runtime/graph/graph_def_import.h"
#include "tests/runtime/session_test_util.h"

namespace tensorweave {
namespace {

using namespace session_test;  // NOLINT: test helpers

constexpr char kCpu0[] = "/job:localhost/replica:0/task:0/device:CPU:0";

NodeDef* Op(GraphDef* graph, const std::string& name, const std::string& op,
            std::initializer_list<std::string> inputs, DataType type = DT_FLOAT) {
  NodeDef* node = AddNode(graph, name, op, inputs);
  SetAttr(node, "T", type);
  return node;
}

NodeDef* Const(GraphDef* graph, const std::string& name, float value,
               const std::string& control = "") {
  NodeDef* node = AddNode(graph, name, "Const");
  SetAttr(node, "dtype", DT_FLOAT);
  SetAttr(node, "value", FloatScalar(value));
  if (!control.empty()) node->add_input("^" + control);
  return node;
}

NodeDef* Arg(GraphDef* graph, const std::string& name, int index, DataType type) {
  NodeDef* node = AddNode(graph, name, "_Arg");
  SetAttr(node, "T", type);
  SetAttr(node, "index", int64_t{index});
  return node;
}

NodeDef* Retval(GraphDef* graph, const std::string& name, const std::string& input, int index,
                DataType type = DT_FLOAT) {
  NodeDef* node = Op(graph, name, "_Retval", {input}, type);
  SetAttr(node, "index", int64_t{index});
  return node;
}

NodeDef* Merge(GraphDef* graph, const std::string& name, const std::string& a,
               const std::string& b) {
  NodeDef* node = Op(graph, name, "Merge", {a, b});
  SetAttr(node, "N", int64_t{2});
  return node;
}

NodeDef* Enter(GraphDef* graph, const std::string& name, const std::string& input,
               const std::string& frame, bool is_constant, int parallel_iterations) {
  NodeDef* node = Op(graph, name, "Enter", {input});
  SetAttr(node, "frame_name", frame);
  SetAttr(node, "is_constant", is_constant);
  SetAttr(node, "parallel_iterations", int64_t{parallel_iterations});
  return node;
}

Tensor BoolScalar(bool value) {
  Tensor tensor(DT_BOOL, TensorShape());
  tensor.data<bool>()[0] = value;
  return tensor;
}

// The body's contribution to the accumulator, given the new counter value
// `i`, the body's pivot (for nodes without data inputs) and the loop's
// constant Enter of its limit.
using BodyFn = std::function<std::string(GraphDef* graph, const std::string& i,
                                         const std::string& pivot, const std::string& limit)>;

struct LoopExits {
  std::string count;
  std::string sum;
};

// i = 0, acc = 0; while (i < limit) { i += 1; acc += body(i) } in frame
// `prefix`, entered from the frame whose pivot is `outer_pivot` ("" for
// the root frame). This is the shape tf.while_loop gives a loop.
LoopExits AddCountingLoop(GraphDef* graph, const std::string& prefix, const std::string& limit,
                          const std::string& outer_pivot, int parallel_iterations,
                          const BodyFn& body) {
  auto n = [&prefix](const std::string& name) { return prefix + "/" + name; };
  Const(graph, n("zero"), 0.0f, outer_pivot);
  Enter(graph, n("enter_i"), n("zero"), prefix, false, parallel_iterations);
  Enter(graph, n("enter_acc"), n("zero"), prefix, false, parallel_iterations);
  Enter(graph, n("enter_limit"), limit, prefix, true, parallel_iterations);
  Merge(graph, n("merge_i"), n("enter_i"), n("next_i"));
  Merge(graph, n("merge_acc"), n("enter_acc"), n("next_acc"));
  Op(graph, n("less"), "Less", {n("merge_i"), n("enter_limit")});
  AddNode(graph, n("cond"), "LoopCond", {n("less")});
  Op(graph, n("switch_i"), "Switch", {n("merge_i"), n("cond")});
  Op(graph, n("switch_acc"), "Switch", {n("merge_acc"), n("cond")});
  Op(graph, n("exit_i"), "Exit", {n("switch_i")});
  Op(graph, n("exit_acc"), "Exit", {n("switch_acc")});
  Op(graph, n("pivot"), "Identity", {n("switch_i:1")});
  Const(graph, n("one"), 1.0f, n("pivot"));
  Op(graph, n("add_i"), "Add", {n("pivot"), n("one")});
  const std::string increment = body(graph, n("add_i"), n("pivot"), n("enter_limit"));
  Op(graph, n("add_acc"), "Add", {n("switch_acc:1"), increment});
  Op(graph, n("next_i"), "NextIteration", {n("add_i")});
  Op(graph, n("next_acc"), "NextIteration", {n("add_acc")});
  return {n("exit_i"), n("exit_acc")};
}

class ControlFlowExecutorTest : public ::testing::Test {
 protected:
  ControlFlowExecutorTest() : device_(kCpu0, DEVICE_CPU, TestIntraOpDevice()) {
    EXPECT_TRUE(InterOpRunner(4, &runner_).ok());
  }

  static const Eigen::ThreadPoolDevice* TestIntraOpDevice() {
    const Eigen::ThreadPoolDevice* device = nullptr;
    EXPECT_TRUE(IntraOpDevice(2, &device).ok());
    return device;
  }

  Status Build(const GraphDef& graph_def, std::unique_ptr<Executor>* executor) {
    Graph graph(OpRegistry::Global());
    TW_RETURN_IF_ERROR(ConvertGraphDefToGraph(graph_def, &graph));
    LocalExecutorParams params;
    params.device = &device_;
    return NewLocalExecutor(params, graph, executor);
  }

  // Runs `graph_def` once with `feeds`; the retvals land in `results`.
  Status RunOnce(const GraphDef& graph_def, std::vector<Tensor> feeds, int num_retvals,
                 std::vector<Tensor>* results, bool use_runner = true) {
    std::unique_ptr<Executor> executor;
    TW_RETURN_IF_ERROR(Build(graph_def, &executor));
    SimpleCallFrame frame(feeds.data(), static_cast<int>(feeds.size()), num_retvals);
    Executor::Args args;
    args.call_frame = &frame;
    args.runner = use_runner ? &runner_ : nullptr;
    const Status status = executor->Run(args);
    *results = *frame.retvals();
    return status;
  }

  Device device_;
  Executor::Runner runner_;
};

// y = pred ? x * 2 : x - 1, the shape tf.cond gives it.
GraphDef CondGraph() {
  GraphDef graph;
  Arg(&graph, "x", 0, DT_FLOAT);
  Arg(&graph, "pred", 1, DT_BOOL);
  Op(&graph, "switch", "Switch", {"x", "pred"});
  Op(&graph, "switch_t", "Identity", {"switch:1"});
  Op(&graph, "switch_f", "Identity", {"switch"});
  Const(&graph, "two", 2.0f, "switch_t");
  Const(&graph, "one", 1.0f, "switch_f");
  Op(&graph, "doubled", "Mul", {"switch:1", "two"});
  Op(&graph, "decremented", "Sub", {"switch", "one"});
  Merge(&graph, "merge", "decremented", "doubled");
  Retval(&graph, "y", "merge", 0);
  Retval(&graph, "branch", "merge:1", 1, DT_INT32);
  return graph;
}

TEST_F(ControlFlowExecutorTest, CondTakesEitherBranch) {
  for (bool use_runner : {true, false}) {
    for (bool pred : {true, false}) {
      std::vector<Tensor> results;
      SESSION_ASSERT_OK(
          RunOnce(CondGraph(), {FloatVector({3, -1}), BoolScalar(pred)}, 2, &results, use_runner));
      EXPECT_EQ(Values(results[0]),
                pred ? std::vector<float>({6, -2}) : std::vector<float>({2, -2}));
      EXPECT_EQ(results[1].data<int32_t>()[0], pred ? 1 : 0) << "Merge's value_index";
    }
  }
}

// A Merge shares its value_index scalars between runs: a consumer that may
// write into an input buffer it holds alone (Add) must get a fresh buffer,
// and each run must still see the index of the input it took.
TEST_F(ControlFlowExecutorTest, MergeValueIndexIsSharedButNeverWrittenInPlace) {
  GraphDef graph = CondGraph();
  NodeDef* ten = AddNode(&graph, "ten", "Const");
  SetAttr(ten, "dtype", DT_INT32);
  Tensor ten_value(DT_INT32, TensorShape());
  ten_value.data<int32_t>()[0] = 10;
  SetAttr(ten, "value", ten_value);
  Op(&graph, "shifted", "Add", {"merge:1", "ten"}, DT_INT32);
  Retval(&graph, "shifted_out", "shifted", 2, DT_INT32);
  std::unique_ptr<Executor> executor;
  SESSION_ASSERT_OK(Build(graph, &executor));
  for (bool pred : {true, false, true, true, false}) {
    std::vector<Tensor> feeds = {FloatVector({3}), BoolScalar(pred)};
    SimpleCallFrame frame(feeds.data(), static_cast<int>(feeds.size()), 3);
    Executor::Args args;
    args.call_frame = &frame;
    args.runner = &runner_;
    SESSION_ASSERT_OK(executor->Run(args));
    const std::vector<Tensor>& results = *frame.retvals();
    EXPECT_EQ(results[1].data<int32_t>()[0], pred ? 1 : 0) << "Merge's value_index";
    EXPECT_EQ(results[2].data<int32_t>()[0], pred ? 11 : 10);
  }
}

TEST_F(ControlFlowExecutorTest, DeadnessFlowsThroughAChainAndSkipsItsKernels) {
  GraphDef graph;
  Arg(&graph, "x", 0, DT_FLOAT);
  Arg(&graph, "pred", 1, DT_BOOL);
  Op(&graph, "switch", "Switch", {"x", "pred"});
  Op(&graph, "a", "Identity", {"switch:1"});
  AddAffine(&graph, "b", "a", 2.0f, 0.0f);
  Op(&graph, "c", "Identity", {"b"});
  // Its only input is a control edge from a dead node: dead too.
  AddNode(&graph, "counted", "SessionTestCounter", {"^c"});
  // A ControlTrigger is never dead, so what hangs off it runs.
  AddNode(&graph, "trigger", "ControlTrigger", {"^c"});
  AddNode(&graph, "counted_after_trigger", "SessionTestCounter", {"^trigger"});
  Op(&graph, "live", "Identity", {"switch"});
  Retval(&graph, "out", "live", 0);
  const int before = counter_runs.load();
  std::vector<Tensor> results;
  SESSION_ASSERT_OK(RunOnce(graph, {FloatVector({5}), BoolScalar(false)}, 1, &results));
  EXPECT_EQ(Values(results[0]), std::vector<float>({5}));
  EXPECT_EQ(counter_runs.load(), before + 1) << "only the node after the ControlTrigger ran";
}

TEST_F(ControlFlowExecutorTest, FetchingADeadTensorIsInvalidArgument) {
  GraphDef graph;
  Arg(&graph, "x", 0, DT_FLOAT);
  Arg(&graph, "pred", 1, DT_BOOL);
  Op(&graph, "switch", "Switch", {"x", "pred"});
  Op(&graph, "taken", "Identity", {"switch"});
  Op(&graph, "untaken", "Identity", {"switch:1"});
  Retval(&graph, "out0", "taken", 0);
  Retval(&graph, "out1", "untaken", 1);
  std::vector<Tensor> results;
  const Status status = RunOnce(graph, {FloatVector({5}), BoolScalar(false)}, 2, &results);
  EXPECT_EQ(status.code(), Code::INVALID_ARGUMENT) << status;
  EXPECT_EQ(status.message(), "Retval[1] does not have value");
  EXPECT_EQ(Values(results[0]), std::vector<float>({5})) << "the live fetch was still made";
}

TEST_F(ControlFlowExecutorTest, ADeadFetchToTheClientIsInvalidArgument) {
  // How a worker hands fetches back: a client-terminated _Send.
  GraphDef graph;
  Arg(&graph, "x", 0, DT_FLOAT);
  Arg(&graph, "pred", 1, DT_BOOL);
  Op(&graph, "switch", "Switch", {"x", "pred"});
  NodeDef* send = Op(&graph, "send", "_Send", {"switch:1"});
  SetAttr(send, "tensor_name", std::string("untaken:0"));
  SetAttr(send, "send_device", std::string(kCpu0));
  SetAttr(send, "send_device_incarnation", int64_t{1});
  SetAttr(send, "recv_device", std::string("/job:localhost/replica:0/task:0/device:CPU:0"));
  SetAttr(send, "client_terminated", true);
  std::unique_ptr<Executor> executor;
  SESSION_ASSERT_OK(Build(graph, &executor));
  Tensor feeds[] = {FloatVector({5}), BoolScalar(false)};
  SimpleCallFrame frame(feeds, 2, 0);
  IntraProcessRendezvous rendezvous;
  Executor::Args args;
  args.call_frame = &frame;
  args.rendezvous = &rendezvous;
  const Status status = executor->Run(args);
  EXPECT_EQ(status.code(), Code::INVALID_ARGUMENT) << status;
  EXPECT_NE(status.message().find("does not have value"), std::string::npos) << status;
}

TEST_F(ControlFlowExecutorTest, MergeOfTwoLiveInputsForwardsOneOfThem) {
  GraphDef graph;
  Const(&graph, "a", 10.0f);
  Const(&graph, "b", 20.0f);
  Merge(&graph, "merge", "a", "b");
  Retval(&graph, "value", "merge", 0);
  Retval(&graph, "index", "merge:1", 1, DT_INT32);
  for (int run = 0; run < 20; ++run) {
    std::vector<Tensor> results;
    SESSION_ASSERT_OK(RunOnce(graph, {}, 2, &results));
    const int index = results[1].data<int32_t>()[0];
    ASSERT_TRUE(index == 0 || index == 1) << index;
    EXPECT_EQ(Values(results[0])[0], index == 0 ? 10.0f : 20.0f);
  }
}

// A counted loop: i counts to n, acc sums body(i).
GraphDef CountingLoopGraph(int parallel_iterations, const BodyFn& body) {
  GraphDef graph;
  Arg(&graph, "n", 0, DT_FLOAT);
  LoopExits exits = AddCountingLoop(&graph, "loop", "n", "", parallel_iterations, body);
  Retval(&graph, "count", exits.count, 0);
  Retval(&graph, "sum", exits.sum, 1);
  return graph;
}

std::string Square(GraphDef* graph, const std::string& i, const std::string&, const std::string&) {
  // Affine declares itself expensive: the body's kernels go to the runner.
  AddAffine(graph, i + "_copy", i, 1.0f, 0.0f);
  Op(graph, i + "_squared", "Mul", {i + "_copy", i});
  return i + "_squared";
}

TEST_F(ControlFlowExecutorTest, CountedLoop) {
  for (float n : {0.0f, 1.0f, 10.0f, 100.0f}) {
    std::vector<Tensor> results;
    SESSION_ASSERT_OK(RunOnce(CountingLoopGraph(10, Square), {FloatScalar(n)}, 2, &results));
    EXPECT_EQ(Values(results[0])[0], n);
    EXPECT_EQ(Values(results[1])[0], n * (n + 1) * (2 * n + 1) / 6) << "sum of squares to " << n;
  }
}

TEST_F(ControlFlowExecutorTest, ParallelIterationsOneAndTenAgree) {
  for (bool use_runner : {true, false}) {
    std::vector<Tensor> one, ten;
    SESSION_ASSERT_OK(
        RunOnce(CountingLoopGraph(1, Square), {FloatScalar(50)}, 2, &one, use_runner));
    SESSION_ASSERT_OK(
        RunOnce(CountingLoopGraph(10, Square), {FloatScalar(50)}, 2, &ten, use_runner));
    EXPECT_EQ(Values(one[0]), Values(ten[0]));
    EXPECT_EQ(Values(one[1]), Values(ten[1]));
    EXPECT_EQ(Values(one[1])[0], 50.0f * 51 * 101 / 6);
  }
}

TEST_F(ControlFlowExecutorTest, NestedLoops) {
  // The inner loop sums j * i for j = 1..i; the outer sums that for i = 1..n.
  const BodyFn inner_body = [](GraphDef* graph, const std::string& j, const std::string&,
                               const std::string& limit) {
    Op(graph, j + "_times_i", "Mul", {j, limit});
    return j + "_times_i";
  };
  // INT32_MAX: as many iterations at once as the loop makes, with nothing
  // sized by the attr.
  for (int parallel : {1, 10, INT32_MAX}) {
    const BodyFn outer_body = [&](GraphDef* graph, const std::string& i, const std::string& pivot,
                                  const std::string&) {
      return AddCountingLoop(graph, "inner", i, pivot, parallel, inner_body).sum;
    };
    for (float n : {0.0f, 1.0f, 6.0f}) {
      std::vector<Tensor> results;
      SESSION_ASSERT_OK(
          RunOnce(CountingLoopGraph(parallel, outer_body), {FloatScalar(n)}, 2, &results));
      float expected = 0;
      for (int i = 1; i <= n; ++i) expected += i * (i * (i + 1) / 2.0f);
      EXPECT_EQ(Values(results[0])[0], n);
      EXPECT_EQ(Values(results[1])[0], expected) << "n = " << n << ", parallel " << parallel;
    }
  }
}

TEST_F(ControlFlowExecutorTest, ALoopInAnUntakenBranchIsDeadAndFinishes) {
  GraphDef graph;
  Arg(&graph, "n", 0, DT_FLOAT);
  Arg(&graph, "pred", 1, DT_BOOL);
  Op(&graph, "switch", "Switch", {"n", "pred"});
  Op(&graph, "pivot_t", "Identity", {"switch:1"});
  LoopExits exits = AddCountingLoop(&graph, "loop", "switch:1", "pivot_t", 10, Square);
  Op(&graph, "other", "Identity", {"switch"});
  Merge(&graph, "merge", "other", exits.sum);
  Retval(&graph, "out", "merge", 0);
  // The loop's Exits reach their consumers dead or alive: a ControlTrigger
  // after one fires either way.
  AddNode(&graph, "trigger", "ControlTrigger", {"^" + exits.sum});
  AddNode(&graph, "counted", "SessionTestCounter", {"^trigger"});
  for (bool pred : {true, false}) {
    const int before = counter_runs.load();
    std::vector<Tensor> results;
    SESSION_ASSERT_OK(RunOnce(graph, {FloatScalar(3), BoolScalar(pred)}, 1, &results));
    EXPECT_EQ(Values(results[0])[0], pred ? 14.0f : 3.0f);
    EXPECT_EQ(counter_runs.load(), before + 1) << "pred " << pred;
  }
}

TEST_F(ControlFlowExecutorTest, AnEndlessLoopStopsAtTheDeadline) {
  std::unique_ptr<Executor> executor;
  SESSION_ASSERT_OK(Build(CountingLoopGraph(10, Square), &executor));
  Tensor feeds[] = {FloatScalar(1e30f)};  // i + 1 stops growing at 2^24: endless
  SimpleCallFrame frame(feeds, 1, 2);
  Executor::Args args;
  args.call_frame = &frame;
  args.runner = &runner_;
  const auto start = std::chrono::steady_clock::now();
  args.deadline = start + std::chrono::milliseconds(100);
  const Status status = executor->Run(args);
  EXPECT_EQ(status.code(), Code::DEADLINE_EXCEEDED) << status;
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
}

TEST_F(ControlFlowExecutorTest, AnEndlessLoopStopsWhenCancelled) {
  std::unique_ptr<Executor> executor;
  SESSION_ASSERT_OK(Build(CountingLoopGraph(1, Square), &executor));
  for (bool use_runner : {true, false}) {
    Tensor feeds[] = {FloatScalar(1e30f)};
    SimpleCallFrame frame(feeds, 1, 2);
    std::atomic<bool> cancelled{false};
    Executor::Args args;
    args.call_frame = &frame;
    args.runner = use_runner ? &runner_ : nullptr;
    args.cancelled = &cancelled;
    const auto start = std::chrono::steady_clock::now();
    std::thread canceller([&cancelled] {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      cancelled.store(true);
    });
    const Status status = executor->Run(args);
    canceller.join();
    EXPECT_EQ(status.code(), Code::CANCELLED) << status;
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  }
  // The executor is still usable after a cancelled loop.
  Tensor feeds[] = {FloatScalar(3)};
  SimpleCallFrame frame(feeds, 1, 2);
  Executor::Args args;
  args.call_frame = &frame;
  SESSION_ASSERT_OK(executor->Run(args));
  EXPECT_EQ(Values((*frame.retvals())[1])[0], 14.0f);
}

TEST_F(ControlFlowExecutorTest, AnEndlessLoopStopsWhenItsStepIsCancelledElsewhere) {
  // Another partition's error cancels the step's CancellationManager only.
  std::unique_ptr<Executor> executor;
  SESSION_ASSERT_OK(Build(CountingLoopGraph(10, Square), &executor));
  Tensor feeds[] = {FloatScalar(1e30f)};
  SimpleCallFrame frame(feeds, 1, 2);
  CancellationManager cancellation;
  Executor::Args args;
  args.call_frame = &frame;
  args.runner = &runner_;
  args.cancellation_manager = &cancellation;
  const auto start = std::chrono::steady_clock::now();
  std::thread canceller([&cancellation] {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    cancellation.StartCancel();
  });
  const Status status = executor->Run(args);
  canceller.join();
  EXPECT_EQ(status.code(), Code::CANCELLED) << status;
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
}

TEST_F(ControlFlowExecutorTest, ALoopCutWithoutItsControlLoopIsUnimplemented) {
  // A receiver inside a loop body that nothing drives per iteration (what a
  // partitioner that adds no control loops would leave).
  GraphDef graph = CountingLoopGraph(
      10, [](GraphDef* g, const std::string& i, const std::string&, const std::string&) {
        NodeDef* recv = AddNode(g, "recv", "_Recv");
        SetAttr(recv, "tensor_type", DT_FLOAT);
        SetAttr(recv, "tensor_name", std::string("edge_1"));
        SetAttr(recv, "send_device", std::string("/job:localhost/replica:0/task:0/device:CPU:1"));
        SetAttr(recv, "send_device_incarnation", int64_t{1});
        SetAttr(recv, "recv_device", std::string(kCpu0));
        SetAttr(recv, "client_terminated", false);
        Op(g, "scaled", "Mul", {i, "recv"});
        return std::string("scaled");
      });
  std::unique_ptr<Executor> executor;
  const Status status = Build(graph, &executor);
  EXPECT_EQ(status.code(), Code::UNIMPLEMENTED) << status;
  EXPECT_NE(status.message().find("spans devices"), std::string::npos) << status;
}

TEST_F(ControlFlowExecutorTest, ALoopPartitionedAcrossTwoDevicesRunsInStep) {
  // The body's kernels on a second device: every iteration sends the counter
  // over and the square back, each under its own frame and iteration key,
  // with one iteration at a time and with ten in flight.
  constexpr char kCpu1[] = "/job:localhost/replica:0/task:0/device:CPU:1";
  Device cpu1(kCpu1, DEVICE_CPU, TestIntraOpDevice());
  for (int parallel : {1, 10}) {
    Graph graph(OpRegistry::Global());
    SESSION_ASSERT_OK(ConvertGraphDefToGraph(CountingLoopGraph(parallel, Square), &graph));
    for (Node* node : graph.op_nodes()) {
      const bool body = node->name().find("_squared") != std::string::npos ||
                        node->name().find("_copy") != std::string::npos;
      node->set_assigned_device_name(body ? kCpu1 : kCpu0);
    }
    std::map<std::string, std::unique_ptr<Graph>> partitions;
    SESSION_ASSERT_OK(PartitionGraph(PartitionOptions(), graph, &partitions));
    ASSERT_EQ(partitions.size(), 2u);
    std::unique_ptr<Executor> on_cpu0, on_cpu1;
    LocalExecutorParams params;
    params.device = &device_;
    SESSION_ASSERT_OK(NewLocalExecutor(params, *partitions[kCpu0], &on_cpu0));
    params.device = &cpu1;
    SESSION_ASSERT_OK(NewLocalExecutor(params, *partitions[kCpu1], &on_cpu1));
    for (float n : {0.0f, 1.0f, 30.0f}) {
      IntraProcessRendezvous rendezvous;
      Tensor feeds[] = {FloatScalar(n)};
      SimpleCallFrame frame(feeds, 1, 2);
      Executor::Args args;
      args.call_frame = &frame;
      args.rendezvous = &rendezvous;
      args.runner = &runner_;
      Executor::Args body_args = args;
      body_args.call_frame = nullptr;
      std::promise<Status> body_done;
      on_cpu1->RunAsync(body_args, [&body_done](const Status& s) { body_done.set_value(s); });
      SESSION_ASSERT_OK(on_cpu0->Run(args));
      SESSION_ASSERT_OK(body_done.get_future().get());
      EXPECT_EQ(Values((*frame.retvals())[0])[0], n);
      EXPECT_EQ(Values((*frame.retvals())[1])[0], n * (n + 1) * (2 * n + 1) / 6)
          << "sum of squares to " << n << " with parallel_iterations " << parallel;
    }
  }
}

TEST_F(ControlFlowExecutorTest, FetchesInsideALoopFollowTensorFlow) {
  // A fetch inside a loop body: a loop that never iterates leaves it without
  // value; one that iterates twice sets it twice. TensorFlow 2.21 gives
  // these two messages for the same fetches (the second as INTERNAL; here a
  // caller's mistake is never INTERNAL).
  GraphDef graph = CountingLoopGraph(10, Square);
  Retval(&graph, "inside", "loop/add_i", 2);
  std::vector<Tensor> results;
  Status status = RunOnce(graph, {FloatScalar(0)}, 3, &results);
  EXPECT_EQ(status.code(), Code::INVALID_ARGUMENT) << status;
  EXPECT_EQ(status.message(), "Retval[2] does not have value");
  status = RunOnce(graph, {FloatScalar(2)}, 3, &results);
  EXPECT_EQ(status.code(), Code::INVALID_ARGUMENT) << status;  // TensorFlow: INTERNAL
  EXPECT_NE(status.message().find("Retval[2] has already been set."), std::string::npos) << status;
  SESSION_ASSERT_OK(RunOnce(graph, {FloatScalar(1)}, 3, &results));
  EXPECT_EQ(Values(results[2])[0], 1.0f) << "one iteration sets it once";

  // Behind a NextIteration that ends the loop dead, a fetch never runs at
  // all: still "does not have value", not a missing result.
  GraphDef after_next = CountingLoopGraph(10, Square);
  Retval(&after_next, "after_next", "loop/next_i", 2);
  status = RunOnce(after_next, {FloatScalar(0)}, 3, &results);
  EXPECT_EQ(status.code(), Code::INVALID_ARGUMENT) << status;
  EXPECT_EQ(status.message(), "Retval[2] does not have value");
}

// --- OpDefs and shape functions ---------------------------------------------

std::vector<PartialTensorShape> Shapes(const std::string& op, int n,
                                       std::vector<PartialTensorShape> inputs, Status* status) {
  NodeDef node;
  node.set_name("node");
  node.set_op(op);
  SetAttr(&node, "T", DT_FLOAT);
  if (op == "Merge") SetAttr(&node, "N", int64_t{n});
  const OpDef* op_def = OpRegistry::Global()->LookUp(op);
  std::vector<PartialTensorShape> outputs;
  *status = shape_inference::RunShapeFunction(node, *op_def, std::move(inputs), {},
                                              static_cast<int>(op_def->outputs.size()), &outputs);
  return outputs;
}

PartialTensorShape Shape(std::vector<int64_t> dims) {
  PartialTensorShape shape;
  EXPECT_TRUE(PartialTensorShape::Build(dims, &shape).ok());
  return shape;
}

TEST(ControlFlowOpsTest, ShapeFunctions) {
  Status status;
  std::vector<PartialTensorShape> out = Shapes("Switch", 0, {Shape({2, 3}), Shape({})}, &status);
  SESSION_ASSERT_OK(status);
  EXPECT_EQ(out[0].DebugString(), "[2,3]");
  EXPECT_EQ(out[1].DebugString(), "[2,3]");
  Shapes("Switch", 0, {Shape({2, 3}), Shape({2})}, &status);
  EXPECT_EQ(status.code(), Code::INVALID_ARGUMENT) << "the predicate must be a scalar";

  out = Shapes("Merge", 2, {Shape({2, 3}), Shape({2, 5})}, &status);
  SESSION_ASSERT_OK(status);
  EXPECT_EQ(out[0].DebugString(), "[2,?]");
  EXPECT_EQ(out[1].DebugString(), "[]") << "value_index";
  out = Shapes("Merge", 2, {Shape({2}), Shape({2, 3})}, &status);
  SESSION_ASSERT_OK(status);
  EXPECT_TRUE(out[0].unknown_rank());
  out = Shapes("Merge", 2, {Shape({4}), PartialTensorShape()}, &status);
  SESSION_ASSERT_OK(status);
  EXPECT_TRUE(out[0].unknown_rank()) << "a loop's back edge is not known yet";

  NodeDef loop_cond;
  loop_cond.set_name("lc");
  loop_cond.set_op("LoopCond");
  const OpDef* loop_cond_def = OpRegistry::Global()->LookUp("LoopCond");
  SESSION_ASSERT_OK(
      shape_inference::RunShapeFunction(loop_cond, *loop_cond_def, {Shape({})}, {}, 1, &out));
  EXPECT_EQ(out[0].DebugString(), "[]");
  EXPECT_EQ(shape_inference::RunShapeFunction(loop_cond, *loop_cond_def, {Shape({3})}, {}, 1, &out)
                .code(),
            Code::INVALID_ARGUMENT);

  for (const char* op : {"Exit", "NextIteration", "RefExit", "RefNextIteration"}) {
    out = Shapes(op, 0, {Shape({7, 1})}, &status);
    SESSION_ASSERT_OK(status);
    EXPECT_EQ(out[0].DebugString(), "[7,1]") << op;
  }
  // As TensorFlow: a constant Enter keeps its input's shape; a loop
  // variable's is unknown, so tf.while_loop can give it a shape invariant
  // less specific than the initial value's shape.
  for (const char* op : {"Enter", "RefEnter"}) {
    for (bool is_constant : {true, false}) {
      NodeDef enter;
      enter.set_name("enter");
      enter.set_op(op);
      SetAttr(&enter, "T", DT_FLOAT);
      SetAttr(&enter, "frame_name", std::string("loop"));
      SetAttr(&enter, "is_constant", is_constant);
      SESSION_ASSERT_OK(shape_inference::RunShapeFunction(enter, *OpRegistry::Global()->LookUp(op),
                                                          {Shape({7, 1})}, {}, 1, &out));
      EXPECT_EQ(out[0].DebugString(), is_constant ? "[7,1]" : "<unknown>") << op;
    }
  }
}

TEST(ControlFlowOpsTest, OpDefsMatchTensorFlow) {
  const OpDef* enter = OpRegistry::Global()->LookUp("Enter");
  ASSERT_NE(enter, nullptr);
  NodeDef node;
  node.set_op("Enter");
  AddDefaultsToNodeDef(*enter, &node);
  bool is_constant = true;
  int64_t parallel = 0;
  SESSION_ASSERT_OK(GetNodeAttr(node, "is_constant", &is_constant));
  SESSION_ASSERT_OK(GetNodeAttr(node, "parallel_iterations", &parallel));
  EXPECT_FALSE(is_constant);
  EXPECT_EQ(parallel, 10);
  EXPECT_TRUE(OpRegistry::Global()->LookUp("RefSwitch")->inputs[0].is_ref);
  EXPECT_TRUE(OpRegistry::Global()->LookUp("RefMerge")->outputs[0].is_ref);
  EXPECT_EQ(OpRegistry::Global()->LookUp("Merge")->outputs[1].type, DT_INT32);
  EXPECT_TRUE(OpRegistry::Global()->LookUp("ControlTrigger")->inputs.empty());
}

// --- Import: cycles and frames ----------------------------------------------

// The counted loop as a user's GraphDef: a Placeholder limit, Identity
// results (no _Arg/_Retval, which only the runtime may add).
GraphDef UserLoopGraph() {
  GraphDef graph;
  AddPlaceholder(&graph, "n");
  LoopExits exits = AddCountingLoop(&graph, "loop", "n", "", 10, Square);
  Op(&graph, "count", "Identity", {exits.count});
  Op(&graph, "sum", "Identity", {exits.sum});
  return graph;
}

// As the C API, Python and sessions import users' GraphDefs.
Status Import(const GraphDef& graph_def) {
  Graph graph(OpRegistry::Global());
  return ImportGraphDef(ImportGraphDefOptions(), graph_def, &graph, /*refiner=*/nullptr);
}

TEST(ControlFlowImportTest, AcceptsTheBackEdgeOfAWhileLoop) {
  const GraphDef graph_def = CountingLoopGraph(10, Square);
  Graph graph(OpRegistry::Global());
  SESSION_ASSERT_OK(ConvertGraphDefToGraph(graph_def, &graph));
  std::vector<Node*> order;
  SESSION_ASSERT_OK(TopologicalOrder(graph, &order));
  EXPECT_EQ(static_cast<int>(order.size()), graph.num_nodes());
  ControlFlowInfo info;
  SESSION_ASSERT_OK(BuildControlFlowInfo(graph, &info));
  ASSERT_EQ(info.frames.size(), 2u);
  EXPECT_EQ(info.frames[1].name, "loop");
  EXPECT_EQ(info.frames[1].num_enters, 3);
  EXPECT_EQ(info.frames[1].num_exits, 2);
  EXPECT_EQ(info.frame_of[graph.FindNode("loop/enter_i")->id()], 0) << "an Enter runs outside";
  EXPECT_EQ(info.frame_of[graph.FindNode("loop/merge_i")->id()], 1);
  EXPECT_EQ(info.frame_of[graph.FindNode("loop/exit_i")->id()], 1) << "an Exit runs inside";
  EXPECT_EQ(info.frame_of[graph.FindNode("count")->id()], 0);
  SESSION_ASSERT_OK(Import(UserLoopGraph()));  // a user's GraphDef with a loop
}

TEST(ControlFlowImportTest, RejectsACycleWithoutABackEdge) {
  GraphDef graph;
  Const(&graph, "c", 1.0f);
  Merge(&graph, "merge", "c", "next");
  Op(&graph, "add", "Add", {"merge", "c"});
  Op(&graph, "next", "Identity", {"add"});  // not a NextIteration
  const Status status = Import(graph);
  EXPECT_EQ(status.code(), Code::INVALID_ARGUMENT) << status;
  EXPECT_NE(status.message().find("is on a cycle"), std::string::npos) << status;
  EXPECT_NE(status.message().find("NextIteration"), std::string::npos) << status;

  // A NextIteration that feeds anything but a Merge does not close a loop.
  GraphDef through_next;
  Const(&through_next, "c", 1.0f);
  Op(&through_next, "add", "Add", {"c", "next"});
  Op(&through_next, "next", "NextIteration", {"add"});
  EXPECT_EQ(Import(through_next).code(), Code::INVALID_ARGUMENT);
}

TEST(ControlFlowImportTest, RejectsBrokenFrames) {
  // An Exit nothing entered.
  GraphDef stray_exit;
  Const(&stray_exit, "c", 1.0f);
  Op(&stray_exit, "exit", "Exit", {"c"});
  Status status = Import(stray_exit);
  EXPECT_EQ(status.code(), Code::INVALID_ARGUMENT) << status;
  EXPECT_NE(status.message().find("not inside any while loop"), std::string::npos) << status;

  // A frame with no Exit.
  GraphDef no_exit;
  Const(&no_exit, "c", 1.0f);
  Enter(&no_exit, "enter", "c", "f", false, 10);
  Op(&no_exit, "inside", "Identity", {"enter"});
  status = Import(no_exit);
  EXPECT_EQ(status.code(), Code::INVALID_ARGUMENT) << status;
  EXPECT_NE(status.message().find("has no Exit"), std::string::npos) << status;
  // The runtime's own partitions may lack Exits (pruned for a fetch inside a
  // loop): the executor checks their frames instead.
  Graph partition(OpRegistry::Global());
  SESSION_EXPECT_OK(ConvertGraphDefToGraph(no_exit, &partition));

  // A value used outside its loop without an Exit.
  GraphDef leak = UserLoopGraph();
  Op(&leak, "leak", "Add", {"loop/add_i", "n"});
  status = Import(leak);
  EXPECT_EQ(status.code(), Code::INVALID_ARGUMENT) << status;
  EXPECT_NE(status.message().find("inputs from different frames"), std::string::npos) << status;

  // A loop nothing enters: Merge fed only by its own back edge.
  GraphDef unentered;
  Const(&unentered, "c", 1.0f);
  NodeDef* merge = Op(&unentered, "merge", "Merge", {"next"});
  SetAttr(merge, "N", int64_t{1});
  Op(&unentered, "add", "Add", {"merge", "merge"});
  Op(&unentered, "next", "NextIteration", {"add"});
  status = Import(unentered);
  EXPECT_EQ(status.code(), Code::INVALID_ARGUMENT) << status;

  // One frame name entered from two different frames.
  GraphDef two_parents = UserLoopGraph();
  Enter(&two_parents, "late_enter", "loop/add_i", "loop", false, 10);
  Op(&two_parents, "late_exit", "Exit", {"late_enter"});
  status = Import(two_parents);
  EXPECT_EQ(status.code(), Code::INVALID_ARGUMENT) << status;
}

}  // namespace
}  // namespace tensorweave
