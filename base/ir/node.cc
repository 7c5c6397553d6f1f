// Node accessors; edges are maintained by Graph.
#include "base/ir/node.h"

#include "absl/container/flat_hash_set.h"

namespace ge::ir {

Node::Node(OpDesc op, Graph* graph, int64_t id) : op_(std::move(op)), graph_(graph), id_(id) {
  inputs_.resize(op_.num_inputs());
  outputs_.resize(op_.num_outputs());
}

std::vector<Node*> Node::InNodes() const {
  std::vector<Node*> out;
  absl::flat_hash_set<Node*> seen;
  for (const OutPort& p : inputs_) {
    if (p.node != nullptr && seen.insert(p.node).second) out.push_back(p.node);
  }
  for (Node* n : control_inputs_) {
    if (seen.insert(n).second) out.push_back(n);
  }
  return out;
}

std::vector<Node*> Node::OutNodes() const {
  std::vector<Node*> out;
  absl::flat_hash_set<Node*> seen;
  for (const auto& port : outputs_) {
    for (const InPort& c : port) {
      if (seen.insert(c.node).second) out.push_back(c.node);
    }
  }
  for (Node* n : control_outputs_) {
    if (seen.insert(n).second) out.push_back(n);
  }
  return out;
}

bool Node::HasConsumers() const {
  for (const auto& port : outputs_) {
    if (!port.empty()) return true;
  }
  return !control_outputs_.empty();
}

}  // namespace ge::ir
