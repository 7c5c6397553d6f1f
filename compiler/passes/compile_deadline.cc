// CompileDeadline: the innermost deadline of the thread, checked on demand.
#include "compiler/passes/compile_deadline.h"

#include "base/status.h"

namespace ge::compiler {
namespace {
thread_local const ScopedCompileDeadline* current = nullptr;
}  // namespace

ScopedCompileDeadline::ScopedCompileDeadline(std::chrono::steady_clock::duration budget, std::string limit)
    : outer_(current),
      deadline_(std::chrono::steady_clock::now() + budget),
      seconds_(std::chrono::duration<double>(budget).count()),
      limit_(std::move(limit)) {
  current = this;
}

ScopedCompileDeadline::~ScopedCompileDeadline() { current = outer_; }

absl::Status CheckCompileDeadline(std::string_view where) {
  const ScopedCompileDeadline* d = current;
  if (d == nullptr || std::chrono::steady_clock::now() < d->deadline_) return absl::OkStatus();
  return ResourceExhausted("compilation stopped at ", where, ": it took longer than ", d->limit_, " (", d->seconds_,
                           " s)");
}

}  // namespace ge::compiler
