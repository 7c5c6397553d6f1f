// BinaryPartitioner: the JIT split of seeds/01 §5.7 (GE's
// BinaryPartitioner). Given the nodes whose shapes are known, cut a graph
// into a sliced graph (those nodes, compiled and run now) and a remaining
// graph (the rest, waiting for more shape information), with the IO
// linkage that connects them.
//
// The sliced graph holds a copy of every known node, a Data node for each
// original graph input they read (named as in the original, indexes in the
// original order), and a NetOutput returning every value they produce that
// a remaining node (or the original NetOutput) reads, in topological order
// of the producers. The remaining graph holds every other node except Data,
// the original NetOutput, and Data nodes for the original inputs it reads
// (original order, original names) followed by one Data per sliced output
// it reads. A known Const that remaining compute nodes read is copied into
// the remaining graph (sharing its tensor) instead of crossing, so the next
// slice sees its weights as constants (JIT: packed, folded); it is in the
// sliced graph too only when a known node reads it. Non-Data nodes keep
// their names, so a remaining graph can be sliced again. Control edges from known to remaining nodes are dropped:
// the slice runs first anyway.
//
// A known set that depends on the remaining part (a known node reads a value
// of, or follows a control edge from, a node that is neither known nor
// Data) is refused (CheckNodesContainsCycle in GE): slicing it would need
// the remaining graph to run first.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "base/ir/graph.h"

namespace ge::partition {

// Where a graph input's value comes from.
struct ValueSource {
  enum class Kind : uint8_t { kGraphInput, kSliceOutput };
  Kind kind = Kind::kGraphInput;
  int slice = -1;  // kSliceOutput: the execution point (-1: the sliced graph of one split)
  int index = 0;   // the graph input index, or the slice's output index
  friend bool operator==(const ValueSource& a, const ValueSource& b) {
    return a.kind == b.kind && a.slice == b.slice && a.index == b.index;
  }
};

struct BinaryGraphIOLinkage {
  // Per sliced-graph input: the original graph's input index.
  std::vector<int> sliced_inputs;
  // Per remaining-graph input: an original input (kGraphInput) or a sliced
  // output (kSliceOutput, slice -1).
  std::vector<ValueSource> remaining_inputs;
  // Per sliced output: the producer's name and port in the original graph.
  std::vector<std::pair<std::string, int>> sliced_outputs;
};

struct BinaryPartition {
  std::unique_ptr<ir::Graph> sliced;
  std::unique_ptr<ir::Graph> remaining;
  BinaryGraphIOLinkage linkage;
};

class BinaryPartitioner {
 public:
  // Splits `graph` (unchanged) by `known`, nodes of `graph`. Data nodes in
  // `known` are ignored (inputs are available to both sides), and so is the
  // NetOutput (it always stays in the remaining graph). InvalidArgument
  // when no compute node is known, when a node is not in `graph`, or when
  // the set depends on the remaining part (naming the node and what it
  // reads). Nodes that own subgraphs are refused (Unimplemented) for now.
  static absl::StatusOr<BinaryPartition> Partition(const ir::Graph& graph, const std::vector<const ir::Node*>& known);
};

}  // namespace ge::partition
