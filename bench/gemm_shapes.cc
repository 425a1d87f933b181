// What one float matrix product costs at the shapes an LSTM step multiplies
// (bench/dynamic_rnn.py: batch 32, 128 units, so [x, h] is 32 x 256 and the
// kernel 256 x 512), by each way gemm.cc could compute it:
//   - GemmOnPool / GemmOnThisThread: what MatMul does now,
//   - dnnl_sgemm on the calling thread, and split in two across the pool,
//   - a oneDNN matmul primitive created once per shape and reused.
//
//   make build/bench/gemm_shapes && build/bench/gemm_shapes [--reps N]
//
// Prints the best (fastest) of N calls in microseconds per product and the
// GFLOP/s of each, with the machine's load average (the machine is shared:
// the best of N is the figure least disturbed by other processes).
#include <dlfcn.h>
#include <oneapi/dnnl/dnnl.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <unsupported/Eigen/CXX11/Tensor>
#include <vector>

#include "runtime/common_runtime/thread_pools.h"
#include "runtime/kernels/gemm.h"

namespace {

using tensorweave::GemmArgs;

struct Shape {
  const char* what;
  int64_t m, k, n;
  bool transpose_a, transpose_b;
};

// Fastest of `reps` calls of `run` in microseconds, after a few warm-up calls.
double BestMicros(int reps, const std::function<void()>& run) {
  for (int i = 0; i < 5; ++i) run();
  std::vector<double> times;
  for (int i = 0; i < reps; ++i) {
    const auto start = std::chrono::steady_clock::now();
    run();
    times.push_back(
        std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start)
            .count());
  }
  std::sort(times.begin(), times.end());
  return times.front();
}

// A oneDNN matmul primitive for one shape (row-major, transposes as
// strides), executed on the calling thread.
class MatmulPrimitive {
 public:
  MatmulPrimitive(dnnl_engine_t engine, const Shape& s) {
    const dnnl_dims_t a_dims = {s.m, s.k}, b_dims = {s.k, s.n}, c_dims = {s.m, s.n};
    const dnnl_dims_t a_strides = {s.transpose_a ? 1 : s.k, s.transpose_a ? s.m : 1};
    const dnnl_dims_t b_strides = {s.transpose_b ? 1 : s.n, s.transpose_b ? s.k : 1};
    const dnnl_dims_t c_strides = {s.n, 1};
    dnnl_memory_desc_init_by_strides(&a_, 2, a_dims, dnnl_f32, a_strides);
    dnnl_memory_desc_init_by_strides(&b_, 2, b_dims, dnnl_f32, b_strides);
    dnnl_memory_desc_init_by_strides(&c_, 2, c_dims, dnnl_f32, c_strides);
    dnnl_matmul_desc_t desc;
    dnnl_matmul_desc_init(&desc, &a_, &b_, nullptr, &c_);
    dnnl_primitive_desc_t pd = nullptr;
    if (dnnl_primitive_desc_create(&pd, &desc, nullptr, engine, nullptr) != dnnl_success) {
      std::fprintf(stderr, "no matmul primitive for %s\n", s.what);
      std::exit(1);
    }
    const char* impl = nullptr;
    dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &impl);
    impl_ = impl != nullptr ? impl : "?";
    dnnl_primitive_create(&primitive_, pd);
    dnnl_primitive_desc_destroy(pd);
    dnnl_memory_create(&a_mem_, &a_, engine, DNNL_MEMORY_NONE);
    dnnl_memory_create(&b_mem_, &b_, engine, DNNL_MEMORY_NONE);
    dnnl_memory_create(&c_mem_, &c_, engine, DNNL_MEMORY_NONE);
  }
  ~MatmulPrimitive() {
    dnnl_memory_destroy(a_mem_);
    dnnl_memory_destroy(b_mem_);
    dnnl_memory_destroy(c_mem_);
    dnnl_primitive_destroy(primitive_);
  }
  void Run(dnnl_stream_t stream, const float* a, const float* b, float* c) {
    dnnl_memory_set_data_handle_v2(a_mem_, const_cast<float*>(a), stream);
    dnnl_memory_set_data_handle_v2(b_mem_, const_cast<float*>(b), stream);
    dnnl_memory_set_data_handle_v2(c_mem_, c, stream);
    const dnnl_exec_arg_t args[] = {
        {DNNL_ARG_SRC, a_mem_}, {DNNL_ARG_WEIGHTS, b_mem_}, {DNNL_ARG_DST, c_mem_}};
    dnnl_primitive_execute(primitive_, stream, 3, args);
  }
  const std::string& impl() const { return impl_; }

 private:
  dnnl_memory_desc_t a_, b_, c_;
  dnnl_primitive_t primitive_ = nullptr;
  dnnl_memory_t a_mem_ = nullptr, b_mem_ = nullptr, c_mem_ = nullptr;
  std::string impl_;
};

}  // namespace

