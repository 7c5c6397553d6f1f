// Replays inputs through a fuzz target without libFuzzer: the regression
// tests (tests/reliability) link this main with a target's
// LLVMFuzzerTestOneInput and run it on fuzz/regressions/<target>/ (inputs
// that once crashed or broke a property) and fuzz/corpus/<target>/ (seeds).
//
// Usage: fuzz_regression_<target> PATH...   where each PATH is a file or a directory
// (read recursively, in name order; *.md files are notes and skipped). Each
// input is copied into a buffer of exactly its size, so a sanitizer catches
// reads past its end as libFuzzer would. Exits 0 when every input returns;
// a crash or a violated property aborts, naming the input last printed.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);
extern "C" __attribute__((weak)) int LLVMFuzzerInitialize(int* argc, char*** argv);

namespace {

namespace fs = std::filesystem;

// The inputs under `path` in a stable order; false when it does not exist.
bool CollectInputs(const fs::path& path, std::vector<fs::path>* inputs) {
  std::error_code ec;
  if (fs::is_regular_file(path, ec)) {
    inputs->push_back(path);
    return true;
  }
  if (!fs::is_directory(path, ec)) return false;
  std::vector<fs::path> found;
  for (const auto& entry : fs::recursive_directory_iterator(path, ec)) {
    if (entry.is_regular_file() && entry.path().extension() != ".md") found.push_back(entry.path());
  }
  std::sort(found.begin(), found.end());
  inputs->insert(inputs->end(), found.begin(), found.end());
  return !ec;
}

bool Replay(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) return false;
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::fprintf(stderr, "replaying %s (%zu bytes)\n", file.c_str(), bytes.size());
  // An exactly-sized heap copy (not the string's buffer, which may have
  // spare capacity), so that an overread is an ASan report.
  auto data = std::make_unique<uint8_t[]>(bytes.size());
  std::copy(bytes.begin(), bytes.end(), data.get());
  LLVMFuzzerTestOneInput(data.get(), bytes.size());
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s PATH...  (files or directories of fuzz inputs)\n", argv[0]);
    return 1;
  }
  if (LLVMFuzzerInitialize) LLVMFuzzerInitialize(&argc, &argv);
  std::vector<fs::path> inputs;
  for (int i = 1; i < argc; ++i) {
    if (!CollectInputs(argv[i], &inputs)) {
      std::fprintf(stderr, "%s: cannot read %s\n", argv[0], argv[i]);
      return 1;
    }
  }
  for (const fs::path& file : inputs) {
    if (!Replay(file)) {
      std::fprintf(stderr, "%s: cannot read %s\n", argv[0], file.c_str());
      return 1;
    }
  }
  std::printf("replayed %zu inputs without a crash or a violated property\n", inputs.size());
  return 0;
}
