// host_cpu against ONNX's own backend node tests (reference outputs computed
// by ONNX's reference implementation): every case whose op ged has at the
// same opset version must pass, except the forms host_cpu refuses on
// purpose (training mode), which must be refused as Unimplemented. Random
// ops (Bernoulli) are checked for dtypes and shapes only: ONNX's expected
// values are numpy's draws.
#include "absl/strings/str_join.h"
#include "tests/testing/onnx_node_cases.h"
#include "tests/unit/runtime/engines/host_cpu/host_cpu_test_util.h"

namespace ge::engine::host_cpu {
namespace {

using Outcome = test::OnnxNodeResult::Outcome;

TEST(OnnxNodeConformance, HostCpuMatchesOnnxReferenceOutputs) {
  const std::string dir = test::OnnxNodeDataDir();
  auto cases = test::LoadOnnxNodeCases(dir);
  if (!cases.ok()) GTEST_SKIP() << "no ONNX node test data (" << cases.status() << ")";
  int passed = 0, unsupported = 0, other_opset = 0, random = 0;
  std::vector<std::string> failures;
  for (const test::OnnxNodeCase& c : *cases) {
    const test::OnnxNodeResult r = test::RunOnnxNodeCase(Engine(), c);
    switch (r.outcome) {
      case Outcome::kPassed: ++passed; break;
      case Outcome::kOtherOpset: ++other_opset; break;
      case Outcome::kRandom: ++random; break;
      case Outcome::kUnsupported: ++unsupported; break;
      case Outcome::kMismatch:
      case Outcome::kFailed: failures.push_back(c.name + ": " + r.message); break;
    }
  }
  EXPECT_TRUE(failures.empty()) << failures.size() << " failures:\n" << absl::StrJoin(failures, "\n");
  // Guards against the suite silently shrinking.
  EXPECT_GE(passed, 450) << "of " << cases->size() << " cases";
  std::cout << "ONNX node tests: " << passed << " passed, " << unsupported << " unsupported, " << other_opset
            << " at another opset, " << random << " random (shapes and dtypes only), " << failures.size()
            << " failed\n";
}

}  // namespace
}  // namespace ge::engine::host_cpu
