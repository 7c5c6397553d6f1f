// The engines cpu_vector's kernel tests compare: cpu_vector itself
// (initialized once) and host_cpu, the reference.
#pragma once

#include "gtest/gtest.h"
#include "runtime/engines/cpu_vector/cpu_vector_engine.h"
#include "runtime/engines/host_cpu/host_cpu_engine.h"

namespace ge::engine::cpu_vector {

inline const CpuVectorEngine& Vector() {
  static const CpuVectorEngine* e = [] {
    auto* engine = new CpuVectorEngine();
    EXPECT_TRUE(engine->Initialize({}).ok());
    return engine;
  }();
  return *e;
}

inline const HostCpuEngine& Host() {
  static const HostCpuEngine* e = new HostCpuEngine();
  return *e;
}

}  // namespace ge::engine::cpu_vector
