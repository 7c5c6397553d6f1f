// The kernels of cpu_fused and the checks that say which nodes they run.
//
// Kernels do their shape work in Prepare (sizes, mask strides, the split
// across threads, the workspace) so that Compute binds pointers and runs
// the loops of fused_loops.h; the default KernelBuilder prepares them once
// at load for static subgraphs (.gem, gectl bench). Work splits across the
// device's intra-op pool in a fixed number of chunks chosen at Prepare, each
// with its own slice of the workspace.
#pragma once

#include <memory>

#include "absl/status/statusor.h"
#include "base/ir/op_desc.h"
#include "runtime/engines/api/kernel.h"
#include "runtime/engines/cpu_fused/fused_loops.h"

namespace ge::engine::cpu_fused {

inline constexpr std::string_view kEngineName = "cpu_fused";

// Whether the CPU runs the loops (the SDK's AVX2 tier: AVX2, FMA, F16C), and
// the table in use: AVX-512 when the CPU has it, unless `force_avx2`.
bool CpuHasAvx2();
absl::Status SelectLoops(bool force_avx2);
const FusedLoops& Loops();

// OK when the kernel of `op` runs it as typed and attributed; Unimplemented
// naming the node and the reason otherwise. Unknown dims pass (Prepare
// checks the concrete shapes).
absl::Status CheckAttention(const ir::OpDesc& op);
absl::Status CheckAddLayerNorm(const ir::OpDesc& op);
absl::Status CheckFusedOp(const ir::OpDesc& op);

absl::StatusOr<std::unique_ptr<Kernel>> CreateAttentionKernel(const ir::OpDesc& op);
absl::StatusOr<std::unique_ptr<Kernel>> CreateAddLayerNormKernel(const ir::OpDesc& op);

}  // namespace ge::engine::cpu_fused
