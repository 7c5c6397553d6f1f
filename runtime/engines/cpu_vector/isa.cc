// ISA selection and the kernel table of cpu_vector.
#include <algorithm>
#include <atomic>
#include <cstdlib>

#include "base/logging.h"
#include "base/status.h"
#include "runtime/engines/cpu_vector/fused_elementwise.h"
#include "runtime/engines/cpu_vector/gather_elements.h"
#include "runtime/engines/cpu_vector/vector_kernel.h"

namespace ge::engine::cpu_vector {
namespace {

std::atomic<const IsaKernels*> g_kernels{nullptr};

}  // namespace

absl::Status SelectIsa(bool force_avx2) {
  if (!CpuHasAvx2()) return FailedPrecondition("cpu_vector needs AVX2, FMA and F16C, which this CPU lacks");
  const sdk::VectorIsa isa = sdk::CapVectorIsa(
      sdk::CapVectorIsa(sdk::HostVectorIsa(), std::getenv("GED_CPU_VECTOR_ISA")), force_avx2 ? "avx2" : nullptr);
  const IsaKernels* k = isa == sdk::VectorIsa::kAvx512 ? &avx512::Kernels() : &avx2::Kernels();
  g_kernels.store(k);
  return absl::OkStatus();
}

absl::Status ForceIsa(Isa isa) {
  if (isa == Isa::kAvx512 ? !CpuHasAvx512() : !CpuHasAvx2()) {
    return absl::UnavailableError(isa == Isa::kAvx512 ? "no AVX-512 on this CPU" : "no AVX2 on this CPU");
  }
  g_kernels.store(isa == Isa::kAvx512 ? &avx512::Kernels() : &avx2::Kernels());
  return absl::OkStatus();
}

const IsaKernels& Kernels() {
  const IsaKernels* k = g_kernels.load(std::memory_order_relaxed);
  if (k == nullptr) {
    (void)SelectIsa(false);
    k = g_kernels.load();
    if (k == nullptr) k = &avx2::Kernels();  // unreachable when the engine loaded
  }
  return *k;
}

std::optional<VDt> ToVDt(DataType dtype) {
  switch (dtype) {
    case DataType::kFloat: return VDt::kF32;
    case DataType::kDouble: return VDt::kF64;
    case DataType::kFloat16: return VDt::kF16;
    case DataType::kInt32: return VDt::kI32;
    case DataType::kInt64: return VDt::kI64;
    case DataType::kInt8: return VDt::kI8;
    case DataType::kUint8: return VDt::kU8;
    case DataType::kBool: return VDt::kBool;
    default: return std::nullopt;
  }
}

DataType InputDtype(const ir::OpDesc& op, int i) {
  return i < op.num_inputs() ? op.input(i).type.dtype() : DataType::kUndefined;
}

absl::Status CheckInputDtype(const ir::OpDesc& op, int i, sdk::DataTypeSet set, bool optional) {
  if (i >= op.num_inputs()) return optional ? absl::OkStatus() : Unsupported(op, "input ", i, " is absent");
  const ir::ValueType& type = op.input(i).type;
  if (optional && (op.input(i).name.empty() || type.dtype() == DataType::kUndefined)) return absl::OkStatus();
  if (type.kind() != ir::ValueType::Kind::kTensor) return Unsupported(op, "input ", i, " is not a tensor");
  const DataType d = type.dtype();
  if (d == DataType::kUndefined) return Unsupported(op, "the dtype of input ", i, " is unknown");
  if (!set.Contains(d)) {
    return Unsupported(op, "dtype ", DataTypeName(d), " of input ", i, " is not supported (supported: ",
                       set.ToString(), ")");
  }
  return absl::OkStatus();
}

absl::Status CheckSupported(const VectorKernelTable& table, const ir::OpDesc& op) {
  const VectorKernelDef* def = table.Find(op.type());
  if (def == nullptr) return absl::UnimplementedError(StrCat("cpu_vector has no kernel for op type ", op.type()));
  for (const ir::IoDesc& io : op.outputs()) {
    if (io.type.kind() != ir::ValueType::Kind::kTensor) return Unsupported(op, "it writes tensors only");
  }
  GE_RETURN_IF_ERROR(def->check(op));
  auto kernel = def->create(op);
  if (!kernel.ok()) return absl::Status(kernel.status().code(), StrCat(op.type(), " on cpu_vector: ", kernel.status().message()));
  return absl::OkStatus();
}

void RegisterVectorKernels(VectorKernelTable& table) {
  RegisterElementwiseKernels(table);
  RegisterReduceKernels(table);
  RegisterMovementKernels(table);
  RegisterSelectionKernels(table);
  RegisterGatherKernels(table);
  RegisterFusedElementwiseKernel(table);
}

}  // namespace ge::engine::cpu_vector
