// The own element-wise tail after a oneDNN primitive (eltwise_tail.h).
#include "runtime/engines/cpu_dense/eltwise_tail.h"

#include <omp.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>

#include "runtime/engines/cpu_dense/packed_matmul.h"
#include "runtime/engines/sdk/cpu_features.h"

namespace ge::engine::cpu_dense {
namespace {

EltwiseTailPath HostPath() {
  switch (sdk::HostVectorIsa()) {
    case sdk::VectorIsa::kAvx512: return EltwiseTailPath::kAvx512;
    case sdk::VectorIsa::kAvx2: return EltwiseTailPath::kAvx2;
    default: return EltwiseTailPath::kOff;
  }
}

EltwiseTailPath Capped(EltwiseTailPath path) { return std::min(path, HostPath()); }

std::atomic<EltwiseTailPath>& Path() {
  static std::atomic<EltwiseTailPath> path{[] {
    const char* env = std::getenv("GED_CPU_DENSE_ELTWISE");
    if (env != nullptr && std::strcmp(env, "onednn") == 0) return EltwiseTailPath::kOff;
    if (env != nullptr && std::strcmp(env, "avx2") == 0) return Capped(EltwiseTailPath::kAvx2);
    return HostPath();
  }()};
  return path;
}

void Apply(EltwiseTailPath path, float* y, int64_t n, const GemmStep* steps, int32_t num) {
  if (path == EltwiseTailPath::kAvx512) {
    avx512::EltwiseSteps(y, n, steps, num);
  } else {
    avx2::EltwiseSteps(y, n, steps, num);
  }
}

// Below this many elements the tail stays on the calling thread (an
// OpenMP fork and join costs about as much as 32K exp-based elements).
constexpr int64_t kSingleThreadElements = int64_t{1} << 15;
// Threads' shares start at multiples of 16 floats (64 bytes).
constexpr int64_t kShareAlign = 16;

bool ExpBased(PostOpKind kind) {
  switch (kind) {
    case PostOpKind::kSigmoid:
    case PostOpKind::kTanh:
    case PostOpKind::kElu:
    case PostOpKind::kGeluErf:
    case PostOpKind::kGeluTanh:
    case PostOpKind::kSwish: return true;
    default: return false;
  }
}

}  // namespace

EltwiseTailPath CurrentEltwiseTailPath() { return Path().load(std::memory_order_relaxed); }

void SetEltwiseTailPath(EltwiseTailPath path) { Path().store(Capped(path), std::memory_order_relaxed); }

EltwiseTail SplitEltwiseTail(const PostOpChain& chain, DataType dtype) {
  EltwiseTail split;
  split.head = chain;
  const EltwiseTailPath path = CurrentEltwiseTailPath();
  if (dtype != DataType::kFloat || path == EltwiseTailPath::kOff) return split;
  size_t first = chain.ops.size();
  for (size_t i = 0; i < chain.ops.size() && first == chain.ops.size(); ++i) {
    if (ExpBased(chain.ops[i].kind)) first = i;
  }
  if (first == chain.ops.size()) return split;
  PostOpChain rest;
  for (size_t i = first; i < chain.ops.size(); ++i) {
    if (chain.ops[i].kind == PostOpKind::kAdd) return split;
    rest.ops.push_back(chain.ops[i]);
  }
  std::vector<GemmStep> steps = ToGemmSteps(rest);
  float zero = 0.0f;
  Apply(path, &zero, 1, steps.data(), static_cast<int32_t>(steps.size()));
  if (zero != 0.0f) return split;
  split.head.ops.resize(first);
  split.steps = std::move(steps);
  return split;
}

void RunEltwiseTail(const std::vector<GemmStep>& steps, float* y, int64_t n, int threads) {
  if (steps.empty() || n <= 0) return;
  const auto num = static_cast<int32_t>(steps.size());
  const int team = n < kSingleThreadElements || omp_in_parallel() != 0 ? 1 : std::max(1, threads);
  const EltwiseTailPath path = CurrentEltwiseTailPath();
  if (team == 1) {
    Apply(path, y, n, steps.data(), num);
    return;
  }
  const int64_t units = (n + kShareAlign - 1) / kShareAlign;
#pragma omp parallel num_threads(team)
  {
    const int64_t i = omp_get_thread_num(), nt = omp_get_num_threads();
    const int64_t begin = std::min(n, units * i / nt * kShareAlign);
    const int64_t end = std::min(n, units * (i + 1) / nt * kShareAlign);
    if (end > begin) Apply(path, y + begin, end - begin, steps.data(), num);
  }
}

}  // namespace ge::engine::cpu_dense
