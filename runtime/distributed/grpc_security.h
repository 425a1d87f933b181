// How tensorweave's gRPC servers and clients protect a cluster. TensorFlow's
// servers accept anyone and encrypt nothing; ours can require TLS, a shared
// token, or both, and say which in their startup line.
//
//   const GrpcSecurityOptions security = GrpcSecurityOptions::FromEnvironment();
//   std::shared_ptr<grpc::ServerCredentials> server_credentials;
//   TW_RETURN_IF_ERROR(NewServerCredentials(security, &server_credentials));
//   builder.AddListeningPort(address, server_credentials, &port);
//   ...
//   std::shared_ptr<grpc::ChannelCredentials> channel_credentials;
//   TW_RETURN_IF_ERROR(NewChannelCredentials(security, &channel_credentials));
//   grpc::ChannelArguments arguments;
//   ApplySecurityChannelArguments(security, &arguments);
//   auto channel = grpc::CreateCustomChannel("localhost:2222", channel_credentials, arguments);
//
// Modes, chosen by what is set:
// - nothing: insecure, TensorFlow-compatible (real TensorFlow clients and
//   servers can talk to ours). Plaintext, no authentication.
// - a token only: the token travels in every call's metadata
//   ("tensorweave-token") and the server checks it. Since it is not
//   encrypted, both ends use gRPC's local credentials, which only connect
//   over loopback.
// - TLS: a server with a certificate and key; clients with the CA that
//   signed it. A server given a client CA also requires each client to
//   present a certificate that CA signed (mutual TLS). A token may be added
//   on top of either.
// A call without the token is UNAUTHENTICATED; with a wrong one,
// PERMISSION_DENIED. A TLS failure (untrusted certificate, plaintext
// client) is UNAVAILABLE, as gRPC reports it.
#ifndef TENSORWEAVE_DISTRIBUTED_GRPC_SECURITY_H_
#define TENSORWEAVE_DISTRIBUTED_GRPC_SECURITY_H_

#include <grpcpp/security/credentials.h>
#include <grpcpp/security/server_credentials.h>
#include <grpcpp/support/channel_arguments.h>

#include <memory>
#include <string>

#include "runtime/framework/status.h"

namespace tensorweave {

// The metadata key that carries the token.
inline constexpr char kTokenMetadataKey[] = "tensorweave-token";

struct GrpcSecurityOptions {
  // PEM files. `certificate_file` and `private_key_file` are this
  // process's identity: a server's TLS certificate, and what a client
  // presents when a server asks for one. `ca_file` is the CA a client
  // trusts for servers (setting it makes clients use TLS).
  // `client_ca_file` makes a server require client certificates signed by
  // it (mutual TLS).
  std::string certificate_file;
  std::string private_key_file;
  std::string ca_file;
  std::string client_ca_file;
  // The host name a client expects in the server's certificate when it
  // differs from the address it dials (e.g. dialing 127.0.0.1 a server
  // whose certificate names "localhost").
  std::string server_name_override;
  // The shared secret; empty for none.
  std::string token;

  // Reads TENSORWEAVE_GRPC_TLS_CERT, TENSORWEAVE_GRPC_TLS_KEY,
  // TENSORWEAVE_GRPC_TLS_CA, TENSORWEAVE_GRPC_TLS_CLIENT_CA,
  // TENSORWEAVE_GRPC_TLS_SERVER_NAME and TENSORWEAVE_GRPC_TOKEN into the
  // fields above; unset variables leave fields empty.
  static GrpcSecurityOptions FromEnvironment();

  bool server_uses_tls() const { return !certificate_file.empty(); }
  bool client_uses_tls() const { return !ca_file.empty(); }
  // How a server with these options is protected, for its startup line:
  // "insecure (TensorFlow-compatible: no TLS, no token)", "TLS", "mutual
  // TLS", "... and token", "token (loopback connections only)".
  std::string DescribeServer() const;
};

// Server credentials for `options`. INVALID_ARGUMENT when only one of
// certificate and key is given, or a client CA without a certificate;
// NOT_FOUND when a file cannot be read (naming it).
Status NewServerCredentials(const GrpcSecurityOptions& options,
                            std::shared_ptr<grpc::ServerCredentials>* credentials);

// Channel credentials for `options` (the token, if any, attached to every
// call). NOT_FOUND when a file cannot be read; INVALID_ARGUMENT when only
// one of certificate and key is given.
Status NewChannelCredentials(const GrpcSecurityOptions& options,
                             std::shared_ptr<grpc::ChannelCredentials>* credentials);

// Adds what channels need beyond credentials (the TLS name override).
void ApplySecurityChannelArguments(const GrpcSecurityOptions& options,
                                   grpc::ChannelArguments* arguments);

}  // namespace tensorweave

#endif  // TENSORWEAVE_DISTRIBUTED_GRPC_SECURITY_H_
