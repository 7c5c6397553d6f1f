// ge_local: the engine of ops that need no computation (GE's GeLocal engine).
//
// Data and NetOutput are bound by the executor; Const produces its tensor;
// NoOp orders control edges; Identity and the view ops (Reshape, Squeeze,
// Unsqueeze, Flatten) forward their input's storage under the inferred
// shape without copying. Cost COST_9 (ge_local.json): only the reference
// engine (COST_10) comes after it.
#pragma once

#include <memory>

#include "runtime/engines/api/engine.h"

namespace ge::engine {

namespace ge_local {
// ge_local.json, embedded at build time (ged_engine_attributes).
extern const char kAttributesJson[];
}  // namespace ge_local

class GeLocalEngine final : public Engine {
 public:
  GeLocalEngine();
  ~GeLocalEngine() override;

  // Fails when the embedded json (ge_local.json) did not parse.
  absl::Status Initialize(const EngineOptions& options) override;

  const OpsKernelInfoStore& info_store() const override;
  const KernelFactory& kernel_factory() const override;

 private:
  class InfoStore;
  class Factory;
  absl::Status attributes_error_;  // the embedded json (ge_local.json) did not parse
  std::unique_ptr<InfoStore> info_store_;
  std::unique_ptr<Factory> factory_;
};

}  // namespace ge::engine
