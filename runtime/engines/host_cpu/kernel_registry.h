// The kernel table of the host_cpu engine (the SDK's KernelTable over
// host_cpu's KernelDef).
//
// Each kernel family registers its kernels through an explicit function
// (RegisterElementwiseKernels, ...); RegisterHostCpuKernels calls them all in
// a fixed order. The dtype sets are derived from the same type lists the
// kernels dispatch over, so what CheckSupported accepts is exactly what
// Compute handles.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "base/dtype.h"
#include "base/ir/op_desc.h"
#include "base/strings.h"
#include "runtime/engines/api/kernel.h"
#include "runtime/engines/sdk/broadcast.h"
#include "runtime/engines/sdk/elementwise.h"
#include "runtime/engines/sdk/kernel_table.h"
#include "runtime/engines/sdk/kernel_util.h"

namespace ge::engine::host_cpu {

// host_cpu's kernels are written against the engine SDK's helpers (type
// lists and dispatch, attribute readers, broadcasting, element-wise loops):
// its names are visible unqualified here, as they were when they lived in
// this engine.
using namespace ::ge::engine::sdk;  // NOLINT(build/namespaces)

using KernelCreateFn = std::function<absl::StatusOr<std::unique_ptr<Kernel>>(const ir::OpDesc& op)>;

// One kernel: its op type, the factory that builds it from an OpDesc
// (validating attributes once), and the dtypes each input and output may
// have, which CheckSupported reads (sdk::CheckPortDtypes).
struct KernelDef {
  std::string op_type;
  KernelCreateFn create;
  // Allowed dtypes of each input and output by position; the last entry
  // applies to every later position (variadic ports). Sequence and optional
  // values are checked by their element dtype.
  std::vector<DataTypeSet> input_dtypes;
  std::vector<DataTypeSet> output_dtypes;
};

using KernelTable = sdk::KernelTable<KernelDef>;

// Registration functions, one per kernel family.
void RegisterUnaryKernels(KernelTable& table);
void RegisterBinaryKernels(KernelTable& table);
void RegisterNnKernels(KernelTable& table);
void RegisterMatMulKernels(KernelTable& table);
void RegisterConvKernels(KernelTable& table);
void RegisterConvTransposeKernels(KernelTable& table);
void RegisterResizeKernels(KernelTable& table);
void RegisterPadKernels(KernelTable& table);
void RegisterDetectionKernels(KernelTable& table);
void RegisterGridSampleKernels(KernelTable& table);
void RegisterSelectionKernels(KernelTable& table);
void RegisterLinalgKernels(KernelTable& table);
void RegisterPoolKernels(KernelTable& table);
void RegisterTensorKernels(KernelTable& table);
void RegisterShapeKernels(KernelTable& table);
void RegisterCastKernels(KernelTable& table);
void RegisterReduceKernels(KernelTable& table);
void RegisterIndexingKernels(KernelTable& table);
void RegisterTopKKernels(KernelTable& table);
void RegisterLossKernels(KernelTable& table);
void RegisterQuantizeWindowKernels(KernelTable& table);
void RegisterVariableKernels(KernelTable& table);
void RegisterSequenceKernels(KernelTable& table);
void RegisterTextKernels(KernelTable& table);
void RegisterRnnKernels(KernelTable& table);
void RegisterNormPoolKernels(KernelTable& table);
void RegisterRandomKernels(KernelTable& table);
void RegisterQuantizedKernels(KernelTable& table);
void RegisterSignalKernels(KernelTable& table);

// Every host_cpu kernel, in a fixed order.
void RegisterHostCpuKernels(KernelTable& table);

}  // namespace ge::engine::host_cpu
