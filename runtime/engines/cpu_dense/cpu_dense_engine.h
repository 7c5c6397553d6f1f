// cpu_dense: the dense-compute engine (GE's AI Core engine, seeds/05) on
// oneDNN.
//
// Cost COST_1: Conv, MatMul, Gemm, pooling, normalizations, softmax and the
// element-wise ops oneDNN runs well land here before any other engine.
// CheckSupported accepts exactly what the kernels compute (f32, and bf16
// when the CPU has native bf16), and its message says why otherwise, so
// the placer falls back to the next engine. The graph optimizer folds
// Conv + BatchNormalization and fuses activations and residual adds into
// oneDNN post-ops (`_DenseFused`, registered in the op registry at
// Initialize). Kernels are described in dense_kernel.h; the design in
// docs/design/cpu_dense.md.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "runtime/engines/api/engine.h"
#include "runtime/engines/cpu_dense/dense_kernel.h"
#include "runtime/engines/cpu_dense/graph_optimizer.h"
#include "runtime/engines/cpu_dense/kernel_registry.h"

namespace ge::engine {

inline constexpr std::string_view kCpuDenseEngineName = "cpu_dense";

namespace cpu_dense {
// cpu_dense.json, embedded at build time (ged_engine_attributes).
extern const char kAttributesJson[];
}  // namespace cpu_dense

class CpuDenseInfoStore final : public OpsKernelInfoStore {
 public:
  CpuDenseInfoStore(const cpu_dense::DenseKernelTable& table, const cpu_dense::DenseContext& context,
                    const absl::Status& init_status)
      : table_(table), context_(context), init_status_(init_status) {}
  absl::Status CheckSupported(const ir::Node& node) const override;
  // The OpDesc form (for callers without a graph: tests, the fusion pass).
  absl::Status CheckSupportedOp(const ir::OpDesc& op) const;
  std::vector<std::string> SupportedOpTypes() const override { return table_.OpTypes(); }

 private:
  const cpu_dense::DenseKernelTable& table_;
  const cpu_dense::DenseContext& context_;
  const absl::Status& init_status_;
};

class CpuDenseKernelFactory final : public KernelFactory {
 public:
  CpuDenseKernelFactory(const cpu_dense::DenseKernelTable& table, const cpu_dense::DenseContext& context,
                        const absl::Status& init_status)
      : table_(table), context_(context), init_status_(init_status) {}
  absl::StatusOr<std::unique_ptr<Kernel>> CreateKernel(const ir::OpDesc& op) const override;

 private:
  const cpu_dense::DenseKernelTable& table_;
  const cpu_dense::DenseContext& context_;
  const absl::Status& init_status_;
};

// Static tasks keep their kernels' packed weights (prepared_weights.h):
// BuildTask records them, LoadKernel offers them back to the kernel's
// Prepare, which adopts each one packed exactly as it would pack it here.
class CpuDenseKernelBuilder final : public KernelBuilder {
 public:
  absl::StatusOr<TaskDef> BuildTask(const KernelFactory& factory, std::string_view engine_name,
                                    PrepareContext& ctx) const override;
  absl::StatusOr<std::unique_ptr<Kernel>> LoadKernel(const KernelFactory& factory, const TaskDef& task,
                                                     PrepareContext& ctx) const override;
};

class CpuDenseEngine final : public Engine {
 public:
  CpuDenseEngine();
  ~CpuDenseEngine() override;

  // Registers `_DenseFused` in the global op registry (once per process);
  // fails when oneDNN or the embedded json (cpu_dense.json) failed.
  absl::Status Initialize(const EngineOptions& options) override;
  // Keeps the reference engine's kernel factory for shapes oneDNN cannot run.
  void SetReferenceEngine(const Engine* reference) override;
  const OpsKernelInfoStore& info_store() const override { return info_store_; }
  const CpuDenseInfoStore& dense_info_store() const { return info_store_; }
  const KernelFactory& kernel_factory() const override { return factory_; }
  std::vector<GraphOptimizer*> graph_optimizers() override { return {&optimizer_}; }
  const KernelBuilder& kernel_builder() const override { return builder_; }
  const cpu_dense::DenseContext& context() const { return context_; }

 private:
  absl::Status attributes_error_;  // the embedded json did not parse
  absl::Status init_status_;       // oneDNN's engine could not be created
  cpu_dense::DenseContext context_;
  cpu_dense::DenseKernelTable table_;
  CpuDenseInfoStore info_store_;
  CpuDenseKernelFactory factory_;
  cpu_dense::CpuDenseGraphOptimizer optimizer_;
  CpuDenseKernelBuilder builder_;
};

}  // namespace ge::engine
