// TLS, mutual TLS and the shared token over real loopback connections,
// with certificates made by the openssl command for each run. The service
// called is the worker's GetStatus; every call has a deadline.
#include "runtime/distributed/grpc_security.h"

#include <grpcpp/create_channel.h>
#include <grpcpp/server_builder.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <string>

#include "runtime/common_runtime/session.h"
#include "runtime/distributed/grpc_channel.h"
#include "runtime/distributed/grpc_worker_cache.h"
#include "runtime/distributed/grpc_worker_service.h"

namespace tensorweave {
namespace {

// A CA, a server certificate for localhost/127.0.0.1 and a client
// certificate it signed, and a second CA nobody trusts, in a temporary
// directory removed at the end.
class TestCertificates {
 public:
  TestCertificates() {
    char pattern[] = "/tmp/tw_tls_XXXXXX";
    const char* made = mkdtemp(pattern);
    if (made == nullptr) return;
    dir_ = made;
    std::ofstream(Path("san.ext")) << "subjectAltName=DNS:localhost,IP:127.0.0.1\n";
    ok_ = MakeCa("ca") && MakeCa("other_ca") && MakeSigned("server", "ca", "san.ext") &&
          MakeSigned("client", "ca", "");
  }
  ~TestCertificates() {
    if (!dir_.empty()) Run("rm -rf '" + dir_ + "'");
  }
  bool ok() const { return ok_; }
  std::string Path(const std::string& name) const { return dir_ + "/" + name; }

 private:
  static bool Run(const std::string& command) {
    return std::system((command + " > /dev/null 2>&1").c_str()) == 0;
  }
  std::string KeyOptions(const std::string& name) const {
    return " -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout " +
           Path(name + ".key");
  }
  bool MakeCa(const std::string& name) const {
    return Run("openssl req -x509 -days 2" + KeyOptions(name) + " -out " + Path(name + ".pem") +
               " -subj '/CN=tensorweave test " + name + "'");
  }
  bool MakeSigned(const std::string& name, const std::string& ca, const std::string& ext) const {
    return Run("openssl req" + KeyOptions(name) + " -out " + Path(name + ".csr") +
               " -subj '/CN=localhost'") &&
           Run("openssl x509 -req -days 2 -in " + Path(name + ".csr") + " -CA " +
               Path(ca + ".pem") + " -CAkey " + Path(ca + ".key") + " -CAcreateserial -out " +
               Path(name + ".pem") + (ext.empty() ? "" : " -extfile " + Path(ext)));
  }

  std::string dir_;
  bool ok_ = false;
};

const TestCertificates& Certificates() {
  static const TestCertificates* certificates = new TestCertificates;
  return *certificates;
}

// A worker service (GetStatus) on 127.0.0.1 with the given security.
class SecuredServer {
 public:
  explicit SecuredServer(const GrpcSecurityOptions& security) {
    WorkerOptions options;
    options.job_name = "worker";
    if (!GrpcWorkerService::Create(options, &service_).ok()) return;
    std::shared_ptr<grpc::ServerCredentials> credentials;
    status_ = NewServerCredentials(security, &credentials);
    if (!status_.ok()) return;
    grpc::ServerBuilder builder;
    builder.AddListeningPort("127.0.0.1:0", credentials, &port_);
    builder.RegisterService(service_.get());
    server_ = builder.BuildAndStart();
  }
  ~SecuredServer() {
    if (server_) server_->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(1));
  }
  bool started() const { return server_ != nullptr && port_ > 0; }
  std::string address() const { return "127.0.0.1:" + std::to_string(port_); }

