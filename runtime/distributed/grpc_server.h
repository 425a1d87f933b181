// GrpcServer: one process's gRPC endpoint for TensorFlow's distributed
// protocol. It owns the services it serves (the master and the worker; see
// CreateServices in grpc_server.cc, the one list of them), binds one
// address, and really stops: Stop ends the serving within a deadline, even
// while clients are connected or calls are in flight.
//
// From a ServerDef, as tf.train.Server and TF_NewServer make it:
//   ServerDef def;      // cluster {worker: ["localhost:0"]}, job "worker", task 0, protocol "grpc"
//   std::unique_ptr<GrpcServer> server;
//   TW_RETURN_IF_ERROR(GrpcServer::Create(def, &server));
//   TW_RETURN_IF_ERROR(server->Start());   // logs its address to stderr
//   ... server->target() is "grpc://localhost:<port>" ...
//   server->Stop();                        // or Join() from a thread that waits for Stop
//
// Or from options directly:
//   GrpcServerOptions options;               // 127.0.0.1, a free port
//   options.worker.job_name = "worker";
//   TW_RETURN_IF_ERROR(GrpcServer::Create(options, &server));
//
// Services: the master (grpc_master_service.h) and the worker
// (grpc_worker_service.h); the master reaches the cluster's workers, this
// server's own included, over gRPC.
//
// Transport: as the environment says (grpc_security.h): insecure and
// TensorFlow-compatible by default, else TLS and/or a token; the startup
// log line says which. Messages of any size are accepted, and clients'
// keepalive pings are welcome at any rate (grpc_channel.h sends them every
// ~2 s), so a long step is never cut off for "too many pings".
#ifndef TENSORWEAVE_DISTRIBUTED_GRPC_SERVER_H_
#define TENSORWEAVE_DISTRIBUTED_GRPC_SERVER_H_

#include <grpcpp/impl/service_type.h>
#include <grpcpp/server.h>

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "runtime/distributed/grpc_worker_service.h"
#include "runtime/distributed/local_master.h"
#include "runtime/framework/status.h"
#include "tensorweave/proto/tensorflow_server.pb.h"

namespace tensorweave {

struct GrpcServerOptions {
  // The interface to listen on. Loopback by default: TensorFlow's servers
  // listen on every interface and accept anyone; ours do only when told to
  // (host "0.0.0.0" or "[::]").
  std::string host = "127.0.0.1";
  // The host clients are told to use in target(); empty: `host`. A server
  // whose cluster says "localhost" listens on 127.0.0.1 and keeps saying
  // localhost, as TensorFlow's targets do.
  std::string advertised_host;
  // 0 picks a free port; bound_port() then tells which.
  int port = 0;
  WorkerOptions worker;
  // The ServerDef the options came from (server_def_util.h), for services
  // that need the whole cluster; empty when the options were written
  // directly.
  ServerDef server_def;
};

class GrpcServer {
 public:
  // How long Stop() lets calls in flight finish before cancelling them.
  static constexpr std::chrono::milliseconds kStopGracePeriod{1000};

  // INVALID_ARGUMENT for a port outside 0..65535, an empty host or invalid
  // worker options. A port of 0 is picked here (PickFreePort), as
  // TensorFlow's servers know their port once created; UNAVAILABLE if none
  // can be. Nothing listens until Start.
  static Status Create(GrpcServerOptions options, std::unique_ptr<GrpcServer>* server);
  // The server of task server_def.task_index of job server_def.job_name;
  // errors as GrpcServerOptionsFromServerDef (server_def_util.h) and as above.
  static Status Create(const ServerDef& server_def, std::unique_ptr<GrpcServer>* server);

  // Stops (with a short deadline) if still serving.
  ~GrpcServer();

  GrpcServer(const GrpcServer&) = delete;
  GrpcServer& operator=(const GrpcServer&) = delete;

  // Binds the address and starts serving, then logs one line to stderr (the
  // address, the target, the transport security). UNAVAILABLE if the address
  // cannot be bound (in use, not a local interface); FAILED_PRECONDITION if
  // already started or stopped (a joined server counts as stopped).
  Status Start();

  // Stops accepting calls and waits for the running ones until `deadline`
  // has passed, then cancels whatever is still running. Returns once the
  // server has fully stopped. Stopping twice (or an unstarted server) is a
  // no-op.
  void Stop(std::chrono::milliseconds deadline);
  void Stop() { Stop(kStopGracePeriod); }

  // Blocks until the server has stopped (another thread calls Stop). An
  // unstarted server returns at once and can no longer start, as in
  // TensorFlow.
  void Join();

  // The bound port (after Start; 0 before), and "grpc://host:port" (for a
  // server made from a ServerDef, the port is known from Create on).
  int bound_port() const;
  std::string target() const;

  // The ServerDef it was created from, with this task's address carrying
  // the server's port (a ServerDef's port 0 is picked at Create, so the
  // services and target() know the real one before Start).
  ServerDef server_def() const;

  const GrpcWorkerService& worker_service() const { return *worker_service_; }

 private:
  explicit GrpcServer(const GrpcServerOptions& options) : options_(options) {}

  // Creates every service this server hosts (the one list of them). A
  // member, so a service may be handed this server, e.g. to read
  // server_def() with the bound port once started.
  Status CreateServices();
  // The host clients are told to use, and the target naming it with `port`.
  std::string AdvertisedHost() const;
  std::string TargetAt(int port) const;

  enum class State { kCreated, kServing, kStopped };

  const GrpcServerOptions options_;
  // Owned, registered in this order and destroyed in the reverse one;
  // written only by CreateServices.
  std::vector<std::unique_ptr<::grpc::Service>> services_;
  GrpcWorkerService* worker_service_ = nullptr;  // one of services_
  Master* master_ = nullptr;                     // of one of services_

  std::mutex stop_mu_;     // held for a whole Stop
  mutable std::mutex mu_;  // guards what follows
  std::condition_variable stopped_cv_;
  State state_ = State::kCreated;
  bool fully_stopped_ = false;  // Stop finished (what Join waits for)
  int bound_port_ = 0;
  std::unique_ptr<::grpc::Server> server_;
  // This process's sessions reach the master directly while it serves.
  std::unique_ptr<LocalMaster::Registration> local_master_;
};

}  // namespace tensorweave

#endif  // TENSORWEAVE_DISTRIBUTED_GRPC_SERVER_H_
