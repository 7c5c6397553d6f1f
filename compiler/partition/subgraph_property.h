// The subgraph API (seeds/02, after MXNet's SubgraphProperty and
// SubgraphSelector): how a backend says which nodes it wants as subgraphs
// and what node replaces each subgraph found.
//
// A SubgraphProperty creates a stateful SubgraphSelector. The partitioner
// (SubgraphPartitioner) visits every node in topological order; from each
// node not yet in a subgraph for which Select() is true it grows a
// candidate set breadth-first: a neighbour not yet in a subgraph joins when
// SelectInput(current, producer) or SelectOutput(current, consumer) says so.
// Filter() then drops candidates (it may only remove), and Reset() readies
// the selector for the next start node. Each accepted set becomes a
// PartitionedCall owning a subgraph (InnerData / InnerNetOutput, like every
// partitioner's), and CreateSubgraphNode lets the property customize it.
//
// Beyond MXNet: a candidate set whose contraction would close a cycle (a
// path leaves the set and comes back) is not retried with fewer nodes but
// split into the largest valid pieces: candidates are layered by how many
// times a path from the set has left it and come back, and each layer's
// connected parts become subgraphs of their own. Several backends, each an
// ordered list of properties, can run in one compilation (the option
// ge.subgraph_backends names them in order).
//
// Backends live in a SubgraphBackendRegistry filled by explicit
// registration functions (RegisterBuiltinSubgraphBackends), never by
// static initializers.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "base/ir/graph.h"
#include "base/strings.h"

namespace ge::partition {

class SubgraphSelector {
 public:
  virtual ~SubgraphSelector() = default;
  // Whether `node` may start a subgraph.
  virtual bool Select(const ir::Node& node) = 0;
  // Whether `input` (a producer of `current`) joins the candidates.
  virtual bool SelectInput(const ir::Node& current, const ir::Node& input) = 0;
  // Whether `output` (a consumer of `current`) joins the candidates.
  virtual bool SelectOutput(const ir::Node& current, const ir::Node& output) = 0;
  // The final subgraph nodes, a subset of `candidates` (anything else
  // returned is ignored). The default keeps every candidate.
  virtual std::vector<ir::Node*> Filter(const std::vector<ir::Node*>& candidates) { return candidates; }
  // Called before each new start node.
  virtual void Reset() {}
};

class SubgraphProperty {
 public:
  virtual ~SubgraphProperty() = default;
  // Names the subgraphs ("<name>_<i>").
  virtual std::string_view name() const = 0;
  virtual std::unique_ptr<SubgraphSelector> CreateSubgraphSelector() const = 0;
  // Called once per subgraph found, after its nodes were replaced by `call`
  // (a PartitionedCall in `graph` owning `subgraph`, inputs and outputs
  // wired). A property may change the node's type and attributes (an
  // engine-specific fused op), set its engine, or rewrite the subgraph; it
  // must keep the node's inputs and outputs. The default keeps the
  // PartitionedCall as it is.
  virtual absl::Status CreateSubgraphNode(ir::Graph& graph, ir::Node& call, ir::Graph& subgraph,
                                          int subgraph_id) const;
};

// Selects connected regions of the given op types.
class ContainOpSelector : public SubgraphSelector {
 public:
  explicit ContainOpSelector(const StringSet* op_types) : op_types_(op_types) {}
  bool Select(const ir::Node& node) override { return op_types_->contains(node.type()); }
  bool SelectInput(const ir::Node&, const ir::Node& input) override { return op_types_->contains(input.type()); }
  bool SelectOutput(const ir::Node&, const ir::Node& output) override { return op_types_->contains(output.type()); }

 private:
  const StringSet* op_types_;
};

// A property whose subgraphs are the connected regions of its op types.
class ContainOpProperty : public SubgraphProperty {
 public:
  ContainOpProperty(std::string name, std::vector<std::string> op_types);
  std::string_view name() const override { return name_; }
  std::unique_ptr<SubgraphSelector> CreateSubgraphSelector() const override {
    return std::make_unique<ContainOpSelector>(&op_types_);
  }

 private:
  std::string name_;
  StringSet op_types_;
};

using SubgraphBackend = std::vector<std::shared_ptr<const SubgraphProperty>>;

class SubgraphBackendRegistry {
 public:
  // The registry RegisterBuiltinSubgraphBackends fills, built on first use.
  static const SubgraphBackendRegistry& Builtin();

  // AlreadyExists for a taken name; InvalidArgument for an empty backend.
  absl::Status Register(std::string name, SubgraphBackend properties);
  const SubgraphBackend* Find(std::string_view name) const;
  std::vector<std::string> Names() const;

 private:
  std::map<std::string, SubgraphBackend, std::less<>> backends_;
};

// ged's backends:
//   "elementwise": connected regions of element-wise ops (one subgraph per
//                  region), the shape a fusing engine wants to compile.
void RegisterBuiltinSubgraphBackends(SubgraphBackendRegistry& registry);

}  // namespace ge::partition
