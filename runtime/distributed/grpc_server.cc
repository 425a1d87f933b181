#include "runtime/distributed/grpc_server.h"

#include <grpc/grpc.h>
#include <grpcpp/security/server_credentials.h>
#include <grpcpp/server_builder.h>

#include <cstdio>

#include "runtime/distributed/grpc_master_service.h"
#include "runtime/distributed/grpc_security.h"
#include "runtime/distributed/grpc_worker_cache.h"
#include "runtime/distributed/local_master.h"
#include "runtime/distributed/server_def_util.h"
#include "runtime/framework/str_util.h"

namespace tensorweave {
namespace {

// gRPC wants IPv6 hosts in brackets ("[::1]:port").
std::string HostPort(const std::string& host, int port) {
  bool bare_ipv6 = host.find(':') != std::string::npos && host.front() != '[';
  return bare_ipv6 ? StrCat("[", host, "]:", port) : StrCat(host, ":", port);
}

}  // namespace

Status GrpcServer::CreateServices() {
  // Options written directly (not from a ServerDef) describe a one-task
  // cluster: this server's job and task at its own address.
  ServerDef server_def = options_.server_def;
  if (server_def.cluster().job_size() == 0) {
    server_def.set_job_name(options_.worker.job_name);
    server_def.set_task_index(options_.worker.task_index);
    server_def.set_protocol("grpc");
    JobDef* job = server_def.mutable_cluster()->add_job();
    job->set_name(options_.worker.job_name);
    (*job->mutable_tasks())[options_.worker.task_index] = HostPort(AdvertisedHost(), options_.port);
  }

  WorkerOptions worker_options = options_.worker;
  *worker_options.cluster.mutable_job() = server_def.cluster().job();
  std::unique_ptr<GrpcWorkerService> worker;
  TW_RETURN_IF_ERROR(GrpcWorkerService::Create(worker_options, &worker));
  worker_service_ = worker.get();
  services_.push_back(std::move(worker));

  MasterOptions master_options;
  master_options.server_def = server_def;
  // The master reaches the cluster's workers over gRPC, and this server's
  // own worker directly.
  Worker* local_worker = worker_service_->worker();
  const std::string local_task =
      StrCat("/job:", server_def.job_name(), "/replica:0/task:", server_def.task_index());
  master_options.worker_cache_factory = [local_worker, local_task](
                                            const ClusterDef& cluster,
                                            std::unique_ptr<WorkerCacheInterface>* cache) {
    std::unique_ptr<WorkerCacheInterface> remote;
    TW_RETURN_IF_ERROR(NewGrpcWorkerCache(cluster, &remote));
    *cache = WithLocalWorker(std::move(remote), local_task, local_worker);
    return Status::OK();
  };
  std::unique_ptr<GrpcMasterService> master;
  TW_RETURN_IF_ERROR(GrpcMasterService::Create(master_options, &master));
  master_ = master->master();
  services_.push_back(std::move(master));
  return Status::OK();
}

std::string GrpcServer::AdvertisedHost() const {
  return options_.advertised_host.empty() ? options_.host : options_.advertised_host;
}

Status GrpcServer::Create(GrpcServerOptions options, std::unique_ptr<GrpcServer>* server) {
  if (options.host.empty()) return errors::InvalidArgument("server host is empty");
  if (options.port < 0 || options.port > 65535) {
    return errors::InvalidArgument("server port ", options.port, " is outside 0..65535");
  }
  // Port 0: the port is picked now, so the cluster the services see (a
  // master finds its own worker there) names the address clients will use.
  if (options.port == 0) {
    TW_RETURN_IF_ERROR(PickFreePort(options.host, &options.port));
    if (options.server_def.cluster().job_size() > 0) {
      options.server_def = WithOwnPort(options.server_def, options.port);
    }
  }
  std::unique_ptr<GrpcServer> created(new GrpcServer(options));
  TW_RETURN_IF_ERROR(created->CreateServices());
  *server = std::move(created);
  return Status::OK();
}

Status GrpcServer::Create(const ServerDef& server_def, std::unique_ptr<GrpcServer>* server) {
  GrpcServerOptions options;
  TW_RETURN_IF_ERROR(GrpcServerOptionsFromServerDef(server_def, &options));
  return Create(std::move(options), server);
}

GrpcServer::~GrpcServer() {
  Stop(std::chrono::milliseconds(100));
  // Last made, first gone: the master closes the sessions still open (their
  // clients never closed them) through this server's worker, which must
  // still be there.
  while (!services_.empty()) services_.pop_back();
}

Status GrpcServer::Start() {
  std::lock_guard<std::mutex> lock(mu_);
  if (state_ != State::kCreated) {
    return errors::FailedPrecondition(
        "server for ", HostPort(options_.host, options_.port),
        state_ == State::kServing ? " is already serving" : " was stopped");
  }
  const std::string address = HostPort(options_.host, options_.port);
  ::grpc::ServerBuilder builder;
  int port = 0;
  const GrpcSecurityOptions security = GrpcSecurityOptions::FromEnvironment();
  std::shared_ptr<::grpc::ServerCredentials> credentials;
  TW_RETURN_IF_ERROR(NewServerCredentials(security, &credentials));
  builder.AddListeningPort(address, credentials, &port);
  // gRPC would otherwise let a second server share a port already in use
  // (SO_REUSEPORT), splitting the calls between two processes.
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  // Tensors of any size (gRPC's default refuses messages over 4 MiB).
  builder.SetMaxReceiveMessageSize(-1);
  builder.SetMaxSendMessageSize(-1);
  // Clients ping every ~2 s, also while a long step runs without data;
  // gRPC's default policy would call that abuse and drop the connection.
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 1);
  builder.AddChannelArgument(GRPC_ARG_HTTP2_MIN_RECV_PING_INTERVAL_WITHOUT_DATA_MS, 1000);
  builder.AddChannelArgument(GRPC_ARG_HTTP2_MAX_PING_STRIKES, 0);
  for (const std::unique_ptr<::grpc::Service>& service : services_) {
    builder.RegisterService(service.get());
  }
  std::unique_ptr<::grpc::Server> server = builder.BuildAndStart();
  if (server == nullptr || port == 0) {
    if (server != nullptr) server->Shutdown();
    return errors::Unavailable("could not listen on ", address,
                               " (address in use, or not an interface of this machine)");
  }
  server_ = std::move(server);
  bound_port_ = port;
  state_ = State::kServing;
  const std::string target = TargetAt(port);
  // Sessions of this process whose target is this server skip RPC.
  local_master_ = LocalMaster::Register(target, master_);
  std::fprintf(
      stderr, "tensorweave: server /job:%s/replica:0/task:%d listening on %s (target %s); %s\n",
      options_.worker.job_name.c_str(), options_.worker.task_index,
      HostPort(options_.host, port).c_str(), target.c_str(), security.DescribeServer().c_str());
  return Status::OK();
}

