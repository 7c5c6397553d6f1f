// ClusterDag: a directed acyclic graph over integer ids that keeps a
// topological order of its nodes up to date as edges are added and nodes are
// merged, so that partitioners can ask "would merging these two clusters
// close a cycle?" without searching the whole graph.
//
// The order is maintained with Pearce and Kelly's dynamic topological sort:
// every node has a distinct rank, and every edge runs from a lower rank to a
// higher one. Adding an edge that already agrees with the ranks costs O(1);
// otherwise only the nodes whose ranks lie between the two endpoints and
// that are reachable from (or reach) them are visited and re-ranked. Every
// reachability question is bounded the same way: a path from x to y can
// only visit nodes ranked between x and y. Searches run from both ends at
// once and stop when either side runs dry, so a question about a node with
// few neighbours stays cheap even when the other end is a hub.
//
// Merging two nodes (contraction) is legal when no path of length two or
// more connects them; the merged node keeps the id of the node with more
// edges (adjacency moves from the smaller side), which makes a sequence of
// merges near-linear in the number of edges.
//
// Not thread-safe. Ids are dense and never reused; a merged-away node stays
// allocated without edges.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/container/inlined_vector.h"

namespace ge::partition {

// A set of node ids: a short inline vector, or a hash set once it grows.
// Iteration order is unspecified; callers that need determinism sort.
class IdSet {
 public:
  bool contains(int32_t id) const;
  // True when `id` was not yet present.
  bool insert(int32_t id);
  // True when `id` was present.
  bool erase(int32_t id);
  size_t size() const { return big_ ? big_->size() : small_.size(); }
  bool empty() const { return size() == 0; }
  void clear();
  std::vector<int32_t> ToVector() const;
  template <typename Fn>
  void ForEach(Fn&& fn) const {
    if (big_) {
      for (int32_t id : *big_) fn(id);
    } else {
      for (int32_t id : small_) fn(id);
    }
  }

 private:
  static constexpr size_t kInlineLimit = 16;
  absl::InlinedVector<int32_t, 4> small_;
  std::unique_ptr<absl::flat_hash_set<int32_t>> big_;
};

class ClusterDag {
 public:
  ClusterDag() = default;
  ClusterDag(ClusterDag&&) = default;
  ClusterDag& operator=(ClusterDag&&) = default;

  void Reserve(size_t n);
  // Adds a node ranked after every existing node. Building a DAG by adding
  // nodes in a topological order and then edges that follow it costs O(1)
  // per edge.
  int32_t AddNode();
  int32_t num_nodes() const { return static_cast<int32_t>(rank_.size()); }
  int32_t rank(int32_t id) const { return rank_[id]; }

  // Adds from -> to. Returns false and changes nothing when the edge would
  // close a cycle (including from == to); true when it exists already.
  bool InsertEdge(int32_t from, int32_t to);
  void RemoveEdge(int32_t from, int32_t to);
  bool HasEdge(int32_t from, int32_t to) const { return out_[from].contains(to); }
  const IdSet& successors(int32_t id) const { return out_[id]; }
  const IdSet& predecessors(int32_t id) const { return in_[id]; }

  // Whether a path from `from` to `to` exists (true when from == to).
  bool IsReachable(int32_t from, int32_t to);
  // Whether merging `a` and `b` would close a cycle: a path of two or more
  // edges joins them (in either direction).
  bool MergeWouldCycle(int32_t a, int32_t b);
  // Merges `a` and `b` into one node and returns the id that survives (the
  // other is left without edges). Edges between them disappear; every other
  // edge of either node now touches the survivor. Precondition:
  // !MergeWouldCycle(a, b) (checked: a violation is a programmer error).
  int32_t Merge(int32_t a, int32_t b);
  // Merge if legal; nullopt (and nothing changed) otherwise.
  std::optional<int32_t> TryMerge(int32_t a, int32_t b);
  // Every node on some path from `from` to `to`, both included, sorted by
  // rank; empty when `to` is not reachable from `from`. The set is convex
  // (no path leaves it and comes back), so merging it is always legal.
  std::vector<int32_t> NodesOnPaths(int32_t from, int32_t to);

  // For tests: every edge agrees with the ranks and ranks are distinct.
  bool CheckInvariants() const;

 private:
  // Depth-first search from `start` over successors (forward) or
  // predecessors, visiting nodes ranked strictly inside the bound; marks
  // visited nodes with the current epoch in `marks` and appends them to
  // `visited`. Forward: returns false as soon as a node ranked exactly
  // `bound` is reached (that is the edge's source: a cycle).
  bool CollectForward(int32_t start, int32_t upper, std::vector<int32_t>& visited);
  void CollectBackward(int32_t start, int32_t lower, std::vector<int32_t>& visited);
  void Reorder(std::vector<int32_t>& forward, std::vector<int32_t>& backward);
  uint32_t NewEpoch();

  std::vector<int32_t> rank_;
  std::vector<IdSet> out_;
  std::vector<IdSet> in_;
  // Visit marks for searches: a node is marked when its entry equals the
  // current epoch, so clearing is free.
  std::vector<uint32_t> mark_forward_;
  std::vector<uint32_t> mark_backward_;
  uint32_t epoch_ = 0;
  // Scratch vectors reused across searches.
  std::vector<int32_t> stack_;
  std::vector<int32_t> stack2_;
  std::vector<int32_t> forward_;
  std::vector<int32_t> backward_;
};

}  // namespace ge::partition
