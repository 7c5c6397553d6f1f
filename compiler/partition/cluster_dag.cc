// ClusterDag: Pearce-Kelly incremental topological order, bounded
// bidirectional reachability, and contraction of nodes.
#include "compiler/partition/cluster_dag.h"

#include <algorithm>

#include "base/status.h"

namespace ge::partition {

// ---- IdSet ----

bool IdSet::contains(int32_t id) const {
  if (big_) return big_->contains(id);
  return std::find(small_.begin(), small_.end(), id) != small_.end();
}

bool IdSet::insert(int32_t id) {
  if (big_) return big_->insert(id).second;
  if (std::find(small_.begin(), small_.end(), id) != small_.end()) return false;
  if (small_.size() < kInlineLimit) {
    small_.push_back(id);
    return true;
  }
  // Past the inline limit a linear scan per lookup would make hubs
  // quadratic; switch to hashing for good.
  big_ = std::make_unique<absl::flat_hash_set<int32_t>>(small_.begin(), small_.end());
  small_.clear();
  return big_->insert(id).second;
}

bool IdSet::erase(int32_t id) {
  if (big_) return big_->erase(id) > 0;
  auto it = std::find(small_.begin(), small_.end(), id);
  if (it == small_.end()) return false;
  *it = small_.back();
  small_.pop_back();
  return true;
}

void IdSet::clear() {
  small_.clear();
  big_.reset();
}

std::vector<int32_t> IdSet::ToVector() const {
  std::vector<int32_t> out;
  out.reserve(size());
  ForEach([&](int32_t id) { out.push_back(id); });
  return out;
}

// ---- ClusterDag ----

void ClusterDag::Reserve(size_t n) {
  rank_.reserve(n);
  out_.reserve(n);
  in_.reserve(n);
  mark_forward_.reserve(n);
  mark_backward_.reserve(n);
}

int32_t ClusterDag::AddNode() {
  const int32_t id = num_nodes();
  rank_.push_back(id);
  out_.emplace_back();
  in_.emplace_back();
  mark_forward_.push_back(0);
  mark_backward_.push_back(0);
  return id;
}

uint32_t ClusterDag::NewEpoch() {
  if (++epoch_ == 0) {
    // Wrapped around: old marks could alias the new epoch.
    std::fill(mark_forward_.begin(), mark_forward_.end(), 0);
    std::fill(mark_backward_.begin(), mark_backward_.end(), 0);
    epoch_ = 1;
  }
  return epoch_;
}

bool ClusterDag::InsertEdge(int32_t from, int32_t to) {
  if (from == to) return false;
  if (out_[from].contains(to)) return true;
  const int32_t rank_from = rank_[from];
  const int32_t rank_to = rank_[to];
  if (rank_from > rank_to) {
    // The edge disagrees with the order: find what lies between and
    // re-rank it, or discover that `to` already reaches `from`.
    NewEpoch();
    forward_.clear();
    backward_.clear();
    if (!CollectForward(to, rank_from, forward_)) return false;
    CollectBackward(from, rank_to, backward_);
    Reorder(forward_, backward_);
  }
  out_[from].insert(to);
  in_[to].insert(from);
  return true;
}

void ClusterDag::RemoveEdge(int32_t from, int32_t to) {
  out_[from].erase(to);
  in_[to].erase(from);
}

bool ClusterDag::CollectForward(int32_t start, int32_t upper, std::vector<int32_t>& visited) {
  const uint32_t e = epoch_;
  stack_.clear();
  stack_.push_back(start);
  mark_forward_[start] = e;
  visited.push_back(start);
  while (!stack_.empty()) {
    const int32_t u = stack_.back();
    stack_.pop_back();
    bool cycle = false;
    out_[u].ForEach([&](int32_t s) {
      if (cycle) return;
      if (rank_[s] == upper) {
        cycle = true;
        return;
      }
      if (rank_[s] < upper && mark_forward_[s] != e) {
        mark_forward_[s] = e;
        stack_.push_back(s);
        visited.push_back(s);
      }
    });
    if (cycle) return false;
  }
  return true;
}

void ClusterDag::CollectBackward(int32_t start, int32_t lower, std::vector<int32_t>& visited) {
  const uint32_t e = epoch_;
  stack_.clear();
  stack_.push_back(start);
  mark_backward_[start] = e;
  visited.push_back(start);
  while (!stack_.empty()) {
    const int32_t u = stack_.back();
    stack_.pop_back();
    in_[u].ForEach([&](int32_t p) {
      if (rank_[p] > lower && mark_backward_[p] != e) {
        mark_backward_[p] = e;
        stack_.push_back(p);
        visited.push_back(p);
      }
    });
  }
}

void ClusterDag::Reorder(std::vector<int32_t>& forward, std::vector<int32_t>& backward) {
  auto by_rank = [this](int32_t a, int32_t b) { return rank_[a] < rank_[b]; };
  std::sort(forward.begin(), forward.end(), by_rank);
  std::sort(backward.begin(), backward.end(), by_rank);
  // The affected nodes keep the same pool of ranks; everything that reaches
  // the edge's source takes the lower ones, everything its target reaches
  // the higher ones, each side keeping its relative order.
  std::vector<int32_t> ranks;
  ranks.reserve(forward.size() + backward.size());
  for (int32_t id : backward) ranks.push_back(rank_[id]);
  for (int32_t id : forward) ranks.push_back(rank_[id]);
  std::sort(ranks.begin(), ranks.end());
  size_t i = 0;
  for (int32_t id : backward) rank_[id] = ranks[i++];
  for (int32_t id : forward) rank_[id] = ranks[i++];
}

bool ClusterDag::IsReachable(int32_t from, int32_t to) {
  if (from == to) return true;
  const int32_t lo = rank_[from];
  const int32_t hi = rank_[to];
  if (lo > hi) return false;
  const uint32_t e = NewEpoch();
  stack_.assign(1, from);
  stack2_.assign(1, to);
  mark_forward_[from] = e;
  mark_backward_[to] = e;
  // Alternate one expansion per side; a side that runs dry has explored
  // everything it can reach inside the rank window.
  while (!stack_.empty() && !stack2_.empty()) {
    bool found = false;
    const int32_t u = stack_.back();
    stack_.pop_back();
    out_[u].ForEach([&](int32_t s) {
      if (found) return;
      if (mark_backward_[s] == e) {
        found = true;
      } else if (rank_[s] < hi && mark_forward_[s] != e) {
        mark_forward_[s] = e;
        stack_.push_back(s);
      }
    });
    if (found) return true;
    const int32_t v = stack2_.back();
    stack2_.pop_back();
    in_[v].ForEach([&](int32_t p) {
      if (found) return;
      if (mark_forward_[p] == e) {
        found = true;
      } else if (rank_[p] > lo && mark_backward_[p] != e) {
        mark_backward_[p] = e;
        stack2_.push_back(p);
      }
    });
    if (found) return true;
  }
  return false;
}

bool ClusterDag::MergeWouldCycle(int32_t a, int32_t b) {
  if (a == b) return false;
  const int32_t lo = rank_[a] < rank_[b] ? a : b;
  const int32_t hi = lo == a ? b : a;
  // Only lo -> hi paths can exist. The direct edge does not count: it
  // becomes internal to the merged node.
  const bool direct = out_[lo].contains(hi);
  if (direct) RemoveEdge(lo, hi);
  const bool reachable = IsReachable(lo, hi);
  if (direct) {
    out_[lo].insert(hi);
    in_[hi].insert(lo);
  }
  return reachable;
}

int32_t ClusterDag::Merge(int32_t a, int32_t b) {
  GE_CHECK(a != b);
  const size_t degree_a = in_[a].size() + out_[a].size();
  const size_t degree_b = in_[b].size() + out_[b].size();
  const int32_t keep = degree_a >= degree_b ? a : b;
  const int32_t gone = keep == a ? b : a;
  RemoveEdge(keep, gone);
  RemoveEdge(gone, keep);
  // Sorted so that the sequence of insertions, and hence the ranks, do not
  // depend on hash iteration order.
  std::vector<int32_t> preds = in_[gone].ToVector();
  std::vector<int32_t> succs = out_[gone].ToVector();
  std::sort(preds.begin(), preds.end());
  std::sort(succs.begin(), succs.end());
  for (int32_t p : preds) {
    RemoveEdge(p, gone);
    GE_CHECK_MSG(InsertEdge(p, keep), "ClusterDag::Merge of nodes joined by a longer path");
  }
  for (int32_t s : succs) {
    RemoveEdge(gone, s);
    GE_CHECK_MSG(InsertEdge(keep, s), "ClusterDag::Merge of nodes joined by a longer path");
  }
  return keep;
}

std::optional<int32_t> ClusterDag::TryMerge(int32_t a, int32_t b) {
  if (a == b || MergeWouldCycle(a, b)) return std::nullopt;
  return Merge(a, b);
}

std::vector<int32_t> ClusterDag::NodesOnPaths(int32_t from, int32_t to) {
  if (from == to) return {from};
  const int32_t lo = rank_[from];
  const int32_t hi = rank_[to];
  if (lo > hi) return {};
  const uint32_t e = NewEpoch();
  // Forward: everything `from` reaches inside the window (`to` included).
  stack_.assign(1, from);
  mark_forward_[from] = e;
  while (!stack_.empty()) {
    const int32_t u = stack_.back();
    stack_.pop_back();
    out_[u].ForEach([&](int32_t s) {
      if (rank_[s] <= hi && mark_forward_[s] != e) {
        mark_forward_[s] = e;
        if (s != to) stack_.push_back(s);
      }
    });
  }
  if (mark_forward_[to] != e) return {};
  // Backward from `to` through forward-marked nodes only: those are the
  // nodes on some path.
  std::vector<int32_t> result{to};
  stack_.assign(1, to);
  mark_backward_[to] = e;
  while (!stack_.empty()) {
    const int32_t u = stack_.back();
    stack_.pop_back();
    in_[u].ForEach([&](int32_t p) {
      if (mark_forward_[p] == e && mark_backward_[p] != e) {
        mark_backward_[p] = e;
        result.push_back(p);
        if (p != from) stack_.push_back(p);
      }
    });
  }
  std::sort(result.begin(), result.end(), [this](int32_t a, int32_t b) { return rank_[a] < rank_[b]; });
  return result;
}

bool ClusterDag::CheckInvariants() const {
  std::vector<int32_t> seen(rank_.size(), 0);
  for (int32_t r : rank_) {
    if (r < 0 || r >= num_nodes() || seen[r]++) return false;
  }
  for (int32_t u = 0; u < num_nodes(); ++u) {
    bool ok = true;
    out_[u].ForEach([&](int32_t s) { ok = ok && rank_[u] < rank_[s] && in_[s].contains(u); });
    in_[u].ForEach([&](int32_t p) { ok = ok && out_[p].contains(u); });
    if (!ok) return false;
  }
  return true;
}

}  // namespace ge::partition
