// EnginePartitioner: splits graphs by engine so that each engine's graph
// optimizers can rewrite the regions placed on it, then merges the regions
// back (seeds/01 §5.3, GE's EnginePartitioner / GraphPartitioner).
//
// Split: every node of a graph gets a key, its engine (`_engine_name`) in
// atomic mode, or in composite mode the composite engine its engine
// belongs to (EngineAttributes::composite_engine, when that engine is
// loaded and not excluded; otherwise its own engine). Clusters start as
// single nodes and, in topological order, a cluster absorbs each cluster
// feeding it that has the same key and the same `_stream_label`, unless a
// second path joins them. Each cluster becomes a standalone graph holding
// its nodes; every value that crosses from cluster B to cluster A gets an
// End node in B (reading the value) and a PlaceHolder in A (standing for
// it), both carrying the pair's `peer_index`, the producer's name
// (`_peer_node`) and port (`_peer_port`); a control edge that crosses gets
// a pair with no data (`_control = true`). One pair per value and reading
// cluster. The graph is left empty.
//
// Optimize: each subgraph's engine (the key) runs its GraphOptimizers'
// OptimizeFusedGraph on it; subgraphs are independent graphs and run in
// parallel on the thread pool. An optimizer sees only its subgraph: it must
// keep the End and PlaceHolder nodes and must not look up subgraphs of the
// tree (the bodies owned by nodes stay in the root's table).
//
// MergeAfterSubGraphOptimization: each PlaceHolder's consumers are fed by
// the producer its End reads, control edges are rejoined, the pairs are
// removed, and every node moves back into the graph: the original nodes in
// their original order, then the nodes the optimizers added.
//
// Run() does all three over a whole tree (the root and every subgraph),
// skipping graphs in which no engine that would get a subgraph has an
// optimizer: partitioning there would change nothing.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "base/ir/graph.h"
#include "base/thread_pool.h"
#include "runtime/engines/engine_registry.h"

namespace ge::partition {

enum class EnginePartitionMode : uint8_t { kComposite, kAtomic };
std::string_view EnginePartitionModeName(EnginePartitionMode mode);

struct EngineSubgraph {
  std::string engine;  // the key: composite or atomic engine ("" for unplaced nodes)
  std::string stream_label;
  std::unique_ptr<ir::Graph> graph;
  bool changed = false;  // an optimizer reported a change
};

// The split of one graph, consumed by MergeAfterSubGraphOptimization.
struct EnginePartition {
  ir::Graph* graph = nullptr;
  std::vector<EngineSubgraph> subgraphs;  // topological order
  int num_pairs = 0;
  absl::flat_hash_map<const ir::Node*, int64_t> original_order;
};

class EnginePartitioner {
 public:
  // `pool` may be null (optimizers then run on the caller). Engines named
  // in `exclude_engines` are never used as composite keys.
  EnginePartitioner(const engine::EngineRegistry& engines, ThreadPool* pool,
                    std::vector<std::string> exclude_engines = {});

  // The key of `node` in `mode`.
  // Points into the node's attribute or the engine registry: read it before
  // changing the node.
  std::string_view EngineKey(const ir::Node& node, EnginePartitionMode mode) const;
  // Optimizers (by GraphOptimizer::name) that are not run: the compiler
  // driver's disabled `<name>.OptimizeFusedGraph` sub-passes.
  void set_skipped_optimizers(std::vector<std::string> names) { skipped_ = std::move(names); }
  // The optimizers of `e` that run.
  std::vector<engine::GraphOptimizer*> Optimizers(engine::Engine& e) const;
  // Whether splitting `graph` in `mode` would hand a subgraph to an engine
  // that has graph optimizers.
  bool HasWork(const ir::Graph& graph, EnginePartitionMode mode) const;

  absl::StatusOr<EnginePartition> Split(ir::Graph& graph, EnginePartitionMode mode) const;
  // Runs the optimizers of each subgraph's engine, in parallel; returns
  // whether any changed its subgraph. The first error (in subgraph order)
  // names the engine, the optimizer and the subgraph.
  absl::StatusOr<bool> OptimizeSubgraphs(const std::vector<EngineSubgraph*>& subgraphs) const;
  absl::Status MergeAfterSubGraphOptimization(EnginePartition& partition) const;

  // Split, optimize and merge every graph of `root`'s tree that has work.
  // Returns whether any optimizer changed anything.
  absl::StatusOr<bool> Run(ir::Graph& root, EnginePartitionMode mode) const;

 private:
  const engine::EngineRegistry& engines_;
  ThreadPool* pool_;
  std::vector<std::string> exclude_engines_;
  std::vector<std::string> skipped_;
};

}  // namespace ge::partition
