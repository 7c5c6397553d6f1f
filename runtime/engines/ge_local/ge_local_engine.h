// ge_local: the engine of ops that need no computation (GE's GeLocal engine).
//
// Data and NetOutput are bound by the executor; Const produces its tensor;
// NoOp orders control edges; Identity and the view ops (Reshape, Squeeze,
// Unsqueeze, Flatten) forward their input's storage under the inferred
// shape without copying. Cost COST_9: only host_cpu comes after it.
#pragma once

#include <memory>

#include "runtime/engines/api/engine.h"

namespace ge::engine {

class GeLocalEngine final : public Engine {
 public:
  GeLocalEngine();
  ~GeLocalEngine() override;

  const EngineAttributes& attributes() const override { return attributes_; }
  const OpsKernelInfoStore& info_store() const override;
  const KernelFactory& kernel_factory() const override;

 private:
  class InfoStore;
  class Factory;
  EngineAttributes attributes_;
  std::unique_ptr<InfoStore> info_store_;
  std::unique_ptr<Factory> factory_;
};

}  // namespace ge::engine
