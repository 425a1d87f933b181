// Shared by the worker tests: workers served over gRPC on loopback (each
// test starts and stops its own), clients reaching them through
// GrpcRemoteWorker with a deadline on every call, and builders for the
// graphs a master would register (nodes placed on full device names,
// client-terminated _Recv/_Send for feeds and fetches).
#ifndef TENSORWEAVE_TESTS_RUNTIME_WORKER_TEST_UTIL_H_
#define TENSORWEAVE_TESTS_RUNTIME_WORKER_TEST_UTIL_H_

#include <grpcpp/create_channel.h>
#include <grpcpp/security/credentials.h>
#include <grpcpp/security/server_credentials.h>
#include <grpcpp/server.h>
#include <grpcpp/server_builder.h>
#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "runtime/distributed/grpc_remote_worker.h"
#include "runtime/distributed/grpc_worker_service.h"
#include "runtime/framework/node_def_util.h"
#include "runtime/framework/rendezvous.h"
#include "runtime/framework/str_util.h"

namespace tensorweave {
namespace worker_test {

// Every call a test makes ends within this, even against a broken worker.
constexpr int64_t kCallTimeoutMs = 10000;

// One worker task served on 127.0.0.1 (a free port).
class TestWorker {
 public:
  TestWorker(const std::string& job, int task, int cpus = 1) {
    WorkerOptions options;
    options.job_name = job;
    options.task_index = task;
    (*options.config.mutable_device_count())["CPU"] = cpus;
    Status status = GrpcWorkerService::Create(options, &service_);
    EXPECT_TRUE(status.ok()) << status;
    if (!status.ok()) return;
    ::grpc::ServerBuilder builder;
    builder.AddListeningPort("127.0.0.1:0", ::grpc::InsecureServerCredentials(), &port_);
    builder.SetMaxReceiveMessageSize(-1);
    builder.RegisterService(service_.get());
    server_ = builder.BuildAndStart();
    EXPECT_NE(server_, nullptr);
    EXPECT_GT(port_, 0);
    client_ =
        NewGrpcRemoteWorker(::grpc::CreateChannel(address(), ::grpc::InsecureChannelCredentials()));
  }
  ~TestWorker() { Stop(); }

  void Stop() {
    if (server_ == nullptr) return;
    server_->Shutdown(std::chrono::system_clock::now() + std::chrono::milliseconds(500));
    server_->Wait();
    server_.reset();
  }

  std::string address() const { return StrCat("127.0.0.1:", port_); }
  // The i-th CPU device's full name and incarnation.
  const std::string& device(int i = 0) const { return service_->devices()[i].name(); }
  uint64_t incarnation(int i = 0) const { return service_->devices()[i].incarnation(); }
  Worker* worker() const { return service_->worker(); }
  // Calls through gRPC, as a master would.
  WorkerInterface* client() const { return client_.get(); }

