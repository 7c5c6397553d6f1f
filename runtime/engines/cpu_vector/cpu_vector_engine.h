// cpu_vector: the vector engine (GE's Vector Core analogue, issue 4).
//
// Element-wise unary and binary ops with numpy broadcasting, Where, Cast,
// reductions and data movement, written for the auto-vectorizer and
// compiled for AVX2 and AVX-512 (isa_kernels.h; the table is chosen once at
// Initialize, AVX-512 when the CPU has it, unless the option
// `ge.cpu_vector.isa=avx2` or GED_CPU_VECTOR_ISA=avx2 forces AVX2). Large
// tensors split across the device's intra-op threads.
//
// Cost COST_2: cpu_dense (1) keeps the dense math; the f32 element-wise
// ops both engines run go by estimated cost (the tables of cpu_vector.json
// and cpu_dense.json) unless ge.engineType names an engine;
// cpu_vector takes every other op it supports ahead of ge_local (9) and
// host_cpu (10): other dtypes (f16, f64, integers, bool), broadcasts
// oneDNN cannot express, and the ops cpu_dense lacks.
// CheckSupported accepts exactly the dtypes the ISA table has loops for.
//
// Its graph optimizers read GatherElements' expanded inputs through zero
// strides (`_GatherElementsBroadcast`, gather_elements.h) and fuse groups of
// float element-wise ops into one `_FusedElementwise` kernel each
// (elementwise_fusion.h).
//
// Its KernelBuilder puts its nodes on the StaticExecutor with a versioned
// blob recording the types the task was built for; LoadKernel refuses a
// blob for other types and prepares the kernel once (plans, strides,
// workspace), so Compute does no shape work.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "runtime/engines/api/engine.h"
#include "runtime/engines/cpu_vector/elementwise_fusion.h"
#include "runtime/engines/cpu_vector/gather_elements.h"
#include "runtime/engines/cpu_vector/vector_kernel.h"

namespace ge::engine {

namespace cpu_vector {
// cpu_vector.json, embedded at build time (ged_engine_attributes).
extern const char kAttributesJson[];
}  // namespace cpu_vector

class CpuVectorInfoStore final : public OpsKernelInfoStore {
 public:
  explicit CpuVectorInfoStore(const cpu_vector::VectorKernelTable& table) : table_(table) {}
  absl::Status CheckSupported(const ir::Node& node) const override;
  absl::Status CheckSupportedOp(const ir::OpDesc& op) const { return cpu_vector::CheckSupported(table_, op); }
  std::vector<std::string> SupportedOpTypes() const override { return table_.OpTypes(); }

 private:
  const cpu_vector::VectorKernelTable& table_;
};

class CpuVectorKernelFactory final : public KernelFactory {
 public:
  explicit CpuVectorKernelFactory(const cpu_vector::VectorKernelTable& table) : table_(table) {}
  absl::StatusOr<std::unique_ptr<Kernel>> CreateKernel(const ir::OpDesc& op) const override;

 private:
  const cpu_vector::VectorKernelTable& table_;
};

class CpuVectorKernelBuilder final : public KernelBuilder {
 public:
  static constexpr uint32_t kParamVersion = 1;
  absl::StatusOr<TaskDef> BuildTask(const KernelFactory& factory, std::string_view engine_name,
                                    PrepareContext& ctx) const override;
  absl::StatusOr<std::unique_ptr<Kernel>> LoadKernel(const KernelFactory& factory, const TaskDef& task,
                                                     PrepareContext& ctx) const override;
  // "f32[1],f32[1]->f32[1]": the types a task was built for.
  static std::string Signature(const PrepareContext& ctx);
};

class CpuVectorEngine final : public Engine {
 public:
  CpuVectorEngine();
  ~CpuVectorEngine() override;

  // Selects the ISA table (option ge.cpu_vector.isa: "auto" or "avx2") and
  // registers `_FusedElementwise`'s schema;
  // FailedPrecondition without AVX2, or when the embedded json
  // (cpu_vector.json) did not parse.
  absl::Status Initialize(const EngineOptions& options) override;
  const OpsKernelInfoStore& info_store() const override { return info_store_; }
  const CpuVectorInfoStore& vector_info_store() const { return info_store_; }
  const KernelFactory& kernel_factory() const override { return factory_; }
  const KernelBuilder& kernel_builder() const override { return builder_; }
  // On each cpu_vector subgraph: GatherElements reading Expands through
  // zero strides (gather_elements.h), then element-wise fusion
  // (elementwise_fusion.h).
  std::vector<GraphOptimizer*> graph_optimizers() override { return {&gather_, &fusion_}; }

 private:
  absl::Status attributes_error_;
  cpu_vector::VectorKernelTable table_;
  CpuVectorInfoStore info_store_;
  CpuVectorKernelFactory factory_;
  CpuVectorKernelBuilder builder_;
  cpu_vector::GatherFromExpandOptimizer gather_;
  cpu_vector::ElementwiseFusionOptimizer fusion_;
};

}  // namespace ge::engine
