// The cpu_dense kernel table and CheckSupported.
#include "runtime/engines/cpu_dense/kernel_registry.h"

#include "base/status.h"
#include "runtime/engines/cpu_dense/int8_util.h"

namespace ge::engine::cpu_dense {

namespace {

absl::Status CheckMainDtype(const DenseKernelDef& def, const ir::OpDesc& op, DataType dtype,
                            std::string_view port, const DenseContext& ctx) {
  if (dtype == DataType::kUndefined) return absl::OkStatus();
  if (!def.dtypes.Contains(dtype) || (dtype == DataType::kBFloat16 && !ctx.bf16)) {
    return Unsupported(op, "dtype ", DataTypeName(dtype), " of ", port,
                       " is not supported (supported: ", def.dtypes.ToString(),
                       ctx.bf16 ? "" : "; bf16 needs AVX512-BF16 or AMX", ")");
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status CheckSupported(const DenseKernelTable& table, const ir::OpDesc& op, const DenseContext& ctx) {
  const DenseKernelDef* def = table.Find(op.type());
  if (def == nullptr) {
    return absl::UnimplementedError(StrCat("cpu_dense has no kernel for op type ", op.type()));
  }
  if (op.num_inputs() > 0) GE_RETURN_IF_ERROR(CheckMainDtype(*def, op, InputDtype(op, 0), "input 0", ctx));
  if (op.num_outputs() > 0) {
    GE_RETURN_IF_ERROR(CheckMainDtype(*def, op, op.output(0).type.dtype(), "output 0", ctx));
  }
  for (const ir::IoDesc& io : op.inputs()) {
    if (io.type.kind() != ir::ValueType::Kind::kTensor && io.type.dtype() != DataType::kUndefined) {
      return Unsupported(op, "it takes tensors only");
    }
  }
  if (def->check) GE_RETURN_IF_ERROR(def->check(op, ctx));
  return absl::OkStatus();
}

absl::Status CheckSupportedNode(const DenseKernelTable& table, const ir::Node& node, const DenseContext& ctx) {
  GE_RETURN_IF_ERROR(CheckSupported(table, node.op_desc(), ctx));
  GE_RETURN_IF_ERROR(NodeLevelCheck(node));
  return absl::OkStatus();
}

DataType InputDtype(const ir::OpDesc& op, int i) {
  return i < op.num_inputs() ? op.input(i).type.dtype() : DataType::kUndefined;
}

Shape InputShape(const ir::OpDesc& op, int i) {
  if (i >= op.num_inputs() || !op.input(i).type.is_tensor()) return Shape::UnknownRank();
  return op.input(i).type.shape();
}

absl::Status CheckFloatInput(const ir::OpDesc& op, int i, const DenseContext& ctx) {
  const DataType d = InputDtype(op, i);
  if (d == DataType::kUndefined || d == DataType::kFloat || (d == DataType::kBFloat16 && ctx.bf16)) {
    return absl::OkStatus();
  }
  return Unsupported(op, "input ", i, " has dtype ", DataTypeName(d), " (f32",
                     ctx.bf16 ? " or bf16" : "", " only)");
}

void RegisterDenseKernels(DenseKernelTable& table) {
  RegisterConvKernels(table);
  RegisterConvTransposeKernels(table);
  RegisterResizeKernels(table);
  RegisterMatMulKernels(table);
  RegisterFusedKernels(table);
  RegisterPoolKernels(table);
  RegisterPadKernels(table);
  RegisterDepthSpaceKernels(table);
  RegisterChannelShuffleKernels(table);
  RegisterChannelsLastViewKernels(table);
  RegisterInstanceNormKernels(table);
  RegisterGroupNormKernels(table);
  RegisterChannelSoftmaxKernels(table);
  RegisterNormKernels(table);
  RegisterEltwiseKernels(table);
  RegisterBinaryKernels(table);
  RegisterLayoutKernels(table);
  RegisterConcatKernels(table);
  RegisterInt8ConvKernels(table);
  RegisterInt8MatMulKernels(table);
  RegisterQuantizeKernels(table);
  RegisterInt8AddKernels(table);
  RegisterRnnKernels(table);
}

}  // namespace ge::engine::cpu_dense
