// Engine conformance (issue 4 item 6, after ggml's test-backend-ops): every
// kernel of cpu_dense, cpu_vector and cpu_fused runs against host_cpu on
// randomized shapes, dtypes and attributes, broadcasting and zero-sized
// tensors included. One parameterized test per kernel of each engine's
// table, so a kernel without cases fails. cpu_vector and cpu_fused run each
// case with every ISA table the CPU has (AVX2, and AVX-512 when present);
// cpu_fused's ops have no host_cpu kernel and compare with the ops they
// replace, run on host_cpu.
//
// The seed is GED_CONFORMANCE_SEED (default 20261125) mixed with the op
// type; failures print it, so `GED_CONFORMANCE_SEED=<seed>` reproduces.
#include <cstdlib>
#include <functional>

#include "runtime/engines/cpu_fused/fused_kernels.h"
#include "runtime/engines/cpu_vector/cpu_vector_engine.h"
#include "tests/unit/runtime/engines/conformance/fused_cases.h"
#include "tests/unit/runtime/engines/conformance/vector_cases.h"

namespace ge::engine::cpu_dense {
std::string Describe(const Case& c);
void AddDenseCases(CaseTable& table);
void AddNnCases(CaseTable& table);
void AddRnnCases(CaseTable& table);
}  // namespace ge::engine::cpu_dense

