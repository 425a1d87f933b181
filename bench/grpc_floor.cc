// What loopback and gRPC themselves cost on this machine, as the floor under
// bench/remote_session.py's figures: a child process serves, the parent
// calls, nothing of tensorweave runs in between.
//
//   make build/bench/grpc_floor && build/bench/grpc_floor [--calls N]
//
// Prints medians of:
// - a TCP ping-pong of 64 bytes (blocking reads on both sides): the cost of
//   two thread wake-ups across processes, which no RPC can go below without
//   busy-polling;
// - an empty gRPC unary call (MasterService/ListDevices on a synchronous
//   server), the client blocking, and the client polling its completion
//   queue as GrpcRemoteMaster does;
// - a 1 MiB request and 1 MiB answer through a raw (ByteBuffer) method, the
//   bytes shared, not copied.
#include <grpc/support/time.h>
#include <grpcpp/create_channel.h>
#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/server.h>
#include <grpcpp/server_builder.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "tensorweave/proto/tensorflow_services.grpc.pb.h"

namespace {

using Clock = std::chrono::steady_clock;
constexpr size_t kMiB = 1 << 20;
constexpr int kPingBytes = 64;

double Median(std::vector<double> micros) {
  std::sort(micros.begin(), micros.end());
  return micros[micros.size() / 2];
}

double MicrosSince(Clock::time_point start) {
  return std::chrono::duration<double, std::micro>(Clock::now() - start).count();
}

// ListDevices answers at once; RunStep (raw) echoes its request's bytes.
using RawRunStep =
    tensorflow::MasterService::WithRawMethod_RunStep<tensorflow::MasterService::Service>;
class FloorService final : public RawRunStep {
 public:
  ::grpc::Status ListDevices(::grpc::ServerContext*, const tensorweave::ListDevicesRequest*,
                             tensorweave::ListDevicesResponse*) override {
    return ::grpc::Status::OK;
  }
};

// The child: echoes TCP pings on the connection `ping_listener` accepts,
// then serves gRPC until killed. Writes its port to `report_fd`.
[[noreturn]] void Serve(int ping_listener, int report_fd) {
  int connection = accept(ping_listener, nullptr, nullptr);
  int one = 1;
  setsockopt(connection, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  char buffer[kPingBytes];
  while (true) {
    ssize_t got = read(connection, buffer, sizeof(buffer));
    if (got <= 0) break;
    if (write(connection, buffer, got) != got) break;
  }
  close(connection);

  FloorService service;
  ::grpc::ServerBuilder builder;
  int port = 0;
  builder.AddListeningPort("127.0.0.1:0", ::grpc::InsecureServerCredentials(), &port);
  builder.SetMaxReceiveMessageSize(-1);
  builder.SetMaxSendMessageSize(-1);
  builder.RegisterService(&service);
  // The raw RunStep of a synchronous service is served asynchronously, by
  // one thread that echoes each request.
  std::unique_ptr<::grpc::ServerCompletionQueue> queue = builder.AddCompletionQueue();
  std::unique_ptr<::grpc::Server> server = builder.BuildAndStart();
  if (write(report_fd, &port, sizeof(port)) != sizeof(port)) _exit(1);
  std::thread echo([&service, queue = queue.get()] {
    struct Call {
      ::grpc::ServerContext context;
      ::grpc::ByteBuffer request;
      ::grpc::ServerAsyncResponseWriter<::grpc::ByteBuffer> writer{&context};
      bool answered = false;
    };
    auto request_next = [&](Call* call) {
      service.RequestRunStep(&call->context, &call->request, &call->writer, queue, queue, call);
    };
    request_next(new Call);
    void* tag = nullptr;
    bool ok = false;
    while (queue->Next(&tag, &ok)) {
      auto* call = static_cast<Call*>(tag);
      if (!ok || call->answered) {
        delete call;
        continue;
      }
      request_next(new Call);
      call->answered = true;
      call->writer.Finish(call->request, ::grpc::Status::OK, call);
    }
  });
  echo.join();
  _exit(0);
}
double TcpPingPong(int fd, int calls) {
  char buffer[kPingBytes] = {};
  std::vector<double> micros;
  for (int i = 0; i < calls; ++i) {
    const auto start = Clock::now();
    if (write(fd, buffer, sizeof(buffer)) != sizeof(buffer)) return -1;
    size_t got = 0;
    while (got < sizeof(buffer)) {
      ssize_t n = read(fd, buffer + got, sizeof(buffer) - got);
      if (n <= 0) return -1;
      got += static_cast<size_t>(n);
    }
    micros.push_back(MicrosSince(start));
  }
  return Median(micros);
}

// Waits for the one event of `queue`: polling, or blocking.
void Await(::grpc::CompletionQueue* queue, bool poll) {
  void* tag = nullptr;
  bool ok = false;
  if (poll) {
    while (queue->AsyncNext(&tag, &ok, gpr_time_0(GPR_CLOCK_MONOTONIC)) !=
           ::grpc::CompletionQueue::GOT_EVENT) {
    }
  } else {
    queue->Next(&tag, &ok);
  }
  queue->Shutdown();
  while (queue->Next(&tag, &ok)) {
  }
}

double EmptyCall(tensorflow::MasterService::Stub* stub, int calls, bool poll) {
  std::vector<double> micros;
  for (int i = 0; i < calls; ++i) {
    ::grpc::ClientContext context;
    ::grpc::CompletionQueue queue;
    tensorweave::ListDevicesRequest request;
    tensorweave::ListDevicesResponse response;
    ::grpc::Status status;
    const auto start = Clock::now();
    auto call = stub->PrepareAsyncListDevices(&context, request, &queue);
    call->StartCall();
    call->Finish(&response, &status, nullptr);
    Await(&queue, poll);
    micros.push_back(MicrosSince(start));
    if (!status.ok()) return -1;
  }
  return Median(micros);
}

double EchoMiB(const std::shared_ptr<::grpc::Channel>& channel, int calls) {
  ::grpc::GenericStub stub(channel);
  std::vector<char> bytes(kMiB, 'x');
  ::grpc::Slice slice(bytes.data(), bytes.size(), ::grpc::Slice::STATIC_SLICE);
  ::grpc::ByteBuffer request(&slice, 1);
  std::vector<double> micros;
  for (int i = 0; i < calls; ++i) {
    ::grpc::ClientContext context;
    ::grpc::CompletionQueue queue;
    ::grpc::ByteBuffer response;
    ::grpc::Status status;
    const auto start = Clock::now();
    auto call =
        stub.PrepareUnaryCall(&context, "/tensorflow.MasterService/RunStep", request, &queue);
    call->StartCall();
    call->Finish(&response, &status, nullptr);
    Await(&queue, /*poll=*/true);
    micros.push_back(MicrosSince(start));
    if (!status.ok() || response.Length() != kMiB) return -1;
  }
  return Median(micros);
}

std::shared_ptr<::grpc::Channel> Connect(int port) {
  ::grpc::ChannelArguments arguments;
  arguments.SetMaxReceiveMessageSize(-1);
  arguments.SetMaxSendMessageSize(-1);
  return ::grpc::CreateCustomChannel("127.0.0.1:" + std::to_string(port),
                                     ::grpc::InsecureChannelCredentials(), arguments);
}

}  // namespace

int main(int argc, char** argv) {
  int calls = 2000;
  if (argc == 3 && std::string(argv[1]) == "--calls") calls = std::max(10, std::atoi(argv[2]));

  int listener = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof(address);
  if (bind(listener, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0 ||
      listen(listener, 1) != 0 ||
      getsockname(listener, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
    std::perror("listen");
    return 1;
  }
  int report[2];
  if (pipe(report) != 0) return 1;
  // Forked before either side touches gRPC.
  const pid_t child = fork();
  if (child == 0) Serve(listener, report[1]);
  close(listener);

  int ping = socket(AF_INET, SOCK_STREAM, 0);
  int one = 1;
  setsockopt(ping, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  if (connect(ping, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0) {
    std::perror("connect");
    kill(child, SIGKILL);
    return 1;
  }
  std::printf("loopback floor, two processes, median of %d:\n", calls);
  std::printf("  TCP ping-pong, 64 bytes, blocking:        %8.1f us\n", TcpPingPong(ping, calls));
  close(ping);  // the child goes on to serve gRPC

  int port = 0;
  if (read(report[0], &port, sizeof(port)) != sizeof(port)) {
    kill(child, SIGKILL);
    return 1;
  }
  auto channel = Connect(port);
  auto stub = tensorflow::MasterService::NewStub(channel);
  EmptyCall(stub.get(), 50, false);  // connect and warm up
  std::printf("  gRPC empty unary call, client blocking:   %8.1f us\n",
              EmptyCall(stub.get(), calls, false));
  std::printf("  gRPC empty unary call, client polling:    %8.1f us\n",
              EmptyCall(stub.get(), calls, true));
  const int echoes = std::max(10, calls / 10);
  EchoMiB(channel, 20);
  const double micros = EchoMiB(channel, echoes);
  std::printf("  1 MiB each way, raw, bytes shared:       %8.1f us (%6.0f MB/s each way)\n", micros,
              kMiB / micros);
  kill(child, SIGKILL);
  waitpid(child, nullptr, 0);
  return 0;
}
