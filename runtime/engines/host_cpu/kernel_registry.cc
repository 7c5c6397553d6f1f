// The one function that registers every host_cpu kernel family.
#include "runtime/engines/host_cpu/kernel_registry.h"

namespace ge::engine::host_cpu {

void RegisterHostCpuKernels(KernelTable& table) {
  RegisterUnaryKernels(table);
  RegisterBinaryKernels(table);
  RegisterCastKernels(table);
  RegisterTensorKernels(table);
  RegisterShapeKernels(table);
  RegisterReduceKernels(table);
  RegisterIndexingKernels(table);
  RegisterTopKKernels(table);
  RegisterLossKernels(table);
  RegisterQuantizeWindowKernels(table);
  RegisterNnKernels(table);
  RegisterRnnKernels(table);
  RegisterMatMulKernels(table);
  RegisterConvKernels(table);
  RegisterConvTransposeKernels(table);
  RegisterResizeKernels(table);
  RegisterPadKernels(table);
  RegisterDetectionKernels(table);
  RegisterGridSampleKernels(table);
  RegisterSelectionKernels(table);
  RegisterLinalgKernels(table);
  RegisterPoolKernels(table);
  RegisterVariableKernels(table);
  RegisterSequenceKernels(table);
  RegisterTextKernels(table);
  RegisterNormPoolKernels(table);
  RegisterRandomKernels(table);
  RegisterQuantizedKernels(table);
  RegisterSignalKernels(table);
}

}  // namespace ge::engine::host_cpu