int main(int argc, char** argv) {
  int reps = 200;
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::strcmp(argv[i], "--reps") == 0) reps = std::atoi(argv[i + 1]);
  }
  const Eigen::ThreadPoolDevice* pool = nullptr;
  if (!tensorweave::IntraOpDevice(0, &pool).ok()) return 1;
  using SetNumThreads = void (*)(int);
  if (auto set = reinterpret_cast<SetNumThreads>(dlsym(RTLD_DEFAULT, "omp_set_num_threads"))) {
    set(1);
  }
  dnnl_engine_t engine = nullptr;
  dnnl_engine_create(&engine, dnnl_cpu, 0);
  dnnl_stream_t stream = nullptr;
  dnnl_stream_create(&stream, engine, dnnl_stream_default_flags);

  const Shape shapes[] = {
      {"lstm forward [x,h] x W", 32, 256, 512, false, false},
      {"lstm d[x,h] = dgates x W^T", 32, 512, 256, false, true},
      {"lstm dW = [x,h]^T x dgates", 256, 32, 512, true, false},
      {"square 128", 128, 128, 128, false, false},
      {"256 x 256 x 512", 256, 256, 512, false, false},
      {"square 512", 512, 512, 512, false, false},
      {"square 32", 32, 32, 32, false, false},
      {"mlp [128,784] x [784,256]", 128, 784, 256, false, false},
      {"mlp d[x] = dy x W^T", 128, 256, 784, false, true},
      {"mlp dW = x^T x dy", 784, 128, 256, true, false},
      {"both transposed 32x512x256", 32, 512, 256, true, true},
      {"square 2048", 2048, 2048, 2048, false, false},
  };
  char load[64] = "?";
  if (FILE* f = std::fopen("/proc/loadavg", "r")) {
    if (std::fgets(load, sizeof(load), f) == nullptr) std::strcpy(load, "?");
    std::fclose(f);
  }
  std::printf("load average: %s", load);
  std::printf("%-30s %10s %10s %10s %10s %10s   (us per product, best of %d)\n", "shape", "pool",
              "thread", "sgemm", "sgemm/2", "primitive", reps);
  std::mt19937 random(1);
  std::uniform_real_distribution<float> uniform(-1, 1);
  for (const Shape& s : shapes) {
    std::vector<float> a(s.m * s.k), b(s.k * s.n), c(s.m * s.n);
    for (float& x : a) x = uniform(random);
    for (float& x : b) x = uniform(random);
    const GemmArgs g{a.data(), b.data(), c.data(), s.m, s.k, s.n, s.transpose_a, s.transpose_b};
    const int64_t lda = s.transpose_a ? s.m : s.k, ldb = s.transpose_b ? s.k : s.n;
    auto sgemm_rows = [&](int64_t r0, int64_t r1) {
      const float* a_block = s.transpose_a ? a.data() + r0 : a.data() + r0 * s.k;
      dnnl_sgemm(s.transpose_a ? 'T' : 'N', s.transpose_b ? 'T' : 'N', r1 - r0, s.n, s.k, 1.0f,
                 a_block, lda, b.data(), ldb, 0.0f, c.data() + r0 * s.n, s.n);
    };
    auto sgemm_cols = [&](int64_t c0, int64_t c1) {
      const float* b_block = s.transpose_b ? b.data() + c0 * s.k : b.data() + c0;
      dnnl_sgemm(s.transpose_a ? 'T' : 'N', s.transpose_b ? 'T' : 'N', s.m, c1 - c0, s.k, 1.0f,
                 a.data(), lda, b_block, ldb, 0.0f, c.data() + c0, s.n);
    };
    MatmulPrimitive primitive(engine, s);
    // Big products get fewer calls so that the run stays within a minute.
    const double work = static_cast<double>(s.m) * s.k * s.n;
    const int shape_reps = static_cast<int>(std::max(3.0, std::min<double>(reps, 2e9 / work)));
    const double on_pool = BestMicros(shape_reps, [&] { tensorweave::GemmOnPool<float>(pool, g); });
    const double on_thread =
        BestMicros(shape_reps, [&] { tensorweave::GemmOnThisThread<float>(g); });
    const double sgemm = BestMicros(shape_reps, [&] { sgemm_rows(0, s.m); });
    const double sgemm_split = BestMicros(shape_reps, [&] {
      pool->parallelFor(2, Eigen::TensorOpCost(0, 0, 1e9), [&](Eigen::Index b0, Eigen::Index b1) {
        for (Eigen::Index block = b0; block < b1; ++block) {
          if (s.m >= s.n) {
            sgemm_rows(s.m * block / 2, s.m * (block + 1) / 2);
          } else {
            sgemm_cols(s.n * block / 2, s.n * (block + 1) / 2);
          }
        }
      });
    });
    const double prim =
        BestMicros(shape_reps, [&] { primitive.Run(stream, a.data(), b.data(), c.data()); });
    const double flop = 2.0 * s.m * s.k * s.n;
    std::printf("%-30s %10.1f %10.1f %10.1f %10.1f %10.1f   %s\n", s.what, on_pool, on_thread,
                sgemm, sgemm_split, prim, primitive.impl().c_str());
    std::printf("%-30s %10.1f %10.1f %10.1f %10.1f %10.1f   GFLOP/s\n", "", flop / on_pool / 1e3,
                flop / on_thread / 1e3, flop / sgemm / 1e3, flop / sgemm_split / 1e3,
                flop / prim / 1e3);
  }
  dnnl_stream_destroy(stream);
  dnnl_engine_destroy(engine);
  return 0;
}
