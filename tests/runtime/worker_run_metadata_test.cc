// RunGraph's ExecutorOpts over gRPC on loopback: record_timeline (or
// record_costs) returns the step stats of every device the partition ran
// on, record_partition_graphs the graph of each device; a request that asks
// for neither gets neither.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "tests/runtime/worker_test_util.h"

namespace tensorweave {
namespace {

using namespace worker_test;  // NOLINT: the helpers of these tests

// y = x * 2 + 1 with the multiplication on CPU:1, so the graph runs on two
// devices joined by a local _Send/_Recv pair.
GraphDef TwoDeviceAffineGraph(const TestWorker& worker) {
  GraphDef graph = AffineGraph(worker);
  for (NodeDef& node : *graph.mutable_node()) {
    if (node.name() == "mul" || node.name() == "two") node.set_device(worker.device(1));
  }
  return graph;
}

RunGraphResponse RunOnce(const TestWorker& worker, const std::string& handle, int64_t step,
                         const ExecutorOpts* exec_opts) {
  RunGraphRequest request = RunRequest(handle, step);
  if (exec_opts != nullptr) *request.mutable_exec_opts() = *exec_opts;
  *request.add_send() = Named(ClientKey(worker, "x"), Scalar(4));
  request.add_recv_key(ClientKey(worker, "y"));
  RunGraphResponse response;
  Status status = worker.client()->RunGraph(request, &response, kCallTimeoutMs);
  EXPECT_TRUE(status.ok()) << status;
  EXPECT_EQ(response.recv_size(), 1);
  if (response.recv_size() == 1) EXPECT_EQ(ScalarOf(response.recv(0).tensor()), 9.0f);
  return response;
}

// node name → how many times each device recorded it.
std::map<std::string, std::vector<std::string>> RecordedNodes(const StepStats& stats) {
  std::map<std::string, std::vector<std::string>> recorded;
  for (const DeviceStepStats& device : stats.dev_stats()) {
    for (const NodeExecStats& node : device.node_stats()) {
      recorded[node.node_name()].push_back(device.device());
    }
  }
  return recorded;
}

TEST(WorkerRunMetadataTest, UntracedRunGraphReturnsNoStatsAndNoGraphs) {
  TestWorker worker("worker", 0, /*cpus=*/2);
  std::string handle;
  ASSERT_TRUE(Register(worker.client(), TwoDeviceAffineGraph(worker), &handle).ok());
  RunGraphResponse response = RunOnce(worker, handle, 1, nullptr);
  EXPECT_FALSE(response.has_step_stats());
  EXPECT_EQ(response.partition_graph_size(), 0);
  ExecutorOpts nothing;  // present but asking for nothing
  response = RunOnce(worker, handle, 2, &nothing);
  EXPECT_FALSE(response.has_step_stats());
  EXPECT_EQ(response.partition_graph_size(), 0);
}

TEST(WorkerRunMetadataTest, RecordTimelineReturnsEveryNodeOnceOnItsDevice) {
  TestWorker worker("worker", 0, /*cpus=*/2);
  std::string handle;
  ASSERT_TRUE(Register(worker.client(), TwoDeviceAffineGraph(worker), &handle).ok());
  ExecutorOpts timeline;
  timeline.set_record_timeline(true);
  RunGraphResponse response = RunOnce(worker, handle, 1, &timeline);
  ASSERT_TRUE(response.has_step_stats());
  std::set<std::string> devices;
  for (const DeviceStepStats& device : response.step_stats().dev_stats()) {
    devices.insert(device.device());
  }
  EXPECT_EQ(devices, (std::set<std::string>{worker.device(0), worker.device(1)}));
  const auto recorded = RecordedNodes(response.step_stats());
  for (const auto& [name, on] : recorded) EXPECT_EQ(on.size(), 1u) << name;
  for (const char* name : {"x", "one", "y", "y_send"}) {
    ASSERT_EQ(recorded.count(name), 1u) << name;
    EXPECT_EQ(recorded.at(name)[0], worker.device(0)) << name;
  }
  for (const char* name : {"two", "mul"}) {
    ASSERT_EQ(recorded.count(name), 1u) << name;
    EXPECT_EQ(recorded.at(name)[0], worker.device(1)) << name;
  }
  EXPECT_EQ(response.partition_graph_size(), 0);  // not asked for
}

TEST(WorkerRunMetadataTest, RecordCostsAlsoReturnsStepStats) {
  TestWorker worker("worker", 0);
  std::string handle;
  ASSERT_TRUE(Register(worker.client(), AffineGraph(worker), &handle).ok());
  ExecutorOpts costs;
  costs.set_record_costs(true);
  RunGraphResponse response = RunOnce(worker, handle, 1, &costs);
  ASSERT_EQ(response.step_stats().dev_stats_size(), 1);
  EXPECT_EQ(RecordedNodes(response.step_stats()).count("mul"), 1u);
}

TEST(WorkerRunMetadataTest, RecordPartitionGraphsReturnsOneGraphPerDevice) {
  TestWorker worker("worker", 0, /*cpus=*/2);
  std::string handle;
  ASSERT_TRUE(Register(worker.client(), TwoDeviceAffineGraph(worker), &handle).ok());
  ExecutorOpts graphs;
  graphs.set_record_partition_graphs(true);
  RunGraphResponse response = RunOnce(worker, handle, 1, &graphs);
  EXPECT_FALSE(response.has_step_stats());
  ASSERT_EQ(response.partition_graph_size(), 2);
  std::map<std::string, std::set<std::string>> nodes_by_device;
  for (const GraphDef& partition : response.partition_graph()) {
    for (const NodeDef& node : partition.node()) {
      nodes_by_device[node.device()].insert(node.name());
    }
  }
  ASSERT_EQ(nodes_by_device.size(), 2u);
  EXPECT_EQ(nodes_by_device[worker.device(1)].count("mul"), 1u);
  EXPECT_EQ(nodes_by_device[worker.device(0)].count("mul"), 0u);
  EXPECT_EQ(nodes_by_device[worker.device(0)].count("y"), 1u);
}

}  // namespace
}  // namespace tensorweave
