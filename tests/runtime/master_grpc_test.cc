// The master end to end over real gRPC on loopback: the test's servers host
// GrpcMasterService and the real worker service, and the test calls the
// master through the generated MasterService stub, as a TensorFlow client
// does. Results are compared with a DirectSession running the same graph.
// Every call has a deadline and every server is stopped by its test.
#include <arpa/inet.h>
#include <grpcpp/create_channel.h>
#include <grpcpp/security/credentials.h>
#include <grpcpp/security/server_credentials.h>
#include <grpcpp/server_builder.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <memory>
#include <thread>

#include "runtime/common_runtime/direct_session.h"
#include "runtime/common_runtime/session_factory.h"
#include "runtime/distributed/grpc_master_service.h"
#include "runtime/distributed/grpc_worker_service.h"
#include "runtime/distributed/worker_cache.h"
#include "tests/runtime/session_test_util.h"

namespace tensorweave {
namespace {

using session_test::AddNode;
using session_test::AddPlaceholder;
using session_test::FloatScalar;
using session_test::FloatVector;
using session_test::SetAttr;
using session_test::Values;

constexpr auto kCallDeadline = std::chrono::seconds(20);

// A loopback port held (SO_REUSEPORT, not listening) until a gRPC server,
// which also binds with SO_REUSEPORT, has taken it: the cluster's addresses
// must be known before the master that reaches them is created, and no
// other process can grab the port meanwhile.
class ReservedPort {
 public:
  ReservedPort() {
    fd_ = socket(AF_INET, SOCK_STREAM, 0);
    int one = 1;
    setsockopt(fd_, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one));
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    address.sin_port = 0;
    if (bind(fd_, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0) {
      socklen_t length = sizeof(address);
      getsockname(fd_, reinterpret_cast<sockaddr*>(&address), &length);
      port_ = ntohs(address.sin_port);
    }
  }
  ~ReservedPort() { close(fd_); }
  int port() const { return port_; }
  std::string address() const { return "127.0.0.1:" + std::to_string(port_); }

 private:
  int fd_ = -1;
  int port_ = 0;
};

// One task of a test cluster: a gRPC server on its reserved port with the
// worker service and, for the master's task, the master service.
class TestTask {
 public:
  // Starts the task `job`/`index` of `cluster`; the master too if asked.
  static std::unique_ptr<TestTask> Start(const ClusterDef& cluster, const std::string& job,
                                         int index, const std::string& address, bool master,
                                         int cpus = 1) {
    auto task = std::make_unique<TestTask>();
    WorkerOptions worker;
    worker.job_name = job;
    worker.task_index = index;
    (*worker.config.mutable_device_count())["CPU"] = cpus;
    Status status = GrpcWorkerService::Create(worker, &task->worker_);
    EXPECT_TRUE(status.ok()) << status;
    if (!status.ok()) return nullptr;
    ::grpc::ServerBuilder builder;
    builder.AddListeningPort(address, ::grpc::InsecureServerCredentials());
    builder.RegisterService(task->worker_.get());
    if (master) {
      MasterOptions options;
      *options.server_def.mutable_cluster() = cluster;
      options.server_def.set_job_name(job);
      options.server_def.set_task_index(index);
      options.server_def.set_protocol("grpc");
      options.worker_cache_factory = NewGrpcWorkerCache;
      status = GrpcMasterService::Create(options, &task->master_);
      EXPECT_TRUE(status.ok()) << status;
      if (!status.ok()) return nullptr;
      builder.RegisterService(task->master_.get());
    }
    task->server_ = builder.BuildAndStart();
    EXPECT_NE(task->server_, nullptr) << "could not serve on " << address;
    if (task->server_ == nullptr) return nullptr;
    return task;
  }

  ~TestTask() {
    if (server_ != nullptr) {
      server_->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(2));
      server_->Wait();
    }
  }

  GrpcWorkerService* worker() { return worker_.get(); }
  GrpcMasterService* master() { return master_.get(); }

 private:
  std::unique_ptr<GrpcWorkerService> worker_;
  std::unique_ptr<GrpcMasterService> master_;
  std::unique_ptr<::grpc::Server> server_;
};

// A client of one master, through the generated stub.
class MasterClient {
 public:
  explicit MasterClient(const std::string& address)
      : stub_(tensorflow::MasterService::NewStub(
            ::grpc::CreateChannel(address, ::grpc::InsecureChannelCredentials()))) {}

