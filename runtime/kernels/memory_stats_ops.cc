// Kernels of BytesInUse, BytesLimit and MaxBytesInUse. TensorFlow registers
// the first and last on GPU only, because its CPU allocator (malloc) cannot
// tell what it holds; tensorweave's CpuAllocator counts every tensor buffer
// it hands out, so all three run on CPU.
#include "runtime/framework/cpu_allocator.h"
#include "runtime/kernels/kernel_util.h"

namespace tensorweave {
namespace {

class MemoryStatsOp : public CheapKernel {
 public:
  using Field = int64_t (*)(const AllocatorStats& stats);
  MemoryStatsOp(OpKernelConstruction* context, Field field) : CheapKernel(context), field_(field) {}

  void Compute(OpKernelContext* context) override {
    // Read before allocating the output, so that the figure does not count it.
    const int64_t value = field_(CpuAllocator::Get()->GetStats());
    Tensor* out = nullptr;
    OP_REQUIRES_OK(context, context->allocate_output(0, TensorShape({}), &out));
    out->data<int64_t>()[0] = value;
  }

 private:
  Field field_;
};

class BytesInUseOp : public MemoryStatsOp {
 public:
  explicit BytesInUseOp(OpKernelConstruction* context)
      : MemoryStatsOp(context, [](const AllocatorStats& stats) { return stats.bytes_in_use; }) {}
};

class BytesLimitOp : public MemoryStatsOp {
 public:
  explicit BytesLimitOp(OpKernelConstruction* context)
      : MemoryStatsOp(context,
                      [](const AllocatorStats& stats) { return stats.bytes_limit.value_or(0); }) {}
};

class MaxBytesInUseOp : public MemoryStatsOp {
 public:
  explicit MaxBytesInUseOp(OpKernelConstruction* context)
      : MemoryStatsOp(context,
                      [](const AllocatorStats& stats) { return stats.peak_bytes_in_use; }) {}
};

REGISTER_KERNEL_BUILDER(Name("BytesInUse").Device(DEVICE_CPU), BytesInUseOp);
REGISTER_KERNEL_BUILDER(Name("BytesLimit").Device(DEVICE_CPU), BytesLimitOp);
REGISTER_KERNEL_BUILDER(Name("MaxBytesInUse").Device(DEVICE_CPU), MaxBytesInUseOp);

}  // namespace
}  // namespace tensorweave
