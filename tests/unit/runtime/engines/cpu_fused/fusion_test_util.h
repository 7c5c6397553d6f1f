// Text-in, text-out helpers for cpu_fused's fusion passes.
#pragma once

#include <memory>
#include <string>
#include <utility>

#include "base/ir/graph.h"
#include "base/ir/text_format.h"
#include "gtest/gtest.h"
#include "runtime/engines/cpu_fused/cpu_fused_engine.h"

namespace ge::engine::cpu_fused {

// The engine, initialized once (registers the fused ops).
inline CpuFusedEngine& TestEngine() {
  static CpuFusedEngine* engine = [] {
    auto* e = new CpuFusedEngine();
    const absl::Status s = e->Initialize({});
    if (!s.ok()) ADD_FAILURE() << s;
    return e;
  }();
  return *engine;
}

// Parses `text`; fails the test when it does not parse.
inline std::unique_ptr<ir::Graph> Parse(const std::string& text) {
  TestEngine();
  auto g = ir::ParseGraph(text);
  EXPECT_TRUE(g.ok()) << g.status();
  return g.ok() ? std::move(*g) : std::make_unique<ir::Graph>("empty");
}

// The canonical print of `text` (so expectations may be formatted freely).
inline std::string Canonical(const std::string& text) { return ir::PrintGraph(*Parse(text)); }

// Runs `pass` on `input`; the printed result and whether it changed.
template <typename Pass>
std::pair<std::string, bool> RunPass(const std::string& input, Pass pass) {
  auto g = Parse(input);
  absl::StatusOr<bool> changed = pass(*g);
  EXPECT_TRUE(changed.ok()) << changed.status();
  return {ir::PrintGraph(*g), changed.ok() && *changed};
}

}  // namespace ge::engine::cpu_fused
