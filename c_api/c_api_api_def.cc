// TF_NewApiDefMap, TF_DeleteApiDefMap, TF_ApiDefMapPut, TF_ApiDefMapGet:
// translation to runtime/framework/api_def_map.h.
#include <memory>

#include "c_api/c_api_internal.h"
#include "runtime/framework/api_def_map.h"

struct TF_ApiDefMap {
  explicit TF_ApiDefMap(const tensorweave::proto::OpList& op_list) : map(op_list) {}
  tensorweave::ApiDefMap map;
};

using tensorweave::c_api::Guard;
using tensorweave::c_api::GuardVoid;
using tensorweave::c_api::Set;
namespace errors = tensorweave::errors;

TF_ApiDefMap* TF_NewApiDefMap(TF_Buffer* op_list_buffer, TF_Status* status) {
  return Guard(status, static_cast<TF_ApiDefMap*>(nullptr), [&]() -> TF_ApiDefMap* {
    tensorweave::proto::OpList op_list;
    if (op_list_buffer == nullptr ||
        (op_list_buffer->length > 0 && op_list_buffer->data == nullptr) ||
        !op_list.ParseFromArray(op_list_buffer->data, static_cast<int>(op_list_buffer->length))) {
      Set(status, errors::InvalidArgument("Unparseable OpList"));
      return nullptr;
    }
    auto map = std::make_unique<TF_ApiDefMap>(op_list);
    Set(status, tensorweave::Status::OK());
    return map.release();
  });
}

void TF_DeleteApiDefMap(TF_ApiDefMap* apimap) { delete apimap; }

void TF_ApiDefMapPut(TF_ApiDefMap* api_def_map, const char* text, size_t text_len,
                     TF_Status* status) {
  GuardVoid(status, [&] {
    if (api_def_map == nullptr || (text == nullptr && text_len > 0)) {
      Set(status, errors::InvalidArgument("TF_ApiDefMapPut: NULL map or text"));
      return;
    }
    Set(status, api_def_map->map.Put(std::string(text == nullptr ? "" : text, text_len)));
  });
}

TF_Buffer* TF_ApiDefMapGet(TF_ApiDefMap* api_def_map, const char* name, size_t name_len,
                           TF_Status* status) {
  return Guard(status, static_cast<TF_Buffer*>(nullptr), [&]() -> TF_Buffer* {
    if (api_def_map == nullptr || (name == nullptr && name_len > 0)) {
      Set(status, errors::InvalidArgument("TF_ApiDefMapGet: NULL map or name"));
      return nullptr;
    }
    tensorweave::ApiDef api_def;
    tensorweave::Status found =
        api_def_map->map.Get(std::string(name == nullptr ? "" : name, name_len), &api_def);
    Set(status, found);
    if (!found.ok()) return nullptr;
    const std::string bytes = api_def.SerializeAsString();
    return TF_NewBufferFromString(bytes.data(), bytes.size());
  });
}