 private:
  std::unique_ptr<GrpcWorkerService> service_;
  std::unique_ptr<::grpc::Server> server_;
  int port_ = 0;
  std::unique_ptr<WorkerInterface> client_;
};

// A ClusterDef with one job per worker (job name → its address).
inline ClusterDef ClusterOf(const std::vector<std::pair<std::string, const TestWorker*>>& tasks) {
  ClusterDef cluster;
  for (const auto& task : tasks) {
    JobDef* job = nullptr;
    for (JobDef& existing : *cluster.mutable_job()) {
      if (existing.name() == task.first) job = &existing;
    }
    if (job == nullptr) {
      job = cluster.add_job();
      job->set_name(task.first);
    }
    (*job->mutable_tasks())[job->tasks_size()] = task.second->address();
  }
  return cluster;
}

// Starts an async call and waits for it (bounded by the call's timeout).
// `start` receives the CallOptions and the done callback.
template <typename Start>
Status CallAndWait(Start start, int64_t timeout_ms = kCallTimeoutMs,
                   CallOptions* options = nullptr) {
  CallOptions own;
  CallOptions* call = options != nullptr ? options : &own;
  call->SetTimeout(timeout_ms);
  std::mutex mu;
  std::condition_variable cv;
  bool done = false;
  Status result;
  start(call, [&](const Status& status) {
    std::lock_guard<std::mutex> lock(mu);
    result = status;
    done = true;
    cv.notify_all();
  });
  std::unique_lock<std::mutex> lock(mu);
  // The RPC deadline ends the call; the extra margin only catches a client
  // that never calls back.
  if (!cv.wait_for(lock, std::chrono::milliseconds(timeout_ms + 5000), [&] { return done; })) {
    ADD_FAILURE() << "call did not finish";
    lock.unlock();
    call->StartCancel();
    lock.lock();
    cv.wait(lock, [&] { return done; });
  }
  return result;
}

inline Status RecvTensor(WorkerInterface* worker, int64_t step_id, const std::string& key,
                         RecvTensorResponse* response, int64_t timeout_ms = kCallTimeoutMs) {
  RecvTensorRequest request;
  request.set_step_id(step_id);
  request.set_rendezvous_key(key);
  return CallAndWait(
      [&](CallOptions* call, WorkerInterface::StatusCallback done) {
        worker->RecvTensorAsync(call, &request, response, std::move(done));
      },
      timeout_ms);
}

inline Status CleanupAll(WorkerInterface* worker) {
  CleanupAllRequest request;
  CleanupAllResponse response;
  return CallAndWait([&](CallOptions* call, WorkerInterface::StatusCallback done) {
    worker->CleanupAllAsync(call, &request, &response, std::move(done));
  });
}

// --- Graph building -------------------------------------------------------

inline Tensor FloatTensor(std::vector<float> values, TensorShape shape) {
  Tensor tensor(DT_FLOAT, shape);
  for (size_t i = 0; i < values.size(); ++i) tensor.data<float>()[i] = values[i];
  return tensor;
}
inline Tensor Scalar(float value) { return FloatTensor({value}, TensorShape({})); }

inline NodeDef* AddNode(GraphDef* graph, const std::string& name, const std::string& op,
                        const std::string& device, std::vector<std::string> inputs = {}) {
  NodeDef* node = graph->add_node();
  node->set_name(name);
  node->set_op(op);
  node->set_device(device);
  for (const std::string& input : inputs) node->add_input(input);
  return node;
}

template <typename T>
NodeDef* Attr(NodeDef* node, const std::string& name, const T& value) {
  SetAttrValue(value, &(*node->mutable_attr())[name]);
  return node;
}

inline void AddConst(GraphDef* graph, const std::string& name, const std::string& device,
                     const Tensor& value) {
  NodeDef* node = AddNode(graph, name, "Const", device);
  Attr(node, "dtype", value.dtype());
  Attr(node, "value", value);
}

inline void AddBinary(GraphDef* graph, const std::string& name, const std::string& op,
                      const std::string& device, const std::string& a, const std::string& b) {
  Attr(AddNode(graph, name, op, device, {a, b}), "T", DT_FLOAT);
}

inline void SetTransferAttrs(NodeDef* node, const std::string& tensor_name,
                             const std::string& send_device, uint64_t incarnation,
                             const std::string& recv_device, bool client_terminated) {
  Attr(node, "tensor_name", tensor_name);
  Attr(node, "send_device", send_device);
  Attr(node, "send_device_incarnation", static_cast<int64_t>(incarnation));
  Attr(node, "recv_device", recv_device);
  Attr(node, "client_terminated", client_terminated);
}

// A _Recv on `recv_device` of the value sent under the key these attrs make.
inline void AddRecv(GraphDef* graph, const std::string& name, const std::string& tensor_name,
                    const std::string& send_device, uint64_t incarnation,
                    const std::string& recv_device, bool client_terminated) {
  NodeDef* node = AddNode(graph, name, "_Recv", recv_device);
  Attr(node, "tensor_type", DT_FLOAT);
  SetTransferAttrs(node, tensor_name, send_device, incarnation, recv_device, client_terminated);
}

inline void AddSend(GraphDef* graph, const std::string& name, const std::string& input,
                    const std::string& tensor_name, const std::string& send_device,
                    uint64_t incarnation, const std::string& recv_device, bool client_terminated) {
  NodeDef* node = AddNode(graph, name, "_Send", send_device, {input});
  Attr(node, "T", DT_FLOAT);
  SetTransferAttrs(node, tensor_name, send_device, incarnation, recv_device, client_terminated);
}

// The key a client-terminated node on `device` uses for `tensor_name`.
inline std::string ClientKey(const TestWorker& worker, const std::string& tensor_name) {
  return Rendezvous::CreateKey(worker.device(), worker.incarnation(), worker.device(), tensor_name);
}

// y = x * 2 + 1 on one worker: x fed under ClientKey("x"), y fetched under
// ClientKey("y").
inline GraphDef AffineGraph(const TestWorker& worker) {
  GraphDef graph;
  const std::string& d = worker.device();
  AddRecv(&graph, "x", "x", d, worker.incarnation(), d, /*client_terminated=*/true);
  AddConst(&graph, "two", d, Scalar(2));
  AddConst(&graph, "one", d, Scalar(1));
  AddBinary(&graph, "mul", "Mul", d, "x", "two");
  AddBinary(&graph, "y", "AddV2", d, "mul", "one");
  AddSend(&graph, "y_send", "y", "y", d, worker.incarnation(), d, /*client_terminated=*/true);
  return graph;
}

inline NamedTensorProto Named(const std::string& key, const Tensor& value) {
  NamedTensorProto named;
  named.set_name(key);
  value.AsProtoTensorContent(named.mutable_tensor());
  return named;
}

inline float ScalarOf(const TensorProto& proto) {
  Tensor value;
  Status status = Tensor::FromProto(proto, &value);
  EXPECT_TRUE(status.ok()) << status;
  return status.ok() && value.NumElements() == 1 ? value.data<float>()[0] : -12345.0f;
}

inline Status Register(WorkerInterface* worker, const GraphDef& graph, std::string* handle,
                       const std::string& session = "") {
  RegisterGraphRequest request;
  request.set_session_handle(session);
  request.set_create_worker_session_called(!session.empty());
  *request.mutable_graph_def() = graph;
  RegisterGraphResponse response;
  Status status = worker->RegisterGraph(request, &response, kCallTimeoutMs);
  *handle = response.graph_handle();
  return status;
}

inline Status CreateSession(WorkerInterface* worker, const std::string& handle, bool isolate,
                            const ClusterDef& cluster = ClusterDef()) {
  CreateWorkerSessionRequest request;
  request.set_session_handle(handle);
  request.set_isolate_session_state(isolate);
  *request.mutable_server_def()->mutable_cluster() = cluster;
  CreateWorkerSessionResponse response;
  return worker->CreateWorkerSession(request, &response, kCallTimeoutMs);
}

inline RunGraphRequest RunRequest(const std::string& graph_handle, int64_t step_id,
                                  const std::string& session = "") {
  RunGraphRequest request;
  request.set_session_handle(session);
  request.set_create_worker_session_called(!session.empty());
  request.set_graph_handle(graph_handle);
  request.set_step_id(step_id);
  return request;
}

}  // namespace worker_test
}  // namespace tensorweave

#endif  // TENSORWEAVE_TESTS_RUNTIME_WORKER_TEST_UTIL_H_
