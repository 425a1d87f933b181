// StringFormat: the template with each placeholder replaced by the next
// input, summarized as TensorFlow's print_v2 form (tf.strings.format,
// tf.print).
#include <string>
#include <vector>

#include "runtime/framework/op_kernel.h"
#include "runtime/framework/tensor_summary.h"

namespace tensorweave {
namespace {

class StringFormatOp : public OpKernel {
 public:
  explicit StringFormatOp(OpKernelConstruction* c) : OpKernel(c) {
    std::string format_template, placeholder;
    OP_REQUIRES_OK(c, c->GetAttr("template", &format_template));
    OP_REQUIRES_OK(c, c->GetAttr("placeholder", &placeholder));
    OP_REQUIRES_OK(c, c->GetAttr("summarize", &summarize_));
    pieces_ = SplitFormatTemplate(format_template, placeholder);
    const int64_t placeholders = static_cast<int64_t>(pieces_.size()) - 1;
    OP_REQUIRES(c, placeholders == c->num_inputs(),
                errors::InvalidArgument("num placeholders in template and num inputs must match: ",
                                        placeholders, " vs. ", c->num_inputs()));
  }

  void Compute(OpKernelContext* c) override {
    std::string text = pieces_[0];
    for (int i = 0; i < c->num_inputs(); ++i) {
      text += SummarizeTensor(c->input(i), summarize_, SummaryStyle::kNumpy);
      text += pieces_[i + 1];
    }
    Tensor* output = nullptr;
    OP_REQUIRES_OK(c, c->allocate_output(0, TensorShape(), &output));
    output->data<std::string>()[0] = std::move(text);
  }

 private:
  int64_t summarize_ = 3;
  std::vector<std::string> pieces_;
};

REGISTER_KERNEL_BUILDER(Name("StringFormat").Device(DEVICE_CPU), StringFormatOp);

}  // namespace
}  // namespace tensorweave
