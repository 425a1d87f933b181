// RegexReplace, StaticRegexReplace, RegexFullMatch and StaticRegexFullMatch
// with RE2, the regular expression library TensorFlow uses, so patterns
// and rewrites (\1 .. \9) mean the same (std::regex's syntax differs). The
// Static forms compile their attr pattern once, with the kernel.
#include <re2/re2.h>

#include <memory>
#include <string>

#include "runtime/framework/op_kernel.h"

namespace tensorweave {
namespace {

// The compiled `pattern`, or TensorFlow's INVALID_ARGUMENT for a bad one.
Status Compile(const std::string& pattern, std::unique_ptr<RE2>* out) {
  RE2::Options options;
  options.set_log_errors(false);  // the error goes into the status instead
  auto regex = std::make_unique<RE2>(pattern, options);
  if (!regex->ok()) {
    return errors::InvalidArgument("Invalid pattern: ", pattern, ", error: ", regex->error());
  }
  *out = std::move(regex);
  return Status::OK();
}

Status ReadScalarString(const Tensor& tensor, const char* what, std::string* out) {
  if (tensor.dims() != 0) {
    return errors::InvalidArgument(what, " must be scalar, but received ",
                                   tensor.shape().DebugString());
  }
  *out = tensor.data<std::string>()[0];
  return Status::OK();
}

void Replace(OpKernelContext* c, const RE2& regex, const std::string& rewrite, bool global) {
  const Tensor& input = c->input(0);
  Tensor* output = nullptr;
  OP_REQUIRES_OK(c, c->allocate_output(0, input.shape(), &output));
  const std::string* in = input.data<std::string>();
  std::string* out = output->data<std::string>();
  for (int64_t i = 0; i < input.NumElements(); ++i) {
    out[i] = in[i];
    // A rewrite naming a group the pattern lacks replaces nothing, as in
    // TensorFlow (RE2 refuses the rewrite).
    if (global) {
      RE2::GlobalReplace(&out[i], regex, rewrite);
    } else {
      RE2::Replace(&out[i], regex, rewrite);
    }
  }
}

void FullMatch(OpKernelContext* c, const RE2& regex) {
  const Tensor& input = c->input(0);
  Tensor* output = nullptr;
  OP_REQUIRES_OK(c, c->allocate_output(0, input.shape(), &output));
  const std::string* in = input.data<std::string>();
  bool* out = output->data<bool>();
  for (int64_t i = 0; i < input.NumElements(); ++i) out[i] = RE2::FullMatch(in[i], regex);
}

class RegexReplaceOp : public OpKernel {
 public:
  explicit RegexReplaceOp(OpKernelConstruction* c) : OpKernel(c) {
    OP_REQUIRES_OK(c, c->GetAttr("replace_global", &replace_global_));
  }

  void Compute(OpKernelContext* c) override {
    std::string pattern, rewrite;
    OP_REQUIRES_OK(c, ReadScalarString(c->input(1), "Pattern", &pattern));
    OP_REQUIRES_OK(c, ReadScalarString(c->input(2), "Rewrite", &rewrite));
    std::unique_ptr<RE2> regex;
    OP_REQUIRES_OK(c, Compile(pattern, &regex));
    Replace(c, *regex, rewrite, replace_global_);
  }

 private:
  bool replace_global_ = true;
};

class StaticRegexReplaceOp : public OpKernel {
 public:
  explicit StaticRegexReplaceOp(OpKernelConstruction* c) : OpKernel(c) {
    std::string pattern;
    OP_REQUIRES_OK(c, c->GetAttr("pattern", &pattern));
    OP_REQUIRES_OK(c, c->GetAttr("rewrite", &rewrite_));
    OP_REQUIRES_OK(c, c->GetAttr("replace_global", &replace_global_));
    OP_REQUIRES_OK(c, Compile(pattern, &regex_));
  }

  void Compute(OpKernelContext* c) override { Replace(c, *regex_, rewrite_, replace_global_); }

 private:
  std::unique_ptr<RE2> regex_;
  std::string rewrite_;
  bool replace_global_ = true;
};

class RegexFullMatchOp : public OpKernel {
 public:
  using OpKernel::OpKernel;

  void Compute(OpKernelContext* c) override {
    std::string pattern;
    OP_REQUIRES_OK(c, ReadScalarString(c->input(1), "Pattern", &pattern));
    std::unique_ptr<RE2> regex;
    OP_REQUIRES_OK(c, Compile(pattern, &regex));
    FullMatch(c, *regex);
  }
};

class StaticRegexFullMatchOp : public OpKernel {
 public:
  explicit StaticRegexFullMatchOp(OpKernelConstruction* c) : OpKernel(c) {
    std::string pattern;
    OP_REQUIRES_OK(c, c->GetAttr("pattern", &pattern));
    OP_REQUIRES_OK(c, Compile(pattern, &regex_));
  }

  void Compute(OpKernelContext* c) override { FullMatch(c, *regex_); }

 private:
  std::unique_ptr<RE2> regex_;
};

REGISTER_KERNEL_BUILDER(Name("RegexReplace").Device(DEVICE_CPU), RegexReplaceOp);
REGISTER_KERNEL_BUILDER(Name("StaticRegexReplace").Device(DEVICE_CPU), StaticRegexReplaceOp);
REGISTER_KERNEL_BUILDER(Name("RegexFullMatch").Device(DEVICE_CPU), RegexFullMatchOp);
REGISTER_KERNEL_BUILDER(Name("StaticRegexFullMatch").Device(DEVICE_CPU), StaticRegexFullMatchOp);

}  // namespace
}  // namespace tensorweave
