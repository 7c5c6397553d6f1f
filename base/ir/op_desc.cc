// OpDesc attribute helpers.
#include "base/ir/op_desc.h"

#include "base/status.h"

namespace ge::ir {

const AttrValue* OpDesc::FindAttr(std::string_view name) const {
  auto it = attrs_.find(name);
  return it == attrs_.end() ? nullptr : &it->second;
}

void OpDesc::SetAttr(std::string_view name, AttrValue value) {
  auto it = attrs_.find(name);
  if (it != attrs_.end()) {
    it->second = std::move(value);
  } else {
    attrs_.emplace(std::string(name), std::move(value));
  }
}

bool OpDesc::RemoveAttr(std::string_view name) {
  auto it = attrs_.find(name);
  if (it == attrs_.end()) return false;
  attrs_.erase(it);
  return true;
}

absl::Status OpDesc::MissingAttr(std::string_view name) const {
  const AttrValue* v = FindAttr(name);
  if (v == nullptr) {
    return InvalidArgument("node '", name_, "' (", type_, "): missing attribute '", name, "'");
  }
  return InvalidArgument("node '", name_, "' (", type_, "): attribute '", name,
                         "' has the wrong kind (", AttrKindName(v->kind()), ")");
}

}  // namespace ge::ir
