// Every op's OpDef and its CPU kernels agree: for each dtype (or each
// combination of dtypes, for ops with several type attrs) the OpDef admits,
// a CPU kernel is registered and, where the node can be built from the
// dtypes and attr defaults alone, its constructor accepts those dtypes.
// An OpDef that admits a dtype nothing can run turns a clear graph-building
// error into a late "no kernel" one, so the fix is either a kernel or a
// narrower allowed list (docs/adding_an_op.md).
//
// A `type` attr without an allowed list admits every dtype; it is checked
// against the dtypes tensors can hold here (DataTypeIsSupported).
#include <map>
#include <set>
#include <string>
#include <vector>

#include "tests/runtime/kernel_test_util.h"

namespace tensorweave {
namespace test {
namespace {

// Ops with no CPU kernel for some admitted dtypes, each with the reason.
// Only ops that are not part of the graph language users write belong
// here.
const std::map<std::string, std::string>& Exceptions() {
  static const auto* exceptions = new std::map<std::string, std::string>{
      // Ops registered by other test files to exercise graph construction
      // and sessions; some have no kernel at all by design.
      {"GraphTestConst", "graph-construction test op, never run"},
      {"GraphTestAdd", "graph-construction test op, never run"},
      {"GraphTestVar", "graph-construction test op, never run"},
      {"GraphTestAssign", "graph-construction test op, never run"},
      {"GraphTestAddN", "graph-construction test op, never run"},
      {"GraphTestSplit", "graph-construction test op, never run"},
      {"GraphTestIdentity", "graph-construction test op, never run"},
      {"GraphTestNoOp", "graph-construction test op, never run"},
      {"FrameworkTestConcat", "NodeDef validation test op, never run"},
      // This file's own op, whose kernel refuses int8 (see the last test).
      {"CoverageTestRefusesInt8", "self-test of the constructor check"},
      {"CoverageTestTwoKernels", "self-test of the kernel lookup: int32 has none on purpose"},
  };
  return *exceptions;
}

// An op admitting float and int8 whose one kernel (registered for any T)
// refuses int8 when it is built, as Cast refused strings.
REGISTER_OP("CoverageTestRefusesInt8").Input("x: T").Output("y: T").Attr("T: {float, int8}");
class RefusesInt8Kernel : public OpKernel {
 public:
  explicit RefusesInt8Kernel(OpKernelConstruction* c) : OpKernel(c) {
    OP_REQUIRES(c, c->input_type(0) != DT_INT8, errors::Unimplemented("int8 is not supported"));
  }
  void Compute(OpKernelContext* ctx) override { ctx->set_output(0, ctx->input(0)); }
};
REGISTER_KERNEL_BUILDER(Name("CoverageTestRefusesInt8").Device(DEVICE_CPU), RefusesInt8Kernel);

// An op with kernels for two of its dtypes only, for the lookup tests below.
REGISTER_OP("CoverageTestTwoKernels").Input("x: T").Output("y: T").Attr("T: {float, int8, int32}");
REGISTER_KERNEL_BUILDER(
    Name("CoverageTestTwoKernels").Device(DEVICE_CPU).TypeConstraint<float>("T"),
    RefusesInt8Kernel);
REGISTER_KERNEL_BUILDER(
    Name("CoverageTestTwoKernels").Device(DEVICE_CPU).TypeConstraint<int8_t>("T"),
    RefusesInt8Kernel);

// The dtypes a type attr admits.
std::vector<DataType> AdmittedTypes(const AttrDef& attr) {
  if (!attr.allowed_types.empty()) return attr.allowed_types;
  std::vector<DataType> held;
  for (int value = DT_INVALID + 1; value < 100; ++value) {
    const DataType dtype = static_cast<DataType>(value);
    if (DataType_IsValid(value) && DataTypeIsSupported(dtype)) held.push_back(dtype);
  }
  return held;
}

bool IsTypeAttr(const AttrDef& attr) { return attr.type == "type" || attr.type == "list(type)"; }

// Calls `visit` with a NodeDef for every combination of admitted dtypes of
// the op's type attrs (a list(type) attr holds one dtype at a time).
template <typename Visit>
void ForEachTypeCombination(const OpDef& op, Visit visit) {
  std::vector<const AttrDef*> type_attrs;
  for (const AttrDef& attr : op.attrs) {
    if (IsTypeAttr(attr)) type_attrs.push_back(&attr);
  }
  NodeDef node;
  node.set_op(op.name);
  node.set_name("coverage");
  std::function<void(size_t)> assign = [&](size_t next) {
    if (next == type_attrs.size()) {
      visit(node);
      return;
    }
    const AttrDef& attr = *type_attrs[next];
    for (DataType dtype : AdmittedTypes(attr)) {
      AttrValue& value = (*node.mutable_attr())[attr.name];
      value.Clear();
      if (attr.type == "type") {
        value.set_type(dtype);
      } else {
        value.mutable_list()->add_type(dtype);
      }
      assign(next + 1);
    }
  };
  assign(0);
}

std::string TypeAttrsString(const OpDef& op, const NodeDef& node) {
  std::string text;
  for (const AttrDef& attr : op.attrs) {
    if (!IsTypeAttr(attr)) continue;
    const AttrValue& value = node.attr().at(attr.name);
    const DataType dtype = attr.type == "type" ? value.type() : value.list().type(0);
    text += (text.empty() ? "" : ", ") + attr.name + "=" + DataTypeString(dtype);
  }
  return text;
}

// Whether every attr of `op` is set on `node` (so a kernel can be built).
bool HasEveryAttr(const OpDef& op, const NodeDef& node) {
  for (const AttrDef& attr : op.attrs) {
    if (node.attr().count(attr.name) == 0) return false;
  }
  return true;
}

// The admitted dtype combinations of `op` that have no working CPU kernel.
std::vector<std::string> MissingKernels(const OpDef& op, Device* device) {
  std::vector<std::string> missing;
  ForEachTypeCombination(op, [&](const NodeDef& typed) {
    NodeDef node = typed;
    AddDefaultsToNodeDef(op, &node);
    if (!KernelExists(DEVICE_CPU, node)) {
      missing.push_back(TypeAttrsString(op, typed) + " (no kernel registered)");
      return;
    }
    // A kernel registered for any dtype may still refuse some in its
    // constructor; other construction errors (a value attr without a
    // default, like Const's) say nothing about dtypes.
    if (!HasEveryAttr(op, node)) return;
    std::unique_ptr<OpKernel> kernel;
    const Status status = CreateOpKernel(DEVICE_CPU, device, node, &kernel);
    if (status.code() == Code::UNIMPLEMENTED || status.code() == Code::NOT_FOUND) {
      missing.push_back(TypeAttrsString(op, typed) + " (" + status.message() + ")");
    }
  });
  return missing;
}

TEST(OpKernelCoverage, EveryAdmittedDtypeHasACpuKernel) {
  const std::unique_ptr<Device> device = NewTestDevice();
  const std::vector<std::string> names = OpRegistry::Global()->ListOpNames();
  ASSERT_GT(names.size(), 100u) << "the op registry looks empty";
  int checked = 0;
  for (const std::string& name : names) {
    if (Exceptions().count(name) != 0) continue;
    const OpDef* op = OpRegistry::Global()->LookUp(name);
    ASSERT_NE(op, nullptr) << name;
    const std::vector<std::string> missing = MissingKernels(*op, device.get());
    ++checked;
    if (missing.empty()) continue;
    std::string list;
    for (const std::string& entry : missing) list += "\n    " + entry;
    ADD_FAILURE() << "op " << name << " admits dtypes it has no CPU kernel for; add the kernels "
                  << "or narrow its allowed types:" << list;
  }
  EXPECT_GT(checked, 100);
}

// An exception for an op that no longer exists, or that now has every
// kernel, is stale and must go.
TEST(OpKernelCoverage, ExceptionsAreRegisteredAndStillNeeded) {
  const std::unique_ptr<Device> device = NewTestDevice();
  for (const auto& [name, reason] : Exceptions()) {
    EXPECT_FALSE(reason.empty()) << name;
    const OpDef* op = OpRegistry::Global()->LookUp(name);
    if (op == nullptr) {
      ADD_FAILURE() << "exception for unregistered op " << name;
      continue;
    }
    EXPECT_FALSE(MissingKernels(*op, device.get()).empty())
        << name << " has every kernel now; drop its exception";
  }
}

// The check itself can fail: an OpDef admitting a dtype with no kernel is
// reported.
TEST(OpKernelCoverage, ReportsAnAdmittedDtypeWithoutAKernel) {
  OpDef op;
  TW_ASSERT_OK(OpDefBuilder("CoverageTestUnkernelled")
                   .Input("x: T")
                   .Output("y: T")
                   .Attr("T: {float, int8}")
                   .Finalize(&op));
  const std::unique_ptr<Device> device = NewTestDevice();
  const std::vector<std::string> missing = MissingKernels(op, device.get());
  ASSERT_EQ(missing.size(), 2u);
  EXPECT_EQ(missing[0], "T=float (no kernel registered)");
  EXPECT_EQ(missing[1], "T=int8 (no kernel registered)");
}

// A kernel that exists but refuses an admitted dtype when built is reported
// too (with its message), and the dtype it accepts is not.
TEST(OpKernelCoverage, ReportsAKernelThatRefusesAnAdmittedDtype) {
  const std::unique_ptr<Device> device = NewTestDevice();
  const std::vector<std::string> missing =
      MissingKernels(*OpRegistry::Global()->LookUp("CoverageTestRefusesInt8"), device.get());
  ASSERT_EQ(missing.size(), 1u);
  EXPECT_EQ(missing[0].rfind("T=int8 (int8 is not supported", 0), 0u) << missing[0];
}

// The kernel lookup picks the registration whose constraints the node
// meets, and when none does the error lists every registration.
TEST(OpKernelCoverage, KernelLookupMatchesConstraintsAndListsCandidatesWhenNoneMatches) {
  const std::unique_ptr<Device> device = NewTestDevice();
  NodeDef node;
  node.set_name("lookup");
  node.set_op("CoverageTestTwoKernels");
  SetAttrValue(DT_FLOAT, &(*node.mutable_attr())["T"]);
  EXPECT_TRUE(KernelExists(DEVICE_CPU, node));
  std::unique_ptr<OpKernel> kernel;
  TW_EXPECT_OK(CreateOpKernel(DEVICE_CPU, device.get(), node, &kernel));
  EXPECT_FALSE(KernelExists("GPU", node));
  SetAttrValue(DT_INT32, &(*node.mutable_attr())["T"]);
  EXPECT_FALSE(KernelExists(DEVICE_CPU, node));
  const Status missing = CreateOpKernel(DEVICE_CPU, device.get(), node, &kernel);
  EXPECT_EQ(missing.code(), Code::NOT_FOUND);
  EXPECT_NE(missing.message().find("registered kernels: CPU [T=float]; CPU [T=int8]"),
            std::string::npos)
      << missing;
  EXPECT_NE(missing.message().find("node 'lookup'"), std::string::npos) << missing;
}

}  // namespace
}  // namespace test
}  // namespace tensorweave
