// The kernel table of the host_cpu engine.
//
// Each kernel family registers its kernels through an explicit function
// (RegisterElementwiseKernels, ...); RegisterHostCpuKernels calls them all in
// a fixed order. A KernelDef names the op type, the factory that builds the
// kernel from an OpDesc (validating attributes once), and the dtypes each
// input and output may have, which CheckSupported reads. The dtype sets are
// derived from the same type lists the kernels dispatch over, so what
// CheckSupported accepts is exactly what Compute handles.
#pragma once

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "base/dtype.h"
#include "base/ir/op_desc.h"
#include "base/strings.h"
#include "runtime/engines/api/kernel.h"

namespace ge::engine::host_cpu {

// A set of DataTypes as a bit mask.
class DataTypeSet {
 public:
  constexpr DataTypeSet() = default;
  constexpr DataTypeSet(std::initializer_list<DataType> dtypes) {
    for (DataType d : dtypes) bits_ |= Bit(d);
  }
  // The set admitting every dtype (no constraint).
  static constexpr DataTypeSet Any() {
    DataTypeSet s;
    s.bits_ = ~uint32_t{0};
    return s;
  }
  constexpr bool Contains(DataType d) const { return (bits_ & Bit(d)) != 0; }
  constexpr bool empty() const { return bits_ == 0; }
  constexpr DataTypeSet operator|(DataTypeSet other) const {
    DataTypeSet s;
    s.bits_ = bits_ | other.bits_;
    return s;
  }
  // "f32, f64, i32" (for messages).
  std::string ToString() const;

 private:
  static constexpr uint32_t Bit(DataType d) { return uint32_t{1} << static_cast<int>(d); }
  uint32_t bits_ = 0;
};

using KernelCreateFn =
    std::function<absl::StatusOr<std::unique_ptr<Kernel>>(const ir::OpDesc& op)>;

struct KernelDef {
  std::string op_type;
  KernelCreateFn create;
  // Allowed dtypes of each input and output by position; the last entry
  // applies to every later position (variadic ports). Sequence and optional
  // values are checked by their element dtype.
  std::vector<DataTypeSet> input_dtypes;
  std::vector<DataTypeSet> output_dtypes;
};

class KernelTable {
 public:
  // Adds a kernel; registering an op type twice is a programmer error.
  void Add(KernelDef def);
  // The kernel of `op_type`, or null.
  const KernelDef* Find(std::string_view op_type) const;
  // Registered op types, sorted.
  std::vector<std::string> OpTypes() const;
  size_t size() const { return defs_.size(); }

  // OK when `op`'s input and output dtypes are ones the kernel handles,
  // else InvalidArgument "<Op> on <engine> does not support dtype <d> ...".
  absl::Status CheckDtypes(const KernelDef& def, const ir::OpDesc& op,
                           std::string_view engine_name) const;

 private:
  StringMap<KernelDef> defs_;
};

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
