// AsString (numbers, bools and strings as text, printf-style as
// TensorFlow's kernel formats them) and StringToNumber (text to numbers with
// the syntax TensorFlow's parsers accept, and its error message).
#include <Eigen/Core>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <string>
#include <type_traits>

#include "runtime/framework/op_kernel.h"
#include "runtime/framework/types.h"

namespace tensorweave {
namespace {

class AsStringOp : public OpKernel {
 public:
  explicit AsStringOp(OpKernelConstruction* c) : OpKernel(c) {
    int64_t precision = -1, width = -1;
    bool scientific = false, shortest = false;
    std::string fill;
    OP_REQUIRES_OK(c, c->GetAttr("precision", &precision));
    OP_REQUIRES_OK(c, c->GetAttr("scientific", &scientific));
    OP_REQUIRES_OK(c, c->GetAttr("shortest", &shortest));
    OP_REQUIRES_OK(c, c->GetAttr("width", &width));
    OP_REQUIRES_OK(c, c->GetAttr("fill", &fill));
    dtype_ = c->input_type(0);
    const std::string type_name = DataTypeString(dtype_);
    OP_REQUIRES(c, !(scientific && shortest),
                errors::InvalidArgument("Cannot select both scientific and shortest notation"));
    OP_REQUIRES(c, fill.size() <= 1,
                errors::InvalidArgument("Fill string must be one or fewer characters"));
    OP_REQUIRES(c, !(DataTypeIsInteger(dtype_) && precision > -1),
                errors::InvalidArgument("precision not supported for datatype ", type_name));
    OP_REQUIRES(c, !(dtype_ == DT_STRING && (precision > -1 || scientific || shortest)),
                errors::InvalidArgument("Cannot select precision, scientific or shortest "
                                        "notation for datatype string"));
    // The fill character is one of printf's flags, put before the width.
    format_ = "%";
    if (!fill.empty()) {
      OP_REQUIRES(c, fill == " " || fill == "+" || fill == "-" || fill == "0" || fill == "#",
                  errors::InvalidArgument("Fill argument not supported: \"", fill, "\""));
      format_ += fill;
    }
    if (width > -1) format_ += std::to_string(width);
    if (precision > -1) format_ += "." + std::to_string(precision);
    if (DataTypeIsFloating(dtype_)) {
      format_ += shortest ? "g" : scientific ? "e" : "f";
    } else if (dtype_ == DT_UINT8 || dtype_ == DT_UINT16 || dtype_ == DT_UINT32) {
      format_ += "u";
    } else if (dtype_ == DT_UINT64) {
      format_ += "llu";
    } else if (dtype_ == DT_INT64) {
      format_ += "lld";
    } else if (DataTypeIsInteger(dtype_)) {
      format_ += "d";
    } else if (dtype_ == DT_STRING) {
      format_ += "s";
    }
  }

  void Compute(OpKernelContext* c) override {
    const Tensor& input = c->input(0);
    Tensor* output = nullptr;
    OP_REQUIRES_OK(c, c->allocate_output(0, input.shape(), &output));
    std::string* out = output->data<std::string>();
    const int64_t count = input.NumElements();
    switch (dtype_) {
      case DT_BOOL:
        for (int64_t i = 0; i < count; ++i) out[i] = input.data<bool>()[i] ? "true" : "false";
        return;
      case DT_STRING:
        for (int64_t i = 0; i < count; ++i) {
          out[i] = Format(input.data<std::string>()[i].c_str());
        }
        return;
      case DT_FLOAT:
        return FormatAll<float, double>(input, out);
      case DT_DOUBLE:
        return FormatAll<double, double>(input, out);
      case DT_HALF:
        return FormatAll<Eigen::half, double>(input, out);
      case DT_BFLOAT16:
        return FormatAll<Eigen::bfloat16, double>(input, out);
      case DT_INT8:
        return FormatAll<int8_t, int>(input, out);
      case DT_INT16:
        return FormatAll<int16_t, int>(input, out);
      case DT_INT32:
        return FormatAll<int32_t, int>(input, out);
      case DT_INT64:
        return FormatAll<int64_t, long long>(input, out);  // NOLINT(runtime/int): printf's %lld
      case DT_UINT8:
        return FormatAll<uint8_t, unsigned>(input, out);
      case DT_UINT16:
        return FormatAll<uint16_t, unsigned>(input, out);
      case DT_UINT32:
        return FormatAll<uint32_t, unsigned>(input, out);
      case DT_UINT64:
        return FormatAll<uint64_t, unsigned long long>(input, out);  // NOLINT(runtime/int)
      default:
        c->CtxFailure(errors::InvalidArgument("Type not supported: ", DataTypeString(dtype_)));
    }
  }

 private:
  // `value` through format_ (its conversion matches the argument's type).
  template <typename Arg>
  std::string Format(Arg value) const {
    const int size = std::snprintf(nullptr, 0, format_.c_str(), value);
    std::string text(size > 0 ? size : 0, '\0');
    if (size > 0) std::snprintf(&text[0], size + 1, format_.c_str(), value);
    return text;
  }

  template <typename T, typename Arg>
  void FormatAll(const Tensor& input, std::string* out) const {
    const T* in = input.data<T>();
    for (int64_t i = 0; i < input.NumElements(); ++i) {
      // 16-bit floats convert through float, their only conversion.
      if constexpr (std::is_same_v<T, Eigen::half> || std::is_same_v<T, Eigen::bfloat16>) {
        out[i] = Format(static_cast<Arg>(static_cast<float>(in[i])));
      } else {
        out[i] = Format(static_cast<Arg>(in[i]));
      }
    }
  }

