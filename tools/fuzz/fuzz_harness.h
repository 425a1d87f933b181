// The part both fuzzers share: a case is a GraphDef plus what to run on it;
// the harness runs each case in a forked child (so a crash, a sanitizer
// report or a hang costs one case, not the run), classifies the outcome and
// prints a reproducer for every failure. Cases are a pure function of
// (seed, index), so the parent regenerates any case without running it.
//
//   FuzzOptions options;
//   if (!ParseFuzzOptions(argc, argv, "graph_fuzzer", &options)) return 2;
//   return RunFuzzLoop(options, [](uint64_t seed, int64_t index, FuzzCase* c) { ... });
//
// The parent never creates a session or a thread pool: only the children do.
#ifndef TENSORWEAVE_TOOLS_FUZZ_FUZZ_HARNESS_H_
#define TENSORWEAVE_TOOLS_FUZZ_FUZZ_HARNESS_H_

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "runtime/framework/status.h"
#include "tensorweave/proto/graph.pb.h"
#include "tensorweave/proto/tensor.pb.h"

namespace tensorweave {
namespace fuzz {

struct FuzzCase {
  GraphDef graph;
  // Targets run first, in their own step (variable initializers).
  std::vector<std::string> init_targets;
  // Fed tensors; a proto Tensor::FromProto rejects makes the case end cleanly.
  std::vector<std::pair<std::string, TensorProto>> feeds;
  std::vector<std::string> fetches;
  std::vector<std::string> targets;
  // One line naming what the case exercises ("op MatMul dtype float ...").
  std::string summary;
};

using CaseGenerator = std::function<void(uint64_t seed, int64_t index, FuzzCase* out)>;

struct FuzzOptions {
  std::string program;
  uint64_t seed = 1;
  double seconds = 20;
  int64_t max_cases = 1000000;
  int64_t first_case = 0;
  // >= 0: run only this case, in-process (for a debugger), and print it.
  int64_t only_case = -1;
  bool print_only = false;
  double case_timeout_seconds = 10;
  // Bytes of address space a child may map (plain builds; ASan builds rely
  // on ASAN_OPTIONS max_allocation_size_mb instead).
  int64_t child_memory_bytes = int64_t{4} << 30;
  // Appended to (markdown) for each distinct failure when set.
  std::string findings_path;
  int max_findings = 20;
  bool verbose = false;
  // Failures print their summary, report and reproducer, not the graph.
  bool brief = false;
  // Self-test of the harness (tests/python/test_fuzzers.py): these cases
  // crash, hang or return INTERNAL ("crash", "hang", "internal") instead
  // of running.
  std::map<int64_t, std::string> injected;
  // Extra program-specific flag, repeatable: directories of seed GraphDefs
  // (*.pb).
  std::vector<std::string> corpus_dirs;
};

// Parses --seed --seconds --max-cases --first-case --case --print --timeout
// --memory-mb --findings --max-findings --corpus --verbose --brief and
// --inject CASE:{crash,hang,internal}. False (after
// printing usage) on a malformed command line.
bool ParseFuzzOptions(int argc, char** argv, const std::string& program, FuzzOptions* options);

// A status a user's input may legitimately produce. INTERNAL and UNKNOWN
// mean the runtime lost track of something, so they count as failures.
bool IsCleanStatus(const Status& status);

// Runs one case in this process: a DirectSession with small thread pools,
// Create, the init step, the main step, Close. Returns the first status
// that is not a clean error, or the last status.
Status RunCaseInProcess(const FuzzCase& fuzz_case);

// Runs cases first_case, first_case+1, ... until `seconds` or `max_cases`,
// each in a child. Prints one line per failure with its reproducer and
// `N passed, M failed` last. Returns 0 when nothing failed, 1 otherwise.
int RunFuzzLoop(const FuzzOptions& options, const CaseGenerator& generate);

}  // namespace fuzz
}  // namespace tensorweave

#endif  // TENSORWEAVE_TOOLS_FUZZ_FUZZ_HARNESS_H_
