// RunMetadata through GrpcSession on a server of this process, with the
// master reached directly and over RPC: Run and RunCallable return what
// their RunOptions ask for (step stats, partition graphs) and replace the
// caller's RunMetadata with nothing when the options ask for nothing.
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "runtime/common_runtime/session.h"
#include "runtime/distributed/grpc_server.h"
#include "tests/runtime/session_test_util.h"

namespace tensorweave {
namespace {

using session_test::AddAffine;
using session_test::AddPlaceholder;
using session_test::FloatVector;
using session_test::Values;

const char kDevice[] = "/job:localhost/replica:0/task:0/device:CPU:0";

std::unique_ptr<GrpcServer> StartServer() {
  GrpcServerOptions options;
  options.worker.job_name = "localhost";
  options.worker.task_index = 0;
  std::unique_ptr<GrpcServer> server;
  Status status = GrpcServer::Create(options, &server);
  EXPECT_TRUE(status.ok()) << status;
  if (!status.ok()) return nullptr;
  status = server->Start();
  EXPECT_TRUE(status.ok()) << status;
  if (!status.ok()) return nullptr;
  return server;
}

std::unique_ptr<Session> AffineSession(const std::string& target, bool use_rpc) {
  SessionOptions options;
  options.target = target;
  options.config.set_operation_timeout_in_ms(10000);
  options.config.mutable_rpc_options()->set_use_rpc_for_inprocess_master(use_rpc);
  std::unique_ptr<Session> session;
  Status status = NewSession(options, &session);
  EXPECT_TRUE(status.ok()) << status;
  if (!status.ok()) return nullptr;
  GraphDef graph;
  AddPlaceholder(&graph, "x");
  AddAffine(&graph, "y", "x", 2.0f, 1.0f);
  status = session->Create(graph);
  EXPECT_TRUE(status.ok()) << status;
  return session;
}

std::set<std::string> RecordedNodes(const RunMetadata& metadata) {
  std::set<std::string> names;
  for (const DeviceStepStats& device : metadata.step_stats().dev_stats()) {
    EXPECT_EQ(device.device(), kDevice);
    for (const NodeExecStats& node : device.node_stats()) {
      EXPECT_TRUE(names.insert(node.node_name()).second) << node.node_name() << " twice";
    }
  }
  return names;
}

// Something an untraced run must clear, as TensorFlow's GrpcSession does.
RunMetadata Stale() {
  RunMetadata stale;
  stale.add_partition_graphs();
  stale.mutable_step_stats()->add_dev_stats()->set_device("stale");
  return stale;
}

class GrpcSessionRunMetadataTest : public ::testing::TestWithParam<bool> {};

TEST_P(GrpcSessionRunMetadataTest, RunReturnsWhatItsOptionsAskFor) {
  std::unique_ptr<GrpcServer> server = StartServer();
  ASSERT_NE(server, nullptr);
  std::unique_ptr<Session> session = AffineSession(server->target(), GetParam());
  ASSERT_NE(session, nullptr);
  RunOptions traced;
  traced.set_trace_level(RunOptions::FULL_TRACE);
  traced.set_output_partition_graphs(true);
  RunMetadata metadata;
  std::vector<Tensor> outputs;
  SESSION_ASSERT_OK(
      session->Run(traced, {{"x:0", FloatVector({1, 2})}}, {"y:0"}, {}, &outputs, &metadata));
  EXPECT_EQ(Values(outputs[0]), (std::vector<float>{3, 5}));
  const std::set<std::string> recorded = RecordedNodes(metadata);
  EXPECT_EQ(recorded.count("y"), 1u);
  ASSERT_EQ(metadata.partition_graphs_size(), 1);
  EXPECT_EQ(metadata.partition_graphs(0).node(0).device(), kDevice);

  metadata = Stale();
  SESSION_ASSERT_OK(
      session->Run(RunOptions(), {{"x:0", FloatVector({1, 2})}}, {"y:0"}, {}, &outputs, &metadata));
  EXPECT_EQ(metadata.ByteSizeLong(), 0u) << metadata.DebugString();
  SESSION_ASSERT_OK(session->Close());
  server->Stop();
}

TEST_P(GrpcSessionRunMetadataTest, RunCallableReturnsWhatItsRunOptionsAskFor) {
  std::unique_ptr<GrpcServer> server = StartServer();
  ASSERT_NE(server, nullptr);
  std::unique_ptr<Session> session = AffineSession(server->target(), GetParam());
  ASSERT_NE(session, nullptr);
  CallableOptions traced;
  traced.add_feed("x:0");
  traced.add_fetch("y:0");
  traced.mutable_run_options()->set_trace_level(RunOptions::SOFTWARE_TRACE);
  CallableOptions untraced = traced;
  untraced.clear_run_options();
  Session::CallableHandle traced_handle = 0, untraced_handle = 0;
  SESSION_ASSERT_OK(session->MakeCallable(traced, &traced_handle));
  SESSION_ASSERT_OK(session->MakeCallable(untraced, &untraced_handle));

  RunMetadata metadata;
  std::vector<Tensor> outputs;
  SESSION_ASSERT_OK(session->RunCallable(traced_handle, {FloatVector({4})}, &outputs, &metadata));
  EXPECT_EQ(Values(outputs[0]), (std::vector<float>{9}));
  EXPECT_EQ(RecordedNodes(metadata).count("y"), 1u);
  EXPECT_EQ(metadata.partition_graphs_size(), 0);  // not asked for

  metadata = Stale();
  SESSION_ASSERT_OK(session->RunCallable(untraced_handle, {FloatVector({4})}, &outputs, &metadata));
  EXPECT_EQ(metadata.ByteSizeLong(), 0u) << metadata.DebugString();
  // Without a RunMetadata the traced callable still runs.
  SESSION_ASSERT_OK(session->RunCallable(traced_handle, {FloatVector({4})}, &outputs));
  EXPECT_EQ(Values(outputs[0]), (std::vector<float>{9}));
  SESSION_ASSERT_OK(session->Close());
  server->Stop();
}

INSTANTIATE_TEST_SUITE_P(Paths, GrpcSessionRunMetadataTest, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& info) {
                           return info.param ? "OverRpc" : "Direct";
                         });

}  // namespace
}  // namespace tensorweave