  template <typename Request, typename Response, typename Method>
  Status Call(Method method, const Request& request, Response* response) {
    ::grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + kCallDeadline);
    ::grpc::Status status = (stub_.get()->*method)(&context, request, response);
    return status.ok() ? Status::OK()
                       : Status(static_cast<Code>(status.error_code()), status.error_message());
  }

  Status CreateSession(const GraphDef& graph, const ConfigProto& config, std::string* handle) {
    CreateSessionRequest request;
    *request.mutable_graph_def() = graph;
    *request.mutable_config() = config;
    CreateSessionResponse response;
    TW_RETURN_IF_ERROR(Call(&tensorflow::MasterService::Stub::CreateSession, request, &response));
    *handle = response.session_handle();
    return Status::OK();
  }

  // Runs a step as TensorFlow's client does (errors in the response body).
  Status Run(const std::string& handle, const std::vector<std::pair<std::string, Tensor>>& feeds,
             const std::vector<std::string>& fetches, const std::vector<std::string>& targets,
             std::vector<Tensor>* outputs) {
    RunStepRequest request;
    request.set_session_handle(handle);
    request.set_store_errors_in_response_body(true);
    for (const auto& [name, value] : feeds) {
      NamedTensorProto* feed = request.add_feed();
      feed->set_name(name);
      value.AsProtoTensorContent(feed->mutable_tensor());
    }
    for (const std::string& fetch : fetches) request.add_fetch(fetch);
    for (const std::string& target : targets) request.add_target(target);
    RunStepResponse response;
    TW_RETURN_IF_ERROR(Call(&tensorflow::MasterService::Stub::RunStep, request, &response));
    if (response.status_code() != 0) {
      return Status(static_cast<Code>(response.status_code()), response.status_error_message());
    }
    outputs->clear();
    for (const NamedTensorProto& named : response.tensor()) {
      Tensor value;
      TW_RETURN_IF_ERROR(Tensor::FromProto(named.tensor(), &value));
      outputs->push_back(value);
    }
    return Status::OK();
  }

  Status Close(const std::string& handle) {
    CloseSessionRequest request;
    request.set_session_handle(handle);
    CloseSessionResponse response;
    return Call(&tensorflow::MasterService::Stub::CloseSession, request, &response);
  }

 private:
  std::unique_ptr<tensorflow::MasterService::Stub> stub_;
};

ClusterDef MakeCluster(const std::vector<std::pair<std::string, std::vector<std::string>>>& jobs) {
  ClusterDef cluster;
  for (const auto& [name, addresses] : jobs) {
    JobDef* job = cluster.add_job();
    job->set_name(name);
    for (size_t i = 0; i < addresses.size(); ++i) {
      (*job->mutable_tasks())[static_cast<int>(i)] = addresses[i];
    }
  }
  return cluster;
}

NodeDef* AddConst(GraphDef* graph, const std::string& name, const Tensor& value,
                  const std::string& device = "") {
  NodeDef* node = AddNode(graph, name, "Const", {}, device);
  SetAttr(node, "dtype", DT_FLOAT);
  SetAttr(node, "value", value);
  return node;
}

NodeDef* AddBinary(GraphDef* graph, const std::string& name, const std::string& op,
                   const std::string& a, const std::string& b, const std::string& device = "") {
  NodeDef* node = AddNode(graph, name, op, {a, b}, device);
  SetAttr(node, "T", DT_FLOAT);
  return node;
}

// y = x * 2 + 1, all on the master's own task.
GraphDef AffineGraph() {
  GraphDef graph;
  AddPlaceholder(&graph, "x");
  AddConst(&graph, "two", FloatScalar(2.0f));
  AddConst(&graph, "one", FloatScalar(1.0f));
  AddBinary(&graph, "twice", "Mul", "x", "two");
  AddBinary(&graph, "y", "Add", "twice", "one");
  return graph;
}