void GrpcServer::Stop(std::chrono::milliseconds deadline) {
  // A second Stop waits here until the first one has finished stopping.
  std::lock_guard<std::mutex> stopping(stop_mu_);
  std::unique_ptr<::grpc::Server> server;
  std::unique_ptr<LocalMaster::Registration> local_master;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (state_ == State::kServing) server = std::move(server_);
    local_master = std::move(local_master_);
    state_ = State::kStopped;
  }
  // Direct calls in flight finish first; later ones fail as RPCs would.
  local_master.reset();
  if (server != nullptr) {
    // Past the deadline gRPC cancels the calls still running; Wait then
    // returns once every handler has finished.
    server->Shutdown(std::chrono::system_clock::now() + deadline);
    server->Wait();
  }
  std::lock_guard<std::mutex> lock(mu_);
  fully_stopped_ = true;
  stopped_cv_.notify_all();
}

void GrpcServer::Join() {
  std::unique_lock<std::mutex> lock(mu_);
  if (state_ == State::kCreated) {
    state_ = State::kStopped;
    fully_stopped_ = true;
    return;
  }
  stopped_cv_.wait(lock, [this] { return fully_stopped_; });
}

int GrpcServer::bound_port() const {
  std::lock_guard<std::mutex> lock(mu_);
  return bound_port_;
}

std::string GrpcServer::target() const {
  const int port = bound_port();
  return TargetAt(port != 0 ? port : options_.port);
}

std::string GrpcServer::TargetAt(int port) const {
  return StrCat("grpc://", HostPort(AdvertisedHost(), port));
}

ServerDef GrpcServer::server_def() const {
  const int port = bound_port();
  return port == 0 ? options_.server_def : WithOwnPort(options_.server_def, port);
}

}  // namespace tensorweave
