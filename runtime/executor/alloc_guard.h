// CallKernel: runs a kernel's Prepare or Compute so that a failed host
// allocation inside it (std::bad_alloc from a std::vector, a new[], or a
// length_error from an absurd size) is that call's RESOURCE_EXHAUSTED, not
// an exception that ends the daemon. Kernels allocate their outputs through
// the executor (ExecuteContext::Output), which returns Status; this guard
// covers what they allocate on their own on the calling thread.
#pragma once

#include <new>
#include <stdexcept>
#include <utility>

#include "absl/status/status.h"
#include "base/status.h"

namespace ge::runtime {

template <typename F>
absl::Status CallKernel(F&& f) {
  try {
    return std::forward<F>(f)();
  } catch (const std::bad_alloc&) {
    return ResourceExhausted("out of host memory: a kernel's own allocation failed");
  } catch (const std::length_error& e) {
    return ResourceExhausted("out of host memory: a kernel asked for an impossible size (", e.what(), ")");
  }
}

}  // namespace ge::runtime