// A parameter v on ps, computing on both workers:
//   a = x * v (worker 1), y = a + v (worker 0), step: v += 1 (ps).
GraphDef ParameterServerGraph() {
  GraphDef graph;
  const std::string ps = "/job:ps/task:0";
  NodeDef* v = AddNode(&graph, "v", "VariableV2", {}, ps);
  SetAttr(v, "dtype", DT_FLOAT);
  SetAttr(v, "shape", PartialTensorShape::FromShape(TensorShape({2})));
  AddConst(&graph, "v_init", FloatVector({1.0f, 2.0f}), ps);
  NodeDef* assign = AddNode(&graph, "v_assign", "Assign", {"v", "v_init"}, ps);
  SetAttr(assign, "T", DT_FLOAT);
  AddConst(&graph, "increment", FloatVector({1.0f, 1.0f}), ps);
  NodeDef* step = AddNode(&graph, "v_step", "AssignAdd", {"v", "increment"}, ps);
  SetAttr(step, "T", DT_FLOAT);
  AddPlaceholder(&graph, "x");
  AddBinary(&graph, "a", "Mul", "x", "v", "/job:worker/task:1");
  AddBinary(&graph, "y", "Add", "a", "v", "/job:worker/task:0");
  return graph;
}

GraphDef WithoutDevices(GraphDef graph) {
  for (NodeDef& node : *graph.mutable_node()) node.clear_device();
  return graph;
}

ConfigProto TestConfig(int64_t timeout_ms = 10000) {
  ConfigProto config;
  config.set_operation_timeout_in_ms(timeout_ms);
  return config;
}

