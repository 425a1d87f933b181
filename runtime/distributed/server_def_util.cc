#include "runtime/distributed/server_def_util.h"

#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>

#include "runtime/distributed/grpc_server.h"

namespace tensorweave {

Status SplitHostPort(const std::string& address, std::string* host, int* port) {
  const size_t colon = address.rfind(':');
  const bool bracketed = !address.empty() && address.front() == '[';
  const bool one_colon_or_bracketed =
      colon != std::string::npos &&
      (bracketed ? colon > 0 && address[colon - 1] == ']' : address.find(':') == colon);
  const std::string digits = one_colon_or_bracketed ? address.substr(colon + 1) : "";
  bool numeric = !digits.empty() && digits.size() <= 5;
  for (char c : digits) numeric = numeric && c >= '0' && c <= '9';
  if (!numeric || colon == 0 || std::stoi(digits) > 65535) {
    return errors::InvalidArgument("Could not parse port for local server from \"", address, "\".");
  }
  *host = address.substr(0, colon);
  *port = std::stoi(digits);
  return Status::OK();
}

Status TaskAddress(const ServerDef& server_def, std::string* address) {
  for (const JobDef& job : server_def.cluster().job()) {
    if (job.name() != server_def.job_name()) continue;
    auto task = job.tasks().find(server_def.task_index());
    if (task == job.tasks().end()) {
      return errors::InvalidArgument("Task ", server_def.task_index(), " was not defined in job \"",
                                     server_def.job_name(), "\"");
    }
    *address = task->second;
    return Status::OK();
  }
  return errors::Internal("Job \"", server_def.job_name(), "\" was not defined in cluster");
}

Status GrpcServerOptionsFromServerDef(const ServerDef& server_def, GrpcServerOptions* options) {
  if (server_def.protocol() != "grpc") {
    return errors::NotFound("No server factory registered for the given ServerDef: protocol \"",
                            server_def.protocol(), "\" (this build serves \"grpc\")");
  }
  std::string address;
  TW_RETURN_IF_ERROR(TaskAddress(server_def, &address));
  std::string host;
  int port = 0;
  TW_RETURN_IF_ERROR(SplitHostPort(address, &host, &port));
  if (server_def.port() != 0) {
    if (server_def.port() < 0 || server_def.port() > 65535) {
      return errors::InvalidArgument("ServerDef port ", server_def.port(), " is outside 0..65535");
    }
    port = server_def.port();
  }
  options->host = host == "localhost" ? "127.0.0.1" : host;
  options->advertised_host = host;
  options->port = port;
  options->worker.job_name = server_def.job_name();
  options->worker.task_index = server_def.task_index();
  options->worker.config = server_def.default_session_config();
  options->server_def = server_def;
  return Status::OK();
}

Status PickFreePort(const std::string& host, int* port) {
  // getaddrinfo wants "::1", not "[::1]".
  const std::string bare = host.size() > 2 && host.front() == '[' && host.back() == ']'
                               ? host.substr(1, host.size() - 2)
                               : host;
  addrinfo hints;
  std::memset(&hints, 0, sizeof(hints));
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE;
  addrinfo* found = nullptr;
  if (getaddrinfo(bare.c_str(), "0", &hints, &found) != 0 || found == nullptr) {
    return errors::Unavailable("could not resolve \"", host, "\" to pick a free port");
  }
  Status status = errors::Unavailable("could not pick a free port on ", host);
  for (addrinfo* address = found; address != nullptr; address = address->ai_next) {
    const int fd = socket(address->ai_family, address->ai_socktype, address->ai_protocol);
    if (fd < 0) continue;
    sockaddr_storage bound;
    socklen_t length = sizeof(bound);
    if (bind(fd, address->ai_addr, address->ai_addrlen) == 0 &&
        getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &length) == 0) {
      *port = ntohs(bound.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port
                                                : reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
      status = Status::OK();
    }
    close(fd);
    if (status.ok()) break;
  }
  freeaddrinfo(found);
  return status;
}

ServerDef WithOwnPort(const ServerDef& server_def, int port) {
  ServerDef result = server_def;
  for (JobDef& job : *result.mutable_cluster()->mutable_job()) {
    if (job.name() != result.job_name()) continue;
    auto task = job.mutable_tasks()->find(result.task_index());
    std::string host;
    int old_port = 0;
    if (task != job.mutable_tasks()->end() && SplitHostPort(task->second, &host, &old_port).ok()) {
      task->second = StrCat(host, ":", port);
    }
  }
  return result;
}

}  // namespace tensorweave
