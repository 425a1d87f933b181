// Reading list attrs and attr names, and the lengths of list inputs and
// outputs: TensorFlow's TF_OperationGetAttr*List, TF_OperationGetNumAttrs /
// GetAttrName, TF_OperationGetAttrTensorShapeProto(List) and
// TF_Operation{Input,Output}ListLength. As TensorFlow's, the getters copy
// min(max_values, list size) elements.
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "c_api/c_api_internal.h"
#include "runtime/framework/node_def_util.h"

using tensorweave::AttrValue;
using tensorweave::Node;
using tensorweave::Status;
namespace errors = tensorweave::errors;
namespace c_api = tensorweave::c_api;

namespace {

// Which ListValue field a list(...) attr fills.
enum class ListField { kS, kI, kF, kB, kType, kShape, kTensor };

int FieldSize(const AttrValue::ListValue& list, ListField field) {
  switch (field) {
    case ListField::kS:
      return list.s_size();
    case ListField::kI:
      return list.i_size();
    case ListField::kF:
      return list.f_size();
    case ListField::kB:
      return list.b_size();
    case ListField::kType:
      return list.type_size();
    case ListField::kShape:
      return list.shape_size();
    case ListField::kTensor:
      return list.tensor_size();
  }
  return 0;
}

// The list attr `attr_name`, checked to be a list whose values (if any) are
// all of `field`'s kind (an empty list is every kind, as in TensorFlow).
Status FindList(TF_Operation* oper, const char* attr_name, ListField field, const char* kind,
                const AttrValue::ListValue** list) {
  const AttrValue* value = nullptr;
  TW_RETURN_IF_ERROR(c_api::FindAttr(oper, attr_name, &value));
  const AttrValue::ListValue& found = value->list();
  const int total = found.s_size() + found.i_size() + found.f_size() + found.b_size() +
                    found.type_size() + found.shape_size() + found.tensor_size() +
                    found.func_size();
  if (value->value_case() != AttrValue::kList || FieldSize(found, field) != total) {
    return errors::InvalidArgument("Attr '", attr_name, "' of operation '",
                                   c_api::ToNode(oper)->name(), "' holds ",
                                   tensorweave::SummarizeAttrValue(*value), ", not a ", kind);
  }
  *list = &found;
  return Status::OK();
}

int Count(const AttrValue::ListValue& list, ListField field, int max_values) {
  return std::max(0, std::min(max_values, FieldSize(list, field)));
}

// Runs `copy(list, n)` on the attr's list with n elements to copy, and
// reports into `status`.
template <typename Copy>
void GetList(TF_Operation* oper, const char* attr_name, ListField field, const char* kind,
             int max_values, TF_Status* status, Copy copy) {
  c_api::GuardVoid(status, [&] {
    const AttrValue::ListValue* list = nullptr;
    Status found = FindList(oper, attr_name, field, kind, &list);
    if (found.ok()) found = copy(*list, Count(*list, field, max_values));
    c_api::Set(status, std::move(found));
  });
}

// The attr names of `oper`, sorted so an index means the same attr every
// time (TensorFlow walks its attr map in hash order).
std::vector<std::string> SortedAttrNames(TF_Operation* oper) {
  std::vector<std::string> names;
  for (const auto& entry : c_api::ToNode(oper)->def().attr()) names.push_back(entry.first);
  std::sort(names.begin(), names.end());
  return names;
}

// The number of tensors the input or output arg `arg_name` stands for.
int ArgListLength(TF_Operation* oper, const char* arg_name, bool inputs, TF_Status* status) {
  return c_api::Guard(status, -1, [&]() -> int {
    const Node* node = c_api::ToNode(oper);
    const auto& args = inputs ? node->op_def().inputs : node->op_def().outputs;
    std::vector<int> sizes;
    Status result = tensorweave::ArgSizes(node->def(), args, &sizes);
    if (!result.ok()) {
      c_api::Set(status, std::move(result));
      return -1;
    }
    for (size_t i = 0; i < args.size(); ++i) {
      if (arg_name != nullptr && args[i].name == arg_name) {
        c_api::Set(status, Status::OK());
        return sizes[i];
      }
    }
    c_api::Set(status, errors::InvalidArgument(inputs ? "Input" : "Output", " arg '",
                                               arg_name ? arg_name : "", "' not found"));
    return -1;
  });
}

}  // namespace

