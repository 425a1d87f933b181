#include "runtime/distributed/grpc_security.h"

#include <grpc/grpc_security_constants.h>
#include <grpcpp/security/auth_metadata_processor.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "runtime/framework/str_util.h"

namespace tensorweave {

namespace {

std::string EnvOrEmpty(const char* name) {
  const char* value = std::getenv(name);
  return value == nullptr ? std::string() : std::string(value);
}

Status ReadPemFile(const std::string& path, const char* what, std::string* contents) {
  std::ifstream file(path, std::ios::binary);
  std::ostringstream buffer;
  if (file) buffer << file.rdbuf();
  if (!file || buffer.str().empty()) {
    return errors::NotFound("Cannot read the ", what, " file '", path, "'");
  }
  *contents = buffer.str();
  return Status::OK();
}

// Compares in time that depends only on the lengths, so the answer's
// timing tells an attacker nothing about how much of a guess was right.
bool TokensEqual(const std::string& expected, const grpc::string_ref& given) {
  if (given.size() != expected.size()) return false;
  unsigned char difference = 0;
  for (size_t i = 0; i < expected.size(); ++i) {
    difference |= static_cast<unsigned char>(expected[i] ^ given.data()[i]);
  }
  return difference == 0;
}

// Checks the token on every call before any service method sees it.
class TokenChecker : public grpc::AuthMetadataProcessor {
 public:
  explicit TokenChecker(std::string token) : token_(std::move(token)) {}

  bool IsBlocking() const override { return false; }

  grpc::Status Process(const InputMetadata& auth_metadata, grpc::AuthContext* context,
                       OutputMetadata* consumed_auth_metadata,
                       OutputMetadata* response_metadata) override {
    auto found = auth_metadata.find(kTokenMetadataKey);
    if (found == auth_metadata.end()) {
      return grpc::Status(grpc::StatusCode::UNAUTHENTICATED,
                          "This server requires a token (TENSORWEAVE_GRPC_TOKEN) and the call "
                          "carried none");
    }
    if (!TokensEqual(token_, found->second)) {
      return grpc::Status(grpc::StatusCode::PERMISSION_DENIED,
                          "The call's token does not match this server's");
    }
    // The service never needs to see the secret.
    consumed_auth_metadata->insert(std::make_pair(std::string(kTokenMetadataKey), token_));
    return grpc::Status::OK;
  }

 private:
  const std::string token_;
};

// Adds the token to the metadata of every call on a channel.
class TokenPlugin : public grpc::MetadataCredentialsPlugin {
 public:
  explicit TokenPlugin(std::string token) : token_(std::move(token)) {}

  bool IsBlocking() const override { return false; }

  grpc::Status GetMetadata(grpc::string_ref service_url, grpc::string_ref method_name,
                           const grpc::AuthContext& channel_auth_context,
                           std::multimap<std::string, std::string>* metadata) override {
    metadata->insert(std::make_pair(std::string(kTokenMetadataKey), token_));
    return grpc::Status::OK;
  }

