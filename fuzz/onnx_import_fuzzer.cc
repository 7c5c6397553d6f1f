// Fuzz target for the ONNX importer (frontend::ImportOnnxBytes): models
// come from users, and later from the daemon's clients.
//
// Each input is imported twice: with the default options (libonnx's checker
// first, as gectl and the session do) and without the checker, where the
// importer's own schema check must stand in for it before libonnx's shape
// inference runs (that inference crashes on nodes nobody checked; see
// docs/reliability.md). No external data is reachable: the model directory
// is empty, which the importer refuses for external references.
//
// Properties: no model crashes the importer; an imported graph verifies.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "base/ir/verifier.h"
#include "compiler/frontend/onnx_importer.h"
#include "fuzz/fuzz_check.h"

namespace {

void ImportAndCheck(std::string_view bytes, const ge::frontend::OnnxImportOptions& options) {
  auto graph = ge::frontend::ImportOnnxBytes(bytes, /*model_dir=*/"", options);
  ge::fuzz::Note(options.run_checker ? "import" : "import without checker", graph.status());
  if (!graph.ok()) return;
  ge::fuzz::FuzzCheckOk(ge::ir::VerifyGraph(**graph), "an imported graph verifies");
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int* /*argc*/, char*** /*argv*/) {
  ge::fuzz::QuietLogs();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  ImportAndCheck(bytes, {});
  ge::frontend::OnnxImportOptions unchecked;
  unchecked.run_checker = false;
  ImportAndCheck(bytes, unchecked);
  return 0;
}