extern "C" {

void TF_OperationGetAttrStringList(TF_Operation* oper, const char* attr_name, void** values,
                                   size_t* lengths, int max_values, void* storage,
                                   size_t storage_size, TF_Status* status) {
  GetList(oper, attr_name, ListField::kS, "list(string)", max_values, status,
          [&](const AttrValue::ListValue& list, int n) {
            char* next = static_cast<char*>(storage);
            size_t room = storage_size;
            for (int i = 0; i < n; ++i) {
              const std::string& s = list.s(i);
              if (s.size() > room) {
                return errors::InvalidArgument(
                    "Not enough storage to hold the requested list of strings");
              }
              values[i] = next;
              lengths[i] = s.size();
              if (!s.empty()) std::memcpy(next, s.data(), s.size());
              next += s.size();
              room -= s.size();
            }
            return Status::OK();
          });
}

void TF_OperationGetAttrIntList(TF_Operation* oper, const char* attr_name, int64_t* values,
                                int max_values, TF_Status* status) {
  GetList(oper, attr_name, ListField::kI, "list(int)", max_values, status,
          [&](const AttrValue::ListValue& list, int n) {
            for (int i = 0; i < n; ++i) values[i] = list.i(i);
            return Status::OK();
          });
}

void TF_OperationGetAttrFloatList(TF_Operation* oper, const char* attr_name, float* values,
                                  int max_values, TF_Status* status) {
  GetList(oper, attr_name, ListField::kF, "list(float)", max_values, status,
          [&](const AttrValue::ListValue& list, int n) {
            for (int i = 0; i < n; ++i) values[i] = list.f(i);
            return Status::OK();
          });
}

void TF_OperationGetAttrBoolList(TF_Operation* oper, const char* attr_name, unsigned char* values,
                                 int max_values, TF_Status* status) {
  GetList(oper, attr_name, ListField::kB, "list(bool)", max_values, status,
          [&](const AttrValue::ListValue& list, int n) {
            for (int i = 0; i < n; ++i) values[i] = list.b(i) ? 1 : 0;
            return Status::OK();
          });
}

void TF_OperationGetAttrTypeList(TF_Operation* oper, const char* attr_name, TF_DataType* values,
                                 int max_values, TF_Status* status) {
  GetList(oper, attr_name, ListField::kType, "list(type)", max_values, status,
          [&](const AttrValue::ListValue& list, int n) {
            for (int i = 0; i < n; ++i) values[i] = static_cast<TF_DataType>(list.type(i));
            return Status::OK();
          });
}

void TF_OperationGetAttrShapeList(TF_Operation* oper, const char* attr_name, int64_t** dims,
                                  int* num_dims, int num_shapes, int64_t* storage, int storage_size,
                                  TF_Status* status) {
  GetList(oper, attr_name, ListField::kShape, "list(shape)", num_shapes, status,
          [&](const AttrValue::ListValue& list, int n) {
            int64_t* next = storage;
            int64_t room = std::max(storage_size, 0);
            for (int i = 0; i < n; ++i) {
              const auto& shape = list.shape(i);
              if (shape.unknown_rank()) {
                num_dims[i] = -1;
                dims[i] = nullptr;
                continue;
              }
              if (shape.dim_size() > room) {
                return errors::InvalidArgument(
                    "Not enough storage to hold the requested list of shapes");
              }
              num_dims[i] = shape.dim_size();
              dims[i] = next;
              for (const auto& dim : shape.dim()) *next++ = dim.size();
              room -= shape.dim_size();
            }
            return Status::OK();
          });
}

void TF_OperationGetAttrTensorList(TF_Operation* oper, const char* attr_name, TF_Tensor** values,
                                   int max_values, TF_Status* status) {
  GetList(oper, attr_name, ListField::kTensor, "list(tensor)", max_values, status,
          [&](const AttrValue::ListValue& list, int n) {
            // All or nothing: on a failure no tensor is left to the caller.
            std::vector<TF_Tensor*> made;
            Status result;
            for (int i = 0; i < n && result.ok(); ++i) {
              tensorweave::Tensor tensor;
              TF_Tensor* converted = nullptr;
              result = tensorweave::Tensor::FromProto(list.tensor(i), &tensor);
              if (result.ok()) result = c_api::TensorToC(std::move(tensor), &converted);
              if (result.ok()) made.push_back(converted);
            }
            if (!result.ok()) {
              for (TF_Tensor* t : made) TF_DeleteTensor(t);
              return result;
            }
            std::copy(made.begin(), made.end(), values);
            return Status::OK();
          });
}

void TF_OperationGetAttrTensorShapeProto(TF_Operation* oper, const char* attr_name,
                                         TF_Buffer* value, TF_Status* status) {
  c_api::GuardVoid(status, [&] {
    const AttrValue* attr = nullptr;
    Status found = c_api::FindAttrOfKind(oper, attr_name, AttrValue::kShape, "shape", &attr);
    if (found.ok()) found = c_api::StringToBuffer(attr->shape().SerializeAsString(), value);
    c_api::Set(status, std::move(found));
  });
}

void TF_OperationGetAttrTensorShapeProtoList(TF_Operation* oper, const char* attr_name,
                                             TF_Buffer** values, int max_values,
                                             TF_Status* status) {
  GetList(oper, attr_name, ListField::kShape, "list(shape)", max_values, status,
          [&](const AttrValue::ListValue& list, int n) {
            std::vector<TF_Buffer*> made;
            for (int i = 0; i < n; ++i) {
              const std::string bytes = list.shape(i).SerializeAsString();
              TF_Buffer* buffer = TF_NewBufferFromString(bytes.data(), bytes.size());
              if (buffer == nullptr) {
                for (TF_Buffer* b : made) TF_DeleteBuffer(b);
                return errors::ResourceExhausted("Out of memory for a shape list");
              }
              made.push_back(buffer);
            }
            std::copy(made.begin(), made.end(), values);
            return Status::OK();
          });
}

int TF_OperationGetNumAttrs(TF_Operation* oper) { return c_api::ToNode(oper)->def().attr_size(); }

int TF_OperationGetAttrNameLength(TF_Operation* oper, int i) {
  return c_api::Guard(nullptr, -1, [&] {
    const std::vector<std::string> names = SortedAttrNames(oper);
    return i >= 0 && i < static_cast<int>(names.size()) ? static_cast<int>(names[i].size()) : -1;
  });
}

void TF_OperationGetAttrName(TF_Operation* oper, int i, char* output, TF_Status* status) {
  c_api::GuardVoid(status, [&] {
    const std::vector<std::string> names = SortedAttrNames(oper);
    if (i < 0 || i >= static_cast<int>(names.size())) {
      return c_api::Set(status, errors::OutOfRange("Operation only has ", names.size(),
                                                   " attributes, can't get the ", i, "th"));
    }
    // As TensorFlow: the name's bytes, no terminating NUL (the length comes
    // from TF_OperationGetAttrNameLength).
    std::memcpy(output, names[i].data(), names[i].size());
    c_api::Set(status, Status::OK());
  });
}

int TF_OperationInputListLength(TF_Operation* oper, const char* arg_name, TF_Status* status) {
  return ArgListLength(oper, arg_name, /*inputs=*/true, status);
}

int TF_OperationOutputListLength(TF_Operation* oper, const char* arg_name, TF_Status* status) {
  return ArgListLength(oper, arg_name, /*inputs=*/false, status);
}

}  // extern "C"
