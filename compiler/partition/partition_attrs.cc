// The attribute propagation registry and ged's built-in entries.
#include "compiler/partition/partition_attrs.h"

#include "base/ir/op_types.h"
#include "base/status.h"

namespace ge::partition {
namespace {

bool IsBoundary(const ir::Node& n) {
  const std::string& t = n.type();
  return t == ir::kInnerData || t == ir::kInnerNetOutput || t == ir::kPlaceHolder || t == ir::kEnd;
}

}  // namespace

const PartitionAttrRegistry& PartitionAttrRegistry::Builtin() {
  static const PartitionAttrRegistry* registry = [] {
    auto* r = new PartitionAttrRegistry();
    RegisterBuiltinPartitionAttrs(*r);
    return r;
  }();
  return *registry;
}

absl::Status PartitionAttrRegistry::Register(PartitionAttr attr) {
  for (const PartitionAttr& a : attrs_) {
    if (a.name == attr.name) return AlreadyExists("partition attribute '", attr.name, "' is already registered");
  }
  attrs_.push_back(std::move(attr));
  return absl::OkStatus();
}

std::vector<std::string> PartitionAttrRegistry::CallToNodeNames() const {
  std::vector<std::string> out;
  for (const PartitionAttr& a : attrs_) {
    if (a.flow == AttrFlow::kCallToNodes) out.push_back(a.name);
  }
  return out;
}

void PartitionAttrRegistry::ApplyToCall(ir::Node& call, const std::vector<ir::Node*>& nodes) const {
  for (const PartitionAttr& a : attrs_) {
    if (a.flow != AttrFlow::kNodesToCall) continue;
    const ir::AttrValue* common = nullptr;
    bool uniform = true;
    for (const ir::Node* n : nodes) {
      if (IsBoundary(*n)) continue;
      const ir::AttrValue* v = n->op_desc().FindAttr(a.name);
      if (v == nullptr || (common != nullptr && !(*v == *common))) {
        uniform = false;
        break;
      }
      common = v;
    }
    if (uniform && common != nullptr) call.mutable_op_desc().SetAttr(a.name, *common);
  }
}

void PartitionAttrRegistry::ApplyToNodes(const ir::Node& call, const std::vector<ir::Node*>& nodes) const {
  for (const PartitionAttr& a : attrs_) {
    if (a.flow != AttrFlow::kCallToNodes) continue;
    const ir::AttrValue* v = call.op_desc().FindAttr(a.name);
    if (v == nullptr) continue;
    for (ir::Node* n : nodes) {
      if (IsBoundary(*n)) continue;
      if (a.overwrite || !n->op_desc().HasAttr(a.name)) n->mutable_op_desc().SetAttr(a.name, *v);
    }
  }
}

void RegisterBuiltinPartitionAttrs(PartitionAttrRegistry& registry) {
  GE_CHECK(registry.Register({std::string(ir::kAttrStageLevel), AttrFlow::kNodesToCall}).ok());
  GE_CHECK(registry.Register({std::string(kAttrStreamLabel), AttrFlow::kNodesToCall}).ok());
  GE_CHECK(registry.Register({std::string(ir::kAttrIsUnknownShape), AttrFlow::kCallToNodes, /*overwrite=*/true}).ok());
}

}  // namespace ge::partition
