#include "runtime/distributed/grpc_session.h"

#include <chrono>
#include <random>
#include <unordered_map>

#include "runtime/common_runtime/session_factory.h"
#include "runtime/distributed/grpc_channel.h"
#include "runtime/distributed/grpc_remote_master.h"
#include "runtime/distributed/local_master.h"

namespace tensorweave {
namespace {

const char kClosedMessage[] = "Session has been closed.";

Status ClosedError() { return errors::Cancelled(kClosedMessage); }

// A non-zero id for a request that changes state, so a master that sees a
// retried request can recognise it (TensorFlow's masters keep the recent
// ones). Ids are a random start plus a counter, so no two requests of this
// process share one and other processes are unlikely to collide.
int64_t NewRequestId() {
  static const uint64_t start = std::random_device{}() * uint64_t{0x9E3779B97F4A7C15};
  static std::atomic<uint64_t> counter{0};
  const int64_t id = static_cast<int64_t>((start + counter.fetch_add(1)) & INT64_MAX);
  return id == 0 ? 1 : id;
}

DeviceAttributes FromProto(const proto::DeviceAttributes& device) {
  DeviceAttributes result;
  result.name = device.name();
  result.device_type = device.device_type();
  result.memory_limit_bytes = device.memory_limit();
  result.incarnation = device.incarnation();
  return result;
}

}  // namespace

// A call Close can cancel: registered while it lives.
class GrpcSession::TrackedCall {
 public:
  TrackedCall(GrpcSession* session, int64_t timeout_ms) : session_(session) {
    options_.SetTimeout(timeout_ms);
  }
  ~TrackedCall() {
    if (!registered_) return;
    std::lock_guard<std::mutex> lock(session_->mu_);
    session_->calls_in_flight_.erase(&options_);
  }

  // CANCELLED when the session is closed already.
  Status Begin() {
    std::lock_guard<std::mutex> lock(session_->mu_);
    if (session_->closed_) return ClosedError();
    session_->calls_in_flight_.insert(&options_);
    registered_ = true;
    return Status::OK();
  }

  CallOptions* options() { return &options_; }

  // The call's status, saying why when Close ended it.
  Status Finish(const Status& status) {
    if (errors::IsCancelled(status)) {
      std::lock_guard<std::mutex> lock(session_->mu_);
      if (session_->closed_) return errors::Cancelled("Step was cancelled: ", kClosedMessage);
    }
    return status;
  }

 private:
  GrpcSession* const session_;
  CallOptions options_;
  bool registered_ = false;
};

Status GrpcSession::NewMaster(const SessionOptions& options,
                              std::unique_ptr<MasterInterface>* master) {
  std::string host_port;
  TW_RETURN_IF_ERROR(ParseGrpcTarget(options.target, &host_port));
  if (!options.config.rpc_options().use_rpc_for_inprocess_master()) {
    *master = LocalMaster::Lookup(options.target);
    if (*master != nullptr) return Status::OK();
  }
  std::shared_ptr<::grpc::Channel> channel;
  TW_RETURN_IF_ERROR(NewGrpcChannel(host_port, &channel));
  *master = NewGrpcRemoteMaster(std::move(channel));
  return Status::OK();
}

Status GrpcSession::Create(const SessionOptions& options, std::unique_ptr<GrpcSession>* session) {
  std::unique_ptr<MasterInterface> master;
  TW_RETURN_IF_ERROR(NewMaster(options, &master));
  session->reset(new GrpcSession(options, std::move(master)));
  return Status::OK();
}

Status GrpcSession::Reset(const SessionOptions& options,
                          const std::vector<std::string>& containers) {
  std::unique_ptr<MasterInterface> master;
  TW_RETURN_IF_ERROR(NewMaster(options, &master));
  ResetRequest request;
  for (const std::string& container : containers) request.add_container(container);
  *request.mutable_device_filters() = options.config.device_filters();
  ResetResponse response;
  CallOptions call;
  call.SetTimeout(options.config.operation_timeout_in_ms());
  return master->Reset(&call, request, &response);
}

GrpcSession::~GrpcSession() { Close(); }

// --- Graph -----------------------------------------------------------------

Status GrpcSession::Create(const GraphDef& graph) {
  std::lock_guard<std::mutex> lock(extend_mu_);
  return CreateLocked(graph);
}

Status GrpcSession::CreateLocked(const GraphDef& graph) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (closed_) return ClosedError();
    if (!handle_.empty()) {
      return errors::AlreadyExists("Session already has a graph; use Extend to add nodes to it");
    }
  }
  CreateSessionRequest request;
  *request.mutable_graph_def() = graph;
  *request.mutable_config() = options_.config;
  request.set_target(options_.target);
  CreateSessionResponse response;
  TrackedCall call(this, options_.config.operation_timeout_in_ms());
  TW_RETURN_IF_ERROR(call.Begin());
  TW_RETURN_IF_ERROR(call.Finish(master_->CreateSession(call.options(), request, &response)));
  if (response.session_handle().empty()) {
    return errors::Internal("The master at ", options_.target, " returned no session handle");
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!closed_) {
      handle_ = response.session_handle();
      graph_version_ = response.graph_version();
      return Status::OK();
    }
  }
  // Close ran while the master was creating the session: close that one
  // too, so the master does not keep it.
  CloseSessionRequest close;
  close.set_session_handle(response.session_handle());
  CloseSessionResponse closed;
  CallOptions close_call;
  close_call.SetTimeout(options_.config.operation_timeout_in_ms());
  master_->CloseSession(&close_call, close, &closed);
  return ClosedError();
}

