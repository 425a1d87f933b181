// gRPC plumbing shared by the clients of TensorFlow's distributed services:
// reading a "grpc://host:port" target and opening a channel that notices a
// dead peer and carries tensors of any size (statuses convert through
// grpc_util.h).
//
//   std::string address;
//   TW_RETURN_IF_ERROR(ParseGrpcTarget("grpc://localhost:2222", &address));
//   std::shared_ptr<::grpc::Channel> channel;
//   TW_RETURN_IF_ERROR(NewGrpcChannel(address, &channel));
//   auto stub = tensorflow::MasterService::NewStub(channel);
//   ::grpc::ClientContext context;
//   SetTimeout(&context, /*timeout_ms=*/5000);
//   ::grpc::Status call = stub->ListDevices(&context, request, &response);
//   Status status = FromGrpcStatus(call);   // grpc_util.h
#ifndef TENSORWEAVE_DISTRIBUTED_GRPC_CHANNEL_H_
#define TENSORWEAVE_DISTRIBUTED_GRPC_CHANNEL_H_

#include <grpcpp/channel.h>
#include <grpcpp/client_context.h>
#include <grpcpp/security/credentials.h>
#include <grpcpp/support/channel_arguments.h>
#include <grpcpp/support/status.h>

#include <cstdint>
#include <memory>
#include <string>

#include "runtime/framework/status.h"

namespace tensorweave {

// The scheme of remote session targets.
constexpr char kGrpcScheme[] = "grpc://";

// True when `target` names a gRPC master ("grpc://...").
bool IsGrpcTarget(const std::string& target);

// "grpc://host:port" -> "host:port". INVALID_ARGUMENT when the scheme is not
// grpc://, or the rest is not host:port with a port in 1..65535 (a bracketed
// IPv6 host such as "[::1]:2222" is fine).
Status ParseGrpcTarget(const std::string& target, std::string* host_port);

// How every channel of tensorweave's clients is made:
// - a peer process that dies closes its connection, which fails the calls
//   in flight at once (UNAVAILABLE), whatever their deadline;
// - keepalive pings 2 s apart (also with no call running) notice a peer
//   that froze or became unreachable within ~4-6 s of the last data on the
//   connection (UNAVAILABLE). Only two pings go out per quiet period: a
//   server with gRPC's default policy (TensorFlow's) drops a connection
//   that pings more often than every 5 minutes without data, which would
//   fail a long step. So a peer that freezes later in a long quiet step is
//   noticed at the step's timeout, not before;
// - no limit on message sizes, so a large tensor is never cut off;
// - the transport security the environment asks for (grpc_security.h):
//   insecure as TensorFlow's by default, else TLS and/or a token.
// Connection is lazy: a peer that cannot be reached makes calls fail with
// UNAVAILABLE, fast (no call waits for the channel to become ready).
struct GrpcChannelSettings {
  std::shared_ptr<::grpc::ChannelCredentials> credentials;
  ::grpc::ChannelArguments arguments;
};

// The settings above, with the security of the environment. Errors are
// NewChannelCredentials's (an unreadable TLS file).
Status GrpcChannelSettingsFromEnvironment(GrpcChannelSettings* settings);

// A channel to `host_port` with `settings`.
std::shared_ptr<::grpc::Channel> NewGrpcChannel(const std::string& host_port,
                                                const GrpcChannelSettings& settings);
// The same with the environment's settings, for a one-off channel.
Status NewGrpcChannel(const std::string& host_port, std::shared_ptr<::grpc::Channel>* channel);

// Keeps gRPC's process-wide callback completion queue alive until the
// process exits. Where gRPC's I/O manager does not run in the background
// (Debian's build), every channel and server using the callback API shares
// one reference-counted queue, torn down whenever the last user goes and
// made again by the next; that teardown races with new users and aborts
// the process ("ref_counted.h: assertion failed: prior > 0"), e.g. when a
// session's last channel closes as a server starts. One channel that is
// never destroyed keeps the count above zero. Idempotent and thread-safe;
// every channel and server made here calls it. The first call also turns
// off Abseil's lock-order tracking, which Debian's build leaves on.
void HoldGrpcCallbackQueue();

// A deadline `timeout_ms` from now on `context`; <= 0 means none.
void SetTimeout(::grpc::ClientContext* context, int64_t timeout_ms);

}  // namespace tensorweave

#endif  // TENSORWEAVE_DISTRIBUTED_GRPC_CHANNEL_H_
