// The kernels of the control_flow engine (see control_flow_engine.h for the
// semantics). Internal to the engine.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "base/ir/op_desc.h"
#include "runtime/engines/api/kernel.h"

namespace ge::engine::control_flow {

// Caps While's iterations: the engine option is a hard cap (a daemon sets
// it from its configuration); a node attribute may lower it, never lift it,
// and applies alone when the option is unset. The source option, when set,
// is how a refusal names the engine cap (the daemon's config key).
inline constexpr std::string_view kAttrMaxLoopIterations = "_max_loop_iterations";
// On a While: the cond subgraph reads only the first N loop-carried values
// (the importer's lowered Loop and Scan set it), so each iteration hands
// the cond those and no copy of the others (a growing accumulator).
inline constexpr std::string_view kAttrCondReads = "_cond_reads";
// On a While: [a, b, c] says the cond subgraph computes `value[a] <
// value[b]` of two i64 scalars, and with it `value[c]` of a bool scalar when
// c >= 0 (the importer's lowered Loop: [0, 2, 1]; Scan: [0, 1, -1]); the
// kernel evaluates that itself instead of running the cond per iteration
// (and runs the cond when the values are not of those kinds).
inline constexpr std::string_view kAttrCondCounter = "_cond_counter";
inline constexpr std::string_view kOptionMaxLoopIterations = "ge.exec.max_loop_iterations";
inline constexpr std::string_view kOptionMaxLoopIterationsSource = "ge.exec.max_loop_iterations_source";

struct KernelOptions {
  int64_t max_loop_iterations = -1;  // -1: no cap
  std::string max_loop_iterations_source;  // empty: "option ge.exec.max_loop_iterations=N"
};

using KernelCreateFn = absl::StatusOr<std::unique_ptr<Kernel>> (*)(const ir::OpDesc& op,
                                                                   const KernelOptions& options);

struct KernelEntry {
  std::string_view op_type;
  KernelCreateFn create;
};

// Every op the engine runs, sorted by op type.
const std::vector<KernelEntry>& KernelTable();

// control_flow_kernels.cc
absl::StatusOr<std::unique_ptr<Kernel>> CreateIfKernel(const ir::OpDesc& op, const KernelOptions& options);
absl::StatusOr<std::unique_ptr<Kernel>> CreateCaseKernel(const ir::OpDesc& op, const KernelOptions& options);
absl::StatusOr<std::unique_ptr<Kernel>> CreateWhileKernel(const ir::OpDesc& op, const KernelOptions& options);
absl::StatusOr<std::unique_ptr<Kernel>> CreatePartitionedCallKernel(const ir::OpDesc& op,
                                                                    const KernelOptions& options);
// accumulator_kernels.cc
absl::StatusOr<std::unique_ptr<Kernel>> CreateAccumulatorInitKernel(const ir::OpDesc& op,
                                                                    const KernelOptions& options);
absl::StatusOr<std::unique_ptr<Kernel>> CreateAccumulatorAppendKernel(const ir::OpDesc& op,
                                                                      const KernelOptions& options);
absl::StatusOr<std::unique_ptr<Kernel>> CreateAccumulatorStackKernel(const ir::OpDesc& op,
                                                                     const KernelOptions& options);
absl::StatusOr<std::unique_ptr<Kernel>> CreateAccumulatorConcatKernel(const ir::OpDesc& op,
                                                                      const KernelOptions& options);
// gear_index_kernel.cc
absl::StatusOr<std::unique_ptr<Kernel>> CreateGearIndexKernel(const ir::OpDesc& op, const KernelOptions& options);
// sequence_map_kernel.cc
absl::StatusOr<std::unique_ptr<Kernel>> CreateSequenceMapKernel(const ir::OpDesc& op, const KernelOptions& options);

}  // namespace ge::engine::control_flow
