// Helpers for the control-flow tests: the built-in engines, and compiling
// and running a graph (text form or ir::Graph) through a Session.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "base/ir/graph.h"
#include "base/ir/text_format.h"
#include "base/options.h"
#include "base/status.h"
#include "base/value.h"
#include "gtest/gtest.h"
#include "runtime/engines/engine_registry.h"
#include "session/session.h"

namespace ge::test {

// The engines of the build's engine directory, loaded once per process with
// no engine options.
inline engine::EngineRegistry& BuiltinEngines() {
  static engine::EngineRegistry* engines = [] {
    auto registry = engine::CreateEngineRegistry({}, {});
    GE_CHECK(registry.ok());
    return registry->release();
  }();
  return *engines;
}

inline std::unique_ptr<ir::Graph> ParseOrDie(const std::string& text) {
  auto graph = ir::ParseGraph(text);
  EXPECT_TRUE(graph.ok()) << graph.status();
  return graph.ok() ? std::move(*graph) : std::make_unique<ir::Graph>("unparsable");
}

// Compiles `graph` in a new session on `engines` and runs it once; the
// session is returned through `session_out` when the caller wants to look
// at the compiled graph.
inline absl::StatusOr<std::vector<Value>> CompileAndRun(
    std::unique_ptr<ir::Graph> graph, std::vector<Value> inputs, const OptionMap& options = {},
    engine::EngineRegistry* engines = nullptr, std::unique_ptr<session::Session>* session_out = nullptr) {
  // These tests pin placement on the reference engines; cpu_dense has its own tests.
  auto session = std::make_unique<session::Session>(engines ? *engines : BuiltinEngines(),
                                                    OptionMap{{"ge.exec.exclude_engines", "cpu_dense,cpu_vector"}}, nullptr);
  absl::Status added = session->AddGraph(0, std::move(graph), options);
  if (!added.ok()) return added;
  auto outputs = session->RunGraph(0, std::move(inputs));
  if (session_out) *session_out = std::move(session);
  return outputs;
}

inline absl::StatusOr<std::vector<Value>> CompileAndRun(const std::string& text, std::vector<Value> inputs,
                                                        const OptionMap& options = {}) {
  return CompileAndRun(ParseOrDie(text), std::move(inputs), options);
}

// The engine a compiled graph placed node `name` on ("" when absent).
inline std::string EngineOf(session::Session& session, const std::string& name) {
  auto compiled = session.GetCompiledGraph(0);
  if (!compiled.ok()) return "";
  const ir::Graph& root = *(*compiled)->graph;
  const ir::Node* node = root.FindNode(name);
  for (size_t i = 0; node == nullptr && i < root.subgraphs().size(); ++i) node = root.subgraphs()[i]->FindNode(name);
  return node ? node->op_desc().GetAttrOr<std::string>("_engine_name", "") : "";
}

}  // namespace ge::test
