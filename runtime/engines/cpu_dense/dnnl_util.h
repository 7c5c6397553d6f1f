// oneDNN glue for the cpu_dense kernels: dtype and memory-descriptor
// mapping, the thread budget, scratch memory carved from the kernel
// workspace, and the boundary where oneDNN's exceptions become statuses.
//
// oneDNN (2.6, the Debian build) threads through OpenMP (libgomp): a
// primitive runs on the calling thread's OpenMP team, whose size is that
// thread's nthreads ICV. SetDnnlThreads sets it before primitives are
// created (oneDNN reads it to partition work) and before they run, so each
// kernel call uses the device's thread budget and nothing else.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <utility>

#include "absl/status/statusor.h"
#include "base/dtype.h"
#include "base/ir/op_desc.h"
#include "base/ir/types.h"
#include "base/shape.h"
#include "base/status.h"
#include "base/tensor.h"
#include "oneapi/dnnl/dnnl.hpp"

namespace ge::engine::cpu_dense {

// ---- Types and descriptors ----

// oneDNN's type for `dtype`; data_type::undef when oneDNN has none.
dnnl::memory::data_type ToDnnlType(DataType dtype);

// The dims of `shape` for oneDNN (a scalar becomes [1]).
dnnl::memory::dims ToDnnlDims(const Shape& shape);

// A row-major (plain) descriptor of `shape`.
dnnl::memory::desc PlainDesc(const Shape& shape, DataType dtype);
// A row-major descriptor with explicit dims (same element count rules).
dnnl::memory::desc PlainDesc(const dnnl::memory::dims& dims, dnnl::memory::data_type dt);

// The descriptor of a tensor stored in `format` (ND and NCHW-like formats
// are plain; NHWC / NDHWC channels-last; NChw8c / NChw16c blocked over
// channels). InvalidArgument for formats the engine cannot read.
absl::StatusOr<dnnl::memory::desc> FormatDesc(const Shape& shape, DataType dtype,
                                              ir::Format format);

// Whether oneDNN chose an implementation that is neither JIT nor fast
// (gemm-based or reference).
bool SlowDnnlImpl(const dnnl::primitive_desc_base& pd);

// ---- Dynamic batch ----

// Whether `s` has a known rank and every dim but the first is known: the
// shapes whose layout cpu_dense decides at compile time even when the
// batch comes only at run time.
bool OnlyBatchUnknown(const Shape& s);
// `s` with an unknown first dim set to 1, for asking oneDNN about layouts
// (its choices for these shapes do not depend on the batch; a plan built
// for the real batch reorders if one ever did).
Shape LayoutProbeShape(const Shape& s);

// ---- Threads ----

// Sets the calling thread's OpenMP team size to `num_threads`, capped at
// the processors OpenMP sees; a no-op when already set.
void SetDnnlThreads(int num_threads);
// The OpenMP runtime's processor count (at the first call).
int DnnlMaxProcessors();

// Sets the calling thread's OpenMP team to one thread for its lifetime
// (when `serial`), then back. oneDNN fixes a convolution's team when the
// primitive is created and other primitives' when they run, so both
// creation and execution of a serial plan's primitives go inside one.
class SerialScope {
 public:
  explicit SerialScope(bool serial);
  ~SerialScope();
  SerialScope(const SerialScope&) = delete;
  SerialScope& operator=(const SerialScope&) = delete;

 private:
  int restore_ = 0;  // the team size to set back, 0 when unchanged
};

// ---- The engine's own loops ----

// Whether the host runs the engine's own AVX2 + FMA loops (the packed GEMM,
// the own convolutions, blocked pooling; the SDK's detection).
bool OwnLoopsSupported();
// Whether an own path starts on: the host runs the own loops and the
// environment variable `switch_name` (GED_CPU_DENSE_CONV,
// GED_CPU_DENSE_GEMM; read at the call) is not "onednn", which keeps the
// path's work on oneDNN for comparisons.
bool OwnPathOnByDefault(const char* switch_name);

// ---- Scratch memory ----

// Bump allocation of 64-byte aligned chunks from one buffer. Plans size the
// workspace with Reserve() at prepare time; runs take the same chunks in the
// same order with Take().
class Scratch {
 public:
  static constexpr size_t kAlign = 64;
  // A sizing pass: every Take() only counts.
  Scratch() = default;
  // A run over `size` bytes at `base` (any alignment).
  Scratch(void* base, size_t size);

  // Bytes a buffer needs so that `bytes` chunks fit after aligning its base.
  static size_t Padded(size_t bytes) { return (bytes + kAlign - 1) / kAlign * kAlign; }
  // Takes `bytes`; nullptr while sizing. Running out of room is a
  // programmer error (the plan sized it).
  void* Take(size_t bytes);
  // Total bytes taken so far plus the base alignment slack.
  size_t required() const { return used_ + kAlign; }

 private:
  char* base_ = nullptr;
  size_t size_ = 0;
  size_t used_ = 0;
};

// ---- Errors ----

// Runs `fn` (returning absl::Status or StatusOr), turning oneDNN and
// standard exceptions into statuses that name the node: oneDNN's
// refusals at primitive creation (`what` == kCreation) become
// Unimplemented (the kernel then falls back to the reference), everything
// else Internal.
inline constexpr std::string_view kCreation = "primitive creation";
absl::Status DnnlErrorStatus(const ir::OpDesc& op, std::string_view what, const dnnl::error& e);

template <typename Fn>
auto DnnlTry(const ir::OpDesc& op, std::string_view what, Fn&& fn) -> decltype(fn()) {
  try {
    return fn();
  } catch (const dnnl::error& e) {
    return DnnlErrorStatus(op, what, e);
  } catch (const std::exception& e) {
    return Internal("node '", op.name(), "' (", op.type(), "): ", what, ": ", e.what());
  }
}

// Errors naming the node, the form host_cpu and shape inference use.
template <typename... Args>
absl::Status NodeError(const ir::OpDesc& op, const Args&... args) {
  return absl::InvalidArgumentError(StrCat("node '", op.name(), "' (", op.type(), "): ", args...));
}
template <typename... Args>
absl::Status NodeUnimplemented(const ir::OpDesc& op, const Args&... args) {
  return absl::UnimplementedError(StrCat("node '", op.name(), "' (", op.type(), "): ", args...));
}

// A reorder primitive from `from` to `to` on the CPU engine.
inline dnnl::reorder MakeReorder(const dnnl::engine& eng, const dnnl::memory::desc& from,
                                 const dnnl::memory::desc& to) {
  return dnnl::reorder(dnnl::reorder::primitive_desc(eng, from, eng, to));
}

// A dnnl::memory over a tensor's storage (no copy).
inline dnnl::memory WrapTensor(const dnnl::memory::desc& md, const dnnl::engine& eng,
                               const Tensor& t) {
  return dnnl::memory(md, eng, t.raw_data());
}

}  // namespace ge::engine::cpu_dense
