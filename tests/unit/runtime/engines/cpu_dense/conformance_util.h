// Engine conformance for cpu_dense (after ggml's test-backend-ops): every
// case runs one op on cpu_dense and on host_cpu with the same inputs and
// compares the outputs. Cases are drawn from seeded generators, so a
// failure names a reproducible case.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/engines/cpu_dense/cpu_dense_engine.h"
#include "runtime/engines/host_cpu/host_cpu_engine.h"
#include "tests/testing/kernel_test_util.h"

namespace ge::engine::cpu_dense {

// The engines, created (and cpu_dense initialized) once per process.
const CpuDenseEngine& Dense();
const HostCpuEngine& Host();

// One conformance case.
struct Case {
  ir::OpDesc op;
  std::vector<Value> inputs;
  test::Tolerance tolerance;
  // The expected output when host_cpu has no kernel for the op (the fused
  // op: its base op and post-ops composed from host_cpu kernels).
  std::function<absl::StatusOr<Tensor>()> reference;
  // Inputs cpu_dense sees as constants at prepare (weights packed once).
  std::vector<int> const_inputs;
};

// Case generators by op type; every cpu_dense kernel must have one.
using CaseGenerator = std::function<std::vector<Case>(class Rng& rng)>;
using CaseTable = std::map<std::string, CaseGenerator>;
void AddDenseCases(CaseTable& table);  // Conv, MatMul, Gemm, pooling, _DenseFused
void AddNnCases(CaseTable& table);     // normalizations, softmax, element-wise
void AddInt8Cases(CaseTable& table);   // QLinearConv, ConvInteger, QLinearMatMul, MatMulInteger
void AddRnnCases(CaseTable& table);    // RNN, GRU, LSTM

// Builds a case: `type` with `attrs`, inputs typed from values, one output
// per `num_outputs`; the tolerance is `tolerance` or the dtype's default.
Case MakeCase(const std::string& type, std::vector<Value> inputs, ir::AttrMap attrs = {},
              std::optional<test::Tolerance> tolerance = std::nullopt, int num_outputs = 1);

// Runs `c` on both engines and compares. Also checks that cpu_dense's
// CheckSupported accepts the node (typed as the test runs it), so the
// suite covers exactly what the engine claims.
::testing::AssertionResult Conforms(const Case& c);

// Why cpu_dense rejects the case's node (OK when it accepts it).
absl::Status Rejection(const Case& c);

// A seeded generator of small shapes and values.
class Rng {
 public:
  explicit Rng(uint64_t seed) : gen_(seed) {}
  int64_t Int(int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(gen_); }
  bool Bool() { return Int(0, 1) == 1; }
  float Float(float lo, float hi) { return std::uniform_real_distribution<float>(lo, hi)(gen_); }
  template <typename T>
  const T& Pick(const std::vector<T>& v) { return v[Int(0, static_cast<int64_t>(v.size()) - 1)]; }
  uint64_t Seed() { return gen_(); }
  // Random values in [lo, hi] of `dtype` and `shape`.
  ge::Tensor Random(DataType dtype, const Shape& shape, double lo = -1.0, double hi = 1.0) {
    return test::RandomTensor(dtype, shape, Seed(), lo, hi);
  }

 private:
  std::mt19937_64 gen_;
};

// "f32" and, when the CPU runs bf16 natively, "bf16".
std::vector<DataType> DenseFloatTypes();

// Runs `type` on host_cpu (one tensor output).
absl::StatusOr<Tensor> HostOp(const std::string& type, const std::vector<Value>& inputs,
                              const ir::AttrMap& attrs = {});

}  // namespace ge::engine::cpu_dense
