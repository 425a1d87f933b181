// The text forms TensorFlow gives a tensor's values in messages: the flat,
// bracketed form of Assert and Print ("[[1 2 3][4...]...]": the first
// `max_entries` values in row order) and the numpy-like form of
// StringFormat / tf.print ("[[1 2 ... 9 10]\n ...]": `max_entries` values
// at each end of every dimension).
//
//   Tensor t = ...;  // float [2, 3] holding 1.5 2 3 4 5 6
//   SummarizeTensor(t, 4, SummaryStyle::kFlat);   // "[1.5 2 3][4...]..."
//   SummarizeTensor(t, 1, SummaryStyle::kNumpy);  // "[[1.5 ... 3]\n [4 ... 6]]"
//
// A negative `max_entries` means every value. Elements print as TensorFlow
// prints them: floats with the fewest of 6/9 (double 15/17) significant
// digits that read back exactly, bools as 1/0, 8-bit integers as numbers,
// strings C-escaped (bytes >= 0x80 kept, so UTF-8 survives) and, in the
// numpy-like form, double-quoted.
#ifndef TENSORWEAVE_FRAMEWORK_TENSOR_SUMMARY_H_
#define TENSORWEAVE_FRAMEWORK_TENSOR_SUMMARY_H_

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/framework/tensor.h"

namespace tensorweave {

enum class SummaryStyle {
  kFlat,   // Assert, Print (TensorFlow's Tensor::SummarizeValue)
  kNumpy,  // StringFormat, tf.print (SummarizeValue with print_v2)
};

std::string SummarizeTensor(const Tensor& tensor, int64_t max_entries, SummaryStyle style);

// One float as TensorFlow's StrCat writes it: "%.6g" when that reads back
// as the same float, else "%.9g" (doubles: 15, else 17 digits).
std::string FloatToShortestString(float value);
std::string DoubleToShortestString(double value);

// `bytes` with control characters, quotes and backslashes C-escaped
// ("\n", "\\", "\"", "\001"); bytes >= 0x80 are kept as they are.
std::string Utf8SafeCEscape(const std::string& bytes);

// StringFormat's template cut at every `placeholder`: N placeholders give
// N + 1 pieces. An empty placeholder cuts between every two characters (as
// absl::StrSplit does), so "abc" gives {"a", "b", "c"}.
std::vector<std::string> SplitFormatTemplate(const std::string& text,
                                             const std::string& placeholder);

}  // namespace tensorweave

#endif  // TENSORWEAVE_FRAMEWORK_TENSOR_SUMMARY_H_
