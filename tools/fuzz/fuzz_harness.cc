#include "tools/fuzz/fuzz_harness.h"

#include <dirent.h>
#include <fcntl.h>
#include <google/protobuf/text_format.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <memory>
#include <set>
#include <sstream>
#include <thread>

#include "runtime/common_runtime/session.h"
#include "runtime/framework/tensor.h"

namespace tensorweave {
namespace fuzz {
namespace {

constexpr int kExitUncleanStatus = 3;
// A clean error status passes like OK; counting it apart shows how many
// cases got as far as computing.
constexpr int kExitCleanError = 6;
// Reports longer than this are cut when read back from the child's capture.
constexpr size_t kMaxCaptureBytes = 1 << 16;
constexpr size_t kMaxGraphTextChars = 20000;

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr bool kUnderSanitizer = true;
#else
constexpr bool kUnderSanitizer = false;
#endif

void PrintUsage(const std::string& program) {
  std::cerr
      << "usage: " << program
      << " [--seed N] [--seconds S] [--max-cases N] [--first-case N] [--case N [--print]]\n"
         "       [--timeout S] [--memory-mb N] [--findings FILE] [--max-findings N]\n"
         "       [--corpus DIR]... [--verbose] [--brief] [--inject CASE:crash|hang|internal]\n"
         "Runs generated cases, each in a child process, and prints `N passed, M failed`.\n"
         "--case N runs one case in this process (--print only prints it).\n";
}

std::string GraphText(const FuzzCase& fuzz_case) {
  std::string text;
  google::protobuf::TextFormat::Printer printer;
  printer.SetUseUtf8StringEscaping(false);
  printer.PrintToString(fuzz_case.graph, &text);
  std::ostringstream out;
  out << text;
  for (const auto& feed : fuzz_case.feeds) {
    std::string value;
    printer.PrintToString(feed.second, &value);
    out << "# feed " << feed.first << ": " << value;
  }
  auto join = [](const std::vector<std::string>& names) {
    std::string all;
    for (const auto& name : names) all += (all.empty() ? "" : ", ") + name;
    return all;
  };
  if (!fuzz_case.init_targets.empty())
    out << "# init targets: " << join(fuzz_case.init_targets) << "\n";
  out << "# fetches: " << join(fuzz_case.fetches) << "\n";
  if (!fuzz_case.targets.empty()) out << "# targets: " << join(fuzz_case.targets) << "\n";
  std::string all = out.str();
  if (all.size() > kMaxGraphTextChars) {
    all.resize(kMaxGraphTextChars);
    all += "\n# ... (cut; run the reproducer with --print for the whole case)\n";
  }
  return all;
}

std::string ReadCapture(const std::string& path) {
  std::FILE* file = std::fopen(path.c_str(), "rb");
  if (file == nullptr) return "";
  std::string text(kMaxCaptureBytes, '\0');
  text.resize(std::fread(&text[0], 1, kMaxCaptureBytes, file));
  std::fclose(file);
  return text;
}

// The line of a child's output that best says what went wrong.
std::string ReportLine(const std::string& capture) {
  static const char* const kMarkers[] = {"ERROR: AddressSanitizer",
                                         "runtime error:",
                                         "WARNING: ThreadSanitizer",
                                         "ERROR: LeakSanitizer",
                                         "terminate called",
                                         "FUZZ-STATUS",
                                         "what():",
                                         "Check failed",
                                         "SUMMARY:"};
  std::istringstream lines(capture);
  std::vector<std::string> all;
  for (std::string line; std::getline(lines, line);) all.push_back(line);
  for (const char* marker : kMarkers) {
    for (const auto& line : all) {
      if (line.find(marker) != std::string::npos) return line;
    }
  }
  return all.empty() ? "" : all.back();
}

// The innermost stack frame in tensorweave's own code, when a sanitizer
// printed a stack.
std::string WhereLine(const std::string& capture) {
  std::istringstream lines(capture);
  for (std::string line; std::getline(lines, line);) {
    if (line.find(" in ") != std::string::npos && line.find("#") != std::string::npos &&
        (line.find("runtime/") != std::string::npos || line.find("c_api/") != std::string::npos)) {
      const size_t in = line.find(" in ");
      return line.substr(in + 4);
    }
  }
  return "";
}

// Digits and addresses vary between equal failures; dropping them lets one
// finding stand for its class.
std::string Signature(const std::string& kind, const std::string& key, const std::string& line) {
  std::string shape;
  for (size_t i = 0; i < line.size(); ++i) {
    if (line.compare(i, 2, "0x") == 0) {
      i += 2;
      while (i < line.size() && std::isxdigit(static_cast<unsigned char>(line[i]))) ++i;
      shape += '#';
      --i;
    } else if (std::isdigit(static_cast<unsigned char>(line[i]))) {
      while (i + 1 < line.size() && std::isdigit(static_cast<unsigned char>(line[i + 1]))) ++i;
      shape += '#';
    } else {
      shape += line[i];
    }
  }
  return kind + "|" + key + "|" + shape;
}

void AppendFinding(const FuzzOptions& options, const std::string& title, const std::string& body) {
  const int fd = open(options.findings_path.c_str(), O_WRONLY | O_APPEND | O_CREAT, 0644);
  if (fd < 0) {
    std::cerr << "cannot append to " << options.findings_path << ": " << std::strerror(errno)
              << "\n";
    return;
  }
  const std::string entry = "\n## " + title + "\n" + body;
  // One write, so concurrent fuzzers do not interleave inside an entry.
  if (write(fd, entry.data(), entry.size()) < 0) std::cerr << "write failed\n";
  close(fd);
}

void RemoveDirectoryContents(const std::string& dir) {
  DIR* handle = opendir(dir.c_str());
  if (handle == nullptr) return;
  while (dirent* entry = readdir(handle)) {
    const std::string name = entry->d_name;
    if (name == "." || name == "..") continue;
    const std::string path = dir + "/" + name;
    struct stat info;
    if (lstat(path.c_str(), &info) == 0 && S_ISDIR(info.st_mode)) {
      RemoveDirectoryContents(path);
      rmdir(path.c_str());
    } else {
      unlink(path.c_str());
    }
  }
  closedir(handle);
}

// The failures --inject stands in for, to test the harness itself.
Status InjectedFailure(const std::string& kind) {
  if (kind == "crash") raise(SIGSEGV);
  if (kind == "hang") {
    while (true) pause();
  }
  return errors::Internal("injected by --inject");
}

[[noreturn]] void RunChild(const FuzzOptions& options, int64_t index, const FuzzCase& fuzz_case,
                           const std::string& scratch, const std::string& capture) {
  const int fd = open(capture.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd >= 0) {
    dup2(fd, STDOUT_FILENO);
    dup2(fd, STDERR_FILENO);
    close(fd);
  }
  // Ops that write files (SaveV2) write into the scratch directory.
  if (chdir(scratch.c_str()) != 0) _exit(4);
  if (!kUnderSanitizer && options.child_memory_bytes > 0) {
    rlimit limit{static_cast<rlim_t>(options.child_memory_bytes),
                 static_cast<rlim_t>(options.child_memory_bytes)};
    setrlimit(RLIMIT_AS, &limit);
  }
  const auto injected = options.injected.find(index);
  const Status status = injected != options.injected.end() ? InjectedFailure(injected->second)
                                                           : RunCaseInProcess(fuzz_case);
  std::fflush(stdout);
  if (!IsCleanStatus(status)) {
    std::fprintf(stderr, "FUZZ-STATUS %s\n", status.ToString().c_str());
    std::fflush(stderr);
    _exit(kExitUncleanStatus);
  }
  _exit(status.ok() ? 0 : kExitCleanError);
}

enum class Outcome { kPassed, kUncleanStatus, kCrash, kExit, kHang };

struct ChildResult {
  Outcome outcome = Outcome::kPassed;
  bool ran_ok = false;  // passed with an OK status
  std::string kind;     // "crash (SIGSEGV)", "hang (> 10 s)", ...
};

ChildResult WaitForChild(pid_t pid, double timeout_seconds) {
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::microseconds(static_cast<int64_t>(timeout_seconds * 1e6));
  auto pause = std::chrono::microseconds(50);
  int status = 0;
  ChildResult result;
  while (true) {
    const pid_t done = waitpid(pid, &status, WNOHANG);
    if (done == pid) break;
    if (done < 0 && errno != EINTR) {
      result.outcome = Outcome::kCrash;
      result.kind = "lost child";
      return result;
    }
    if (std::chrono::steady_clock::now() > deadline) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      result.outcome = Outcome::kHang;
      std::ostringstream kind;
      kind << "hang (> " << timeout_seconds << " s)";
      result.kind = kind.str();
      return result;
    }
    std::this_thread::sleep_for(pause);
    if (pause < std::chrono::milliseconds(2)) pause *= 2;
  }
  if (WIFSIGNALED(status)) {
    result.outcome = Outcome::kCrash;
    result.kind = std::string("crash (signal ") + std::to_string(WTERMSIG(status)) + " " +
                  strsignal(WTERMSIG(status)) + ")";
  } else if (WEXITSTATUS(status) == kExitUncleanStatus) {
    result.outcome = Outcome::kUncleanStatus;
    result.kind = "INTERNAL/UNKNOWN status";
  } else if (WEXITSTATUS(status) == 0) {
    result.ran_ok = true;
  } else if (WEXITSTATUS(status) != kExitCleanError) {
    result.outcome = Outcome::kExit;
    result.kind = "abnormal exit " + std::to_string(WEXITSTATUS(status));
  }
  return result;
}

bool ParseInt(const char* text, int64_t* value) {
  char* end = nullptr;
  errno = 0;
  const long long parsed = std::strtoll(text, &end, 0);
  if (errno != 0 || end == text || *end != '\0') return false;
  *value = parsed;
  return true;
}

bool ParseDouble(const char* text, double* value) {
  char* end = nullptr;
  *value = std::strtod(text, &end);
  return end != text && *end == '\0' && *value >= 0;
}

}  // namespace

bool ParseFuzzOptions(int argc, char** argv, const std::string& program, FuzzOptions* options) {
  options->program = argv[0] ? argv[0] : program;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (flag == "--print") {
      options->print_only = true;
      continue;
    }
    if (flag == "--verbose") {
      options->verbose = true;
      continue;
    }
    if (flag == "--brief") {
      options->brief = true;
      continue;
    }
    if (flag == "--help" || i + 1 >= argc) {
      PrintUsage(program);
      return false;
    }
    const char* value = argv[++i];
    int64_t number = 0;
    bool ok = true;
    if (flag == "--seed") {
      ok = ParseInt(value, &number);
      options->seed = static_cast<uint64_t>(number);
    } else if (flag == "--seconds") {
      ok = ParseDouble(value, &options->seconds);
    } else if (flag == "--timeout") {
      ok = ParseDouble(value, &options->case_timeout_seconds);
    } else if (flag == "--max-cases") {
      ok = ParseInt(value, &options->max_cases) && options->max_cases >= 0;
    } else if (flag == "--first-case") {
      ok = ParseInt(value, &options->first_case) && options->first_case >= 0;
    } else if (flag == "--case") {
      ok = ParseInt(value, &options->only_case) && options->only_case >= 0;
    } else if (flag == "--memory-mb") {
      ok = ParseInt(value, &number) && number >= 0;
      options->child_memory_bytes = number << 20;
    } else if (flag == "--max-findings") {
      ok = ParseInt(value, &number) && number >= 0;
      options->max_findings = static_cast<int>(number);
    } else if (flag == "--findings") {
      options->findings_path = value;
    } else if (flag == "--inject") {
      const std::string spec = value;
      const size_t colon = spec.find(':');
      const std::string kind = colon == std::string::npos ? "" : spec.substr(colon + 1);
      ok = colon != std::string::npos && ParseInt(spec.substr(0, colon).c_str(), &number) &&
           (kind == "crash" || kind == "hang" || kind == "internal");
      if (ok) options->injected[number] = kind;
    } else if (flag == "--corpus") {
      options->corpus_dirs.push_back(value);
    } else {
      ok = false;
    }
    if (!ok) {
      std::cerr << program << ": bad value for " << flag << ": " << value << "\n";
      PrintUsage(program);
      return false;
    }
  }
  return true;
}

