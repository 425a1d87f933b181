// Cached oneDNN matmul primitives (see onednn_matmul.h).
//
// The cache is per thread: a primitive together with its memory objects,
// whose data handles are rebound on each call, may then be used without
// locks (a memory object is not safe to rebind from two threads at once),
// and whichever scratchpad policy oneDNN was built with (one per primitive,
// or one global per thread) no two threads share a scratchpad.
// Each thread keeps at most kMaxEntries shapes; a graph whose products keep
// changing shape clears and refills it rather than growing without bound.
#include "runtime/kernels/onednn_matmul.h"

#include <oneapi/dnnl/dnnl.h>

#include <array>
#include <map>
#include <memory>

#include "runtime/kernels/gemm.h"

namespace tensorweave {
namespace {

constexpr size_t kMaxEntries = 64;

dnnl_engine_t CpuEngine() {
  static const dnnl_engine_t engine = [] {
    dnnl_engine_t created = nullptr;
    if (dnnl_engine_create(&created, dnnl_cpu, 0) != dnnl_success) return dnnl_engine_t{nullptr};
    return created;
  }();
  return engine;
}

// rows, k, cols, transpose_a, transpose_b, lda, ldb, ldc.
using Key = std::array<int64_t, 8>;

// One primitive and the memory objects its calls rebind.
class CachedMatmul {
 public:
  CachedMatmul() = default;
  CachedMatmul(const CachedMatmul&) = delete;
  CachedMatmul& operator=(const CachedMatmul&) = delete;
  ~CachedMatmul() {
    if (a_ != nullptr) dnnl_memory_destroy(a_);
    if (b_ != nullptr) dnnl_memory_destroy(b_);
    if (c_ != nullptr) dnnl_memory_destroy(c_);
    if (primitive_ != nullptr) dnnl_primitive_destroy(primitive_);
  }

  // False when oneDNN cannot make the primitive.
  bool Init(dnnl_engine_t engine, const Key& key) {
    const int64_t rows = key[0], k = key[1], cols = key[2];
    const bool transpose_a = key[3] != 0, transpose_b = key[4] != 0;
    const int64_t lda = key[5], ldb = key[6], ldc = key[7];
    // A transposed operand is the stored matrix read with swapped strides.
    const dnnl_dims_t a_dims = {rows, k}, b_dims = {k, cols}, c_dims = {rows, cols};
    const dnnl_dims_t a_strides = {transpose_a ? 1 : lda, transpose_a ? lda : 1};
    const dnnl_dims_t b_strides = {transpose_b ? 1 : ldb, transpose_b ? ldb : 1};
    const dnnl_dims_t c_strides = {ldc, 1};
    dnnl_memory_desc_t a_desc, b_desc, c_desc;
    if (dnnl_memory_desc_init_by_strides(&a_desc, 2, a_dims, dnnl_f32, a_strides) != dnnl_success ||
        dnnl_memory_desc_init_by_strides(&b_desc, 2, b_dims, dnnl_f32, b_strides) != dnnl_success ||
        dnnl_memory_desc_init_by_strides(&c_desc, 2, c_dims, dnnl_f32, c_strides) != dnnl_success) {
      return false;
    }
    dnnl_matmul_desc_t desc;
    if (dnnl_matmul_desc_init(&desc, &a_desc, &b_desc, nullptr, &c_desc) != dnnl_success) {
      return false;
    }
    dnnl_primitive_desc_t pd = nullptr;
    if (dnnl_primitive_desc_create(&pd, &desc, nullptr, engine, nullptr) != dnnl_success) {
      return false;
    }
    const bool made = dnnl_primitive_create(&primitive_, pd) == dnnl_success;
    dnnl_primitive_desc_destroy(pd);
    return made && dnnl_memory_create(&a_, &a_desc, engine, DNNL_MEMORY_NONE) == dnnl_success &&
           dnnl_memory_create(&b_, &b_desc, engine, DNNL_MEMORY_NONE) == dnnl_success &&
           dnnl_memory_create(&c_, &c_desc, engine, DNNL_MEMORY_NONE) == dnnl_success;
  }

  bool Run(dnnl_stream_t stream, const float* a, const float* b, float* c) {
    // oneDNN takes non-const handles but only reads the inputs.
    if (dnnl_memory_set_data_handle_v2(a_, const_cast<float*>(a), stream) != dnnl_success ||
        dnnl_memory_set_data_handle_v2(b_, const_cast<float*>(b), stream) != dnnl_success ||
        dnnl_memory_set_data_handle_v2(c_, c, stream) != dnnl_success) {
      return false;
    }
    const dnnl_exec_arg_t args[] = {{DNNL_ARG_SRC, a_}, {DNNL_ARG_WEIGHTS, b_}, {DNNL_ARG_DST, c_}};
    return dnnl_primitive_execute(primitive_, stream, 3, args) == dnnl_success;
  }

 private:
  dnnl_primitive_t primitive_ = nullptr;
  dnnl_memory_t a_ = nullptr, b_ = nullptr, c_ = nullptr;
};

// The calling thread's stream and primitives.
struct ThreadCache {
  dnnl_stream_t stream = nullptr;
  std::map<Key, std::unique_ptr<CachedMatmul>> matmuls;
  ~ThreadCache() {
    matmuls.clear();
    if (stream != nullptr) dnnl_stream_destroy(stream);
  }
};

}  // namespace

bool OneDnnMatmulBlock(const float* a, const float* b, float* c, int64_t rows, int64_t k,
                       int64_t cols, bool transpose_a, bool transpose_b, int64_t lda, int64_t ldb,
                       int64_t ldc) {
  const dnnl_engine_t engine = CpuEngine();
  if (engine == nullptr) return false;
  thread_local ThreadCache cache;
  if (cache.stream == nullptr &&
      dnnl_stream_create(&cache.stream, engine, dnnl_stream_default_flags) != dnnl_success) {
    cache.stream = nullptr;
    return false;
  }
  const Key key = {rows, k, cols, transpose_a, transpose_b, lda, ldb, ldc};
  auto found = cache.matmuls.find(key);
  if (found == cache.matmuls.end()) {
    auto matmul = std::make_unique<CachedMatmul>();
    // A shape oneDNN refuses is remembered as null so that it is not
    // attempted again on every call.
    if (!matmul->Init(engine, key)) matmul.reset();
    if (cache.matmuls.size() >= kMaxEntries) cache.matmuls.clear();
    found = cache.matmuls.emplace(key, std::move(matmul)).first;
  }
  if (found->second == nullptr) return false;
  UseOneOpenMpThread();
  return found->second->Run(cache.stream, a, b, c);
}

}  // namespace tensorweave
