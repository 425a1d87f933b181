// Conversions between the runtime's Status and gRPC's: the codes are the
// same numbers (both are TensorFlow's / gRPC's canonical codes).
//
//   return ToGrpcStatus(worker_status);            // in a service handler
//   Status status = FromGrpcStatus(call_status);   // in a client callback
#ifndef TENSORWEAVE_DISTRIBUTED_GRPC_UTIL_H_
#define TENSORWEAVE_DISTRIBUTED_GRPC_UTIL_H_

#include <grpcpp/support/status.h>

#include <string>

#include "runtime/framework/status.h"

namespace tensorweave {

inline ::grpc::Status ToGrpcStatus(const Status& status) {
  if (status.ok()) return ::grpc::Status::OK;
  return ::grpc::Status(static_cast<::grpc::StatusCode>(status.code()), status.message());
}

// A Status from a code and message: a gRPC status's, or those a response
// body carries (RunStepResponse's status_code and status_error_message).
// The codes are the same numbers; one outside TensorFlow's range (never
// sent by a conforming peer) becomes UNKNOWN, naming the number.
inline Status FromCodeAndMessage(int code, const std::string& message) {
  if (code == 0) return Status::OK();
  if (code < 0 || code > static_cast<int>(Code::UNAUTHENTICATED)) {
    return errors::Unknown("(error code ", code, ") ", message);
  }
  return Status(static_cast<Code>(code), message);
}

inline Status FromGrpcStatus(const ::grpc::Status& status) {
  return FromCodeAndMessage(status.error_code(), status.error_message());
}

}  // namespace tensorweave

#endif  // TENSORWEAVE_DISTRIBUTED_GRPC_UTIL_H_