namespace ge::engine::conformance {
namespace {

uint64_t BaseSeed() {
  const char* env = std::getenv("GED_CONFORMANCE_SEED");
  return env != nullptr ? std::strtoull(env, nullptr, 10) : 20261125;
}

const CpuVectorEngine& Vector() {
  static const CpuVectorEngine* engine = [] {
    auto* e = new CpuVectorEngine();
    const absl::Status s = e->Initialize({});
    if (!s.ok()) ADD_FAILURE() << "cpu_vector Initialize: " << s;
    return e;
  }();
  return *engine;
}

const VectorCaseTable& VectorCases() {
  static const VectorCaseTable* table = [] {
    auto* t = new VectorCaseTable();
    AddElementwiseCases(*t);
    AddReduceAndMovementCases(*t);
    AddFusedElementwiseCases(*t);
    return t;
  }();
  return *table;
}

// The node as the compiler hands it to CheckSupported: outputs typed.
ir::OpDesc Typed(const Case& c) {
  ir::OpDesc op = c.op;
  auto types = test::InferOutputTypes(op, c.inputs);
  if (types.ok()) {
    for (int i = 0; i < op.num_outputs(); ++i) op.mutable_output(i).type = (*types)[i];
  }
  return op;
}

std::vector<cpu_vector::Isa> Isas() {
  std::vector<cpu_vector::Isa> out = {cpu_vector::Isa::kAvx2};
  if (cpu_vector::CpuHasAvx512()) out.push_back(cpu_vector::Isa::kAvx512);
  return out;
}

constexpr DataType kDtypes[] = {DataType::kFloat, DataType::kDouble, DataType::kFloat16, DataType::kInt32,
                                DataType::kInt64, DataType::kInt8,   DataType::kUint8,   DataType::kBool};
constexpr int kTrialsPerDtype = 6;

class VectorConformance : public ::testing::TestWithParam<std::string> {};

TEST_P(VectorConformance, MatchesHostCpu) {
  const std::string& type = GetParam();
  auto it = VectorCases().find(type);
  ASSERT_NE(it, VectorCases().end()) << "cpu_vector has a kernel for " << type << " but no conformance cases";
  const uint64_t seed = BaseSeed() ^ std::hash<std::string>()(type);
  Rng rng(seed);
  int accepted = 0, failures = 0, empty = 0;
  for (DataType dtype : kDtypes) {
    for (int trial = 0; trial < kTrialsPerDtype && failures < 5; ++trial) {
      std::optional<Case> c = it->second(rng, dtype);
      if (!c) continue;
      if (!Vector().vector_info_store().CheckSupportedOp(Typed(*c)).ok()) continue;
      ++accepted;
      for (const Value& v : c->inputs) empty += v.is_tensor() && v.tensor().NumElements() == 0 ? 1 : 0;
      for (cpu_vector::Isa isa : Isas()) {
        ASSERT_TRUE(cpu_vector::ForceIsa(isa).ok());
        ::testing::AssertionResult r = ::testing::AssertionSuccess();
        if (c->reference) {
          // An op host_cpu lacks (the fused element-wise program): the
          // case's own reference.
          auto want = c->reference();
          auto got = test::RunKernel(Vector(), c->op, c->inputs);
          r = !want.ok()  ? ::testing::AssertionFailure() << "the reference failed: " << want.status()
              : !got.ok() ? ::testing::AssertionFailure() << got.status()
                          : test::TensorNear((*got)[0].tensor(), *want, c->tolerance);
        } else {
          r = test::MatchesReference(Vector(), cpu_dense::Host(), c->op, c->inputs, c->tolerance);
        }
        if (!r) {
          ADD_FAILURE() << type << " (" << DataTypeName(dtype) << ", " << cpu_vector::Kernels().name
                        << ", GED_CONFORMANCE_SEED=" << BaseSeed() << "): " << cpu_dense::Describe(*c) << "\n"
                        << r.message();
          ++failures;
        }
      }
    }
  }
  ASSERT_TRUE(cpu_vector::SelectIsa(false).ok());
  RecordProperty("cases", accepted);
  EXPECT_GE(accepted, 6) << "too few cases of " << type << " that cpu_vector accepts";
}

INSTANTIATE_TEST_SUITE_P(CpuVector, VectorConformance, ::testing::ValuesIn(Vector().info_store().SupportedOpTypes()),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });

const cpu_dense::CaseTable& DenseCases() {
  static const cpu_dense::CaseTable* table = [] {
    auto* t = new cpu_dense::CaseTable();
    cpu_dense::AddDenseCases(*t);
    cpu_dense::AddNnCases(*t);
    cpu_dense::AddRnnCases(*t);
    return t;
  }();
  return *table;
}

class DenseConformance : public ::testing::TestWithParam<std::string> {};

TEST_P(DenseConformance, MatchesHostCpu) {
  const std::string& type = GetParam();
  auto it = DenseCases().find(type);
  ASSERT_NE(it, DenseCases().end()) << "cpu_dense has a kernel for " << type << " but no conformance cases";
  Rng rng(BaseSeed() ^ std::hash<std::string>()(type));
  const std::vector<Case> cases = it->second(rng);
  EXPECT_GE(cases.size(), 5u) << "too few cases for " << type;
  int failures = 0;
  for (size_t i = 0; i < cases.size() && failures < 5; ++i) {
    ::testing::AssertionResult r = cpu_dense::Conforms(cases[i]);
    if (!r) {
      ADD_FAILURE() << type << " case " << i << " (GED_CONFORMANCE_SEED=" << BaseSeed() << "): " << r.message();
      ++failures;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(CpuDense, DenseConformance,
                         ::testing::ValuesIn(cpu_dense::Dense().info_store().SupportedOpTypes()),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });

const FusedCaseTable& FusedCases() {
  static const FusedCaseTable* table = [] {
    auto* t = new FusedCaseTable();
    AddFusedCases(*t);
    return t;
  }();
  return *table;
}

class FusedConformance : public ::testing::TestWithParam<std::string> {};

TEST_P(FusedConformance, MatchesTheUnfusedOpsOnHostCpu) {
  const std::string& type = GetParam();
  auto it = FusedCases().find(type);
  ASSERT_NE(it, FusedCases().end()) << "cpu_fused has a kernel for " << type << " but no conformance cases";
  Rng rng(BaseSeed() ^ std::hash<std::string>()(type));
  const std::vector<Case> cases = it->second(rng);
  int failures = 0;
  for (bool force_avx2 : {true, false}) {
    if (!force_avx2 && !cpu_vector::CpuHasAvx512()) continue;
    ASSERT_TRUE(cpu_fused::SelectLoops(force_avx2).ok());
    for (size_t i = 0; i < cases.size() && failures < 5; ++i) {
      const Case& c = cases[i];
      auto want = c.reference();
      ASSERT_TRUE(want.ok()) << cpu_dense::Describe(c) << ": the reference failed: " << want.status();
      auto got = test::RunKernel(Fused(), c.op, c.inputs);
      ::testing::AssertionResult r = got.ok() ? test::TensorNear((*got)[0].tensor(), *want, c.tolerance)
                                              : ::testing::AssertionFailure() << got.status();
      if (!r) {
        ADD_FAILURE() << type << " case " << i << " (" << cpu_fused::Loops().name
                      << ", GED_CONFORMANCE_SEED=" << BaseSeed() << "): " << cpu_dense::Describe(c) << "\n"
                      << r.message();
        ++failures;
      }
    }
  }
  ASSERT_TRUE(cpu_fused::SelectLoops(false).ok());
}

INSTANTIATE_TEST_SUITE_P(CpuFused, FusedConformance, ::testing::ValuesIn(Fused().info_store().SupportedOpTypes()),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });

// Zero-sized tensors are part of the randomized space (RandomShape), and
// the generator really produces them.
TEST(VectorConformanceSpace, ProducesEmptyAndBroadcastShapes) {
  Rng rng(BaseSeed());
  int empty = 0, broadcast = 0;
  for (int i = 0; i < 400; ++i) {
    const Shape out = RandomShape(rng, 1, 4, 5);
    empty += out.NumElementsUnchecked() == 0;
    broadcast += BroadcastFrom(rng, out) != out;
  }
  EXPECT_GT(empty, 10);
  EXPECT_GT(broadcast, 100);
}

}  // namespace
}  // namespace ge::engine::conformance
