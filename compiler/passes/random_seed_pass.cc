// RandomSeedPass: `_ge_random_key` and `_ge_seed` on random ops.
#include "compiler/passes/random_seed_pass.h"

#include <string>

#include "base/ops/op_registry.h"
#include "compiler/passes/variable_util.h"

namespace ge::compiler {
namespace {

// FNV-1a, 64 bits, as a non-negative int64 attribute value.
int64_t StableHash(const std::string& text) {
  uint64_t h = 0xCBF29CE484222325ull;
  for (unsigned char c : text) {
    h ^= c;
    h *= 0x100000001B3ull;
  }
  return static_cast<int64_t>(h >> 1);
}

bool IsRandomOp(const ir::Node& node) {
  const ops::OpSchema* schema = ops::OpRegistry::Global().Find(node.type());
  return schema != nullptr && schema->stateful && schema->FindAttr("seed") != nullptr;
}

}  // namespace

absl::StatusOr<bool> RandomSeedPass::Run(ir::Graph& root) {
  bool changed = false;
  for (ir::Graph* graph : GraphAndSubgraphs(root)) {
    for (ir::Node* node : graph->nodes()) {
      if (!IsRandomOp(*node)) continue;
      ir::OpDesc& op = node->mutable_op_desc();
      if (!op.GetAttr<int64_t>("_ge_random_key")) {
        op.SetAttr("_ge_random_key", StableHash(graph->name() + "/" + node->name()));
        changed = true;
      }
      if (seed_ && !op.HasAttr("seed") && !op.GetAttr<int64_t>("_ge_seed")) {
        op.SetAttr("_ge_seed", *seed_);
        changed = true;
      }
    }
  }
  return changed;
}

}  // namespace ge::compiler
