// One ONNX backend test (a `node` or `simple` test directory written by
// python3-onnx's generator) run through ged's whole path: the ONNX importer,
// a session::Session (GraphCompiler with the default engine placement) and
// its executor; outputs are compared with the reference data the way
// onnx.backend.test's runner does (same dtype and shape, then
// |actual - expected| <= atol + rtol * |expected|, NaN equal to NaN;
// strings and sequences element by element).
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "base/thread_pool.h"
#include "base/value.h"
#include "runtime/engines/engine_registry.h"

namespace ge::conformance {

// The suite's tolerances: onnx.backend.test's loader defaults, overridden
// per test by "rtol" / "atol" in a data.json beside model.onnx (the form the
// suite uses for its per-test overrides).
struct Tolerances {
  double rtol = 1e-3;
  double atol = 1e-7;
};

struct BackendTest {
  std::string name;   // directory name, e.g. "test_abs"
  std::string kind;   // "node" or "simple"
  std::string dir;    // holds model.onnx and test_data_set_*/
};

// The test directories under `root`/node and `root`/simple, sorted by name.
absl::StatusOr<std::vector<BackendTest>> ListBackendTests(const std::string& root);

// Runs every data set of `test`. OK when every output matches; otherwise a
// status whose message is the one-line reason (import, compile, run or
// which output differs and how).
absl::Status RunBackendTest(const BackendTest& test, const engine::EngineRegistry& engines,
                            ThreadPool* pool);

// Compares one output the way the suite does; the message names what
// differs (dtype, shape, first differing element).
absl::Status CompareValues(const Value& actual, const Value& expected, const Tolerances& tolerances);

}  // namespace ge::conformance
