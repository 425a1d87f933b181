// Reading a ServerDef (tensorflow_server.proto): which address this task of
// the cluster serves on, and how a GrpcServer is configured from it, with
// TensorFlow's checks and errors.
//
//   ServerDef def;                      // cluster {ps: ["localhost:0"]}, job ps, task 0
//   GrpcServerOptions options;
//   TW_RETURN_IF_ERROR(GrpcServerOptionsFromServerDef(def, &options));
//   // options.host == "127.0.0.1", options.port == 0 (a free port),
//   // options.advertised_host == "localhost"
#ifndef TENSORWEAVE_DISTRIBUTED_SERVER_DEF_UTIL_H_
#define TENSORWEAVE_DISTRIBUTED_SERVER_DEF_UTIL_H_

#include <string>

#include "runtime/framework/status.h"
#include "tensorweave/proto/tensorflow_server.pb.h"

namespace tensorweave {

struct GrpcServerOptions;

// "host:port" -> host and port. The host may be a bracketed IPv6 address
// ("[::1]:2222"). INVALID_ARGUMENT naming `address` when there is no port
// or it is not a number in 0..65535.
Status SplitHostPort(const std::string& address, std::string* host, int* port);

// The address of task server_def.task_index of job server_def.job_name in
// server_def.cluster. INVALID_ARGUMENT when the job has no such task;
// INTERNAL when the cluster has no such job (TensorFlow's codes).
Status TaskAddress(const ServerDef& server_def, std::string* address);

// Options for the GrpcServer of `server_def`:
// - protocol must be "grpc" (NOT_FOUND otherwise, as TensorFlow says when
//   no server factory accepts a ServerDef);
// - it listens on its task's address in the cluster; server_def.port, when
//   not 0, replaces that address's port; port 0 picks a free one;
// - "localhost" listens on 127.0.0.1 only (and the target keeps saying
//   localhost); any other host is listened on as given, so "0.0.0.0" is
//   needed to accept connections on every interface;
// - its worker is /job:<job_name>/replica:0/task:<task_index> with the
//   devices default_session_config.device_count asks for.
Status GrpcServerOptionsFromServerDef(const ServerDef& server_def, GrpcServerOptions* options);

// A port of `host` that is free now (the kernel's pick for port 0), so a
// server can know its address, and tell its services, before it listens.
// Another process could take it before the server binds it; the server's
// Start then fails with UNAVAILABLE. UNAVAILABLE when `host` does not
// resolve to a local address.
Status PickFreePort(const std::string& host, int* port);

// `server_def` with the address of its own task set to host:`port` (the
// task's host kept).
ServerDef WithOwnPort(const ServerDef& server_def, int port);

}  // namespace tensorweave

#endif  // TENSORWEAVE_DISTRIBUTED_SERVER_DEF_UTIL_H_
