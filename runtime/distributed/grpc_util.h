// Conversions between the runtime's Status and gRPC's: the codes are the
// same numbers (both are TensorFlow's / gRPC's canonical codes).
//
//   return ToGrpcStatus(worker_status);            // in a service handler
//   Status status = FromGrpcStatus(call_status);   // in a client callback
#ifndef TENSORWEAVE_DISTRIBUTED_GRPC_UTIL_H_
#define TENSORWEAVE_DISTRIBUTED_GRPC_UTIL_H_

#include <grpcpp/support/status.h>

#include "runtime/framework/status.h"

namespace tensorweave {

inline ::grpc::Status ToGrpcStatus(const Status& status) {
  if (status.ok()) return ::grpc::Status::OK;
  return ::grpc::Status(static_cast<::grpc::StatusCode>(status.code()), status.message());
}

inline Status FromGrpcStatus(const ::grpc::Status& status) {
  if (status.ok()) return Status::OK();
  const int code = static_cast<int>(status.error_code());
  // Codes beyond the canonical ones (never sent by a conforming peer) are
  // UNKNOWN rather than a value outside the enum.
  const bool canonical = code > 0 && code <= static_cast<int>(Code::UNAUTHENTICATED);
  return Status(canonical ? static_cast<Code>(code) : Code::UNKNOWN, status.error_message());
}

}  // namespace tensorweave

#endif  // TENSORWEAVE_DISTRIBUTED_GRPC_UTIL_H_
