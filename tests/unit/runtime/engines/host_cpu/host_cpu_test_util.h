// Shorthands for the host_cpu kernel tests: one engine per process and
// small tensor builders.
#pragma once

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/engines/host_cpu/host_cpu_engine.h"
#include "tests/testing/kernel_test_util.h"

namespace ge::engine::host_cpu {

inline const HostCpuEngine& Engine() {
  static const HostCpuEngine* engine = new HostCpuEngine();
  return *engine;
}

template <typename T>
Tensor T1(std::vector<T> values, Shape shape) {
  return Tensor::FromVector<T>(values, shape);
}
inline Tensor F32(std::vector<float> values, Shape shape) { return T1<float>(std::move(values), shape); }
inline Tensor I64(std::vector<int64_t> values, Shape shape) {
  return T1<int64_t>(std::move(values), shape);
}
inline Tensor I64s(std::vector<int64_t> values) {
  const int64_t n = static_cast<int64_t>(values.size());
  return I64(std::move(values), Shape{n});
}

// Runs `type` on host_cpu with one output; fails the test on error.
inline Tensor Host(const std::string& type, const std::vector<Value>& inputs,
                  const ir::AttrMap& attrs = {}, const test::RunOptions& options = {}) {
  auto out = test::RunOp1(Engine(), type, inputs, attrs, options);
  EXPECT_TRUE(out.ok()) << type << ": " << out.status();
  return out.ok() ? *out : Tensor();
}

// The error of running `type` (OK when it unexpectedly succeeds).
inline absl::Status RunError(const std::string& type, const std::vector<Value>& inputs,
                             const ir::AttrMap& attrs = {}, int num_outputs = 1,
                             const test::RunOptions& options = {}) {
  auto out = test::RunOp(Engine(), type, inputs, attrs, num_outputs, options);
  return out.status();
}

}  // namespace ge::engine::host_cpu
