// ApiDefMap: the client-language view of every op of an OpList (TensorFlow's
// ApiDefMap, behind TF_NewApiDefMap / TF_ApiDefMapPut / TF_ApiDefMapGet).
//
//   ApiDefMap map(OpListFromRegistry(*OpRegistry::Global()));
//   TW_RETURN_IF_ERROR(map.Put("op { graph_op_name: \"AddV2\" "
//                              "endpoint { name: \"Add\" } }"));
//   const ApiDef* api_def = nullptr;
//   TW_RETURN_IF_ERROR(map.Get("AddV2", &api_def));   // endpoint "Add"
//
// Each op starts as its OpDef says (visible, one endpoint with the op's
// name, every input, output and attr under its own name, with its
// description and default). Put merges ApiDefs text over that, field by
// field as TensorFlow does; ops the OpList lacks are skipped. The first Get
// renames backticked names in the docs to their new names, after which Put
// is FAILED_PRECONDITION (the docs are final). Thread-safe.
#ifndef TENSORWEAVE_FRAMEWORK_API_DEF_MAP_H_
#define TENSORWEAVE_FRAMEWORK_API_DEF_MAP_H_

#include <map>
#include <mutex>
#include <string>

#include "runtime/framework/status.h"
#include "tensorweave/proto/api_def.pb.h"
#include "tensorweave/proto/op_def.pb.h"

namespace tensorweave {

class ApiDefMap {
 public:
  explicit ApiDefMap(const proto::OpList& op_list);

  // Merges the ApiDefs in `text` (text format; "<<END ... END" multi-line
  // strings allowed, as in TensorFlow's api_def files). INVALID_ARGUMENT for
  // text that does not parse (TensorFlow ignores it silently), and
  // FAILED_PRECONDITION, as TensorFlow, for an override naming an argument
  // or attr the op lacks or an arg_order that is not a permutation.
  Status Put(const std::string& text);

  // The ApiDef of op `name`; NOT_FOUND when the OpList had no such op.
  Status Get(const std::string& name, ApiDef* api_def);

 private:
  // Renames backticked names in every op's docs (TensorFlow's UpdateDocs).
  void FinalizeDocs();

  std::mutex mu_;
  std::map<std::string, ApiDef> api_defs_;
  bool docs_final_ = false;
};

// TensorFlow's multi-line string syntax of api_def files, turned into plain
// text format: a value written `<<END` followed by lines up to a line
// holding only `END` becomes one quoted string of those lines.
std::string TextFromMultiline(const std::string& text);

}  // namespace tensorweave

#endif  // TENSORWEAVE_FRAMEWORK_API_DEF_MAP_H_
