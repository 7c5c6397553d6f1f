// ONNX's backend node tests as kernel test cases.
//
// tests/testing/onnx_node_tests.py (run by ctest as the fixture
// `onnx_node_data`) writes the single-node tests of python3-onnx to
// ${GED_BINARY_DIR}/testdata/onnx_node. LoadOnnxNodeCases reads them back
// and RunOnnxNodeCase runs one case on any engine through the kernel test
// harness and compares with ONNX's reference outputs: an independent check
// of host_cpu, and of every other engine.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "base/ir/op_desc.h"
#include "base/value.h"
#include "runtime/engines/api/engine.h"
#include "tests/testing/kernel_test_util.h"

namespace ge::test {

struct OnnxNodeCase {
  std::string name;         // the ONNX test's name, e.g. "test_conv_with_strides_padding"
  int since_version = 0;    // the op's since_version at the model's opset
  ir::OpDesc op;            // type, attributes, typed inputs, untyped outputs
  std::vector<Value> inputs;     // kNone for absent optional inputs
  std::vector<Value> expected;   // kNone where the test checks nothing
};

// The directory the fixture writes (under $GED_BINARY_DIR), or "" when the
// environment does not say.
std::string OnnxNodeDataDir();

// Reads every case of `dir`/manifest.txt.
absl::StatusOr<std::vector<OnnxNodeCase>> LoadOnnxNodeCases(const std::string& dir);

struct OnnxNodeResult {
  enum class Outcome {
    kPassed,
    kMismatch,     // ran, outputs differ from ONNX's
    kFailed,       // the kernel or inference returned an unexpected error
    kUnsupported,  // no such op in ged, no kernel, or attributes refused (Unimplemented)
    kOtherOpset,   // the test targets another version of the op than ged's canonical one
    kRandom,       // a random op (stateful with a seed attribute): ONNX's expected values are
                   // numpy's draws, so only the dtypes and shapes are compared
  };
  Outcome outcome = Outcome::kPassed;
  std::string message;
};

// Runs `c` on `engine` and compares every expected output within `tolerance`
// (f32 and f64; f16 and bf16 use DefaultTolerance; integers, bool and
// strings compare exactly).
OnnxNodeResult RunOnnxNodeCase(const engine::Engine& engine, const OnnxNodeCase& c,
                               Tolerance tolerance = {1e-5, 1e-3});

}  // namespace ge::test
