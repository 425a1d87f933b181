// Helpers shared by the checkpoint tests (checkpoint_test.cc,
// tensor_bundle_test.cc, save_restore_kernels_test.cc): per-test temporary
// directories removed after the last test, raw file access, tensor
// comparison and one entry of every dtype.
//
//   const std::string dir = MakeTempDir();
//   TW_ASSERT_OK(WriteTensorBundle(dir + "/m", EveryDtypeEntries()));
//   std::string index = ReadFile(dir + "/m.index");
#ifndef TENSORWEAVE_TESTS_RUNTIME_CHECKPOINT_TEST_UTIL_H_
#define TENSORWEAVE_TESTS_RUNTIME_CHECKPOINT_TEST_UTIL_H_

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "runtime/util/checkpoint_format.h"
#include "tests/runtime/kernel_test_util.h"

namespace tensorweave {
namespace test {

// --- Helpers ------------------------------------------------------------------

inline std::vector<std::string> ListDir(const std::string& dir) {
  std::vector<std::string> names;
  DIR* handle = opendir(dir.c_str());
  if (handle == nullptr) return names;
  while (dirent* entry = readdir(handle)) {
    const std::string name = entry->d_name;
    if (name != "." && name != "..") names.push_back(name);
  }
  closedir(handle);
  std::sort(names.begin(), names.end());
  return names;
}

// Directories made by MakeTempDir, removed (with their files) after the
// last test.
inline std::vector<std::string>* temp_dirs = new std::vector<std::string>();

inline void RemoveTree(const std::string& path) {
  struct stat info;
  if (lstat(path.c_str(), &info) != 0) return;
  if (S_ISDIR(info.st_mode)) {
    for (const std::string& name : ListDir(path)) RemoveTree(path + "/" + name);
    rmdir(path.c_str());
  } else {
    unlink(path.c_str());
  }
}

class RemoveTempDirs : public ::testing::Environment {
 public:
  void TearDown() override {
    for (const std::string& dir : *temp_dirs) RemoveTree(dir);
  }
};
inline ::testing::Environment* const remove_temp_dirs =
    ::testing::AddGlobalTestEnvironment(new RemoveTempDirs());

// A fresh directory per test, so tests never see each other's files.
inline std::string MakeTempDir() {
  std::string pattern = ::testing::TempDir();
  if (pattern.empty() || pattern.back() != '/') pattern += '/';
  pattern += "tw_checkpoint_XXXXXX";
  char* made = mkdtemp(&pattern[0]);
  EXPECT_NE(made, nullptr);
  temp_dirs->push_back(pattern);
  return pattern;
}

inline std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

// Removes the old file first: ext4 flushes a file that is truncated and
// rewritten on close, which would make the fuzz loops crawl.
inline void WriteRawFile(const std::string& path, const std::string& bytes) {
  std::remove(path.c_str());
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), bytes.size());
}

inline bool SameTensor(const Tensor& a, const Tensor& b) {
  if (a.dtype() != b.dtype() || a.shape() != b.shape()) return false;
  if (a.dtype() == DT_STRING) {
    for (int64_t i = 0; i < a.NumElements(); ++i) {
      if (a.data<std::string>()[i] != b.data<std::string>()[i]) return false;
    }
    return true;
  }
  return a.TotalBytes() == 0 || std::memcmp(a.raw_data(), b.raw_data(), a.TotalBytes()) == 0;
}

// One entry of every dtype, plus scalars, empty tensors and awkward strings.
inline std::vector<CheckpointEntry> EveryDtypeEntries() {
  std::vector<CheckpointEntry> entries;
  auto add = [&](const std::string& name, Tensor tensor) { entries.push_back({name, tensor}); };
  add("float", MakeTensor<float>({2, 3}, {1.5f, -2, 0, 1e30f, -1e-30f, 3}));
  add("double", MakeTensor<double>({3}, {1.0 / 3, -1e300, 2}));
  add("int32", MakeTensor<int32_t>({2, 2}, {INT32_MIN, -1, 0, INT32_MAX}));
  add("int64", MakeTensor<int64_t>({2}, {INT64_MIN, INT64_MAX}));
  add("uint8", MakeTensor<uint8_t>({3}, {0, 128, 255}));
  add("int8", MakeTensor<int8_t>({2}, {-128, 127}));
  add("int16", MakeTensor<int16_t>({2}, {-32768, 32767}));
  add("uint16", MakeTensor<uint16_t>({1}, {65535}));
  add("uint32", MakeTensor<uint32_t>({1}, {4000000000u}));
  add("uint64", MakeTensor<uint64_t>({1}, {18000000000000000000ull}));
  add("bool", MakeBoolTensor({4}, {1, 0, 0, 1}));
  add("string", MakeTensor<std::string>(
                    {2, 2}, {"", "a", std::string("nul\0byte", 8), std::string(300, 'x')}));
  add("scope/scalar_float", Scalar<float>(42.5f));
  add("scalar_string", Scalar<std::string>("hello"));
  add("empty_float", MakeTensor<float>({0}, {}));
  add("empty_3d_int64", MakeTensor<int64_t>({2, 0, 3}, {}));
  add("empty_string", MakeTensor<std::string>({0, 4}, {}));
  return entries;
}

}  // namespace test
}  // namespace tensorweave

#endif  // TENSORWEAVE_TESTS_RUNTIME_CHECKPOINT_TEST_UTIL_H_