 private:
  Status status_;
  std::unique_ptr<GrpcWorkerService> service_;
  std::unique_ptr<grpc::Server> server_;
  int port_ = 0;
};

// The code GetStatus ends with when called with `security`.
grpc::StatusCode CallWith(const SecuredServer& server, const GrpcSecurityOptions& security,
                          std::string* message = nullptr) {
  std::shared_ptr<grpc::ChannelCredentials> credentials;
  const Status made = NewChannelCredentials(security, &credentials);
  EXPECT_TRUE(made.ok()) << made.ToString();
  if (!made.ok()) return grpc::StatusCode::INTERNAL;
  grpc::ChannelArguments arguments;
  ApplySecurityChannelArguments(security, &arguments);
  auto stub = tensorflow::WorkerService::NewStub(
      grpc::CreateCustomChannel(server.address(), credentials, arguments));
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  GetStatusResponse response;
  const grpc::Status status = stub->GetStatus(&context, GetStatusRequest(), &response);
  if (message != nullptr) *message = status.error_message();
  if (status.ok()) EXPECT_EQ(response.device_attributes_size(), 1);
  return status.error_code();
}

GrpcSecurityOptions TlsServer(bool mutual) {
  GrpcSecurityOptions options;
  options.certificate_file = Certificates().Path("server.pem");
  options.private_key_file = Certificates().Path("server.key");
  if (mutual) options.client_ca_file = Certificates().Path("ca.pem");
  return options;
}

GrpcSecurityOptions TlsClient(const std::string& ca, bool with_certificate) {
  GrpcSecurityOptions options;
  options.ca_file = Certificates().Path(ca + ".pem");
  if (with_certificate) {
    options.certificate_file = Certificates().Path("client.pem");
    options.private_key_file = Certificates().Path("client.key");
  }
  return options;
}

GrpcSecurityOptions WithToken(GrpcSecurityOptions options, const std::string& token) {
  options.token = token;
  return options;
}

TEST(GrpcSecurityTest, InsecureIsTensorFlowCompatibleAndSaysSo) {
  const GrpcSecurityOptions none;
  EXPECT_EQ(none.DescribeServer(), "insecure (TensorFlow-compatible: no TLS, no token)");
  SecuredServer server(none);
  ASSERT_TRUE(server.started());
  EXPECT_EQ(CallWith(server, none), grpc::StatusCode::OK);
}

TEST(GrpcSecurityTest, TokenIsCheckedOnEveryCall) {
  const GrpcSecurityOptions token = WithToken({}, "s3cret");
  EXPECT_EQ(token.DescribeServer(), "token (loopback connections only)");
  SecuredServer server(token);
  ASSERT_TRUE(server.started());
  EXPECT_EQ(CallWith(server, token), grpc::StatusCode::OK);
  EXPECT_EQ(CallWith(server, token), grpc::StatusCode::OK);
  std::string message;
  EXPECT_EQ(CallWith(server, GrpcSecurityOptions(), &message), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_NE(message.find("requires a token"), std::string::npos) << message;
  EXPECT_EQ(CallWith(server, WithToken({}, "s3creT")), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_EQ(CallWith(server, WithToken({}, "s3cret-and-more")),
            grpc::StatusCode::PERMISSION_DENIED);
}

TEST(GrpcSecurityTest, TlsAcceptsOnlyClientsTrustingTheServersCa) {
  ASSERT_TRUE(Certificates().ok()) << "the openssl command could not make test certificates";
  EXPECT_EQ(TlsServer(false).DescribeServer(), "TLS");
  SecuredServer server(TlsServer(false));
  ASSERT_TRUE(server.started());
  EXPECT_EQ(CallWith(server, TlsClient("ca", false)), grpc::StatusCode::OK);
  EXPECT_EQ(CallWith(server, TlsClient("other_ca", false)), grpc::StatusCode::UNAVAILABLE);
  EXPECT_EQ(CallWith(server, GrpcSecurityOptions()), grpc::StatusCode::UNAVAILABLE)
      << "a plaintext client cannot talk to a TLS server";
}

TEST(GrpcSecurityTest, MutualTlsRequiresAClientCertificate) {
  ASSERT_TRUE(Certificates().ok());
  EXPECT_EQ(TlsServer(true).DescribeServer(), "mutual TLS");
  SecuredServer server(TlsServer(true));
  ASSERT_TRUE(server.started());
  EXPECT_EQ(CallWith(server, TlsClient("ca", true)), grpc::StatusCode::OK);
  EXPECT_EQ(CallWith(server, TlsClient("ca", false)), grpc::StatusCode::UNAVAILABLE);
}

TEST(GrpcSecurityTest, TlsAndTokenTogether) {
  ASSERT_TRUE(Certificates().ok());
  const GrpcSecurityOptions server_options = WithToken(TlsServer(false), "t0ken");
  EXPECT_EQ(server_options.DescribeServer(), "TLS and token");
  SecuredServer server(server_options);
  ASSERT_TRUE(server.started());
  EXPECT_EQ(CallWith(server, WithToken(TlsClient("ca", false), "t0ken")), grpc::StatusCode::OK);
  EXPECT_EQ(CallWith(server, TlsClient("ca", false)), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_EQ(CallWith(server, WithToken(TlsClient("ca", false), "t0kem")),
            grpc::StatusCode::PERMISSION_DENIED);
}

TEST(GrpcSecurityTest, BadOptionsAreClearErrors) {
  std::shared_ptr<grpc::ServerCredentials> server_credentials;
  std::shared_ptr<grpc::ChannelCredentials> channel_credentials;
  GrpcSecurityOptions half;
  half.certificate_file = "/nonexistent/server.pem";
  EXPECT_EQ(NewServerCredentials(half, &server_credentials).code(), Code::INVALID_ARGUMENT);
  EXPECT_EQ(NewChannelCredentials(half, &channel_credentials).code(), Code::INVALID_ARGUMENT);

  half.private_key_file = "/nonexistent/server.key";
  const Status missing = NewServerCredentials(half, &server_credentials);
  EXPECT_EQ(missing.code(), Code::NOT_FOUND);
  EXPECT_NE(missing.message().find("/nonexistent/server.pem"), std::string::npos);

  GrpcSecurityOptions client_ca_only;
  client_ca_only.client_ca_file = "/nonexistent/ca.pem";
  EXPECT_EQ(NewServerCredentials(client_ca_only, &server_credentials).code(),
            Code::INVALID_ARGUMENT);

  GrpcSecurityOptions missing_ca;
  missing_ca.ca_file = "/nonexistent/ca.pem";
  EXPECT_EQ(NewChannelCredentials(missing_ca, &channel_credentials).code(), Code::NOT_FOUND);
}

TEST(GrpcSecurityTest, ReadsItsOptionsFromTheEnvironment) {
  setenv("TENSORWEAVE_GRPC_TOKEN", "from-env", 1);
  setenv("TENSORWEAVE_GRPC_TLS_CA", "/etc/ca.pem", 1);
  const GrpcSecurityOptions options = GrpcSecurityOptions::FromEnvironment();
  unsetenv("TENSORWEAVE_GRPC_TOKEN");
  unsetenv("TENSORWEAVE_GRPC_TLS_CA");
  EXPECT_EQ(options.token, "from-env");
  EXPECT_EQ(options.ca_file, "/etc/ca.pem");
  EXPECT_TRUE(options.client_uses_tls());
  EXPECT_FALSE(options.server_uses_tls());
  EXPECT_TRUE(options.certificate_file.empty());
}

// Every client channel takes its security from the environment; a TLS
// file it cannot read is a clear error where the channel is made, not a
// failure at the first call.
TEST(GrpcSecurityTest, AnUnreadableTlsFileFailsChannelsSessionsAndWorkerCaches) {
  setenv("TENSORWEAVE_GRPC_TLS_CA", "/nonexistent/ca.pem", 1);
  std::shared_ptr<grpc::Channel> channel;
  const Status channel_status = NewGrpcChannel("127.0.0.1:1", &channel);
  SessionOptions options;
  options.target = "grpc://127.0.0.1:1";
  std::unique_ptr<Session> session;
  const Status session_status = NewSession(options, &session);
  ClusterDef cluster;
  JobDef* job = cluster.add_job();
  job->set_name("worker");
  (*job->mutable_tasks())[0] = "127.0.0.1:1";
  std::unique_ptr<WorkerCacheInterface> cache;
  const Status cache_status = NewGrpcWorkerCache(cluster, &cache);
  unsetenv("TENSORWEAVE_GRPC_TLS_CA");
  for (const Status& status : {channel_status, session_status, cache_status}) {
    EXPECT_EQ(status.code(), Code::NOT_FOUND) << status;
    EXPECT_NE(status.message().find("/nonexistent/ca.pem"), std::string::npos) << status;
  }
  EXPECT_EQ(channel, nullptr);
  EXPECT_EQ(session, nullptr);
  EXPECT_EQ(cache, nullptr);
}

}  // namespace
}  // namespace tensorweave
