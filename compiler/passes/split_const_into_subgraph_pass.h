// SplitConstIntoSubgraphPass: a subgraph reads a small constant its owner
// passes in as a Const of its own (the constant counterpart of
// SplitVariableIntoSubgraphPass).
//
// A loop body's weights arrive as the While's inputs (an ONNX Loop / Scan
// body's captures), so inside the body they are Data: the engines see an
// operand that may change per call and cannot prepare it once (a product's
// packed weights). For every If / Case / While / PartitionedCall input fed
// by a Const of at most kMaxBytes, each subgraph input node bound to it (by
// the parent-index conventions: If / Case Data index i <- input i + 1,
// others input i, `_parent_index` wins) hands its consumers to a Const
// holding the same tensor (shared storage, no copy). The input node stays
// (indices are unchanged); a While body is rewritten only where it passes
// the value through unchanged (its output i is its input i), and its
// NetOutput keeps the pass-through. Larger constants stay inputs (a
// compiled model would hold them twice).
#pragma once

#include <cstddef>

#include "compiler/passes/graph_pass.h"

namespace ge::compiler {

class SplitConstIntoSubgraphPass final : public GraphPass {
 public:
  static constexpr size_t kMaxBytes = size_t{1} << 20;
  std::string_view name() const override { return "SplitConstIntoSubgraphPass"; }
  absl::StatusOr<bool> Run(ir::Graph& root) override;
};

}  // namespace ge::compiler