  DataType dtype_ = DT_INVALID;
  std::string format_;
};

REGISTER_KERNEL_BUILDER(Name("AsString").Device(DEVICE_CPU), AsStringOp);

// Whitespace TensorFlow's number parsers skip around the number.
bool IsSpace(char ch) {
  return ch == ' ' || ch == '\t' || ch == '\n' || ch == '\v' || ch == '\f' || ch == '\r';
}

std::string Trimmed(const std::string& text) {
  size_t begin = 0, end = text.size();
  while (begin < end && IsSpace(text[begin])) ++begin;
  while (end > begin && IsSpace(text[end - 1])) --end;
  return text.substr(begin, end - begin);
}

bool EqualsIgnoringCase(const std::string& text, size_t from, const char* word) {
  size_t i = from;
  for (; *word != '\0'; ++word, ++i) {
    if (i >= text.size() || std::tolower(static_cast<unsigned char>(text[i])) != *word) {
      return false;
    }
  }
  return i == text.size();
}

bool AllDigits(const std::string& text, size_t from, size_t to, bool hex) {
  if (from >= to) return false;
  for (size_t i = from; i < to; ++i) {
    const unsigned char ch = static_cast<unsigned char>(text[i]);
    if (!(hex ? std::isxdigit(ch) : std::isdigit(ch))) return false;
  }
  return true;
}

// The syntax TensorFlow's float parser (double-conversion, with leading and
// trailing spaces, hex integers and case-insensitive inf/nan) accepts:
// [sign] (inf | nan | 0x hexdigits | digits [. digits] [e [sign] digits]).
bool IsFloatSyntax(const std::string& text) {
  size_t i = (!text.empty() && (text[0] == '+' || text[0] == '-')) ? 1 : 0;
  if (EqualsIgnoringCase(text, i, "inf") || EqualsIgnoringCase(text, i, "nan")) return true;
  if (text.size() > i + 1 && text[i] == '0' && (text[i + 1] == 'x' || text[i + 1] == 'X')) {
    return AllDigits(text, i + 2, text.size(), /*hex=*/true);
  }
  size_t digits = 0;
  for (; i < text.size() && std::isdigit(static_cast<unsigned char>(text[i])); ++i) ++digits;
  if (i < text.size() && text[i] == '.') {
    for (++i; i < text.size() && std::isdigit(static_cast<unsigned char>(text[i])); ++i) ++digits;
  }
  if (digits == 0) return false;
  if (i < text.size() && (text[i] == 'e' || text[i] == 'E')) {
    ++i;
    if (i < text.size() && (text[i] == '+' || text[i] == '-')) ++i;
    return AllDigits(text, i, text.size(), /*hex=*/false);
  }
  return i == text.size();
}

template <typename T>
bool ParseNumber(const std::string& text, T* out) {
  const std::string number = Trimmed(text);
  if constexpr (std::is_floating_point_v<T>) {
    if (!IsFloatSyntax(number)) return false;
    // Overflow gives inf and underflow 0 or a denormal, as TensorFlow's.
    *out = std::is_same_v<T, float> ? std::strtof(number.c_str(), nullptr)
                                    : std::strtod(number.c_str(), nullptr);
    return true;
  } else {
    size_t i = 0;
    bool negative = false;
    if (!number.empty() && (number[0] == '+' || number[0] == '-')) {
      negative = number[0] == '-';
      i = 1;
    }
    if (!AllDigits(number, i, number.size(), /*hex=*/false)) return false;
    // Accumulate the magnitude, refusing anything past T's range.
    const unsigned long long limit =  // NOLINT(runtime/int)
        negative ? static_cast<unsigned long long>(std::numeric_limits<T>::max()) +  // NOLINT
                       (std::is_signed_v<T> ? 1 : 0)
                 : std::numeric_limits<T>::max();
    if (negative && !std::is_signed_v<T>) return false;
    unsigned long long magnitude = 0;  // NOLINT(runtime/int)
    for (; i < number.size(); ++i) {
      const unsigned digit = number[i] - '0';
      if (magnitude > (limit - digit) / 10) return false;
      magnitude = magnitude * 10 + digit;
    }
    *out = negative ? static_cast<T>(0 - magnitude) : static_cast<T>(magnitude);
    return true;
  }
}

template <typename T>
class StringToNumberOp : public OpKernel {
 public:
  using OpKernel::OpKernel;

  void Compute(OpKernelContext* c) override {
    const Tensor& input = c->input(0);
    Tensor* output = nullptr;
    OP_REQUIRES_OK(c, c->allocate_output(0, input.shape(), &output));
    const std::string* in = input.data<std::string>();
    T* out = output->data<T>();
    for (int64_t i = 0; i < input.NumElements(); ++i) {
      OP_REQUIRES(
          c, ParseNumber(in[i], &out[i]),
          errors::InvalidArgument("StringToNumberOp could not correctly convert string: ", in[i]));
    }
  }
};

#define TW_REGISTER_STRING_TO_NUMBER(T)                                                            \
  REGISTER_KERNEL_BUILDER(Name("StringToNumber").Device(DEVICE_CPU).TypeConstraint<T>("out_type"), \
                          StringToNumberOp<T>)
TW_REGISTER_STRING_TO_NUMBER(float);
TW_REGISTER_STRING_TO_NUMBER(double);
TW_REGISTER_STRING_TO_NUMBER(int32_t);
TW_REGISTER_STRING_TO_NUMBER(int64_t);
TW_REGISTER_STRING_TO_NUMBER(uint32_t);
TW_REGISTER_STRING_TO_NUMBER(uint64_t);
#undef TW_REGISTER_STRING_TO_NUMBER

}  // namespace
}  // namespace tensorweave