bool IsCleanStatus(const Status& status) {
  return status.code() != Code::INTERNAL && status.code() != Code::UNKNOWN;
}

Status RunCaseInProcess(const FuzzCase& fuzz_case) {
  SessionOptions options;
  options.config.set_intra_op_parallelism_threads(1);
  options.config.set_inter_op_parallelism_threads(1);
  // A graph may legitimately compute for ever (a While whose cond is a
  // non-empty vector is true every time, as in TensorFlow): such a step
  // ends DEADLINE_EXCEEDED, a clean error. A kernel that ignores
  // cancellation still hangs the step past the case timeout and is found.
  options.config.set_operation_timeout_in_ms(1000);
  std::unique_ptr<Session> session;
  Status status = NewSession(options, &session);
  if (!status.ok()) return status;
  auto finish = [&session](const Status& result) {
    const Status closed = session->Close();
    return result.ok() || IsCleanStatus(result) ? (IsCleanStatus(closed) ? result : closed)
                                                : result;
  };
  status = session->Create(fuzz_case.graph);
  if (!status.ok()) return finish(status);
  std::vector<Tensor> outputs;
  if (!fuzz_case.init_targets.empty()) {
    status = session->Run({}, {}, fuzz_case.init_targets, &outputs);
    if (!IsCleanStatus(status)) return finish(status);
  }
  std::vector<std::pair<std::string, Tensor>> feeds;
  for (const auto& feed : fuzz_case.feeds) {
    Tensor value;
    status = Tensor::FromProto(feed.second, &value);
    if (!status.ok()) return finish(status);
    feeds.emplace_back(feed.first, value);
  }
  status = session->Run(feeds, fuzz_case.fetches, fuzz_case.targets, &outputs);
  return finish(status);
}

