// StringSplit (TF1's tf.string_split: any byte of the delimiter splits) and
// StringSplitV2 (tf.strings.split: Python's str.split(sep, maxsplit)), both
// giving a SparseTensor's indices, values and dense_shape.
#include <algorithm>
#include <string>
#include <vector>

#include "runtime/framework/op_kernel.h"

namespace tensorweave {
namespace {

bool IsWhitespace(char ch) {
  return ch == ' ' || ch == '\t' || ch == '\n' || ch == '\v' || ch == '\f' || ch == '\r';
}

// StringSplit's rule: every byte of `delimiters` ends a token; no
// delimiters splits into single bytes. An empty string has no tokens.
std::vector<std::string> SplitAtAnyByte(const std::string& text, const std::string& delimiters,
                                        bool skip_empty) {
  std::vector<std::string> tokens;
  if (text.empty()) return tokens;
  if (delimiters.empty()) {
    for (char ch : text) tokens.emplace_back(1, ch);
    return tokens;
  }
  size_t begin = 0;
  for (size_t i = 0; i <= text.size(); ++i) {
    if (i == text.size() || delimiters.find(text[i]) != std::string::npos) {
      if (!(skip_empty && i == begin)) tokens.push_back(text.substr(begin, i - begin));
      begin = i + 1;
    }
  }
  return tokens;
}

// Runs of whitespace split, none at the ends (Python's str.split(None));
// once maxsplit splits are made, the rest after the whitespace run is one
// token, even when empty (TensorFlow's rule: " x  " with maxsplit 1 gives
// "x" and "").
std::vector<std::string> SplitAtWhitespace(const std::string& text, int64_t maxsplit) {
  std::vector<std::string> tokens;
  size_t i = 0;
  while (i < text.size() && IsWhitespace(text[i])) ++i;
  while (i < text.size()) {
    const size_t begin = i;
    while (i < text.size() && !IsWhitespace(text[i])) ++i;
    tokens.push_back(text.substr(begin, i - begin));
    if (i == text.size()) break;
    while (i < text.size() && IsWhitespace(text[i])) ++i;
    if (maxsplit >= 0 && static_cast<int64_t>(tokens.size()) == maxsplit) {
      tokens.push_back(text.substr(i));
      break;
    }
  }
  return tokens;
}

// Python's str.split(sep, maxsplit) for a non-empty sep.
std::vector<std::string> SplitAtSeparator(const std::string& text, const std::string& sep,
                                          int64_t maxsplit) {
  std::vector<std::string> tokens;
  size_t begin = 0;
  while (maxsplit < 0 || static_cast<int64_t>(tokens.size()) < maxsplit) {
    const size_t at = text.find(sep, begin);
    if (at == std::string::npos) break;
    tokens.push_back(text.substr(begin, at - begin));
    begin = at + sep.size();
  }
  tokens.push_back(text.substr(begin));
  return tokens;
}

// Checks the inputs and writes the SparseTensor of `split`'s tokens of
// each input string.
template <typename Split>
void SplitToSparse(OpKernelContext* c, const char* separator_name, Split split) {
  const Tensor& input = c->input(0);
  const Tensor& separator = c->input(1);
  OP_REQUIRES(
      c, input.dims() == 1,
      errors::InvalidArgument("input must be a vector, got shape: ", input.shape().DebugString()));
  OP_REQUIRES(c, separator.dims() == 0,
              errors::InvalidArgument(separator_name, " must be a scalar, got shape: ",
                                      separator.shape().DebugString()));
  const int64_t batch = input.NumElements();
  const std::string* strings = input.data<std::string>();
  std::vector<std::vector<std::string>> tokens(batch);
  int64_t total = 0, widest = 0;
  for (int64_t i = 0; i < batch; ++i) {
    tokens[i] = split(strings[i], separator.data<std::string>()[0]);
    total += static_cast<int64_t>(tokens[i].size());
    widest = std::max<int64_t>(widest, static_cast<int64_t>(tokens[i].size()));
  }
  Tensor *indices = nullptr, *values = nullptr, *shape = nullptr;
  OP_REQUIRES_OK(c, c->allocate_output(0, TensorShape({total, 2}), &indices));
  OP_REQUIRES_OK(c, c->allocate_output(1, TensorShape({total}), &values));
  OP_REQUIRES_OK(c, c->allocate_output(2, TensorShape({2}), &shape));
  int64_t* index = indices->data<int64_t>();
  std::string* value = values->data<std::string>();
  for (int64_t i = 0; i < batch; ++i) {
    for (size_t j = 0; j < tokens[i].size(); ++j) {
      *index++ = i;
      *index++ = static_cast<int64_t>(j);
      *value++ = std::move(tokens[i][j]);
    }
  }
  shape->data<int64_t>()[0] = batch;
  shape->data<int64_t>()[1] = widest;
}

class StringSplitOp : public OpKernel {
 public:
  explicit StringSplitOp(OpKernelConstruction* c) : OpKernel(c) {
    OP_REQUIRES_OK(c, c->GetAttr("skip_empty", &skip_empty_));
  }

  void Compute(OpKernelContext* c) override {
    SplitToSparse(c, "delimiter", [this](const std::string& text, const std::string& delimiters) {
      return SplitAtAnyByte(text, delimiters, skip_empty_);
    });
  }

 private:
  bool skip_empty_ = true;
};

REGISTER_KERNEL_BUILDER(Name("StringSplit").Device(DEVICE_CPU), StringSplitOp);

class StringSplitV2Op : public OpKernel {
 public:
  explicit StringSplitV2Op(OpKernelConstruction* c) : OpKernel(c) {
    OP_REQUIRES_OK(c, c->GetAttr("maxsplit", &maxsplit_));
  }

  void Compute(OpKernelContext* c) override {
    SplitToSparse(c, "sep", [this](const std::string& text, const std::string& sep) {
      return sep.empty() ? SplitAtWhitespace(text, maxsplit_)
                         : SplitAtSeparator(text, sep, maxsplit_);
    });
  }

 private:
  int64_t maxsplit_ = -1;
};

REGISTER_KERNEL_BUILDER(Name("StringSplitV2").Device(DEVICE_CPU), StringSplitV2Op);

}  // namespace
}  // namespace tensorweave
