// CompileDeadline: a time limit on the compilation running on this thread
// (the daemon's compile_timeout_seconds). The compiler checks it between
// passes and between the build's steps, so a graph that compiles too long
// stops at the next check with RESOURCE_EXHAUSTED naming the limit, instead
// of holding a run-queue worker without bound. One pass is the granularity:
// max_graph_nodes keeps each pass's work bounded. Without a deadline set
// (gectl, tests) the checks cost a thread-local read.
#pragma once

#include <chrono>
#include <string>
#include <string_view>

#include "absl/status/status.h"

namespace ge::compiler {

class ScopedCompileDeadline {
 public:
  // `limit` names the setting in the refusal ("compile_timeout_seconds").
  ScopedCompileDeadline(std::chrono::steady_clock::duration budget, std::string limit);
  ~ScopedCompileDeadline();
  ScopedCompileDeadline(const ScopedCompileDeadline&) = delete;
  ScopedCompileDeadline& operator=(const ScopedCompileDeadline&) = delete;

 private:
  const ScopedCompileDeadline* outer_;
  friend absl::Status CheckCompileDeadline(std::string_view where);
  std::chrono::steady_clock::time_point deadline_;
  double seconds_;
  std::string limit_;
};

// OK, or RESOURCE_EXHAUSTED once this thread's deadline has passed; `where`
// names the step reached.
absl::Status CheckCompileDeadline(std::string_view where);

}  // namespace ge::compiler
