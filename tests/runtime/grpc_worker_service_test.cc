// The worker service over a real gRPC channel on loopback: GetStatus
// through the generated stub and at TensorFlow's literal wire path, the
// served methods' answers to empty requests, and a server that really stops. Every wait
// has a deadline, so a broken server fails the test instead of hanging it.
#include <grpcpp/create_channel.h>
#include <grpcpp/impl/codegen/client_unary_call.h>
#include <grpcpp/security/credentials.h>
#include <gtest/gtest.h>

#include <chrono>
#include <set>

#include "runtime/common_runtime/direct_session.h"
#include "runtime/common_runtime/local_devices.h"
#include "runtime/distributed/grpc_server.h"

namespace tensorweave {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using std::chrono::steady_clock;

constexpr auto kCallDeadline = seconds(10);

std::chrono::system_clock::time_point DeadlineIn(std::chrono::milliseconds timeout) {
  return std::chrono::system_clock::now() + timeout;
}

// A started server for job `job`, task `task` with `cpus` CPU devices.
std::unique_ptr<GrpcServer> StartServer(const std::string& job, int task, int cpus) {
  GrpcServerOptions options;
  options.worker.job_name = job;
  options.worker.task_index = task;
  (*options.worker.config.mutable_device_count())["CPU"] = cpus;
  std::unique_ptr<GrpcServer> server;
  Status status = GrpcServer::Create(options, &server);
  EXPECT_TRUE(status.ok()) << status.ToString();
  if (!status.ok()) return nullptr;
  status = server->Start();
  EXPECT_TRUE(status.ok()) << status.ToString();
  if (!status.ok()) return nullptr;
  return server;
}

std::shared_ptr<::grpc::Channel> ConnectTo(const GrpcServer& server) {
  return ::grpc::CreateChannel("127.0.0.1:" + std::to_string(server.bound_port()),
                               ::grpc::InsecureChannelCredentials());
}

::grpc::Status CallGetStatus(tensorflow::WorkerService::Stub* stub, GetStatusResponse* response) {
  ::grpc::ClientContext context;
  context.set_deadline(DeadlineIn(kCallDeadline));
  return stub->GetStatus(&context, GetStatusRequest(), response);
}

TEST(GrpcWorkerServiceTest, GetStatusOverLoopbackReportsTheWorkersDevices) {
  std::unique_ptr<GrpcServer> server = StartServer("worker", 1, 2);
  ASSERT_NE(server, nullptr);
  EXPECT_GT(server->bound_port(), 0);
  EXPECT_EQ(server->target(), "grpc://127.0.0.1:" + std::to_string(server->bound_port()));
  auto stub = tensorflow::WorkerService::NewStub(ConnectTo(*server));

  GetStatusResponse first;
  ::grpc::Status status = CallGetStatus(stub.get(), &first);
  ASSERT_TRUE(status.ok()) << status.error_message();
  ASSERT_EQ(first.device_attributes_size(), 2);
  for (int i = 0; i < 2; ++i) {
    const proto::DeviceAttributes& device = first.device_attributes(i);
    EXPECT_EQ(device.name(), "/job:worker/replica:0/task:1/device:CPU:" + std::to_string(i));
    EXPECT_EQ(device.device_type(), "CPU");
    EXPECT_EQ(device.memory_limit(), kCpuDeviceMemoryLimitBytes);
    EXPECT_NE(device.incarnation(), 0u);
  }
  EXPECT_NE(first.device_attributes(0).incarnation(), first.device_attributes(1).incarnation());

  // The incarnation belongs to the worker's lifetime, not to one call.
  GetStatusResponse second;
  status = CallGetStatus(stub.get(), &second);
  ASSERT_TRUE(status.ok()) << status.error_message();
  ASSERT_EQ(second.device_attributes_size(), 2);
  for (int i = 0; i < 2; ++i) {
    EXPECT_EQ(second.device_attributes(i).incarnation(), first.device_attributes(i).incarnation());
  }
  server->Stop(seconds(1));
}

TEST(GrpcWorkerServiceTest, DevicesAreDescribedAsDirectSessionDescribesItsOwn) {
  // One description of a CPU device for both: only job and task differ.
  std::unique_ptr<GrpcServer> server = StartServer("localhost", 0, 1);
  ASSERT_NE(server, nullptr);
  SessionOptions options;
  DirectSession session(options);
  ASSERT_TRUE(session.Init().ok());
  std::vector<DeviceAttributes> local;
  ASSERT_TRUE(session.ListDevices(&local).ok());
  ASSERT_EQ(local.size(), 1u);
  ASSERT_EQ(server->worker_service().devices().size(), 1u);
  const proto::DeviceAttributes& remote = server->worker_service().devices()[0];
  EXPECT_EQ(remote.name(), local[0].name);
  EXPECT_EQ(remote.device_type(), local[0].device_type);
  EXPECT_EQ(remote.memory_limit(), local[0].memory_limit_bytes);
}

TEST(GrpcWorkerServiceTest, GetStatusAnswersAtTensorFlowsLiteralPath) {
  // Called the way TensorFlow's own client calls it: by its hand-written
  // path, not through our generated stub.
  std::unique_ptr<GrpcServer> server = StartServer("ps", 0, 1);
  ASSERT_NE(server, nullptr);
  std::shared_ptr<::grpc::Channel> channel = ConnectTo(*server);
  ::grpc::internal::RpcMethod method("/tensorflow.WorkerService/GetStatus",
                                     ::grpc::internal::RpcMethod::NORMAL_RPC, channel);
  ::grpc::ClientContext context;
  context.set_deadline(DeadlineIn(kCallDeadline));
  GetStatusResponse response;
  ::grpc::Status status = ::grpc::internal::BlockingUnaryCall<GetStatusRequest, GetStatusResponse,
                                                              ::grpc::protobuf::MessageLite,
                                                              ::grpc::protobuf::MessageLite>(
      channel.get(), method, &context, GetStatusRequest(), &response);
  ASSERT_TRUE(status.ok()) << status.error_message();
  ASSERT_EQ(response.device_attributes_size(), 1);
  EXPECT_EQ(response.device_attributes(0).name(), "/job:ps/replica:0/task:0/device:CPU:0");
}

TEST(GrpcWorkerServiceTest, ServedMethodsAnswerEmptyRequestsWithCleanErrors) {
  std::unique_ptr<GrpcServer> server = StartServer("worker", 0, 1);
  ASSERT_NE(server, nullptr);
  auto stub = tensorflow::WorkerService::NewStub(ConnectTo(*server));
  {
    // No graph has that (empty) handle.
    ::grpc::ClientContext context;
    context.set_deadline(DeadlineIn(kCallDeadline));
    RunGraphResponse response;
    EXPECT_EQ(stub->RunGraph(&context, RunGraphRequest(), &response).error_code(),
              ::grpc::StatusCode::ABORTED);
  }
  {
    // An empty rendezvous key is malformed.
    ::grpc::ClientContext context;
    context.set_deadline(DeadlineIn(kCallDeadline));
    RecvTensorResponse response;
    EXPECT_EQ(stub->RecvTensor(&context, RecvTensorRequest(), &response).error_code(),
              ::grpc::StatusCode::INVALID_ARGUMENT);
  }
  {
    // Logging is not served.
    ::grpc::ClientContext context;
    context.set_deadline(DeadlineIn(kCallDeadline));
    LoggingResponse response;
    EXPECT_EQ(stub->Logging(&context, LoggingRequest(), &response).error_code(),
              ::grpc::StatusCode::UNIMPLEMENTED);
  }
  // The same server hosts the master; a session on an empty graph is fine,
  // as in TensorFlow.
  auto master = tensorflow::MasterService::NewStub(ConnectTo(*server));
  ::grpc::ClientContext context;
  context.set_deadline(DeadlineIn(kCallDeadline));
  CreateSessionResponse response;
  EXPECT_EQ(master->CreateSession(&context, CreateSessionRequest(), &response).error_code(),
            ::grpc::StatusCode::OK);
  EXPECT_FALSE(response.session_handle().empty());
}

TEST(GrpcWorkerServiceTest, MalformedTensorMessagesAreInvalidArgument) {
  // RunGraph, RunStep and RunCallable are served on raw bytes: bytes that
  // are no such message, or hold a tensor that is no tensor, are refused
  // cleanly.
  std::unique_ptr<GrpcServer> server = StartServer("worker", 0, 1);
  ASSERT_NE(server, nullptr);
  std::shared_ptr<::grpc::Channel> channel = ConnectTo(*server);
  // A tensor whose content does not fill its shape, in each message.
  TensorProto bad_tensor;
  bad_tensor.set_dtype(DT_FLOAT);
  bad_tensor.mutable_tensor_shape()->add_dim()->set_size(1000);
  bad_tensor.set_tensor_content("12345678");  // 8 bytes, not 4000
  RunGraphRequest run_graph;
  *run_graph.add_send()->mutable_tensor() = bad_tensor;
  RunStepRequest run_step;
  *run_step.add_feed()->mutable_tensor() = bad_tensor;
  RunCallableRequest run_callable;
  *run_callable.add_feed() = bad_tensor;
  const std::vector<std::pair<const char*, std::string>> calls = {
      {"/tensorflow.WorkerService/RunGraph", run_graph.SerializeAsString()},
      {"/tensorflow.MasterService/RunStep", run_step.SerializeAsString()},
      {"/tensorflow.MasterService/RunCallable", run_callable.SerializeAsString()}};
  for (const auto& [path, bad_tensor_bytes] : calls) {
    for (const std::string& bytes :
         {std::string("\xff\xff\xff", 3), std::string("\x1a\x7f", 2), bad_tensor_bytes}) {
      ::grpc::internal::RpcMethod method(path, ::grpc::internal::RpcMethod::NORMAL_RPC, channel);
      ::grpc::ClientContext context;
      context.set_deadline(DeadlineIn(kCallDeadline));
      ::grpc::Slice slice(bytes);
      ::grpc::ByteBuffer request(&slice, 1), response;
      ::grpc::Status status =
          ::grpc::internal::BlockingUnaryCall<::grpc::ByteBuffer, ::grpc::ByteBuffer>(
              channel.get(), method, &context, request, &response);
      EXPECT_EQ(status.error_code(), ::grpc::StatusCode::INVALID_ARGUMENT)
          << path << ": " << status.error_message();
    }
  }
}

TEST(GrpcWorkerServiceTest, StopIsPromptWhileAClientIsConnected) {
  std::unique_ptr<GrpcServer> server = StartServer("worker", 0, 1);
  ASSERT_NE(server, nullptr);
  std::shared_ptr<::grpc::Channel> channel = ConnectTo(*server);
  ASSERT_TRUE(channel->WaitForConnected(DeadlineIn(kCallDeadline)));
  auto stub = tensorflow::WorkerService::NewStub(channel);
  GetStatusResponse response;
  ASSERT_TRUE(CallGetStatus(stub.get(), &response).ok());

  const auto start = steady_clock::now();
  server->Stop(milliseconds(500));
  EXPECT_LT(steady_clock::now() - start, seconds(3));

  // The channel is still open on the client side; the server is gone.
  ::grpc::ClientContext context;
  context.set_deadline(DeadlineIn(seconds(5)));
  ::grpc::Status status = stub->GetStatus(&context, GetStatusRequest(), &response);
  EXPECT_EQ(status.error_code(), ::grpc::StatusCode::UNAVAILABLE) << status.error_message();

  server->Stop(milliseconds(500));  // a second Stop changes nothing
  EXPECT_EQ(server->Start().code(), Code::FAILED_PRECONDITION);
}

TEST(GrpcWorkerServiceTest, EachWorkerGetsItsOwnPortAndIncarnations) {
  std::unique_ptr<GrpcServer> a = StartServer("worker", 0, 1);
  std::unique_ptr<GrpcServer> b = StartServer("worker", 1, 1);
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  EXPECT_NE(a->bound_port(), b->bound_port());
  EXPECT_NE(a->worker_service().devices()[0].incarnation(),
            b->worker_service().devices()[0].incarnation());
}

TEST(GrpcWorkerServiceTest, APortInUseIsUnavailable) {
  std::unique_ptr<GrpcServer> first = StartServer("worker", 0, 1);
  ASSERT_NE(first, nullptr);
  GrpcServerOptions options;
  options.port = first->bound_port();
  std::unique_ptr<GrpcServer> second;
  ASSERT_TRUE(GrpcServer::Create(options, &second).ok());
  Status status = second->Start();
  EXPECT_EQ(status.code(), Code::UNAVAILABLE) << status.ToString();
  EXPECT_NE(status.message().find(std::to_string(options.port)), std::string::npos);
}

TEST(GrpcWorkerServiceTest, BadOptionsAreInvalidArgument) {
  std::unique_ptr<GrpcServer> server;
  GrpcServerOptions options;
  options.port = 70000;
  EXPECT_EQ(GrpcServer::Create(options, &server).code(), Code::INVALID_ARGUMENT);
  options = GrpcServerOptions();
  options.host = "";
  EXPECT_EQ(GrpcServer::Create(options, &server).code(), Code::INVALID_ARGUMENT);
  for (const char* job : {"", "1worker", "work/er", "job:x"}) {
    options = GrpcServerOptions();
    options.worker.job_name = job;
    EXPECT_EQ(GrpcServer::Create(options, &server).code(), Code::INVALID_ARGUMENT) << job;
  }
  options = GrpcServerOptions();
  options.worker.task_index = -1;
  EXPECT_EQ(GrpcServer::Create(options, &server).code(), Code::INVALID_ARGUMENT);
  options = GrpcServerOptions();
  (*options.worker.config.mutable_device_count())["CPU"] = kMaxLocalCpuDevices + 1;
  EXPECT_EQ(GrpcServer::Create(options, &server).code(), Code::INVALID_ARGUMENT);
}

}  // namespace
}  // namespace tensorweave