Status GrpcSession::Extend(const GraphDef& graph) {
  std::lock_guard<std::mutex> lock(extend_mu_);
  ExtendSessionRequest request;
  {
    std::lock_guard<std::mutex> state_lock(mu_);
    if (closed_) return ClosedError();
    request.set_session_handle(handle_);
    request.set_current_graph_version(graph_version_);
  }
  if (request.session_handle().empty()) return CreateLocked(graph);
  *request.mutable_graph_def() = graph;
  ExtendSessionResponse response;
  TrackedCall call(this, options_.config.operation_timeout_in_ms());
  TW_RETURN_IF_ERROR(call.Begin());
  TW_RETURN_IF_ERROR(call.Finish(master_->ExtendSession(call.options(), request, &response)));
  std::lock_guard<std::mutex> state_lock(mu_);
  graph_version_ = response.new_graph_version();
  return Status::OK();
}

Status GrpcSession::GetHandle(std::string* handle) const {
  std::lock_guard<std::mutex> lock(mu_);
  if (closed_) return ClosedError();
  if (handle_.empty()) {
    return errors::InvalidArgument("A session is not created yet: the graph has no nodes");
  }
  *handle = handle_;
  return Status::OK();
}

int64_t GrpcSession::StepTimeout(int64_t timeout_ms) const {
  return timeout_ms > 0 ? timeout_ms : options_.config.operation_timeout_in_ms();
}

// --- Steps -----------------------------------------------------------------

Status GrpcSession::Run(const std::vector<std::pair<std::string, Tensor>>& inputs,
                        const std::vector<std::string>& output_names,
                        const std::vector<std::string>& target_nodes,
                        std::vector<Tensor>* outputs) {
  return Run(RunOptions(), inputs, output_names, target_nodes, outputs);
}

Status GrpcSession::Run(const RunOptions& options,
                        const std::vector<std::pair<std::string, Tensor>>& inputs,
                        const std::vector<std::string>& output_names,
                        const std::vector<std::string>& target_nodes,
                        std::vector<Tensor>* outputs) {
  return Run(options, inputs, output_names, target_nodes, outputs, /*run_metadata=*/nullptr);
}

Status GrpcSession::Run(const RunOptions& options,
                        const std::vector<std::pair<std::string, Tensor>>& inputs,
                        const std::vector<std::string>& output_names,
                        const std::vector<std::string>& target_nodes, std::vector<Tensor>* outputs,
                        RunMetadata* run_metadata) {
  RunStepRequest request;
  TW_RETURN_IF_ERROR(GetHandle(request.mutable_session_handle()));
  const int64_t timeout_ms = StepTimeout(options.timeout_in_ms());
  *request.mutable_options() = options;
  request.mutable_options()->set_timeout_in_ms(timeout_ms);
  for (const std::string& target : target_nodes) request.add_target(target);
  RunStepResponse response;
  TW_RETURN_IF_ERROR(
      RunStep(&request, inputs, output_names, /*fetch_each_once=*/true, outputs, &response));
  if (run_metadata != nullptr) run_metadata->Swap(response.mutable_metadata());
  return Status::OK();
}