TEST(MasterGrpcTest, OneServerHostsMasterAndWorker) {
  ReservedPort port;
  const ClusterDef cluster = MakeCluster({{"worker", {port.address()}}});
  std::unique_ptr<TestTask> task = TestTask::Start(cluster, "worker", 0, port.address(), true);
  ASSERT_NE(task, nullptr);
  MasterClient client(port.address());
  std::string handle;
  Status status = client.CreateSession(AffineGraph(), TestConfig(), &handle);
  ASSERT_TRUE(status.ok()) << status;
  for (float x : {3.0f, -1.5f}) {
    std::vector<Tensor> outputs;
    status = client.Run(handle, {{"x:0", FloatScalar(x)}}, {"y:0"}, {}, &outputs);
    ASSERT_TRUE(status.ok()) << status;
    ASSERT_EQ(outputs.size(), 1u);
    EXPECT_EQ(Values(outputs[0]), std::vector<float>{x * 2 + 1});
  }

  // Steps from several client threads at once each get their own values.
  constexpr int kThreads = 4, kSteps = 50;
  std::vector<std::thread> threads;
  std::atomic<int> wrong{0};
  const auto start = std::chrono::steady_clock::now();
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      MasterClient own_client(port.address());
      for (int i = 0; i < kSteps; ++i) {
        const float x = static_cast<float>(t * 1000 + i);
        std::vector<Tensor> outputs;
        Status run = own_client.Run(handle, {{"x", FloatScalar(x)}}, {"y"}, {}, &outputs);
        if (!run.ok() || Values(outputs[0]) != std::vector<float>{x * 2 + 1}) ++wrong;
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  const auto elapsed = std::chrono::duration_cast<std::chrono::microseconds>(
      std::chrono::steady_clock::now() - start);
  EXPECT_EQ(wrong.load(), 0);
  std::printf("%d RunSteps from %d threads on one task: %.3f ms per step\n", kThreads * kSteps,
              kThreads, elapsed.count() / 1000.0 / (kThreads * kSteps));
  EXPECT_TRUE(client.Close(handle).ok());
}

// A cluster on reserved loopback ports: ps 0 and `num_workers` workers,
// worker 0 also serving the master.
struct PsAndWorkers {
  explicit PsAndWorkers(int num_workers) {
    std::vector<std::string> worker_addresses;
    for (int i = 0; i < num_workers; ++i) {
      worker_ports.push_back(std::make_unique<ReservedPort>());
      worker_addresses.push_back(worker_ports.back()->address());
    }
    const ClusterDef cluster =
        MakeCluster({{"ps", {ps_port.address()}}, {"worker", worker_addresses}});
    ps = TestTask::Start(cluster, "ps", 0, ps_port.address(), false);
    // The master's task last: it finds the others already serving.
    workers.resize(num_workers);
    for (int i = num_workers - 1; i >= 0; --i) {
      workers[i] = TestTask::Start(cluster, "worker", i, worker_addresses[i], i == 0);
    }
  }
  bool started() const {
    return ps != nullptr && std::all_of(workers.begin(), workers.end(),
                                        [](const auto& task) { return task != nullptr; });
  }
  std::string master_address() const { return worker_ports[0]->address(); }

  // The ports outlive the tasks serving on them (members go in reverse).
  ReservedPort ps_port;
  std::vector<std::unique_ptr<ReservedPort>> worker_ports;
  std::unique_ptr<TestTask> ps;
  std::vector<std::unique_ptr<TestTask>> workers;
};

TEST(MasterGrpcTest, ThreeTaskClusterMatchesADirectSession) {
  const PsAndWorkers tasks(2);
  ASSERT_TRUE(tasks.started());
  MasterClient client(tasks.master_address());
  std::string handle;
  Status status = client.CreateSession(ParameterServerGraph(), TestConfig(), &handle);
  ASSERT_TRUE(status.ok()) << status;

  SessionOptions options;
  std::unique_ptr<Session> local;
  ASSERT_TRUE(NewSession(options, &local).ok());
  ASSERT_TRUE(local->Create(WithoutDevices(ParameterServerGraph())).ok());

  std::vector<Tensor> remote_out, local_out;
  ASSERT_TRUE(client.Run(handle, {}, {}, {"v_assign"}, &remote_out).ok());
  ASSERT_TRUE(local->Run({}, {}, {"v_assign"}, &local_out).ok());
  // The variable lives on across steps: each round bumps it on ps.
  for (int round = 0; round < 3; ++round) {
    const Tensor x = FloatVector({2.0f, 3.0f + round});
    status = client.Run(handle, {{"x:0", x}}, {"y:0", "v:0"}, {}, &remote_out);
    ASSERT_TRUE(status.ok()) << status;
    ASSERT_TRUE(local->Run({{"x:0", x}}, {"y:0", "v:0"}, {}, &local_out).ok());
    ASSERT_EQ(remote_out.size(), 2u);
    EXPECT_EQ(Values(remote_out[0]), Values(local_out[0])) << "round " << round;
    EXPECT_EQ(Values(remote_out[1]), Values(local_out[1])) << "round " << round;
    ASSERT_TRUE(client.Run(handle, {}, {}, {"v_step"}, &remote_out).ok());
    ASSERT_TRUE(local->Run({}, {}, {"v_step"}, &local_out).ok());
  }
  EXPECT_TRUE(client.Close(handle).ok());
}

TEST(MasterGrpcTest, ErrorsComeBackWithTensorFlowsCodes) {
  const PsAndWorkers tasks(1);
  ASSERT_TRUE(tasks.started());
  GraphDef graph = ParameterServerGraph();
  // Only what ps and worker 0 hold: y reads v, which nobody initialized.
  for (NodeDef& node : *graph.mutable_node()) {
    if (node.device() == "/job:worker/task:1") node.set_device("/job:worker/task:0");
  }
  MasterClient client(tasks.master_address());
  std::string handle;
  ASSERT_TRUE(client.CreateSession(graph, TestConfig(), &handle).ok());
  std::vector<Tensor> outputs;
  Status status = client.Run(handle, {}, {"nope:0"}, {}, &outputs);
  EXPECT_EQ(status.code(), Code::NOT_FOUND) << status;
  status = client.Run(handle, {{"x:0", FloatVector({1.0f, 1.0f})}}, {"y:0"}, {}, &outputs);
  EXPECT_EQ(status.code(), Code::FAILED_PRECONDITION) << status;
  EXPECT_NE(status.message().find("uninitialized value v"), std::string::npos) << status;
  // The session still works after a failed step.
  ASSERT_TRUE(client.Run(handle, {}, {}, {"v_assign"}, &outputs).ok());
  status = client.Run(handle, {{"x:0", FloatVector({1.0f, 1.0f})}}, {"y:0"}, {}, &outputs);
  ASSERT_TRUE(status.ok()) << status;
  EXPECT_EQ(Values(outputs[0]), (std::vector<float>{2.0f, 4.0f}));
  EXPECT_TRUE(client.Close(handle).ok());
  status = client.Run(handle, {}, {"v:0"}, {}, &outputs);
  EXPECT_EQ(status.code(), Code::ABORTED) << status;
}

TEST(MasterGrpcTest, AFailingTaskCancelsTheStepOnTheOthers) {
  const PsAndWorkers tasks(2);
  ASSERT_TRUE(tasks.started());
  // ps fails, worker 1 blocks until its step is cancelled, worker 0 waits
  // for both.
  GraphDef graph;
  AddPlaceholder(&graph, "x");
  AddNode(&graph, "fails", "SessionTestFail", {"x"}, "/job:ps/task:0");
  session_test::AddWaitForCancel(&graph, "blocks")->set_device("/job:worker/task:1");
  AddBinary(&graph, "y", "Add", "fails", "blocks");
  MasterClient client(tasks.master_address());
  std::string handle;
  ASSERT_TRUE(client.CreateSession(graph, TestConfig(), &handle).ok());
  std::vector<Tensor> outputs;
  const auto start = std::chrono::steady_clock::now();
  Status status = client.Run(handle, {{"x:0", FloatScalar(1.0f)}}, {"y:0"}, {}, &outputs);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  EXPECT_EQ(status.code(), Code::INVALID_ARGUMENT) << status;
  EXPECT_NE(status.message().find("SessionTestFail always fails"), std::string::npos) << status;

  // A step that only blocks ends at its timeout; the session stays usable.
  RunStepRequest request;
  request.set_session_handle(handle);
  request.add_fetch("blocks:0");
  request.mutable_options()->set_timeout_in_ms(300);
  RunStepResponse response;
  status = client.Call(&tensorflow::MasterService::Stub::RunStep, request, &response);
  EXPECT_EQ(status.code(), Code::DEADLINE_EXCEEDED) << status;  // an RPC error without the flag
  status = client.Run(handle, {{"x:0", FloatScalar(1.0f)}}, {"x:0"}, {}, &outputs);
  EXPECT_EQ(status.code(), Code::INVALID_ARGUMENT) << status;  // fed and fetched
  EXPECT_TRUE(client.Close(handle).ok());
}

TEST(MasterGrpcTest, AWorkerThatIsNotRunningFailsCreateSessionInTime) {
  ReservedPort worker_port, silent_port;  // nothing will ever serve silent_port
  const ClusterDef cluster =
      MakeCluster({{"worker", {worker_port.address(), silent_port.address()}}});
  auto worker = TestTask::Start(cluster, "worker", 0, worker_port.address(), true);
  ASSERT_NE(worker, nullptr);
  MasterClient client(worker_port.address());
  std::string handle;
  const auto start = std::chrono::steady_clock::now();
  Status status = client.CreateSession(AffineGraph(), TestConfig(/*timeout_ms=*/1000), &handle);
  const auto waited = std::chrono::steady_clock::now() - start;
  EXPECT_EQ(status.code(), Code::DEADLINE_EXCEEDED) << status;
  EXPECT_NE(status.message().find("/job:worker/replica:0/task:1"), std::string::npos) << status;
  EXPECT_LT(waited, std::chrono::seconds(5));
}

TEST(MasterGrpcTest, ManySessionsLeaveNothingRegistered) {
  const PsAndWorkers tasks(1);
  ASSERT_TRUE(tasks.started());
  GraphDef graph = AffineGraph();
  graph.mutable_node(1)->set_device("/job:ps/task:0");  // "two" comes from ps
  MasterClient client(tasks.master_address());
  const auto start = std::chrono::steady_clock::now();
  std::string last_handle;
  for (int i = 0; i < 200; ++i) {
    std::string& handle = last_handle;
    Status status = client.CreateSession(graph, TestConfig(), &handle);
    ASSERT_TRUE(status.ok()) << "cycle " << i << ": " << status;
    std::vector<Tensor> outputs;
    status = client.Run(handle, {{"x:0", FloatScalar(1.0f)}}, {"y:0"}, {}, &outputs);
    ASSERT_TRUE(status.ok()) << "cycle " << i << ": " << status;
    ASSERT_TRUE(client.Close(handle).ok()) << "cycle " << i;
  }
  const auto elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(
      std::chrono::steady_clock::now() - start);
  std::printf("200 CreateSession/RunStep/CloseSession cycles on 2 tasks: %lld ms\n",
              static_cast<long long>(elapsed.count()));
  EXPECT_EQ(tasks.workers[0]->master()->master()->num_sessions(), 0);
  // Every worker session (and with it every registered graph) is gone: the
  // workers refuse the last session's handle.
  for (TestTask* task : {tasks.ps.get(), tasks.workers[0].get()}) {
    RunGraphRequest run;
    run.set_session_handle(last_handle);
    run.set_create_worker_session_called(true);
    run.set_graph_handle("any");
    RunGraphResponse response;
    EXPECT_EQ(task->worker()->worker()->RunGraph(run, &response, 5000).code(), Code::ABORTED);
  }
}

}  // namespace
}  // namespace tensorweave
