// Assert, Print and PrintV2. Messages and their layout are TensorFlow's:
// Assert fails with "assertion failed: [v1 v2 v3...] [..]", Print writes
// "<message>[v1 v2 v3...][..]" and a newline to stderr, PrintV2 writes its
// string and `end` to the chosen stream.
#include <sys/time.h>

#include <cstdio>
#include <ctime>
#include <mutex>
#include <string>

#include "runtime/framework/log_listeners.h"
#include "runtime/framework/op_kernel.h"
#include "runtime/framework/tensor_summary.h"
#include "runtime/kernels/kernel_util.h"

namespace tensorweave {
namespace {

// Writes `text` to `stream` in one call and flushes, so lines printed by
// kernels running at once do not interleave.
void WriteAll(std::FILE* stream, const std::string& text) {
  std::fwrite(text.data(), 1, text.size(), stream);
  std::fflush(stream);
}

class AssertOp : public CheapKernel {
 public:
  explicit AssertOp(OpKernelConstruction* c) : CheapKernel(c) {
    OP_REQUIRES_OK(c, c->GetAttr("summarize", &summarize_));
  }

  void Compute(OpKernelContext* c) override {
    const Tensor& condition = c->input(0);
    OP_REQUIRES(
        c, condition.IsScalar(),
        errors::InvalidArgument("In[0] should be a scalar: ", condition.shape().DebugString()));
    if (condition.scalar<bool>()) return;
    std::string message = "assertion failed: ";
    for (int i = 1; i < c->num_inputs(); ++i) {
      if (i > 1) message += ' ';
      message += StrCat("[", SummarizeTensor(c->input(i), summarize_, SummaryStyle::kFlat), "]");
    }
    c->SetStatus(errors::InvalidArgument(message));
  }

 private:
  int64_t summarize_ = 3;
};

class PrintOp : public OpKernel {
 public:
  explicit PrintOp(OpKernelConstruction* c) : OpKernel(c) {
    OP_REQUIRES_OK(c, c->GetAttr("message", &message_));
    OP_REQUIRES_OK(c, c->GetAttr("first_n", &first_n_));
    OP_REQUIRES_OK(c, c->GetAttr("summarize", &summarize_));
  }

  void Compute(OpKernelContext* c) override {
    c->set_output(0, c->input(0));
    if (first_n_ >= 0) {
      std::lock_guard<std::mutex> lock(mu_);
      if (times_printed_ >= first_n_) return;
      ++times_printed_;
    }
    std::string line = message_;
    for (int i = 1; i < c->num_inputs(); ++i) {
      line += StrCat("[", SummarizeTensor(c->input(i), summarize_, SummaryStyle::kFlat), "]");
    }
    ForwardToLogListeners(line);  // TensorFlow's Print logs (LOG(INFO))
    line += '\n';
    WriteAll(stderr, line);
  }

 private:
  std::string message_;
  int64_t first_n_ = -1;
  int64_t summarize_ = 3;
  std::mutex mu_;
  int64_t times_printed_ = 0;  // guarded by mu_
};

constexpr const char kFilePrefix[] = "file://";
constexpr const char* kOutputStreams[] = {"stdout", "stderr", "log(info)", "log(warning)",
                                          "log(error)"};

// "I1124 12:05:03.123456 logging_ops] " for a log(...) stream, the shape
// of TensorFlow's log lines.
std::string LogPrefix(char severity) {
  timeval now;
  gettimeofday(&now, nullptr);
  tm local;
  localtime_r(&now.tv_sec, &local);
  char stamp[32];
  std::strftime(stamp, sizeof(stamp), "%m%d %H:%M:%S", &local);
  char prefix[64];
  std::snprintf(prefix, sizeof(prefix), "%c%s.%06ld logging_ops] ", severity, stamp,
                static_cast<long>(now.tv_usec));
  return prefix;
}

class PrintV2Op : public OpKernel {
 public:
  explicit PrintV2Op(OpKernelConstruction* c) : OpKernel(c) {
    OP_REQUIRES_OK(c, c->GetAttr("output_stream", &output_stream_));
    OP_REQUIRES_OK(c, c->GetAttr("end", &end_));
    if (output_stream_.rfind(kFilePrefix, 0) == 0) {
      file_path_ = output_stream_.substr(sizeof(kFilePrefix) - 1);
      return;
    }
    for (const char* known : kOutputStreams) {
      if (output_stream_ == known) return;
    }
    std::string valid;
    for (const char* known : kOutputStreams) valid += StrCat(" ", known);
    c->SetStatus(errors::InvalidArgument("Unknown output stream: ", output_stream_,
                                         ", Valid streams are:", valid));
  }

  void Compute(OpKernelContext* c) override {
    const Tensor& input = c->input(0);
    OP_REQUIRES(c, input.IsScalar(),
                errors::InvalidArgument("Input is expected to be scalar, but got ",
                                        input.shape().DebugString()));
    const std::string text = input.scalar<std::string>() + end_;
    if (!file_path_.empty()) {
      OP_REQUIRES_OK(c, AppendToFile(text));
    } else if (output_stream_ == "stdout") {
      WriteAll(stdout, text);
    } else if (output_stream_ == "stderr") {
      WriteAll(stderr, text);
    } else {
      // log(info), log(warning), log(error): stderr, as TensorFlow's log.
      const char severity = output_stream_ == "log(info)"      ? 'I'
                            : output_stream_ == "log(warning)" ? 'W'
                                                               : 'E';
      WriteAll(stderr, LogPrefix(severity) + text);
      ForwardToLogListeners(text);
    }
  }

 private:
  Status AppendToFile(const std::string& text) {
    static std::mutex file_mu;  // appends from concurrent steps stay whole
    std::lock_guard<std::mutex> lock(file_mu);
    std::FILE* file = std::fopen(file_path_.c_str(), "ab");
    if (file == nullptr) {
      return errors::InvalidArgument("Could not open ", file_path_, " to append a print");
    }
    const bool written = std::fwrite(text.data(), 1, text.size(), file) == text.size();
    const bool closed = std::fclose(file) == 0;
    if (!written || !closed) {
      return errors::Internal("Could not append a print to ", file_path_);
    }
    return Status::OK();
  }

  std::string output_stream_;
  std::string end_;
  std::string file_path_;  // set for "file://<path>"
};

REGISTER_KERNEL_BUILDER(Name("Assert").Device(DEVICE_CPU), AssertOp);
REGISTER_KERNEL_BUILDER(Name("Print").Device(DEVICE_CPU), PrintOp);
REGISTER_KERNEL_BUILDER(Name("PrintV2").Device(DEVICE_CPU), PrintV2Op);

}  // namespace
}  // namespace tensorweave
