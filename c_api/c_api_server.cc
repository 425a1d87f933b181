// TF_Server and TF_Reset: the C face of GrpcServer
// (runtime/distributed/grpc_server.h) and of Reset
// (runtime/common_runtime/session.h). Translation only.
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "c_api/c_api_internal.h"
#include "runtime/distributed/grpc_server.h"

using tensorweave::GrpcServer;
using tensorweave::ServerDef;
using tensorweave::Status;
namespace errors = tensorweave::errors;
namespace c_api = tensorweave::c_api;

struct TF_Server {
  std::unique_ptr<GrpcServer> server;
  // Every distinct string TF_ServerTarget returned (the target changes once,
  // when Start binds a port), kept so each stays valid until the server is
  // deleted. Calls may come from several threads.
  std::mutex targets_mu;
  std::vector<std::unique_ptr<std::string>> targets;
};

TF_Server* TF_NewServer(const void* proto, size_t proto_len, TF_Status* status) {
  return c_api::Guard(status, static_cast<TF_Server*>(nullptr), [&]() -> TF_Server* {
    ServerDef server_def;
    if ((proto == nullptr && proto_len > 0) || proto_len > INT32_MAX ||
        !server_def.ParseFromArray(proto, static_cast<int>(proto_len))) {
      c_api::Set(status, errors::InvalidArgument("Could not parse the ServerDef"));
      return nullptr;
    }
    auto server = std::make_unique<TF_Server>();
    Status created = GrpcServer::Create(server_def, &server->server);
    c_api::Set(status, created);
    return created.ok() ? server.release() : nullptr;
  });
}

void TF_ServerStart(TF_Server* server, TF_Status* status) {
  c_api::GuardVoid(status, [&] {
    if (server == nullptr) return c_api::Set(status, errors::InvalidArgument("server is NULL"));
    c_api::Set(status, server->server->Start());
  });
}

void TF_ServerStop(TF_Server* server, TF_Status* status) {
  c_api::GuardVoid(status, [&] {
    if (server == nullptr) return c_api::Set(status, errors::InvalidArgument("server is NULL"));
    server->server->Stop();
    c_api::Set(status, Status::OK());
  });
}

void TF_ServerJoin(TF_Server* server, TF_Status* status) {
  c_api::GuardVoid(status, [&] {
    if (server == nullptr) return c_api::Set(status, errors::InvalidArgument("server is NULL"));
    server->server->Join();
    c_api::Set(status, Status::OK());
  });
}

const char* TF_ServerTarget(TF_Server* server) {
  return c_api::Guard(nullptr, static_cast<const char*>(nullptr), [&]() -> const char* {
    if (server == nullptr) return nullptr;
    std::string target = server->server->target();
    std::lock_guard<std::mutex> lock(server->targets_mu);
    if (server->targets.empty() || *server->targets.back() != target) {
      server->targets.push_back(std::make_unique<std::string>(std::move(target)));
    }
    return server->targets.back()->c_str();
  });
}

void TF_DeleteServer(TF_Server* server) { delete server; }

void TF_Reset(const TF_SessionOptions* opt, const char** containers, int ncontainers,
              TF_Status* status) {
  c_api::GuardVoid(status, [&] {
    if (opt == nullptr || ncontainers < 0 || (ncontainers > 0 && containers == nullptr)) {
      return c_api::Set(status, errors::InvalidArgument(
                                    "TF_Reset needs options and ncontainers >= 0 containers"));
    }
    std::vector<std::string> names;
    for (int i = 0; i < ncontainers; ++i) {
      if (containers[i] == nullptr) {
        return c_api::Set(status, errors::InvalidArgument("Container ", i, " is NULL"));
      }
      names.push_back(containers[i]);
    }
    c_api::Set(status, tensorweave::Reset(opt->options, names));
  });
}
