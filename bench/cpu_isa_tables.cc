// Each entry of the float kernel table (runtime/kernels/float_kernel_table.h)
// on each instruction set this CPU runs, called directly on one thread: the
// kernels' own cost without sessions or thread pools, which a loaded shared
// machine disturbs less. Prints the best of --reps runs in microseconds and
// each ISA's speedup over the baseline build.
//
//   make build/bench/cpu_isa_tables && build/bench/cpu_isa_tables [--reps N]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "runtime/kernels/cpu_dispatch.h"

namespace {

using tensorweave::AdamChunk;
using tensorweave::CpuIsa;
using tensorweave::FloatKernelTable;

constexpr int64_t kCount = 1 << 20;  // 1M floats (4 MB per operand)
constexpr int64_t kRows = 1024, kDepth = 1024;
constexpr int64_t kBig = 1 << 23;      // 32 MB: past the caches
constexpr int64_t kChainBlock = 2048;  // _FusedUnaryChain's block

double BestMicroseconds(const std::function<void()>& run, int reps) {
  run();  // warm the caches and page in the buffers
  double best = 1e30;
  for (int i = 0; i < reps; ++i) {
    const auto start = std::chrono::steady_clock::now();
    run();
    const std::chrono::duration<double, std::micro> took = std::chrono::steady_clock::now() - start;
    best = std::min(best, took.count());
  }
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  int reps = 30;
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::strcmp(argv[i], "--reps") == 0) reps = std::atoi(argv[i + 1]);
  }
  std::mt19937 rng(0);
  std::uniform_real_distribution<float> uniform(-4, 4);
  std::vector<float> x(kCount), y(kCount), z(kCount), m(kCount), v(kCount), var(kCount);
  for (int64_t i = 0; i < kCount; ++i) {
    x[i] = uniform(rng);
    y[i] = std::abs(uniform(rng)) + 0.5f;
    m[i] = uniform(rng) * 0.01f;
    v[i] = std::abs(uniform(rng)) * 0.01f;
    var[i] = uniform(rng);
  }
  std::vector<float> big_in(kBig), big_out(kBig);
  for (int64_t i = 0; i < kBig; ++i) big_in[i] = uniform(rng);
  volatile float sink = 0;
  // sqrt(relu(x)) + relu: cheap functions, where memory traffic decides;
  // one function per pass over 8M floats, or the chain on each L1 block as
  // _FusedUnaryChain runs it.
  auto chain_unfused = [&](const FloatKernelTable& t) {
    t.relu(big_in.data(), big_out.data(), kBig);
    t.sqrt(big_out.data(), big_out.data(), kBig);
    t.relu(big_out.data(), big_out.data(), kBig);
  };
  auto chain_fused = [&](const FloatKernelTable& t) {
    for (int64_t at = 0; at < kBig; at += kChainBlock) {
      t.relu(big_in.data() + at, big_out.data() + at, kChainBlock);
      t.sqrt(big_out.data() + at, big_out.data() + at, kChainBlock);
      t.relu(big_out.data() + at, big_out.data() + at, kChainBlock);
    }
  };

  struct Job {
    const char* name;
    std::function<void(const FloatKernelTable&)> run;
  };
  const std::vector<Job> jobs = {
      {"add 1M",
       [&](const FloatKernelTable& t) {
         t.add.vector_vector(x.data(), y.data(), z.data(), kCount);
       }},
      {"mul by scalar 1M",
       [&](const FloatKernelTable& t) { t.mul.vector_scalar(x.data(), 2.5f, z.data(), kCount); }},
      {"maximum 1M",
       [&](const FloatKernelTable& t) {
         t.maximum.vector_vector(x.data(), y.data(), z.data(), kCount);
       }},
      {"relu 1M", [&](const FloatKernelTable& t) { t.relu(x.data(), z.data(), kCount); }},
      {"exp 1M", [&](const FloatKernelTable& t) { t.exp(x.data(), z.data(), kCount); }},
      {"log 1M", [&](const FloatKernelTable& t) { t.log(y.data(), z.data(), kCount); }},
      {"tanh 1M", [&](const FloatKernelTable& t) { t.tanh(x.data(), z.data(), kCount); }},
      {"sigmoid 1M", [&](const FloatKernelTable& t) { t.sigmoid(x.data(), z.data(), kCount); }},
      {"sqrt 1M", [&](const FloatKernelTable& t) { t.sqrt(y.data(), z.data(), kCount); }},
      {"sum 1M", [&](const FloatKernelTable& t) { sink = t.sum(x.data(), kCount); }},
      {"max 1M", [&](const FloatKernelTable& t) { sink = t.max(x.data(), kCount); }},
      {"softmax 1024 rows of 1024",
       [&](const FloatKernelTable& t) {
         for (int64_t r = 0; r < kRows; ++r) {
           t.softmax(x.data() + r * kDepth, z.data() + r * kDepth, kDepth, false);
         }
       }},
      {"adam 1M params (in place)",
       [&](const FloatKernelTable& t) {
         // In chunks of 1024, as training_ops.cc runs it.
         for (int64_t at = 0; at < kCount; at += 1024) {
           const AdamChunk chunk{{var.data() + at, m.data() + at, v.data() + at},
                                 {var.data() + at, m.data() + at, v.data() + at},
                                 x.data() + at,
                                 1024,
                                 1e-3f,
                                 0.9f,
                                 0.999f,
                                 1e-7f,
                                 false};
           t.adam(chunk);
         }
       }},
      {"relu,sqrt,relu 8M: 3 passes", chain_unfused},
      {"relu,sqrt,relu 8M: fused", chain_fused},
  };

  std::vector<CpuIsa> isas;
  for (CpuIsa isa : {CpuIsa::kBaseline, CpuIsa::kAvx2, CpuIsa::kAvx512}) {
    if (isa <= tensorweave::DetectCpuIsa()) isas.push_back(isa);
  }
  std::printf("best of %d, microseconds per call on one thread (speedup over baseline)\n", reps);
  std::printf("%-28s", "");
  for (CpuIsa isa : isas) std::printf("%22s", tensorweave::CpuIsaName(isa));
  std::printf("\n");
  for (const Job& job : jobs) {
    std::printf("%-28s", job.name);
    double baseline = 0;
    for (CpuIsa isa : isas) {
      const FloatKernelTable& table = tensorweave::FloatKernelsFor(isa);
      const double us = BestMicroseconds([&] { job.run(table); }, reps);
      if (isa == CpuIsa::kBaseline) baseline = us;
      std::printf("%14.1f (%4.2fx)", us, baseline / us);
    }
    std::printf("\n");
  }
  return 0;
}
