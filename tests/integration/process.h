// Running a child process with a timeout and capturing its output, for
// tests that drive ged's binaries.
#pragma once

#include <string>
#include <vector>

namespace ge::testing {

struct ProcessResult {
  int exit_code = -1;     // when the process exited
  int signal = 0;         // when a signal ended it (0 otherwise)
  bool timed_out = false;  // killed after the timeout
  std::string out;
  std::string err;
};

// Runs argv[0] (a path) with argv, no stdin, capturing stdout and stderr;
// kills it after `timeout_seconds`.
ProcessResult RunProcess(const std::vector<std::string>& argv, double timeout_seconds = 120);

// The build tree (GED_BINARY_DIR, set by ctest) and source tree.
std::string BinaryDir();
std::string SourceDir();

// A fresh empty directory under the system temp dir, removed by the caller.
std::string MakeTempDir(const std::string& prefix);

}  // namespace ge::testing
