// SplitConstIntoSubgraphPass: Consts inside subgraphs for small constants
// passed in from the owner.
#include "compiler/passes/split_const_into_subgraph_pass.h"

#include <optional>
#include <string>

#include "base/ir/op_types.h"
#include "base/status.h"
#include "compiler/passes/variable_util.h"

namespace ge::compiler {
namespace {

// Whether `node` is a Const small enough to copy into subgraphs.
bool SmallConstant(const ir::Node& node) {
  if (node.type() != ir::kConst || node.num_outputs() != 1) return false;
  std::optional<Tensor> value = node.op_desc().GetAttr<Tensor>(ir::kAttrValue);
  return value && value->dtype() != DataType::kString && value->SizeInBytes() <= SplitConstIntoSubgraphPass::kMaxBytes;
}

}  // namespace

absl::StatusOr<bool> SplitConstIntoSubgraphPass::Run(ir::Graph& root) {
  return ReplaceCapturedInputs(root, SmallConstant, [](ir::Graph& sub, const ir::Node& constant) {
    ir::OpDesc copy(sub.UniqueNodeName(StrCat(constant.name(), "_in_", sub.name())), std::string(ir::kConst));
    for (const auto& [k, v] : constant.op_desc().attrs()) copy.SetAttr(k, v);
    copy.AddOutput(constant.op_desc().output(0));
    return copy;
  });
}

}  // namespace ge::compiler
