// SplitVariableIntoSubgraphPass: VarRefs inside subgraphs for variables
// passed in from the owner.
#include "compiler/passes/split_variable_into_subgraph_pass.h"

#include <string>

#include "base/ir/op_types.h"
#include "base/status.h"
#include "compiler/passes/variable_util.h"
#include "runtime/engines/api/variable_store.h"

namespace ge::compiler {

absl::StatusOr<bool> SplitVariableIntoSubgraphPass::Run(ir::Graph& root) {
  return ReplaceCapturedInputs(
      root, [](const ir::Node& source) { return source.type() == ir::kVariable; },
      [](ir::Graph& sub, const ir::Node& variable) {
        ir::OpDesc ref(sub.UniqueNodeName(variable.name() + "_in_" + sub.name()), std::string(ir::kVariable));
        for (const auto& [k, v] : variable.op_desc().attrs()) ref.SetAttr(k, v);
        ref.SetAttr(engine::kAttrRefVarSrcVarName, VariableNameOf(variable));
        ref.AddOutput(variable.op_desc().output(0));
        return ref;
      });
}

}  // namespace ge::compiler
