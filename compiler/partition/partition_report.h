// The placement and partition report (issue 3 item 7): what `gectl
// partition` prints, built from a partitioned graph tree.
//
// JSON:
//   {"nodes": [{"name", "op", "engine", "rejected": [{"engine", "reason"}],
//               "reason", "estimates": [{"engine", "ns"}]}],
//    "subgraphs": [{"name", "kind", "engines", "nodes": [names]}]}
//
// `nodes` lists every node of the tree users would recognize: not the
// boundary nodes splitting adds (InnerData, InnerNetOutput, PlaceHolder,
// End) nor the PartitionedCall nodes a partitioner made (they carry
// `_partitioned_by`); root graph first, then subgraphs in tree order.
// `subgraphs` lists the execution units after all splitting: every graph of
// the tree (the root, or a partitioner's subgraph) that directly holds
// nodes other than Data / NetOutput, boundary nodes and partition calls.
// Nodes inside control-flow bodies (If branches, While bodies) count for
// the unit that holds their owner. A graph that was not split is one unit
// (the root, named after it). `kind` is "dynamic" when the unit runs
// dynamically: its call (or the nearest enclosing partition call) has
// `_is_unknown_shape = true` or `_force_unknown_shape = true`, or, for the
// root, the graph attribute `_is_unknown_shape` is true; "static"
// otherwise. `engines` are the distinct `_engine_name`s of the unit's nodes,
// sorted. Each node appears in at most one unit; the root's Data and
// NetOutput in none.
#pragma once

#include <string>
#include <vector>

#include "base/ir/graph.h"
#include "base/strings.h"

namespace ge::partition {

struct ReportRejection {
  std::string engine;
  std::string reason;
};

// A placement estimate (compiler/placement/cost_model.h), in nanoseconds.
struct ReportEstimate {
  std::string engine;
  double ns = 0;
};

struct ReportNode {
  std::string name;
  std::string op;
  std::string engine;
  std::vector<ReportRejection> rejected;
  // Why the placer chose `engine`: priority, forced, engine_type, cost or
  // host_exec (the placer's PlacementReason); for cost, each competing
  // engine's estimate (own cost plus boundaries), cheapest first.
  std::string reason = "priority";
  std::vector<ReportEstimate> estimates;
};

struct ReportSubgraph {
  std::string name;
  std::string kind;  // "static" | "dynamic"
  std::vector<std::string> engines;
  std::vector<std::string> nodes;
};

struct PartitionReport {
  std::vector<ReportNode> nodes;
  std::vector<ReportSubgraph> subgraphs;
};

// Engines that rejected each node before the chosen one, by node name.
using RejectionMap = StringMap<std::vector<ReportRejection>>;

PartitionReport BuildPartitionReport(const ir::Graph& root, const RejectionMap& rejections);
std::string PartitionReportJson(const PartitionReport& report);
std::string PartitionReportText(const PartitionReport& report);
// Graphviz drawing of the partitioned tree: nodes filled with one colour per
// engine (legend in the title), one box (cluster) per partition subgraph.
std::string PartitionDot(const ir::Graph& root);

// Whether `node` is a PartitionedCall made by a partitioner.
bool IsPartitionCall(const ir::Node& node);

}  // namespace ge::partition
