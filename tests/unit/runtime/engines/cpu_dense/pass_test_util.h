// Text-in, text-out helpers for cpu_dense's graph passes.
#pragma once

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "base/ir/graph.h"
#include "base/ir/text_format.h"
#include "gtest/gtest.h"
#include "runtime/engines/cpu_dense/cpu_dense_engine.h"
#include "runtime/engines/host_cpu/host_cpu_engine.h"

namespace ge::engine::cpu_dense {

// The engine, initialized once (registers `_DenseFused`), with host_cpu as
// its reference engine as in a registry.
inline CpuDenseEngine& PassTestEngine() {
  static CpuDenseEngine* engine = [] {
    auto* e = new CpuDenseEngine();
    static const HostCpuEngine* host = new HostCpuEngine();
    e->SetReferenceEngine(host);
    const absl::Status s = e->Initialize({});
    if (!s.ok()) ADD_FAILURE() << s;
    return e;
  }();
  return *engine;
}

inline SupportCheck DenseSupport() {
  return [](const ir::OpDesc& op) { return PassTestEngine().dense_info_store().CheckSupportedOp(op); };
}

inline bool AnyNode(const ir::Node&) { return true; }

// Parses `text`; fails the test when it does not parse.
inline std::unique_ptr<ir::Graph> Parse(const std::string& text) {
  PassTestEngine();
  auto g = ir::ParseGraph(text);
  EXPECT_TRUE(g.ok()) << g.status();
  return g.ok() ? std::move(*g) : std::make_unique<ir::Graph>("empty");
}

// The canonical print of `text` (so expectations may be formatted freely).
inline std::string Canonical(const std::string& text) { return ir::PrintGraph(*Parse(text)); }

}  // namespace ge::engine::cpu_dense
