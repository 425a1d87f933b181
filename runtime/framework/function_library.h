// FunctionLibraryDefinition: the functions a graph carries (GraphDef.library),
// by name, checked when they are added, and an op registry in which each
// function's name resolves to its signature, so a node whose op is a
// function imports, validates and gets its dtypes like any other node.
//
//   FunctionLibraryDefinition library(OpRegistry::Global());
//   TW_RETURN_IF_ERROR(library.AddLibrary(graph_def.library()));
//   const FunctionDef* body = library.Find("my_function");   // null if absent
//   const OpDef* op = library.op_registry()->LookUp("my_function");  // its signature
//
// AddLibrary rejects, with INVALID_ARGUMENT naming the function: a function
// whose name is an op's or that a different function already holds; a
// signature or body that does not parse (a body node of an unknown op, an
// input that names no arg or no output of a body node, a return value that
// does); a func attr naming no function; and recursion (a function reaching
// itself through calls, If/While/Case branches or any func attr) or calls
// nested deeper than kMaxFunctionCallDepth. On error nothing is added.
// Functions are never removed or changed once added, so pointers to them
// and to their signatures stay valid as long as the library.
//
// Thread-safe: a session's library grows with Extend while steps run.
#ifndef TENSORWEAVE_FRAMEWORK_FUNCTION_LIBRARY_H_
#define TENSORWEAVE_FRAMEWORK_FUNCTION_LIBRARY_H_

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "runtime/framework/op_def.h"
#include "runtime/framework/status.h"
#include "tensorweave/proto/function.pb.h"

namespace tensorweave {

// How deep calls may nest (a function calling a function ...): deeper
// libraries are rejected when added, so running one never recurses without
// bound.
constexpr int kMaxFunctionCallDepth = 64;

class FunctionLibraryDefinition {
 public:
  // `ops` (not owned, outlives this) resolves every op that is not one of
  // the library's functions.
  explicit FunctionLibraryDefinition(const OpRegistry* ops);
  FunctionLibraryDefinition(const FunctionLibraryDefinition&) = delete;
  FunctionLibraryDefinition& operator=(const FunctionLibraryDefinition&) = delete;

  // Adds every function and gradient of `library` after checking them
  // together with the functions already here (see the top of this file). A
  // function identical to one already held is skipped.
  Status AddLibrary(const FunctionDefLibrary& library);

  // Null when no function has that name.
  const FunctionDef* Find(const std::string& name) const;
  bool Contains(const std::string& name) const { return Find(name) != nullptr; }
  bool empty() const;
  // The functions and gradients, in the order they were added.
  FunctionDefLibrary ToProto() const;

  // Functions first, then `ops`.
  const OpRegistry* op_registry() const { return &registry_; }

 private:
  const OpRegistry* const ops_;
  OpRegistry registry_;  // the signatures; falls back to ops_
  mutable std::mutex mu_;
  std::map<std::string, std::unique_ptr<const FunctionDef>> functions_;  // guarded by mu_
  std::vector<const FunctionDef*> order_;                                // guarded by mu_
  std::vector<GradientDef> gradients_;                                   // guarded by mu_
  std::vector<RegisteredGradient> registered_gradients_;                 // guarded by mu_
};

// Whether two FunctionDefs are the same function (field by field, so map
// order in their serialized bytes does not matter).
bool SameFunction(const FunctionDef& a, const FunctionDef& b);

// The functions a NodeDef names in its attrs (func and list(func) values,
// and the names in their nested attrs), in attr order. A placeholder ("$f")
// names none.
std::vector<std::string> FunctionsNamedByAttrs(const NodeDef& node);

}  // namespace tensorweave

#endif  // TENSORWEAVE_FRAMEWORK_FUNCTION_LIBRARY_H_