int RunFuzzLoop(const FuzzOptions& options, const CaseGenerator& generate) {
  if (options.only_case >= 0) {
    FuzzCase fuzz_case;
    generate(options.seed, options.only_case, &fuzz_case);
    std::cout << "# " << fuzz_case.summary << "\n" << GraphText(fuzz_case);
    if (options.print_only) return 0;
    const Status status = RunCaseInProcess(fuzz_case);
    std::cout << "status: " << status << "\n";
    const bool passed = IsCleanStatus(status);
    std::cout << (passed ? 1 : 0) << " passed, " << (passed ? 0 : 1) << " failed\n";
    return passed ? 0 : 1;
  }

  char scratch_template[] = "/tmp/tw_fuzz_XXXXXX";
  const char* scratch_dir = mkdtemp(scratch_template);
  if (scratch_dir == nullptr) {
    std::cerr << "mkdtemp failed: " << std::strerror(errno) << "\n";
    return 2;
  }
  const std::string scratch = scratch_dir;
  const std::string capture = scratch + ".out";

  const auto start = std::chrono::steady_clock::now();
  auto elapsed = [&start] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  int64_t passed = 0, failed = 0, ran_ok = 0;
  int findings_written = 0;
  std::set<std::string> reported;
  std::cout << options.program << ": seed " << options.seed << ", up to " << options.seconds
            << " s, cases from " << options.first_case << "\n"
            << std::flush;
  for (int64_t index = options.first_case;
       index - options.first_case < options.max_cases && elapsed() < options.seconds; ++index) {
    FuzzCase fuzz_case;
    generate(options.seed, index, &fuzz_case);
    std::cout.flush();
    std::cerr.flush();
    if (options.verbose) std::cout << "case " << index << ": " << fuzz_case.summary << std::endl;
    const pid_t pid = fork();
    if (pid < 0) {
      std::cerr << "fork failed: " << std::strerror(errno) << "\n";
      break;
    }
    if (pid == 0) RunChild(options, index, fuzz_case, scratch, capture);
    const ChildResult result = WaitForChild(pid, options.case_timeout_seconds);
    RemoveDirectoryContents(scratch);
    if (result.outcome == Outcome::kPassed) {
      ++passed;
      if (result.ran_ok) ++ran_ok;
      continue;
    }
    ++failed;
    const std::string output = ReadCapture(capture);
    const std::string line = ReportLine(output);
    ChildResult described = result;
    if (result.outcome == Outcome::kExit && (line.find("Sanitizer") != std::string::npos ||
                                             line.find("runtime error:") != std::string::npos)) {
      described.kind = "sanitizer report (" + result.kind + ")";
    }
    const std::string where = WhereLine(output);
    const std::string key = fuzz_case.summary.substr(0, fuzz_case.summary.find(" |"));
    const std::string graph_text = GraphText(fuzz_case);
    std::ostringstream reproduce;
    reproduce << options.program << " --seed " << options.seed << " --case " << index;
    std::cout << "FAIL case " << index << " (seed " << options.seed << "): " << described.kind
              << ": " << fuzz_case.summary << "\n"
              << "  report: " << line << "\n";
    if (!where.empty()) std::cout << "  where: " << where << "\n";
    std::cout << "  reproduce: " << reproduce.str() << "\n";
    if (!options.brief) std::cout << graph_text;
    std::cout.flush();

    const std::string signature = Signature(described.kind, key, line);
    if (options.findings_path.empty() || !reported.insert(signature).second ||
        findings_written >= options.max_findings) {
      continue;
    }
    ++findings_written;
    std::ostringstream body;
    body << "- where: " << (where.empty() ? "unknown (no sanitizer stack)" : where) << "\n"
         << "- how found: " << options.program << " seed " << options.seed << " case " << index
         << " (`" << reproduce.str() << "`); " << fuzz_case.summary << "\n"
         << "- minimal repro:\n\n```text\n"
         << graph_text.substr(0, 4000) << (graph_text.size() > 4000 ? "\n# ...cut\n" : "")
         << "```\n"
         << "- observed: " << described.kind << ": " << line << "\n";
    std::string short_line = line.substr(0, 90);
    AppendFinding(options, key + ": " + described.kind + ": " + short_line, body.str());
  }
  rmdir(scratch.c_str());
  unlink(capture.c_str());
  const double seconds = elapsed();
  std::cout << options.program << ": " << (passed + failed) << " cases in " << seconds << " s ("
            << (seconds > 0 ? (passed + failed) / seconds : 0) << " cases/s), " << ran_ok
            << " ran with an OK status, the other passes ended in a clean error\n";
  std::cout << passed << " passed, " << failed << " failed" << std::endl;
  return failed == 0 ? 0 : 1;
}

}  // namespace fuzz
}  // namespace tensorweave
