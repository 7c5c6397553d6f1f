// OpDesc: what a node computes — its type, attributes, the types of its
// inputs and outputs, and the subgraphs it owns (by name).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "base/ir/attr_value.h"
#include "base/ir/types.h"

namespace ge::ir {

// One input or output slot: the tensor name from the source framework (kept
// for messages and for naming outputs) and its static type.
struct IoDesc {
  std::string name;
  ValueType type;
};

class OpDesc {
 public:
  OpDesc() = default;
  OpDesc(std::string name, std::string type) : name_(std::move(name)), type_(std::move(type)) {}

  const std::string& name() const { return name_; }
  void set_name(std::string name) { name_ = std::move(name); }
  const std::string& type() const { return type_; }
  void set_type(std::string type) { type_ = std::move(type); }

  // Inputs and outputs. Resizing a node's ports goes through Graph so that
  // edges stay consistent; OpDesc alone only describes them.
  int num_inputs() const { return static_cast<int>(inputs_.size()); }
  int num_outputs() const { return static_cast<int>(outputs_.size()); }
  const IoDesc& input(int i) const { return inputs_[i]; }
  const IoDesc& output(int i) const { return outputs_[i]; }
  IoDesc& mutable_input(int i) { return inputs_[i]; }
  IoDesc& mutable_output(int i) { return outputs_[i]; }
  const std::vector<IoDesc>& inputs() const { return inputs_; }
  const std::vector<IoDesc>& outputs() const { return outputs_; }
  void AddInput(IoDesc desc) { inputs_.push_back(std::move(desc)); }
  void AddOutput(IoDesc desc) { outputs_.push_back(std::move(desc)); }
  std::vector<IoDesc>& mutable_inputs() { return inputs_; }
  std::vector<IoDesc>& mutable_outputs() { return outputs_; }

  // Attributes.
  const AttrMap& attrs() const { return attrs_; }
  AttrMap& mutable_attrs() { return attrs_; }
  bool HasAttr(std::string_view name) const { return attrs_.find(name) != attrs_.end(); }
  const AttrValue* FindAttr(std::string_view name) const;
  void SetAttr(std::string_view name, AttrValue value);
  bool RemoveAttr(std::string_view name);
  // The attribute as a T, or nullopt when absent or of another kind.
  template <typename T>
  std::optional<T> GetAttr(std::string_view name) const {
    const AttrValue* v = FindAttr(name);
    if (v == nullptr) return std::nullopt;
    const T* p = v->get<T>();
    if (p == nullptr) return std::nullopt;
    return *p;
  }
  template <typename T>
  T GetAttrOr(std::string_view name, T default_value) const {
    auto v = GetAttr<T>(name);
    return v ? *std::move(v) : std::move(default_value);
  }
  // The attribute as a T; InvalidArgument naming the node when absent or of
  // another kind.
  template <typename T>
  absl::StatusOr<T> RequireAttr(std::string_view name) const;

  // Names of the subgraphs this op owns, in the op's order (If: then, else;
  // Case: branches; While: cond, body; PartitionedCall: f).
  const std::vector<std::string>& subgraph_names() const { return subgraph_names_; }
  std::vector<std::string>& mutable_subgraph_names() { return subgraph_names_; }

 private:
  absl::Status MissingAttr(std::string_view name) const;

  std::string name_;
  std::string type_;
  std::vector<IoDesc> inputs_;
  std::vector<IoDesc> outputs_;
  AttrMap attrs_;
  std::vector<std::string> subgraph_names_;
};

template <typename T>
absl::StatusOr<T> OpDesc::RequireAttr(std::string_view name) const {
  auto v = GetAttr<T>(name);
  if (!v) return MissingAttr(name);
  return *std::move(v);
}

}  // namespace ge::ir