Status GrpcSession::RunStep(RunStepRequest* request,
                            const std::vector<std::pair<std::string, Tensor>>& inputs,
                            const std::vector<std::string>& output_names, bool fetch_each_once,
                            std::vector<Tensor>* outputs, RunStepResponse* response) {
  // Each name is fetched once; a repeated fetch gets a copy of the first.
  std::unordered_map<std::string, size_t> first_position;
  for (size_t i = 0; i < output_names.size(); ++i) {
    const bool first = first_position.emplace(output_names[i], i).second;
    if (first || !fetch_each_once) request->add_fetch(output_names[i]);
  }
  // As TensorFlow's client: a step's error comes back in the response body.
  request->set_store_errors_in_response_body(true);
  request->set_request_id(NewRequestId());

  NamedTensors fetched;
  TrackedCall call(this, request->options().timeout_in_ms());
  TW_RETURN_IF_ERROR(call.Begin());
  TW_RETURN_IF_ERROR(
      call.Finish(master_->RunStep(call.options(), *request, inputs, response, &fetched)));

  std::vector<Tensor> results(output_names.size());
  std::vector<bool> received(output_names.size(), false);
  for (auto& [name, value] : fetched) {
    auto position = first_position.find(name);
    if (position == first_position.end()) {
      return errors::Internal("The master returned a tensor for '", name,
                              "', which was not fetched");
    }
    results[position->second] = std::move(value);
    received[position->second] = true;
  }
  for (size_t i = 0; i < output_names.size(); ++i) {
    const size_t first = first_position[output_names[i]];
    if (!received[first]) {
      return errors::Internal("The master returned no tensor for fetch '", output_names[i], "'");
    }
    if (first != i) results[i] = results[first];
  }
  *outputs = std::move(results);
  runs_.fetch_add(1, std::memory_order_relaxed);
  return Status::OK();
}

Status GrpcSession::PRunSetup(const std::vector<std::string>& input_names,
                              const std::vector<std::string>& output_names,
                              const std::vector<std::string>& target_nodes, std::string* handle) {
  PartialRunSetupRequest request;
  TW_RETURN_IF_ERROR(GetHandle(request.mutable_session_handle()));
  for (const std::string& name : input_names) request.add_feed(name);
  for (const std::string& name : output_names) request.add_fetch(name);
  for (const std::string& name : target_nodes) request.add_target(name);
  request.set_request_id(NewRequestId());
  PartialRunSetupResponse response;
  TrackedCall call(this, options_.config.operation_timeout_in_ms());
  TW_RETURN_IF_ERROR(call.Begin());
  TW_RETURN_IF_ERROR(call.Finish(master_->PartialRunSetup(call.options(), request, &response)));
  *handle = response.partial_run_handle();
  return Status::OK();
}

Status GrpcSession::PRun(const std::string& handle,
                         const std::vector<std::pair<std::string, Tensor>>& inputs,
                         const std::vector<std::string>& output_names,
                         std::vector<Tensor>* outputs) {
  RunStepRequest request;
  TW_RETURN_IF_ERROR(GetHandle(request.mutable_session_handle()));
  request.set_partial_run_handle(handle);
  request.mutable_options()->set_timeout_in_ms(StepTimeout(0));
  RunStepResponse response;
  // Every name goes to the master, which refuses one fetched twice (as
  // DirectSession does) rather than copying it.
  return RunStep(&request, inputs, output_names, /*fetch_each_once=*/false, outputs, &response);
}

Status GrpcSession::MakeCallable(const CallableOptions& options, CallableHandle* handle) {
  MakeCallableRequest request;
  TW_RETURN_IF_ERROR(GetHandle(request.mutable_session_handle()));
  *request.mutable_options() = options;
  request.set_request_id(NewRequestId());
  MakeCallableResponse response;
  TrackedCall call(this, options_.config.operation_timeout_in_ms());
  TW_RETURN_IF_ERROR(call.Begin());
  TW_RETURN_IF_ERROR(call.Finish(master_->MakeCallable(call.options(), request, &response)));
  std::lock_guard<std::mutex> lock(mu_);
  Callable& callable = callables_[response.handle()];
  callable.timeout_ms = StepTimeout(options.run_options().timeout_in_ms());
  callable.num_fetches = options.fetch_size();
  callable.released = false;
  *handle = response.handle();
  return Status::OK();
}

Status GrpcSession::RunCallable(CallableHandle handle, const std::vector<Tensor>& feeds,
                                std::vector<Tensor>* fetches) {
  return RunCallable(handle, feeds, fetches, /*run_metadata=*/nullptr);
}

