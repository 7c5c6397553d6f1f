// Fuzz target for the .gem loader from memory (runtime::LoadGemFromBytes):
// how the daemon reads LoadModel's bytes, so every byte is untrusted.
//
// The registry is empty, so only models that name no engine get past the
// host check; that is where the graph and static-program readers are, and
// a seed from `gectl compile` with its engine list removed reaches them.
//
// Properties: no input crashes the loader; a model it accepts has a graph
// that passes the IR verifier, and every weight of its program comes from a
// node of that graph.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "base/ir/verifier.h"
#include "fuzz/fuzz_check.h"
#include "runtime/engines/engine_registry.h"
#include "runtime/model/gem.h"

extern "C" int LLVMFuzzerInitialize(int* /*argc*/, char*** /*argv*/) {
  ge::fuzz::QuietLogs();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const ge::engine::EngineRegistry* const engines = new ge::engine::EngineRegistry();
  absl::StatusOr<ge::runtime::CompiledModel> model = ge::runtime::LoadGemFromBytes(
      std::string_view(reinterpret_cast<const char*>(data), size), "fuzz input", *engines);
  ge::fuzz::Note("LoadGemFromBytes", model.status());
  if (!model.ok()) return 0;
  if (model->graph == nullptr) ge::fuzz::FuzzFail("an accepted .gem has a graph");
  ge::fuzz::FuzzCheckOk(ge::ir::VerifyGraph(*model->graph), "an accepted .gem's graph verifies");
  if (model->partitioned != nullptr) {
    ge::fuzz::FuzzCheckOk(ge::ir::VerifyGraph(*model->partitioned), "an accepted .gem's partitioned graph verifies");
  }
  if (model->program) {
    for (const auto& weight : model->program->weights) {
      if (model->graph->FindNode(weight.node) == nullptr) {
        ge::fuzz::FuzzFail("every weight of an accepted program comes from a node of its graph", weight.node);
      }
    }
  }
  return 0;
}
