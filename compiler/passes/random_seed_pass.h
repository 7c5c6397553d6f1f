// RandomSeedPass: fixes the identity and, with ge.exec.seed, the seed of
// every random op (a stateful op with a `seed` attribute: RandomNormal,
// RandomUniform, their *Like forms, Bernoulli, Multinomial).
//
// Stamps `_ge_random_key`, a hash of the node's graph and name taken before
// partitioning and flattening rename anything, so a node keeps its random
// stream whether it runs in a static or a dynamic subgraph, in a gear
// clone or after a JIT recompilation; and, when the session sets
// ge.exec.seed, stamps it as `_ge_seed` on the nodes without a `seed`
// attribute (the attribute wins). host_cpu's random kernels read both
// (runtime/engines/host_cpu/random_kernels.cc). Runs first in the optimize
// pipeline; nodes already stamped keep their key.
#pragma once

#include <cstdint>
#include <optional>

#include "compiler/passes/graph_pass.h"

namespace ge::compiler {

class RandomSeedPass final : public GraphPass {
 public:
  explicit RandomSeedPass(std::optional<int64_t> seed) : seed_(seed) {}
  std::string_view name() const override { return "RandomSeedPass"; }
  absl::StatusOr<bool> Run(ir::Graph& root) override;

 private:
  std::optional<int64_t> seed_;
};

}  // namespace ge::compiler
