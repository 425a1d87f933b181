// Small string helpers shared by the runtime: concatenation of mixed values
// (for error messages), joining and splitting.
#ifndef TENSORWEAVE_FRAMEWORK_STR_UTIL_H_
#define TENSORWEAVE_FRAMEWORK_STR_UTIL_H_

#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace tensorweave {

// Concatenates the streamed form of every argument: StrCat("a", 1, 'b').
template <typename... Args>
std::string StrCat(Args&&... args) {
  std::ostringstream out;
  (out << ... << std::forward<Args>(args));
  return out.str();
}

// Joins the elements of a container with `separator`, streaming each one.
template <typename Container>
std::string StrJoin(const Container& items, const std::string& separator) {
  std::ostringstream out;
  bool first = true;
  for (const auto& item : items) {
    if (!first) out << separator;
    out << item;
    first = false;
  }
  return out.str();
}

// Splits `text` at every `separator`, keeping empty parts: "a;;b" gives
// {"a", "", "b"} and "" gives {""}.
inline std::vector<std::string> StrSplit(const std::string& text, char separator) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (true) {
    const size_t end = text.find(separator, start);
    parts.push_back(text.substr(start, end == std::string::npos ? std::string::npos : end - start));
    if (end == std::string::npos) return parts;
    start = end + 1;
  }
}

}  // namespace tensorweave

#endif  // TENSORWEAVE_FRAMEWORK_STR_UTIL_H_
