// Kernels of the elementwise and reducing string ops: StringJoin,
// ReduceJoin, StringLength, Substr, StringStrip, StringLower and
// StringUpper, with TensorFlow's semantics and error messages
// (runtime/ops/string_ops.cc documents each op).
#include <algorithm>
#include <cctype>
#include <string>
#include <vector>

#include "runtime/framework/op_kernel.h"
#include "runtime/kernels/cwise_binary.h"
#include "runtime/ops/index_vector.h"

namespace tensorweave {
namespace {

// A UTF-8 continuation byte (10xxxxxx) does not start a character.
bool StartsCharacter(char byte) { return (static_cast<unsigned char>(byte) & 0xC0) != 0x80; }

int64_t CountCharacters(const std::string& text) {
  return std::count_if(text.begin(), text.end(), StartsCharacter);
}

// The byte offset where character `index` (0 <= index <= count) starts;
// the size of `text` for index == count.
size_t CharacterOffset(const std::string& text, int64_t index) {
  for (size_t i = 0; i < text.size(); ++i) {
    if (StartsCharacter(text[i]) && index-- == 0) return i;
  }
  return text.size();
}

class StringJoinOp : public OpKernel {
 public:
  explicit StringJoinOp(OpKernelConstruction* c) : OpKernel(c) {
    OP_REQUIRES_OK(c, c->GetAttr("separator", &separator_));
  }

  void Compute(OpKernelContext* c) override {
    const TensorShape* shape = nullptr;  // the common shape of the non-scalars
    for (int i = 0; i < c->num_inputs(); ++i) {
      const TensorShape& input = c->input(i).shape();
      if (input.dims() == 0) continue;
      OP_REQUIRES(c, shape == nullptr || *shape == input,
                  errors::InvalidArgument("Input shapes do not match: ", shape->DebugString(),
                                          " vs. ", input.DebugString()));
      shape = &input;
    }
    Tensor* output = nullptr;
    OP_REQUIRES_OK(c, c->allocate_output(0, shape ? *shape : TensorShape(), &output));
    std::string* out = output->data<std::string>();
    for (int64_t e = 0; e < output->NumElements(); ++e) {
      std::string& joined = out[e];
      for (int i = 0; i < c->num_inputs(); ++i) {
        const Tensor& input = c->input(i);
        if (i > 0) joined += separator_;
        joined += input.data<std::string>()[input.shape().dims() == 0 ? 0 : e];
      }
    }
  }

 private:
  std::string separator_;
};

REGISTER_KERNEL_BUILDER(Name("StringJoin").Device(DEVICE_CPU), StringJoinOp);

class ReduceJoinOp : public OpKernel {
 public:
  explicit ReduceJoinOp(OpKernelConstruction* c) : OpKernel(c) {
    OP_REQUIRES_OK(c, c->GetAttr("keep_dims", &keep_dims_));
    OP_REQUIRES_OK(c, c->GetAttr("separator", &separator_));
  }

