// Op registrations: what an op takes and produces, its attrs (types,
// defaults, allowed values), its shape function and a doc line. Ops are
// declared with a small spec language, as in TensorFlow:
//
//   REGISTER_OP("MatMul")
//       .Input("a: T")
//       .Input("b: T")
//       .Output("product: T")
//       .Attr("transpose_a: bool = false")
//       .Attr("transpose_b: bool = false")
//       .Attr("T: {float, double, int32, int64}")
//       .SetShapeFn(shape_fns::MatMul)
//       .Doc("Multiplies matrix a by matrix b.");
//
// Arg specs: "name: float" (fixed type), "name: T" (type attr),
// "name: N * T" (N tensors of type T), "name: Tlist" (list(type) attr),
// "name: Ref(T)" (a reference to a mutable tensor).
// Attr specs: "name: type[ = default]" where type is int, float, bool,
// string, type, shape, tensor, func, list(<one of those>), or an allowed
// set: "{float, double}" (a type attr) or "{'SAME', 'VALID'}" (a string
// attr); "int >= 1" sets a minimum.
#ifndef TENSORWEAVE_FRAMEWORK_OP_DEF_H_
#define TENSORWEAVE_FRAMEWORK_OP_DEF_H_

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "runtime/framework/status.h"
#include "runtime/framework/types.h"
#include "tensorweave/proto/attr_value.pb.h"

namespace tensorweave {

namespace shape_inference {
class InferenceContext;
}
using ShapeFn = std::function<Status(shape_inference::InferenceContext*)>;

struct ArgDef {
  std::string name;
  DataType type = DT_INVALID;  // fixed type, or
  std::string type_attr;       // the "type" attr giving the type, and
  std::string number_attr;     // for "N * T": the "int" attr giving the count, or
  std::string type_list_attr;  // the "list(type)" attr giving every type
  bool is_ref = false;
};

struct AttrDef {
  std::string name;
  // "int", "float", "bool", "string", "type", "shape", "tensor", "func",
  // or "list(int)" etc.
  std::string type;
  bool has_default = false;
  AttrValue default_value;
  // Non-empty: the only values allowed (for type and list(type) attrs the
  // dtypes; for string attrs the strings, in allowed_strings).
  std::vector<DataType> allowed_types;
  std::vector<std::string> allowed_strings;
  bool has_minimum = false;
  int64_t minimum = 0;
};

struct OpDef {
  std::string name;
  std::vector<ArgDef> inputs;
  std::vector<ArgDef> outputs;
  std::vector<AttrDef> attrs;
  ShapeFn shape_fn;
  std::string doc;
  // Stateful ops (variables, random) are never merged or constant-folded.
  bool is_stateful = false;

  const AttrDef* FindAttr(const std::string& attr_name) const;
};

class OpRegistry {
 public:
  static OpRegistry* Global();

  // A registry of its own ops that looks in `fallback` (not owned; null for
  // none) for the names it lacks: a graph's function library resolves its
  // functions' names first and every registered op through the global one.
  explicit OpRegistry(const OpRegistry* fallback = nullptr) : fallback_(fallback) {}

  // ALREADY_EXISTS for a second op of the same name.
  Status Register(OpDef op_def);
  // Null when unknown (here and in the fallback).
  const OpDef* LookUp(const std::string& op_name) const;
  // NOT_FOUND naming the op when unknown.
  Status LookUp(const std::string& op_name, const OpDef** op_def) const;
  // This registry's own ops, without the fallback's.
  std::vector<std::string> ListOpNames() const;

 private:
  const OpRegistry* const fallback_;
  mutable std::mutex mu_;
  std::map<std::string, std::unique_ptr<OpDef>> ops_;
};

class OpDefBuilder {
 public:
  explicit OpDefBuilder(std::string op_name);
  OpDefBuilder& Input(const std::string& spec);
  OpDefBuilder& Output(const std::string& spec);
  OpDefBuilder& Attr(const std::string& spec);
  OpDefBuilder& SetShapeFn(ShapeFn fn);
  OpDefBuilder& SetIsStateful();
  OpDefBuilder& Doc(const std::string& text);

  // Parses the specs; the first malformed spec is reported.
  Status Finalize(OpDef* op_def) const;

 private:
  OpDef op_def_;
  std::vector<std::string> input_specs_, output_specs_, attr_specs_;
};

// Registers at static-initialization time; a malformed registration is a
// programmer error and aborts the process with a message at load.
struct OpDefBuilderReceiver {
  OpDefBuilderReceiver(const OpDefBuilder& builder);  // NOLINT: implicit by design
};

#define TW_REGISTER_OP_UNIQ(ctr, name)                              \
  static ::tensorweave::OpDefBuilderReceiver tw_register_op_##ctr = \
      ::tensorweave::OpDefBuilder(name)
#define TW_REGISTER_OP_UNIQ_HELPER(ctr, name) TW_REGISTER_OP_UNIQ(ctr, name)
#define REGISTER_OP(name) TW_REGISTER_OP_UNIQ_HELPER(__COUNTER__, name)

}  // namespace tensorweave

#endif  // TENSORWEAVE_FRAMEWORK_OP_DEF_H_
