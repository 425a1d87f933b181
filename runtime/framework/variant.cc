#include "runtime/framework/variant.h"

namespace tensorweave {

std::string Variant::TypeName() const { return value_ ? value_->TypeName() : "<empty>"; }

std::string Variant::DebugString() const {
  return value_ ? value_->DebugString() : "Variant<empty>";
}

}  // namespace tensorweave
