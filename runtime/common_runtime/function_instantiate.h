// Function instantiation: a FunctionDef and the attrs of one call (the types
// and sizes its args have there) become a plain GraphDef the executor runs,
// as TensorFlow's InstantiateFunction does.
//
//   InstantiatedFunction body;
//   TW_RETURN_IF_ERROR(InstantiateFunction(*library.Find("f"), signature,
//                                          call_attrs, *library.op_registry(), &body));
//   // body.graph: one _Arg per input tensor ("index" i reads call arg i),
//   // the body's nodes, one _Retval per output tensor; body.arg_types and
//   // body.ret_types the dtypes the call passes and gets back.
//
// What changes on the way: an attr holding a placeholder ("$T" in text form)
// takes the call's value of that attr (also inside func attrs, so a branch
// gets the caller's types); inputs written "x" (an input arg, every tensor
// of it) or "node:output_arg:index" become "node:position" of the plain
// graph; list args ("N * T", type lists) expand to one _Arg or _Retval per
// tensor. Every error is INVALID_ARGUMENT naming the function (and the body
// node when there is one).
#ifndef TENSORWEAVE_COMMON_RUNTIME_FUNCTION_INSTANTIATE_H_
#define TENSORWEAVE_COMMON_RUNTIME_FUNCTION_INSTANTIATE_H_

#include <google/protobuf/map.h>

#include <string>

#include "runtime/framework/op_def.h"
#include "runtime/framework/status.h"
#include "runtime/framework/types.h"
#include "tensorweave/proto/function.pb.h"
#include "tensorweave/proto/graph.pb.h"

namespace tensorweave {

using AttrMap = google::protobuf::Map<std::string, AttrValue>;

struct InstantiatedFunction {
  GraphDef graph;
  DataTypeVector arg_types;
  DataTypeVector ret_types;
};

// `signature` is the runtime's form of function.signature(); `attrs` the
// call's attrs (those the signature declares are used, the others
// ignored; a declared attr the call lacks takes the signature's default);
// `ops` resolves the body's ops.
Status InstantiateFunction(const FunctionDef& function, const OpDef& signature,
                           const AttrMap& attrs, const OpRegistry& ops,
                           InstantiatedFunction* result);

// The attrs of `attrs` that `signature` declares, with its defaults for the
// ones missing: what an instantiation depends on, and so its cache key.
AttrMap SignatureAttrs(const OpDef& signature, const AttrMap& attrs);

// A byte string equal for equal (name, attrs) and different otherwise.
std::string InstantiationKey(const std::string& name, const AttrMap& attrs);

}  // namespace tensorweave

#endif  // TENSORWEAVE_COMMON_RUNTIME_FUNCTION_INSTANTIATE_H_
