// Flattening: expanding PartitionedCall nodes back into their parent graph
// (seeds/01 §6.1, GE's ExpandPartitionedCallToParentGraph). The partitioners
// wrap subgraphs in PartitionedCall nodes; a loader whose executor does not
// run PartitionedCall (or that wants one flat schedule) calls this to undo
// the wrapping without losing any ordering.
//
// For a PartitionedCall `call` owning subgraph `f`:
//   * every node of `f` except its InnerData and InnerNetOutput nodes moves
//     into the parent graph (renamed with a numeric suffix only if its name
//     is taken there);
//   * each InnerData's consumers are fed by the call's producer of input
//     `_parent_index` directly (left unconnected when that input is absent);
//   * each consumer of call output k is fed by the producer of the
//     InnerNetOutput's input k;
//   * a NoOp "<call>/before" takes the call's control inputs and precedes
//     every moved node that has no producer inside `f` other than InnerData;
//     a NoOp "<call>/after" follows every moved node with no consumer inside
//     `f` other than InnerNetOutput (and the InnerNetOutput's control
//     inputs) and precedes the call's control outputs. By default each NoOp
//     is inserted only when the call has control edges on its side, since
//     without them it orders nothing; `always_insert_noops` inserts both;
//   * the call, the InnerData / InnerNetOutput nodes and `f` are removed.
// Subgraphs owned by moved nodes (If branches, nested PartitionedCall
// bodies) are re-parented to the parent graph.
//
// The cost is linear in the nodes moved plus the edges touched.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "base/ir/graph.h"

namespace ge::ir {

struct FlattenOptions {
  // Attributes set on every NoOp flattening creates (for example the engine
  // that runs NoOps, so that the flat graph stays fully placed).
  AttrMap noop_attrs;
  bool always_insert_noops = false;
  // Attributes of the call copied onto each moved node that lacks them.
  std::vector<std::string> inherited_attrs;
};

// Expands `call`, a PartitionedCall node of `graph`. InvalidArgument (naming
// the call) when its subgraph is missing or malformed: no subgraph name, a
// subgraph owned by another node, an InnerData whose `_parent_index` is
// missing or out of range, more than one InnerNetOutput, or an
// InnerNetOutput whose input count differs from the call's output count.
// Nothing is changed when an error is returned.
absl::Status FlattenPartitionedCall(Graph& graph, Node* call, const FlattenOptions& options = {});

// Flattens every PartitionedCall of `graph` for which `select` returns true
// (every one when `select` is empty), including the ones that bodies being
// expanded bring along. Returns the number of calls expanded. The bodies are
// removed from the tree in one pass at the end.
absl::StatusOr<int> FlattenPartitionedCalls(Graph& graph, const FlattenOptions& options = {},
                                            const std::function<bool(const Node&)>& select = {});

}  // namespace ge::ir
