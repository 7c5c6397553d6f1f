// Node: one operation in a Graph, with its data edges by port and its
// control edges.
//
// Every input port has at most one producer (an OutPort); an output port has
// any number of consumers (InPorts). Edges are mutated only through Graph,
// which keeps the producer and consumer sides consistent.
#pragma once

#include <cstdint>
#include <list>
#include <memory>
#include <string>
#include <vector>

#include "base/ir/op_desc.h"

namespace ge::ir {

class Graph;
class Node;

// An output port of a node: the producer side of a data edge.
struct OutPort {
  Node* node = nullptr;
  int index = 0;
  explicit operator bool() const { return node != nullptr; }
  friend bool operator==(const OutPort& a, const OutPort& b) {
    return a.node == b.node && a.index == b.index;
  }
};

// An input port of a node: the consumer side of a data edge.
struct InPort {
  Node* node = nullptr;
  int index = 0;
  friend bool operator==(const InPort& a, const InPort& b) {
    return a.node == b.node && a.index == b.index;
  }
};

class Node {
 public:
  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;

  const std::string& name() const { return op_.name(); }
  const std::string& type() const { return op_.type(); }
  const OpDesc& op_desc() const { return op_; }
  OpDesc& mutable_op_desc() { return op_; }
  Graph* owner_graph() const { return graph_; }
  // Unique within the owner graph and increasing in insertion order; changes
  // when the node moves to another graph.
  int64_t id() const { return id_; }

  int num_inputs() const { return op_.num_inputs(); }
  int num_outputs() const { return op_.num_outputs(); }
  // Producer of input `i`; a null OutPort for an unconnected (absent) input.
  OutPort input(int i) const { return inputs_[i]; }
  const std::vector<OutPort>& inputs() const { return inputs_; }
  // Consumers of output `i`.
  const std::vector<InPort>& consumers(int i) const { return outputs_[i]; }
  const std::vector<std::vector<InPort>>& outputs() const { return outputs_; }
  const std::vector<Node*>& control_inputs() const { return control_inputs_; }
  const std::vector<Node*>& control_outputs() const { return control_outputs_; }

  // Distinct producers of data and control inputs, in port order then
  // control order; distinct consumers likewise.
  std::vector<Node*> InNodes() const;
  std::vector<Node*> OutNodes() const;
  bool HasConsumers() const;

 private:
  friend class Graph;
  Node(OpDesc op, Graph* graph, int64_t id);

  OpDesc op_;
  Graph* graph_;
  int64_t id_;
  std::vector<OutPort> inputs_;
  std::vector<std::vector<InPort>> outputs_;
  std::vector<Node*> control_inputs_;
  std::vector<Node*> control_outputs_;
  std::list<std::unique_ptr<Node>>::iterator self_;  // position in the owner's list
};

}  // namespace ge::ir
