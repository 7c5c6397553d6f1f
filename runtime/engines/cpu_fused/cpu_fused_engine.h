// cpu_fused: the composite engine over cpu_dense and cpu_vector (GE's
// composite engines, seeds/05; issue 4).
//
// cpu_dense.json and cpu_vector.json name it as their `composite_engine`,
// so the compiler's composite engine partition hands it the connected
// regions of nodes placed on either, and its graph optimizer
// (graph_optimizer.h) rewrites patterns that cross the two into fused ops
// (fused_ops.h): attention and LayerNorm with its residual adds. It is not
// atomic: the placer never offers it nodes, and CheckSupported answers only
// for the fused ops its own optimizer makes. Its kernels (fused_kernels.h)
// need AVX2 and FMA; without them Initialize fails, the engine does not
// load, and the regions stay unfused. `ge.exec.exclude_engines=cpu_fused`
// switches the fusions off (the engine then takes no subgraphs; it has no
// options of its own).
#pragma once

#include <string>
#include <vector>

#include "runtime/engines/api/engine.h"
#include "runtime/engines/cpu_fused/graph_optimizer.h"

namespace ge::engine {

namespace cpu_fused {
// cpu_fused.json, embedded at build time (ged_engine_attributes).
extern const char kAttributesJson[];
}  // namespace cpu_fused

class CpuFusedInfoStore final : public OpsKernelInfoStore {
 public:
  absl::Status CheckSupported(const ir::Node& node) const override;
  std::vector<std::string> SupportedOpTypes() const override;
};

class CpuFusedKernelFactory final : public KernelFactory {
 public:
  absl::StatusOr<std::unique_ptr<Kernel>> CreateKernel(const ir::OpDesc& op) const override;
};

class CpuFusedEngine final : public Engine {
 public:
  CpuFusedEngine();
  ~CpuFusedEngine() override;

  // Registers the fused ops in the global op registry and selects the
  // loops (AVX-512 when the CPU has it); FailedPrecondition without AVX2.
  absl::Status Initialize(const EngineOptions& options) override;
  const OpsKernelInfoStore& info_store() const override { return info_store_; }
  const KernelFactory& kernel_factory() const override { return factory_; }
  std::vector<GraphOptimizer*> graph_optimizers() override { return {&optimizer_}; }

 private:
  absl::Status attributes_error_;  // the embedded json (cpu_fused.json) did not parse
  CpuFusedInfoStore info_store_;
  CpuFusedKernelFactory factory_;
  cpu_fused::CpuFusedGraphOptimizer optimizer_;
};

}  // namespace ge::engine
