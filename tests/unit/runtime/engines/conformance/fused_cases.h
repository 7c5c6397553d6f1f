// Randomized cases for cpu_fused's kernels (engine conformance). host_cpu
// has no kernel for the fused ops, so each case carries its reference: the
// ONNX ops the fused op replaces, run on host_cpu.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "runtime/engines/cpu_fused/cpu_fused_engine.h"
#include "tests/unit/runtime/engines/cpu_dense/conformance_util.h"

namespace ge::engine::conformance {

// The engine, initialized once (registers the fused ops).
const CpuFusedEngine& Fused();

using FusedCaseGenerator = std::function<std::vector<cpu_dense::Case>(cpu_dense::Rng& rng)>;
using FusedCaseTable = std::map<std::string, FusedCaseGenerator>;
void AddFusedCases(FusedCaseTable& table);

}  // namespace ge::engine::conformance
