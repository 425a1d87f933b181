// WorkerInterface: how a master, or a peer worker, calls one worker of the
// cluster. Every method is asynchronous so a master can start RunGraph on
// every partition at once and wait for all of them; `done` runs exactly
// once, on any thread, after the response has been filled in.
//
//   WorkerInterface* worker = cache->GetOrCreateWorker("/job:ps/replica:0/task:0");
//   CallOptions call;
//   call.SetTimeout(5000);
//   RegisterGraphRequest request;  ... RegisterGraphResponse response;
//   worker->RegisterGraphAsync(&call, &request, &response, [&](const Status& s) { ... });
//   ... call.StartCancel();        // ends the call early with CANCELLED
//
// The request, the response and the CallOptions belong to the caller and
// must stay alive until `done` has run. Implementations: Worker (the task
// in this process), GrpcRemoteWorker (any task, over gRPC) and test
// doubles.
//
// RunGraph's tensors travel as Tensors, never as TensorProtos in memory:
//
//   RunGraphInput run;
//   run.request.set_graph_handle(handle);  ... run.request.add_recv_key(y_key);
//   run.sends.emplace_back(x_key, x);       // the request's `send`, as tensors
//   RunGraphOutput result;                  // result.recvs: one per recv_key
//   worker->RunGraphAsync(&call, &run, &result, done);
#ifndef TENSORWEAVE_DISTRIBUTED_WORKER_INTERFACE_H_
#define TENSORWEAVE_DISTRIBUTED_WORKER_INTERFACE_H_

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>

#include "runtime/distributed/tensor_coding.h"
#include "runtime/framework/status.h"
#include "tensorweave/proto/worker.pb.h"

namespace tensorweave {

// Per-call options shared by caller and callee: a timeout and a way to
// cancel a call in flight. Thread-safe.
class CallOptions {
 public:
  using CancelCallback = std::function<void()>;

  // 0 (the default) means no timeout.
  void SetTimeout(int64_t timeout_ms) {
    std::lock_guard<std::mutex> lock(mu_);
    timeout_ms_ = timeout_ms;
  }
  int64_t GetTimeout() const {
    std::lock_guard<std::mutex> lock(mu_);
    return timeout_ms_;
  }

  // Called by the implementation while a call is in flight; StartCancel
  // runs it (once). Cancelled before the callback was set: it runs at once.
  void SetCancelCallback(CancelCallback callback) {
    std::unique_lock<std::mutex> lock(mu_);
    if (cancelled_) {
      lock.unlock();
      callback();
      return;
    }
    cancel_callback_ = std::move(callback);
  }
  void ClearCancelCallback() {
    std::lock_guard<std::mutex> lock(mu_);
    cancel_callback_ = nullptr;
  }
  void StartCancel() {
    CancelCallback callback;
    {
      std::lock_guard<std::mutex> lock(mu_);
      cancelled_ = true;
      callback = std::move(cancel_callback_);
      cancel_callback_ = nullptr;
    }
    if (callback) callback();
  }

 private:
  mutable std::mutex mu_;
  int64_t timeout_ms_ = 0;
  bool cancelled_ = false;
  CancelCallback cancel_callback_;
};

// RunGraphRequest in memory: every field in `request` but `send`, whose
// entries are `sends`. On the wire it is one RunGraphRequest
// (tensor_coding.h).
struct RunGraphInput {
  RunGraphRequest request;  // `send` stays empty
  NamedTensors sends;       // by rendezvous key
  // The caller does nothing but wait for `done` (a master running its own
  // task's partition): a worker in this process may then run the step's
  // last executor on the calling thread instead of waking a pool thread.
  // Never set for a call served to a remote caller.
  bool caller_waits = false;
};

// RunGraphResponse in memory: every field in `response` but `recv`, whose
// entries are `recvs` (one per recv_key, in the request's order).
struct RunGraphOutput {
  RunGraphResponse response;  // `recv` stays empty
  NamedTensors recvs;
};

class WorkerInterface {
 public:
  using StatusCallback = std::function<void(const Status&)>;

  virtual ~WorkerInterface() = default;

  virtual void GetStatusAsync(CallOptions* call, const GetStatusRequest* request,
                              GetStatusResponse* response, StatusCallback done) = 0;
  virtual void CreateWorkerSessionAsync(CallOptions* call,
                                        const CreateWorkerSessionRequest* request,
                                        CreateWorkerSessionResponse* response,
                                        StatusCallback done) = 0;
  virtual void DeleteWorkerSessionAsync(CallOptions* call,
                                        const DeleteWorkerSessionRequest* request,
                                        DeleteWorkerSessionResponse* response,
                                        StatusCallback done) = 0;
  virtual void RegisterGraphAsync(CallOptions* call, const RegisterGraphRequest* request,
                                  RegisterGraphResponse* response, StatusCallback done) = 0;
  virtual void DeregisterGraphAsync(CallOptions* call, const DeregisterGraphRequest* request,
                                    DeregisterGraphResponse* response, StatusCallback done) = 0;
  virtual void RunGraphAsync(CallOptions* call, const RunGraphInput* input, RunGraphOutput* output,
                             StatusCallback done) = 0;
  virtual void CleanupGraphAsync(CallOptions* call, const CleanupGraphRequest* request,
                                 CleanupGraphResponse* response, StatusCallback done) = 0;
  virtual void CleanupAllAsync(CallOptions* call, const CleanupAllRequest* request,
                               CleanupAllResponse* response, StatusCallback done) = 0;
  virtual void RecvTensorAsync(CallOptions* call, const RecvTensorRequest* request,
                               RecvTensorResponse* response, StatusCallback done) = 0;