  void Compute(OpKernelContext* c) override {
    const Tensor& input = c->input(0);
    const TensorShape& shape = input.shape();
    const int rank = shape.dims();
    std::vector<int64_t> axes;
    OP_REQUIRES_OK(c, ReadIndexVector(c->input(1), "reduction_indices", &axes));
    // The reduced dims in the order given: the first varies fastest.
    std::vector<int> reduced_order;
    std::vector<bool> reduced(rank, false);
    for (int64_t axis : axes) {
      OP_REQUIRES(c, axis >= -rank && axis < rank,
                  errors::OutOfRange("Invalid reduction dimension ", axis, " for input with ", rank,
                                     " dimension(s)"));
      const int dim = static_cast<int>(axis < 0 ? axis + rank : axis);
      OP_REQUIRES(c, !reduced[dim], errors::InvalidArgument("Duplicate reduction dimension ", dim));
      reduced[dim] = true;
      reduced_order.push_back(dim);
    }
    std::vector<int64_t> strides(rank, 1);
    for (int d = rank - 2; d >= 0; --d) strides[d] = strides[d + 1] * shape.dim_size(d + 1);
    TensorShape out_shape;
    std::vector<int> kept;  // unreduced dims, outermost first
    for (int d = 0; d < rank; ++d) {
      if (!reduced[d]) {
        kept.push_back(d);
        OP_REQUIRES_OK(c, out_shape.AddDim(shape.dim_size(d)));
      } else if (keep_dims_) {
        OP_REQUIRES_OK(c, out_shape.AddDim(1));
      }
    }
    int64_t group = 1;  // strings joined into each output
    for (int d : reduced_order) group *= shape.dim_size(d);
    Tensor* output = nullptr;
    OP_REQUIRES_OK(c, c->allocate_output(0, out_shape, &output));
    const std::string* in = input.data<std::string>();
    std::string* out = output->data<std::string>();
    for (int64_t o = 0; o < output->NumElements(); ++o) {
      // The input offset of this output's first string, from its index
      // over the kept dims (row-major, last fastest).
      int64_t base = 0, remainder = o;
      for (int k = static_cast<int>(kept.size()) - 1; k >= 0; --k) {
        const int64_t size = shape.dim_size(kept[k]);
        base += (remainder % size) * strides[kept[k]];
        remainder /= size;
      }
      std::string& joined = out[o];
      for (int64_t g = 0; g < group; ++g) {
        int64_t offset = base, rest = g;
        for (int d : reduced_order) {
          offset += (rest % shape.dim_size(d)) * strides[d];
          rest /= shape.dim_size(d);
        }
        if (g > 0) joined += separator_;
        joined += in[offset];
      }
    }
  }

 private:
  bool keep_dims_ = false;
  std::string separator_;
};

REGISTER_KERNEL_BUILDER(Name("ReduceJoin").Device(DEVICE_CPU), ReduceJoinOp);

// Reads the "unit" attr: true for UTF8_CHAR, false for BYTE.
Status ReadUnit(OpKernelConstruction* c, bool* characters) {
  std::string unit;
  TW_RETURN_IF_ERROR(c->GetAttr("unit", &unit));
  *characters = unit == "UTF8_CHAR";
  return Status::OK();
}

class StringLengthOp : public OpKernel {
 public:
  explicit StringLengthOp(OpKernelConstruction* c) : OpKernel(c) {
    OP_REQUIRES_OK(c, ReadUnit(c, &characters_));
  }

  void Compute(OpKernelContext* c) override {
    const Tensor& input = c->input(0);
    Tensor* output = nullptr;
    OP_REQUIRES_OK(c, c->allocate_output(0, input.shape(), &output));
    const std::string* in = input.data<std::string>();
    int32_t* out = output->data<int32_t>();
    for (int64_t i = 0; i < input.NumElements(); ++i) {
      out[i] = static_cast<int32_t>(characters_ ? CountCharacters(in[i]) : in[i].size());
    }
  }

 private:
  bool characters_ = false;
};

REGISTER_KERNEL_BUILDER(Name("StringLength").Device(DEVICE_CPU), StringLengthOp);

class SubstrOp : public OpKernel {
 public:
  explicit SubstrOp(OpKernelConstruction* c) : OpKernel(c) {
    OP_REQUIRES_OK(c, ReadUnit(c, &characters_));
  }

  void Compute(OpKernelContext* c) override {
    const Tensor& input = c->input(0);
    const Tensor& pos = c->input(1);
    const Tensor& len = c->input(2);
    OP_REQUIRES(c, pos.shape() == len.shape(),
                errors::InvalidArgument(
                    "pos and len should have the same shape, got: ", pos.shape().DebugString(),
                    " vs. ", len.shape().DebugString()));
    BinaryBroadcast broadcast;
    OP_REQUIRES_OK(c, broadcast.Init(input.shape(), pos.shape()));
    Tensor* output = nullptr;
    OP_REQUIRES_OK(c, c->allocate_output(0, broadcast.output_shape(), &output));
    const bool wide = pos.dtype() == DT_INT64;
    const auto value_at = [wide](const Tensor& t, int64_t i) -> int64_t {
      return wide ? t.data<int64_t>()[i] : t.data<int32_t>()[i];
    };
    const std::string* in = input.data<std::string>();
    std::string* out = output->data<std::string>();
    const int64_t inner = broadcast.inner();
    BinaryBroadcast::RowCursor cursor(broadcast, 0);
    for (int64_t row = 0; row < broadcast.rows(); ++row, cursor.Next()) {
      for (int64_t j = 0; j < inner; ++j) {
        const int64_t s = cursor.x_offset() + (broadcast.x_advances() ? j : 0);
        const int64_t p = cursor.y_offset() + (broadcast.y_advances() ? j : 0);
        OP_REQUIRES_OK(
            c, Extract(in[s], value_at(pos, p), value_at(len, p), s, &out[row * inner + j]));
      }
    }
  }

