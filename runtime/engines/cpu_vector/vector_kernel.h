// Shared machinery of the cpu_vector kernels: the ISA table in use, dtype
// mapping, thread splitting with a grain size, errors naming the node and
// the kernel table the engine's CheckSupported and factory read.
//
// Kernels do their shape work in Prepare (plans, strides, element counts)
// and keep Compute to pointer binding and one call into the ISA table, so
// a static 1-element op costs a few nanoseconds. Work is split across the
// device's intra-op threads only above kParallelWork element operations.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "base/dtype.h"
#include "base/ir/op_desc.h"
#include "base/strings.h"
#include "runtime/engines/sdk/kernel_util.h"
#include "runtime/engines/sdk/parallel.h"
#include "runtime/engines/api/kernel.h"
#include "runtime/engines/cpu_vector/isa_kernels.h"
#include "runtime/engines/sdk/cpu_features.h"
#include "runtime/engines/sdk/kernel_table.h"

namespace ge::engine::cpu_vector {

// The element types TopK, ArgMax / ArgMin and the scatters' reductions
// compare and combine (sdk::DispatchType).
using SelectionTypes = sdk::TypeList<float, double, Float16, int32_t, int64_t, int8_t, uint8_t>;

inline constexpr std::string_view kEngineName = "cpu_vector";

// ---- ISA selection (isa.cc) ----

enum class Isa { kAvx2, kAvx512 };
// Whether the CPU runs the AVX2 build (AVX2, FMA, F16C) and the AVX-512 one
// (the SDK's one CPU-feature detection, cpu_features.h).
inline bool CpuHasAvx2() { return sdk::HostVectorIsa() >= sdk::VectorIsa::kAvx2; }
inline bool CpuHasAvx512() { return sdk::HostVectorIsa() == sdk::VectorIsa::kAvx512; }
// Chooses the table: AVX-512 when the CPU has it, unless `force_avx2` or the
// environment variable GED_CPU_VECTOR_ISA=avx2. FailedPrecondition when the
// CPU lacks AVX2 (the engine then does not load).
absl::Status SelectIsa(bool force_avx2);
// Selects a table for tests: Unavailable when the CPU cannot run it.
absl::Status ForceIsa(Isa isa);
// The table in use (SelectIsa(false) on first use when nobody chose).
const IsaKernels& Kernels();

// ---- Dtypes ----

std::optional<VDt> ToVDt(DataType dtype);
// The dtypes the element-type tables cover.
inline constexpr sdk::DataTypeSet kFloatSet{DataType::kFloat, DataType::kDouble, DataType::kFloat16};
inline constexpr sdk::DataTypeSet kIntSet{DataType::kInt32, DataType::kInt64, DataType::kInt8, DataType::kUint8};
inline constexpr sdk::DataTypeSet kNumericSet = kFloatSet | kIntSet;
inline constexpr sdk::DataTypeSet kBoolSet{DataType::kBool};
// Every fixed-size dtype (data movement copies bytes).
inline constexpr sdk::DataTypeSet kCopySet =
    kNumericSet | kBoolSet |
    sdk::DataTypeSet{DataType::kBFloat16, DataType::kInt16, DataType::kUint16, DataType::kUint32, DataType::kUint64};

// ---- Errors ----

template <typename... Args>
absl::Status Unsupported(const ir::OpDesc& op, const Args&... args) {
  return absl::UnimplementedError(StrCat(op.type(), " on cpu_vector: ", args..., " (node '", op.name(), "')"));
}
template <typename... Args>
absl::Status NodeError(const ir::OpDesc& op, const Args&... args) {
  return absl::InvalidArgumentError(StrCat("node '", op.name(), "' (", op.type(), "): ", args...));
}

// The dtype of input `i` of `op` (kUndefined when absent or untyped).
DataType InputDtype(const ir::OpDesc& op, int i);
// OK when input `i` has a dtype in `set` (an absent input passes when
// `optional`).
absl::Status CheckInputDtype(const ir::OpDesc& op, int i, sdk::DataTypeSet set, bool optional = false);

// ---- Threads ----

// Element operations below which work stays on the calling thread.
inline constexpr int64_t kParallelWork = int64_t{1} << 16;

// fn(begin, end) over [0, n): one call on this thread for small work (no
// std::function, no threads), else split across `threads` in blocks of at least
// kParallelWork / cost items.
template <typename Fn>
void Split(int threads, int64_t n, int64_t cost, Fn&& fn) {
  if (n <= 0) return;
  if (threads <= 1 || n * cost < kParallelWork) {
    fn(int64_t{0}, n);
    return;
  }
  const int64_t block = std::max<int64_t>(1, kParallelWork / std::max<int64_t>(1, cost));
  sdk::OmpParallelFor(threads, n, block, fn);
}

// Split over `ctx`'s threads, asked for only when the work is large enough.
template <typename Fn>
void Split(ExecuteContext& ctx, int64_t n, int64_t cost, Fn&& fn) {
  if (n > 0 && n * cost < kParallelWork) {
    fn(int64_t{0}, n);
    return;
  }
  Split(ctx.num_threads(), n, cost, std::forward<Fn>(fn));
}

// Output `i`: the executor's planned storage when it has one (no copy; the
// static plan fixed its shape), else ctx.Output(i), kept in `holder`.
inline absl::StatusOr<Tensor*> OutputOf(ExecuteContext& ctx, int i, Tensor& holder) {
  if (Tensor* planned = ctx.planned_output(i)) return planned;
  GE_ASSIGN_OR_RETURN(holder, ctx.Output(i));
  return &holder;
}

// ---- The kernel table ----

using CheckFn = std::function<absl::Status(const ir::OpDesc& op)>;
using CreateFn = std::function<absl::StatusOr<std::unique_ptr<Kernel>>(const ir::OpDesc& op)>;

struct VectorKernelDef {
  std::string op_type;
  CheckFn check;  // dtypes and attributes the kernel handles
  CreateFn create;
};

// The SDK's kernel table over cpu_vector's definitions.
using VectorKernelTable = sdk::KernelTable<VectorKernelDef>;

// OK when a kernel exists, its check passes and it can be created.
absl::Status CheckSupported(const VectorKernelTable& table, const ir::OpDesc& op);

void RegisterElementwiseKernels(VectorKernelTable& table);
void RegisterReduceKernels(VectorKernelTable& table);
void RegisterMovementKernels(VectorKernelTable& table);
void RegisterSelectionKernels(VectorKernelTable& table);
void RegisterVectorKernels(VectorKernelTable& table);

}  // namespace ge::engine::cpu_vector
