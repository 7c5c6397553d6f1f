// The kernel table of cpu_dense (the SDK's KernelTable over DenseKernelDef).
//
// A DenseKernelDef names the op type, the dtypes of the op's main tensor
// (input 0 and output 0), a support check and the factory. The check sees
// the node's attributes and typed ports (shapes may be unknown) and returns
// the reason it cannot run the node, which the placer shows when the node
// falls back to another engine; it must accept only what the kernel
// computes. Each op family registers through an explicit function;
// RegisterDenseKernels calls them in a fixed order.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "base/ir/node.h"
#include "base/ir/op_desc.h"
#include "base/strings.h"
#include "runtime/engines/api/kernel.h"
#include "runtime/engines/cpu_dense/dense_kernel.h"
#include "runtime/engines/sdk/kernel_table.h"

namespace ge::engine::cpu_dense {

using SupportCheckFn = std::function<absl::Status(const ir::OpDesc& op, const DenseContext& ctx)>;
using DenseCreateFn = std::function<absl::StatusOr<std::unique_ptr<Kernel>>(
    const ir::OpDesc& op, const DenseContext& ctx)>;
// A check that needs the graph around the node (its constant inputs).
using NodeCheckFn = std::function<absl::Status(const ir::Node& node)>;

struct DenseKernelDef {
  std::string op_type;
  sdk::DataTypeSet dtypes;       // of input 0 and output 0; bf16 also needs the CPU's support
  SupportCheckFn check;          // may be empty: nothing beyond dtypes
  DenseCreateFn create;
};

// The SDK's kernel table over cpu_dense's definitions.
using DenseKernelTable = sdk::KernelTable<DenseKernelDef>;

// OK when cpu_dense runs `op`; otherwise why not (Unimplemented for what
// the engine lacks, InvalidArgument for a malformed node).
absl::Status CheckSupported(const DenseKernelTable& table, const ir::OpDesc& op, const DenseContext& ctx);
// The same, plus the node-level checks that need the graph around the node
// (NodeLevelCheck: the int8 ops' constant weight zero points).
absl::Status CheckSupportedNode(const DenseKernelTable& table, const ir::Node& node, const DenseContext& ctx);

// Registration functions, one per kernel family.
void RegisterConvKernels(DenseKernelTable& table);
void RegisterConvTransposeKernels(DenseKernelTable& table);
void RegisterResizeKernels(DenseKernelTable& table);
void RegisterMatMulKernels(DenseKernelTable& table);
void RegisterPoolKernels(DenseKernelTable& table);
void RegisterPadKernels(DenseKernelTable& table);
void RegisterDepthSpaceKernels(DenseKernelTable& table);
void RegisterChannelShuffleKernels(DenseKernelTable& table);
void RegisterChannelsLastViewKernels(DenseKernelTable& table);
void RegisterInstanceNormKernels(DenseKernelTable& table);
void RegisterGroupNormKernels(DenseKernelTable& table);
void RegisterChannelSoftmaxKernels(DenseKernelTable& table);
void RegisterNormKernels(DenseKernelTable& table);
void RegisterEltwiseKernels(DenseKernelTable& table);
void RegisterBinaryKernels(DenseKernelTable& table);
void RegisterFusedKernels(DenseKernelTable& table);
void RegisterLayoutKernels(DenseKernelTable& table);
void RegisterConcatKernels(DenseKernelTable& table);
void RegisterInt8ConvKernels(DenseKernelTable& table);
void RegisterInt8MatMulKernels(DenseKernelTable& table);
void RegisterQuantizeKernels(DenseKernelTable& table);
void RegisterInt8AddKernels(DenseKernelTable& table);
void RegisterRnnKernels(DenseKernelTable& table);

// Every cpu_dense kernel, in a fixed order.
void RegisterDenseKernels(DenseKernelTable& table);

// ---- Helpers for support checks ----

// Unimplemented "<Op> on cpu_dense: <reason> (node '<name>')".
template <typename... Args>
absl::Status Unsupported(const ir::OpDesc& op, const Args&... args) {
  return absl::UnimplementedError(
      StrCat(op.type(), " on cpu_dense: ", args..., " (node '", op.name(), "')"));
}
// The dtype of input `i` (kUndefined when absent or untyped).
DataType InputDtype(const ir::OpDesc& op, int i);
// The shape of input `i` (unknown rank when absent).
Shape InputShape(const ir::OpDesc& op, int i);
// OK when input `i` is absent or has dtype f32 or (when the CPU runs bf16) bf16.
absl::Status CheckFloatInput(const ir::OpDesc& op, int i, const DenseContext& ctx);

}  // namespace ge::engine::cpu_dense