  // Blocking forms of the calls above, for code that has nothing else to do.
  Status GetStatus(const GetStatusRequest& request, GetStatusResponse* response,
                   int64_t timeout_ms = 0) {
    return CallAndWait(timeout_ms, [&](CallOptions* call, StatusCallback done) {
      GetStatusAsync(call, &request, response, std::move(done));
    });
  }
  Status CreateWorkerSession(const CreateWorkerSessionRequest& request,
                             CreateWorkerSessionResponse* response, int64_t timeout_ms = 0) {
    return CallAndWait(timeout_ms, [&](CallOptions* call, StatusCallback done) {
      CreateWorkerSessionAsync(call, &request, response, std::move(done));
    });
  }
  Status DeleteWorkerSession(const DeleteWorkerSessionRequest& request,
                             DeleteWorkerSessionResponse* response, int64_t timeout_ms = 0) {
    return CallAndWait(timeout_ms, [&](CallOptions* call, StatusCallback done) {
      DeleteWorkerSessionAsync(call, &request, response, std::move(done));
    });
  }
  Status RegisterGraph(const RegisterGraphRequest& request, RegisterGraphResponse* response,
                       int64_t timeout_ms = 0) {
    return CallAndWait(timeout_ms, [&](CallOptions* call, StatusCallback done) {
      RegisterGraphAsync(call, &request, response, std::move(done));
    });
  }
  Status DeregisterGraph(const DeregisterGraphRequest& request, DeregisterGraphResponse* response,
                         int64_t timeout_ms = 0) {
    return CallAndWait(timeout_ms, [&](CallOptions* call, StatusCallback done) {
      DeregisterGraphAsync(call, &request, response, std::move(done));
    });
  }
  Status RunGraph(const RunGraphInput& input, RunGraphOutput* output, int64_t timeout_ms = 0) {
    return CallAndWait(timeout_ms, [&](CallOptions* call, StatusCallback done) {
      RunGraphAsync(call, &input, output, std::move(done));
    });
  }
  // RunGraph with the tensors in the protos (request.send, response->recv),
  // for tests and tools: a send that Tensor::FromProto refuses is
  // INVALID_ARGUMENT before anything is called.
  Status RunGraph(const RunGraphRequest& request, RunGraphResponse* response,
                  int64_t timeout_ms = 0);
  Status CleanupGraph(const CleanupGraphRequest& request, CleanupGraphResponse* response,
                      int64_t timeout_ms = 0) {
    return CallAndWait(timeout_ms, [&](CallOptions* call, StatusCallback done) {
      CleanupGraphAsync(call, &request, response, std::move(done));
    });
  }

 private:
  template <typename StartCall>
  static Status CallAndWait(int64_t timeout_ms, StartCall start) {
    CallOptions call;
    call.SetTimeout(timeout_ms);
    std::mutex mu;
    std::condition_variable finished;
    bool done = false;
    Status result;
    start(&call, [&](const Status& status) {
      std::lock_guard<std::mutex> lock(mu);
      result = status;
      done = true;
      finished.notify_one();
    });
    std::unique_lock<std::mutex> lock(mu);
    finished.wait(lock, [&] { return done; });
    return result;
  }
};

inline Status WorkerInterface::RunGraph(const RunGraphRequest& request, RunGraphResponse* response,
                                        int64_t timeout_ms) {
  RunGraphInput input;
  input.request = request;
  input.request.clear_send();
  for (const NamedTensorProto& send : request.send()) {
    Tensor value;
    Status parsed = Tensor::FromProto(send.tensor(), &value);
    if (!parsed.ok()) {
      return errors::InvalidArgument("The tensor sent as ", send.name(),
                                     " is malformed: ", parsed.message());
    }
    input.sends.emplace_back(send.name(), std::move(value));
  }
  RunGraphOutput output;
  Status status = RunGraph(input, &output, timeout_ms);
  *response = std::move(output.response);
  for (const auto& [name, value] : output.recvs) {
    NamedTensorProto* recv = response->add_recv();
    recv->set_name(name);
    value.AsProtoTensorContent(recv->mutable_tensor());
  }
  return status;
}

}  // namespace tensorweave

#endif  // TENSORWEAVE_DISTRIBUTED_WORKER_INTERFACE_H_
