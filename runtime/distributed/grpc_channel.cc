#include "runtime/distributed/grpc_channel.h"

#include <absl/synchronization/mutex.h>
#include <grpc/grpc.h>
#include <grpcpp/create_channel.h>
#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/security/credentials.h>
#include <grpcpp/support/channel_arguments.h>
#include <grpcpp/support/slice.h>

#include <chrono>
#include <cstdlib>
#include <mutex>

#include "runtime/distributed/grpc_security.h"

namespace tensorweave {
namespace {

// How often an idle or busy connection is probed, and how long a probe may
// go unanswered before the connection counts as dead.
constexpr int kKeepaliveTimeMs = 2000;
constexpr int kKeepaliveTimeoutMs = 2000;
// A dropped connection is retried soon and then at least this often, so a
// restarted peer is reached again within about a second (gRPC's defaults
// start at 1 s and grow to 2 minutes).
constexpr int kInitialReconnectBackoffMs = 100;
constexpr int kMaxReconnectBackoffMs = 1000;
constexpr int kMaxPingsWithoutData = 2;

bool AllDigits(const std::string& text) {
  if (text.empty()) return false;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

}  // namespace

bool IsGrpcTarget(const std::string& target) { return target.rfind(kGrpcScheme, 0) == 0; }

Status ParseGrpcTarget(const std::string& target, std::string* host_port) {
  if (!IsGrpcTarget(target)) {
    return errors::InvalidArgument("Target \"", target, "\" does not start with ", kGrpcScheme);
  }
  const std::string address = target.substr(sizeof(kGrpcScheme) - 1);
  const size_t colon = address.rfind(':');
  const bool bracketed = !address.empty() && address.front() == '[';
  const bool host_ok = colon != std::string::npos && colon > 0 &&
                       (bracketed ? address[colon - 1] == ']' : address.find(':') == colon) &&
                       address.find_first_of("/ \t") == std::string::npos;
  const std::string port = colon == std::string::npos ? "" : address.substr(colon + 1);
  if (!host_ok || !AllDigits(port) || port.size() > 5 || std::atoi(port.c_str()) < 1 ||
      std::atoi(port.c_str()) > 65535) {
    return errors::InvalidArgument("Could not interpret \"", address,
                                   "\" as a host-port pair (in target \"", target, "\")");
  }
  *host_port = address;
  return Status::OK();
}

Status GrpcChannelSettingsFromEnvironment(GrpcChannelSettings* settings) {
  const GrpcSecurityOptions security = GrpcSecurityOptions::FromEnvironment();
  TW_RETURN_IF_ERROR(NewChannelCredentials(security, &settings->credentials));
  ::grpc::ChannelArguments& args = settings->arguments;
  ApplySecurityChannelArguments(security, &args);
  args.SetInt(GRPC_ARG_KEEPALIVE_TIME_MS, kKeepaliveTimeMs);
  args.SetInt(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, kKeepaliveTimeoutMs);
  args.SetInt(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 1);
  // At most two pings per quiet period (until data flows again): a server
  // with gRPC's default abuse policy, as TensorFlow's, allows two early
  // pings and drops the connection ("too_many_pings", failing the call in
  // flight) at the third, which a long step would otherwise reach.
  args.SetInt(GRPC_ARG_HTTP2_MAX_PINGS_WITHOUT_DATA, kMaxPingsWithoutData);
  args.SetMaxReceiveMessageSize(-1);
  args.SetMaxSendMessageSize(-1);
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, kInitialReconnectBackoffMs);
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, kMaxReconnectBackoffMs);
  return Status::OK();
}

void HoldGrpcCallbackQueue() {
  static std::once_flag held;
  // Reachable for the whole process (so leak checkers see it as kept).
  static std::shared_ptr<::grpc::Channel>* keeper = nullptr;
  std::call_once(held, [] {
    // Debian builds Abseil with lock-order tracking on (a debug aid), which
    // every absl::Mutex gRPC takes pays for: ~2% of a distributed training
    // step's CPU. Abseil's release builds have it off.
    absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
    // A channel takes its reference on the queue at its first callback-API
    // call; this one makes a call that cannot go anywhere (its deadline has
    // passed) and is never destroyed, so neither is the queue.
    keeper = new std::shared_ptr<::grpc::Channel>(
        ::grpc::CreateChannel("127.0.0.1:1", ::grpc::InsecureChannelCredentials()));
    struct Call {
      ::grpc::ClientContext context;
      ::grpc::ByteBuffer request, response;
    };
    auto* call = new Call;
    ::grpc::Slice nothing(std::string{});
    call->request = ::grpc::ByteBuffer(&nothing, 1);  // an empty message, not a missing one
    call->context.set_deadline(std::chrono::system_clock::now());
    ::grpc::GenericStub(*keeper).UnaryCall(&call->context, "/tensorweave.KeepAlive/Hold",
                                           ::grpc::StubOptions(), &call->request, &call->response,
                                           [call](::grpc::Status) { delete call; });
  });
}

std::shared_ptr<::grpc::Channel> NewGrpcChannel(const std::string& host_port,
                                                const GrpcChannelSettings& settings) {
  HoldGrpcCallbackQueue();
  return ::grpc::CreateCustomChannel(host_port, settings.credentials, settings.arguments);
}

Status NewGrpcChannel(const std::string& host_port, std::shared_ptr<::grpc::Channel>* channel) {
  GrpcChannelSettings settings;
  TW_RETURN_IF_ERROR(GrpcChannelSettingsFromEnvironment(&settings));
  *channel = NewGrpcChannel(host_port, settings);
  return Status::OK();
}

void SetTimeout(::grpc::ClientContext* context, int64_t timeout_ms) {
  if (timeout_ms <= 0) return;
  context->set_deadline(std::chrono::system_clock::now() + std::chrono::milliseconds(timeout_ms));
}

}  // namespace tensorweave