Status GrpcSession::RunCallable(CallableHandle handle, const std::vector<Tensor>& feeds,
                                std::vector<Tensor>* fetches, RunMetadata* run_metadata) {
  fetches->clear();
  RunCallableRequest request;
  TW_RETURN_IF_ERROR(GetHandle(request.mutable_session_handle()));
  Callable callable;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto found = callables_.find(handle);
    if (found == callables_.end() || found->second.released) {
      return errors::InvalidArgument("No such callable handle: ", handle);
    }
    callable = found->second;
  }
  request.set_handle(handle);
  request.set_request_id(NewRequestId());
  RunCallableResponse response;
  std::vector<Tensor> results;
  TrackedCall call(this, callable.timeout_ms);
  TW_RETURN_IF_ERROR(call.Begin());
  TW_RETURN_IF_ERROR(
      call.Finish(master_->RunCallable(call.options(), request, feeds, &response, &results)));
  if (results.size() != static_cast<size_t>(callable.num_fetches)) {
    return errors::Internal("The master returned ", results.size(), " tensors for a callable with ",
                            callable.num_fetches, " fetches");
  }
  *fetches = std::move(results);
  if (run_metadata != nullptr) run_metadata->Swap(response.mutable_metadata());
  runs_.fetch_add(1, std::memory_order_relaxed);
  return Status::OK();
}

Status GrpcSession::ReleaseCallable(CallableHandle handle) {
  ReleaseCallableRequest request;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto found = callables_.find(handle);
    if (found == callables_.end()) {
      return errors::InvalidArgument("No such callable handle: ", handle);
    }
    // Closing the master session released its callables already.
    if (found->second.released || closed_) return Status::OK();
    found->second.released = true;
    request.set_session_handle(handle_);
  }
  request.set_handle(handle);
  ReleaseCallableResponse response;
  TrackedCall call(this, options_.config.operation_timeout_in_ms());
  Status begun = call.Begin();
  if (!begun.ok()) return Status::OK();  // closed meanwhile
  return call.Finish(master_->ReleaseCallable(call.options(), request, &response));
}

// --- Devices and lifecycle -------------------------------------------------

Status GrpcSession::ListDevices(std::vector<DeviceAttributes>* devices) {
  ListDevicesRequest request;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (closed_) return ClosedError();
    request.set_session_handle(handle_);
  }
  // As TensorFlow's client: a session not created yet is created with an
  // empty graph, so the master answers for this session's cluster.
  if (request.session_handle().empty()) {
    Status created = Create(GraphDef());
    if (!created.ok() && !errors::IsAlreadyExists(created)) return created;
    TW_RETURN_IF_ERROR(GetHandle(request.mutable_session_handle()));
  }
  ListDevicesResponse response;
  TrackedCall call(this, options_.config.operation_timeout_in_ms());
  TW_RETURN_IF_ERROR(call.Begin());
  TW_RETURN_IF_ERROR(call.Finish(master_->ListDevices(call.options(), request, &response)));
  devices->clear();
  for (const proto::DeviceAttributes& device : response.local_device()) {
    devices->push_back(FromProto(device));
  }
  for (const proto::DeviceAttributes& device : response.remote_device()) {
    devices->push_back(FromProto(device));
  }
  return Status::OK();
}

Status GrpcSession::Close() {
  CloseSessionRequest request;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (closed_) return Status::OK();
    closed_ = true;
    // Calls in flight end now with CANCELLED; the master cancels their
    // steps when it closes the session.
    for (CallOptions* call : calls_in_flight_) call->StartCancel();
    if (handle_.empty()) return Status::OK();
    request.set_session_handle(handle_);
  }
  CloseSessionResponse response;
  CallOptions call;
  call.SetTimeout(options_.config.operation_timeout_in_ms());
  return master_->CloseSession(&call, request, &response);
}

SessionStats GrpcSession::stats() const {
  SessionStats stats;
  stats.runs = runs_.load(std::memory_order_relaxed);
  return stats;
}

// --- Factory ---------------------------------------------------------------

namespace {

class GrpcSessionFactory : public SessionFactory {
 public:
  bool AcceptsOptions(const SessionOptions& options) override {
    return IsGrpcTarget(options.target);
  }
  Status NewSession(const SessionOptions& options, std::unique_ptr<Session>* session) override {
    std::unique_ptr<GrpcSession> grpc_session;
    TW_RETURN_IF_ERROR(GrpcSession::Create(options, &grpc_session));
    *session = std::move(grpc_session);
    return Status::OK();
  }
  Status Reset(const SessionOptions& options, const std::vector<std::string>& containers) override {
    return GrpcSession::Reset(options, containers);
  }
};

SessionFactoryRegistrar grpc_session_registrar("GRPC_SESSION", new GrpcSessionFactory);

}  // namespace

}  // namespace tensorweave