 private:
  // in[pos, pos + len) in bytes or characters; `index` names the element.
  Status Extract(const std::string& in, int64_t pos, int64_t len, int64_t index,
                 std::string* out) const {
    const int64_t size = characters_ ? CountCharacters(in) : static_cast<int64_t>(in.size());
    if (pos < -size || pos > size) {
      if (characters_) {
        return errors::InvalidArgument("pos ", pos, " out of range for string at index ", index);
      }
      return errors::InvalidArgument("pos ", pos, " out of range for string b'", in, "' at index ",
                                     index);
    }
    const int64_t begin = pos < 0 ? pos + size : pos;
    const int64_t end = len < 0 ? size : begin + std::min(len, size - begin);
    if (!characters_) {
      out->assign(in, begin, end - begin);
      return Status::OK();
    }
    const size_t first = CharacterOffset(in, begin);
    out->assign(in, first, CharacterOffset(in, end) - first);
    return Status::OK();
  }

  bool characters_ = false;
};

REGISTER_KERNEL_BUILDER(Name("Substr").Device(DEVICE_CPU), SubstrOp);

// StringStrip, StringLower and StringUpper: one string to one string.
template <typename Transform>
class StringMapOp : public OpKernel {
 public:
  explicit StringMapOp(OpKernelConstruction* c) : OpKernel(c) {
    if (c->def().attr().count("encoding") > 0) {
      std::string encoding;
      OP_REQUIRES_OK(c, c->GetAttr("encoding", &encoding));
      // TensorFlow maps UTF-8 letters through ICU, which we do not have.
      OP_REQUIRES(c, encoding.empty(),
                  errors::Unimplemented("encoding '", encoding,
                                        "' is not supported; only '' (ASCII letters) is"));
    }
  }

  void Compute(OpKernelContext* c) override {
    const Tensor& input = c->input(0);
    Tensor* output = nullptr;
    OP_REQUIRES_OK(c, c->allocate_output(0, input.shape(), &output));
    const std::string* in = input.data<std::string>();
    std::string* out = output->data<std::string>();
    for (int64_t i = 0; i < input.NumElements(); ++i) out[i] = Transform()(in[i]);
  }
};

// ASCII whitespace as TensorFlow's StringStrip (absl::ascii_isspace) sees it.
bool IsAsciiSpace(char ch) {
  return ch == ' ' || ch == '\t' || ch == '\n' || ch == '\v' || ch == '\f' || ch == '\r';
}

struct Strip {
  std::string operator()(const std::string& in) const {
    size_t begin = 0, end = in.size();
    while (begin < end && IsAsciiSpace(in[begin])) ++begin;
    while (end > begin && IsAsciiSpace(in[end - 1])) --end;
    return in.substr(begin, end - begin);
  }
};

struct Lower {
  std::string operator()(std::string in) const {
    for (char& ch : in) {
      if (ch >= 'A' && ch <= 'Z') ch = static_cast<char>(ch - 'A' + 'a');
    }
    return in;
  }
};

struct Upper {
  std::string operator()(std::string in) const {
    for (char& ch : in) {
      if (ch >= 'a' && ch <= 'z') ch = static_cast<char>(ch - 'a' + 'A');
    }
    return in;
  }
};

REGISTER_KERNEL_BUILDER(Name("StringStrip").Device(DEVICE_CPU), StringMapOp<Strip>);
REGISTER_KERNEL_BUILDER(Name("StringLower").Device(DEVICE_CPU), StringMapOp<Lower>);
REGISTER_KERNEL_BUILDER(Name("StringUpper").Device(DEVICE_CPU), StringMapOp<Upper>);

}  // namespace
}  // namespace tensorweave
