// Variant: the element of a DT_VARIANT tensor, a type-erased, shared,
// immutable-by-convention value (TensorFlow's tensorflow::Variant plays this
// role; a TensorList is the value the list ops keep in it).
//
//   auto list = std::make_shared<TensorList>(DT_FLOAT, element_shape);
//   Tensor handle(DT_VARIANT, TensorShape({}));
//   handle.data<Variant>()[0] = Variant(list);
//   const TensorList* read = handle.data<Variant>()[0].get<TensorList>();
//
// Copying a Variant shares its value. A kernel that wants to change a value
// in place may do so only when it holds the only copy (use_count() == 1 and
// the tensor holding it is not shared, Tensor::RefCountIsOne); otherwise it
// copies the value first (copy on write), so no other tensor sees a change.
#ifndef TENSORWEAVE_FRAMEWORK_VARIANT_H_
#define TENSORWEAVE_FRAMEWORK_VARIANT_H_

#include <memory>
#include <string>

namespace tensorweave {

// What a Variant may hold: a name for messages and a printable summary.
class VariantValue {
 public:
  virtual ~VariantValue() = default;
  // TensorFlow's type name for the value, e.g. "tensorflow::TensorList".
  virtual std::string TypeName() const = 0;
  virtual std::string DebugString() const = 0;
};

class Variant {
 public:
  // Empty: what a freshly allocated DT_VARIANT tensor holds.
  Variant() = default;
  explicit Variant(std::shared_ptr<VariantValue> value) : value_(std::move(value)) {}

  bool is_empty() const { return value_ == nullptr; }
  // The value as a T, or null when empty or holding another type.
  template <typename T>
  T* get() const {
    return dynamic_cast<T*>(value_.get());
  }
  // How many Variants share the value (0 when empty).
  long use_count() const { return value_.use_count(); }
  const std::shared_ptr<VariantValue>& value() const { return value_; }

  // "<empty>" or the value's TypeName.
  std::string TypeName() const;
  std::string DebugString() const;

 private:
  std::shared_ptr<VariantValue> value_;
};

}  // namespace tensorweave

#endif  // TENSORWEAVE_FRAMEWORK_VARIANT_H_
