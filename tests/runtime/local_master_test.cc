// Sessions of a server's own process reach its master directly
// (local_master.h) unless their config asks for RPC; both paths give the
// same results, and once the server stops both fail with UNAVAILABLE — the
// direct one saying the server stopped, the RPC one as gRPC reports a
// closed port, which is how these tests tell the paths apart.
#include "runtime/distributed/local_master.h"

#include <gtest/gtest.h>

#include "runtime/common_runtime/session.h"
#include "runtime/distributed/grpc_server.h"
#include "tests/runtime/session_test_util.h"

namespace tensorweave {
namespace {

using session_test::AddAffine;
using session_test::AddPlaceholder;
using session_test::FloatVector;
using session_test::Values;

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

// A session on `target` holding y = x * 2 + 1.
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

Status RunAffine(Session* session, std::vector<Tensor>* outputs) {
  return session->Run({{"x:0", FloatVector({1, 2, 3})}}, {"y:0", "y:0"}, {}, outputs);
}

TEST(LocalMasterTest, ASessionOfTheServersProcessCallsItsMasterDirectlyUntilItStops) {
  std::unique_ptr<GrpcServer> server = StartServer();
  ASSERT_NE(server, nullptr);
  const std::string target = server->target();
  EXPECT_NE(LocalMaster::Lookup(target), nullptr);
  EXPECT_EQ(LocalMaster::Lookup(target + "0"), nullptr);  // another port

  std::unique_ptr<Session> direct = AffineSession(target, /*use_rpc=*/false);
  std::unique_ptr<Session> over_rpc = AffineSession(target, /*use_rpc=*/true);
  ASSERT_NE(direct, nullptr);
  ASSERT_NE(over_rpc, nullptr);
  for (Session* session : {direct.get(), over_rpc.get()}) {
    std::vector<Tensor> outputs;
    SESSION_ASSERT_OK(RunAffine(session, &outputs));
    ASSERT_EQ(outputs.size(), 2u);
    EXPECT_EQ(Values(outputs[0]), (std::vector<float>{3, 5, 7}));
    EXPECT_EQ(Values(outputs[1]), (std::vector<float>{3, 5, 7}));
    // The master's own errors keep their codes on both paths.
    Status unfed = session->Run({}, {"y:0"}, {}, &outputs);
    EXPECT_EQ(unfed.code(), Code::INVALID_ARGUMENT) << unfed;
  }
  std::vector<DeviceAttributes> devices;
  SESSION_ASSERT_OK(direct->ListDevices(&devices));
  ASSERT_EQ(devices.size(), 1u);
  EXPECT_EQ(devices[0].name, "/job:localhost/replica:0/task:0/device:CPU:0");

  server->Stop();
  EXPECT_EQ(LocalMaster::Lookup(target), nullptr);
  std::vector<Tensor> outputs;
  Status stopped_direct = RunAffine(direct.get(), &outputs);
  EXPECT_EQ(stopped_direct.code(), Code::UNAVAILABLE) << stopped_direct;
  EXPECT_NE(stopped_direct.message().find("has stopped"), std::string::npos) << stopped_direct;
  Status stopped_rpc = RunAffine(over_rpc.get(), &outputs);
  EXPECT_EQ(stopped_rpc.code(), Code::UNAVAILABLE) << stopped_rpc;
  EXPECT_EQ(stopped_rpc.message().find("has stopped"), std::string::npos) << stopped_rpc;
  // Closing after the server went is quiet for the caller either way.
  direct->Close();
  over_rpc->Close();
}

// A client that never closes its session (a killed process) leaves it open
// in the master, which closes it through the server's own worker when the
// server goes: the worker must still be there (it once was not: SIGSEGV).
TEST(LocalMasterTest, AServerGoesCleanlyWithSessionsItsClientsNeverClosed) {
  for (bool use_rpc : {false, true}) {
    std::unique_ptr<GrpcServer> server = StartServer();
    ASSERT_NE(server, nullptr);
    std::unique_ptr<Session> session = AffineSession(server->target(), use_rpc);
    ASSERT_NE(session, nullptr);
    std::vector<Tensor> outputs;
    SESSION_ASSERT_OK(RunAffine(session.get(), &outputs));
    server.reset();
  }
}

TEST(LocalMasterTest, AStoppedServersRegistrationDoesNotRemoveAnewerOne) {
  Master* none = nullptr;
  auto first = LocalMaster::Register("grpc://localhost:1", none);
  auto second = LocalMaster::Register("grpc://localhost:1", none);
  first.reset();
  EXPECT_NE(LocalMaster::Lookup("grpc://localhost:1"), nullptr);
  second.reset();
  EXPECT_EQ(LocalMaster::Lookup("grpc://localhost:1"), nullptr);
}

}  // namespace
}  // namespace tensorweave
