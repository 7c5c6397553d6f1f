// AssignVariableMemory: compile-time logical addresses for Variables and
// FileConstants.
#include "compiler/build/var_mem_assign.h"

#include "base/io/external_data.h"
#include "base/ir/op_types.h"
#include "base/status.h"
#include "compiler/passes/variable_format_pass.h"
#include "runtime/variables/file_constant.h"
#include "runtime/variables/session_variables.h"

namespace ge::compiler {
namespace {

// A FileConstant's identity at compile time: the file as the node names it
// (file_path, file_id or model_dir/location) and its offset.
absl::StatusOr<variables::VarInfo> FileConstantInfo(const ir::OpDesc& op) {
  variables::VarInfo info;
  info.name = op.name();
  info.kind = variables::VarKind::kFileConstant;
  // The bytes live in the process's FileConstant cache (host memory), not in
  // the session's device memory.
  info.mem_type = variables::MemType::kHost;
  GE_ASSIGN_OR_RETURN(Shape shape, op.RequireAttr<Shape>(io::kAttrShape));
  GE_ASSIGN_OR_RETURN(int64_t dtype, op.RequireAttr<int64_t>(io::kAttrDtype));
  info.desc = variables::VarDesc{static_cast<DataType>(dtype), shape, ir::Format::kND};
  std::string path = op.GetAttrOr<std::string>(variables::kAttrFilePath, "");
  if (path.empty()) {
    if (auto id = op.GetAttr<std::string>(variables::kAttrFileId)) {
      path = "file_id:" + *id;
    } else {
      path = op.GetAttrOr<std::string>(io::kAttrModelDir, "") + "/" + op.GetAttrOr<std::string>(io::kAttrLocation, "");
    }
  }
  info.file = variables::FileRef{path, op.GetAttrOr<int64_t>(io::kAttrOffset, 0), op.GetAttrOr<int64_t>(io::kAttrLength, -1)};
  return info;
}

// The conversion path VariableFormatPass folded into the variable: each
// step from the original form to the stored one.
std::vector<variables::TransNode> TransRoadOf(const ir::OpDesc& op, const variables::VarDesc& stored) {
  std::vector<variables::TransNode> road;
  const auto types = op.GetAttrOr<std::vector<std::string>>(kAttrVarTransRoad, {});
  const auto shape = op.GetAttr<Shape>(kAttrVarOriginalType);
  const auto dtype = op.GetAttr<int64_t>(kAttrVarOriginalDtype);
  if (!shape || !dtype) return road;
  const variables::VarDesc original{static_cast<DataType>(*dtype), *shape, stored.format};
  for (const std::string& type : types) road.push_back({type, original, stored});
  return road;
}

absl::Status AssignNode(variables::VarManager& vm, ir::Node& node) {
  absl::StatusOr<variables::VarInfo> info =
      node.type() == ir::kVariable ? variables::VarInfoFromOp(node.op_desc()) : FileConstantInfo(node.op_desc());
  if (!info.ok()) return Annotate(info.status(), StrCat("node '", node.name(), "' (", node.type(), ")"));
  absl::StatusOr<uint64_t> addr = vm.AssignVarMem(*info);
  if (!addr.ok()) return Annotate(addr.status(), StrCat("node '", node.name(), "' (", node.type(), ")"));
  node.mutable_op_desc().SetAttr(kAttrVarLogicAddr, static_cast<int64_t>(*addr));
  std::vector<variables::TransNode> road = TransRoadOf(node.op_desc(), info->desc);
  if (!road.empty()) GE_RETURN_IF_ERROR(vm.SetTransRoad(info->name, std::move(road)));
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<variables::VarManagerInfo> AssignVariableMemory(ir::Graph& root) {
  variables::VarManager vm(/*session_id=*/0, /*device=*/nullptr);
  std::vector<ir::Graph*> graphs = {&root};
  for (ir::Graph* g : root.subgraphs()) graphs.push_back(g);
  for (ir::Graph* g : graphs) {
    bool any = false;  // most graphs hold neither: no order needed
    g->ForEachNode([&](const ir::Node* n) {
      any = any || n->type() == ir::kVariable || n->type() == ir::kFileConstant;
    });
    if (!any) continue;
    GE_ASSIGN_OR_RETURN(std::vector<ir::Node*> order, g->TopologicalOrder());
    for (ir::Node* node : order) {
      if (node->type() == ir::kVariable || node->type() == ir::kFileConstant) GE_RETURN_IF_ERROR(AssignNode(vm, *node));
    }
  }
  return vm.ToSerial();
}

}  // namespace ge::compiler
