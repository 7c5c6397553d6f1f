// Helpers shared by ged's fuzz targets (fuzz/*_fuzzer.cc).
//
// A fuzz target's entry point, LLVMFuzzerTestOneInput, must return normally
// for every input: errors are statuses, never crashes. Besides the
// sanitizers, the targets check properties that must hold for every input a
// reader accepts (a round trip is exact, an imported graph verifies); a
// violated property aborts through FuzzFail so that libFuzzer keeps the
// input, and the regression driver (fuzz/replay_main.cc) fails on it.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "base/logging.h"
#include "base/strings.h"
#include "google/protobuf/stubs/logging.h"

namespace ge::fuzz {

// Silences ged's loggers and protobuf's (the readers warn on odd input,
// protobuf on every string that is not UTF-8; printing those slows fuzzing
// and buries real reports). Called from LLVMFuzzerInitialize.
inline void QuietLogs() {
  (void)SetLogLevel("off");
  google::protobuf::SetLogHandler(nullptr);
}

// Reports a violated property and aborts. Callers test the property first
// and build `detail` only on failure (it may be expensive).
[[noreturn]] inline void FuzzFail(std::string_view what, std::string_view detail = {}) {
  std::fprintf(stderr, "fuzz property violated: %.*s\n%.*s\n", static_cast<int>(what.size()), what.data(),
               static_cast<int>(detail.size()), detail.data());
  std::abort();
}

// With GED_FUZZ_VERBOSE set, targets print why they rejected an input (to
// check that seeds reach past the first error: run a target binary on the
// seed files).
inline void Note(std::string_view what, const absl::Status& status) {
  static const bool verbose = std::getenv("GED_FUZZ_VERBOSE") != nullptr;
  if (!verbose) return;
  const std::string message = status.ok() ? "ok" : std::string(StdView(status.message()));
  std::fprintf(stderr, "%.*s: %s\n", static_cast<int>(what.size()), what.data(), message.c_str());
}

inline void FuzzCheckOk(const absl::Status& status, std::string_view what) {
  if (!status.ok()) FuzzFail(what, StdView(status.message()));
}

}  // namespace ge::fuzz