 private:
  const std::string token_;
};

Status CheckIdentityPair(const GrpcSecurityOptions& options) {
  if (options.certificate_file.empty() != options.private_key_file.empty()) {
    return errors::InvalidArgument(
        "A TLS certificate and its private key go together: got only the ",
        options.certificate_file.empty() ? "key" : "certificate");
  }
  return Status::OK();
}

}  // namespace

GrpcSecurityOptions GrpcSecurityOptions::FromEnvironment() {
  GrpcSecurityOptions options;
  options.certificate_file = EnvOrEmpty("TENSORWEAVE_GRPC_TLS_CERT");
  options.private_key_file = EnvOrEmpty("TENSORWEAVE_GRPC_TLS_KEY");
  options.ca_file = EnvOrEmpty("TENSORWEAVE_GRPC_TLS_CA");
  options.client_ca_file = EnvOrEmpty("TENSORWEAVE_GRPC_TLS_CLIENT_CA");
  options.server_name_override = EnvOrEmpty("TENSORWEAVE_GRPC_TLS_SERVER_NAME");
  options.token = EnvOrEmpty("TENSORWEAVE_GRPC_TOKEN");
  return options;
}

std::string GrpcSecurityOptions::DescribeServer() const {
  if (!server_uses_tls()) {
    return token.empty() ? "insecure (TensorFlow-compatible: no TLS, no token)"
                         : "token (loopback connections only)";
  }
  return StrCat(client_ca_file.empty() ? "TLS" : "mutual TLS", token.empty() ? "" : " and token");
}

Status NewServerCredentials(const GrpcSecurityOptions& options,
                            std::shared_ptr<grpc::ServerCredentials>* credentials) {
  TW_RETURN_IF_ERROR(CheckIdentityPair(options));
  if (!options.server_uses_tls()) {
    if (!options.client_ca_file.empty()) {
      return errors::InvalidArgument(
          "A client CA asks for mutual TLS, which needs the server's "
          "own certificate and key");
    }
    if (options.token.empty()) {
      *credentials = grpc::InsecureServerCredentials();
      return Status::OK();
    }
    *credentials = grpc::experimental::LocalServerCredentials(LOCAL_TCP);
  } else {
    grpc::SslServerCredentialsOptions ssl(GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE);
    grpc::SslServerCredentialsOptions::PemKeyCertPair identity;
    TW_RETURN_IF_ERROR(
        ReadPemFile(options.certificate_file, "TLS certificate", &identity.cert_chain));
    TW_RETURN_IF_ERROR(
        ReadPemFile(options.private_key_file, "TLS private key", &identity.private_key));
    ssl.pem_key_cert_pairs.push_back(std::move(identity));
    if (!options.client_ca_file.empty()) {
      TW_RETURN_IF_ERROR(ReadPemFile(options.client_ca_file, "TLS client CA", &ssl.pem_root_certs));
      ssl.client_certificate_request = GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY;
    }
    *credentials = grpc::SslServerCredentials(ssl);
  }
  if (!options.token.empty()) {
    (*credentials)->SetAuthMetadataProcessor(std::make_shared<TokenChecker>(options.token));
  }
  return Status::OK();
}

Status NewChannelCredentials(const GrpcSecurityOptions& options,
                             std::shared_ptr<grpc::ChannelCredentials>* credentials) {
  TW_RETURN_IF_ERROR(CheckIdentityPair(options));
  std::shared_ptr<grpc::ChannelCredentials> channel;
  if (options.client_uses_tls()) {
    grpc::SslCredentialsOptions ssl;
    TW_RETURN_IF_ERROR(ReadPemFile(options.ca_file, "TLS CA", &ssl.pem_root_certs));
    if (!options.certificate_file.empty()) {
      TW_RETURN_IF_ERROR(
          ReadPemFile(options.certificate_file, "TLS certificate", &ssl.pem_cert_chain));
      TW_RETURN_IF_ERROR(
          ReadPemFile(options.private_key_file, "TLS private key", &ssl.pem_private_key));
    }
    channel = grpc::SslCredentials(ssl);
  } else if (!options.token.empty()) {
    channel = grpc::experimental::LocalCredentials(LOCAL_TCP);
  } else {
    *credentials = grpc::InsecureChannelCredentials();
    return Status::OK();
  }
  if (!options.token.empty()) {
    // Local credentials offer no privacy, so the token is allowed on
    // channels of any security level; over TLS it is encrypted anyway.
    channel = grpc::CompositeChannelCredentials(
        channel, grpc::experimental::MetadataCredentialsFromPlugin(
                     std::make_unique<TokenPlugin>(options.token), GRPC_SECURITY_NONE));
  }
  *credentials = std::move(channel);
  return Status::OK();
}

void ApplySecurityChannelArguments(const GrpcSecurityOptions& options,
                                   grpc::ChannelArguments* arguments) {
  if (options.client_uses_tls() && !options.server_name_override.empty()) {
    arguments->SetSslTargetNameOverride(options.server_name_override);
  }
}

}  // namespace tensorweave
