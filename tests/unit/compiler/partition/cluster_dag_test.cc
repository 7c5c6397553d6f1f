// ClusterDag: cycle refusal, reordering, reachability and merges, checked
// against a brute-force model on thousands of random operations.
#include "compiler/partition/cluster_dag.h"

#include <random>
#include <set>

#include "gtest/gtest.h"

namespace ge::partition {
namespace {

// The same graph as plain adjacency sets, answering by exhaustive search.
class Model {
 public:
  explicit Model(int n) : out_(n) {}
  int AddNode() {
    out_.emplace_back();
    return static_cast<int>(out_.size()) - 1;
  }
  bool Reachable(int from, int to) const {
    std::vector<bool> seen(out_.size());
    std::vector<int> stack{from};
    seen[from] = true;
    while (!stack.empty()) {
      int u = stack.back();
      stack.pop_back();
      if (u == to) return true;
      for (int s : out_[u]) {
        if (!seen[s]) {
          seen[s] = true;
          stack.push_back(s);
        }
      }
    }
    return false;
  }
  void Add(int from, int to) { out_[from].insert(to); }
  void Remove(int from, int to) { out_[from].erase(to); }
  bool Has(int from, int to) const { return out_[from].count(to) > 0; }
  // Contracts `gone` into `keep`.
  void Merge(int keep, int gone) {
    out_[keep].erase(gone);
    out_[gone].erase(keep);
    for (int s : out_[gone]) out_[keep].insert(s);
    out_[gone].clear();
    for (auto& succ : out_) {
      if (succ.erase(gone) > 0) succ.insert(keep);
    }
    out_[keep].erase(keep);
  }
  bool MergeWouldCycle(int a, int b) {
    for (auto [x, y] : {std::pair{a, b}, std::pair{b, a}}) {
      const bool direct = Has(x, y);
      Remove(x, y);
      const bool reach = Reachable(x, y);
      if (direct) Add(x, y);
      if (reach) return true;
    }
    return false;
  }
  size_t size() const { return out_.size(); }

 private:
  std::vector<std::set<int>> out_;
};

TEST(ClusterDagTest, RefusesCyclesAndReorders) {
  ClusterDag dag;
  for (int i = 0; i < 4; ++i) dag.AddNode();
  EXPECT_TRUE(dag.InsertEdge(0, 1));
  EXPECT_TRUE(dag.InsertEdge(1, 2));
  EXPECT_FALSE(dag.InsertEdge(2, 0));
  EXPECT_FALSE(dag.InsertEdge(1, 1));
  EXPECT_FALSE(dag.HasEdge(2, 0));
  // 3 -> 0 goes against the initial ranks: 3 must move before 0.
  EXPECT_TRUE(dag.InsertEdge(3, 0));
  EXPECT_LT(dag.rank(3), dag.rank(0));
  EXPECT_TRUE(dag.CheckInvariants());
  EXPECT_TRUE(dag.IsReachable(3, 2));
  EXPECT_FALSE(dag.IsReachable(2, 3));
}

TEST(ClusterDagTest, MergesOnlyWithoutLongerPaths) {
  ClusterDag dag;
  for (int i = 0; i < 4; ++i) dag.AddNode();
  ASSERT_TRUE(dag.InsertEdge(0, 1));
  ASSERT_TRUE(dag.InsertEdge(1, 2));
  ASSERT_TRUE(dag.InsertEdge(0, 2));
  ASSERT_TRUE(dag.InsertEdge(2, 3));
  EXPECT_TRUE(dag.MergeWouldCycle(0, 2));  // 0 -> 1 -> 2
  EXPECT_FALSE(dag.TryMerge(0, 2).has_value());
  EXPECT_TRUE(dag.HasEdge(0, 2));  // unchanged by the refusal
  auto merged = dag.TryMerge(1, 2);
  ASSERT_TRUE(merged.has_value());
  const int32_t other = *merged == 1 ? 2 : 1;
  EXPECT_TRUE(dag.predecessors(other).empty());
  EXPECT_TRUE(dag.successors(other).empty());
  EXPECT_TRUE(dag.HasEdge(0, *merged));
  EXPECT_TRUE(dag.HasEdge(*merged, 3));
  EXPECT_TRUE(dag.CheckInvariants());
  // Now 0 -> {1,2} -> 3 and 0 -> ... only through the merged node.
  EXPECT_TRUE(dag.TryMerge(0, *merged).has_value());
  EXPECT_TRUE(dag.CheckInvariants());
}

TEST(ClusterDagTest, NodesOnPathsIsTheUnionOfPaths) {
  ClusterDag dag;
  for (int i = 0; i < 6; ++i) dag.AddNode();
  // 0 -> 1 -> 3, 0 -> 2 -> 3, 2 -> 4 (off path), 5 -> 3 (off path)
  for (auto [a, b] : {std::pair{0, 1}, {1, 3}, {0, 2}, {2, 3}, {2, 4}, {5, 3}}) ASSERT_TRUE(dag.InsertEdge(a, b));
  std::vector<int32_t> on = dag.NodesOnPaths(0, 3);
  std::set<int32_t> got(on.begin(), on.end());
  EXPECT_EQ(got, (std::set<int32_t>{0, 1, 2, 3}));
  EXPECT_TRUE(dag.NodesOnPaths(3, 0).empty());
  EXPECT_TRUE(dag.NodesOnPaths(4, 3).empty());
}

TEST(ClusterDagTest, RandomOperationsMatchTheModel) {
  std::mt19937 rng(1234);
  for (int trial = 0; trial < 200; ++trial) {
    const int n = 5 + static_cast<int>(rng() % 30);
    ClusterDag dag;
    Model model(0);
    std::vector<bool> dead;
    for (int i = 0; i < n; ++i) {
      dag.AddNode();
      model.AddNode();
      dead.push_back(false);
    }
    for (int step = 0; step < 6 * n; ++step) {
      const int a = static_cast<int>(rng() % n);
      const int b = static_cast<int>(rng() % n);
      if (dead[a] || dead[b] || a == b) continue;
      switch (rng() % 4) {
        case 0:
        case 1: {
          const bool cycle = model.Reachable(b, a);
          ASSERT_EQ(dag.InsertEdge(a, b), !cycle) << "trial " << trial << " step " << step;
          if (!cycle) model.Add(a, b);
          break;
        }
        case 2:
          ASSERT_EQ(dag.IsReachable(a, b), model.Reachable(a, b)) << "trial " << trial;
          break;
        case 3: {
          const bool would = model.MergeWouldCycle(a, b);
          ASSERT_EQ(dag.MergeWouldCycle(a, b), would) << "trial " << trial;
          if (would || rng() % 2 == 0) break;
          const int32_t keep = dag.Merge(a, b);
          const int gone = keep == a ? b : a;
          model.Merge(keep, gone);
          dead[gone] = true;
          break;
        }
      }
      ASSERT_TRUE(dag.CheckInvariants()) << "trial " << trial << " step " << step;
    }
    for (int a = 0; a < n; ++a) {
      for (int b = 0; b < n; ++b) {
        if (dead[a] || dead[b]) continue;
        ASSERT_EQ(dag.HasEdge(a, b), model.Has(a, b));
        ASSERT_EQ(dag.IsReachable(a, b), model.Reachable(a, b));
      }
    }
  }
}

TEST(ClusterDagTest, HubsSwitchToHashing) {
  ClusterDag dag;
  const int32_t hub = dag.AddNode();
  for (int i = 0; i < 100; ++i) ASSERT_TRUE(dag.InsertEdge(hub, dag.AddNode()));
  EXPECT_EQ(dag.successors(hub).size(), 100u);
  for (int32_t i = 1; i <= 100; i += 2) dag.RemoveEdge(hub, i);
  EXPECT_EQ(dag.successors(hub).size(), 50u);
  EXPECT_TRUE(dag.IsReachable(hub, 2));
  EXPECT_FALSE(dag.IsReachable(hub, 1));
  EXPECT_TRUE(dag.CheckInvariants());
}

TEST(ClusterDagTest, LongChainStaysLinear) {
  // Building a 200k chain backwards forces every insertion to reorder;
  // building it forwards and contracting it end to end must stay fast.
  ClusterDag dag;
  const int n = 200000;
  for (int i = 0; i < n; ++i) dag.AddNode();
  for (int i = 0; i + 1 < n; ++i) ASSERT_TRUE(dag.InsertEdge(i, i + 1));
  int32_t current = 0;
  for (int i = 1; i < n; ++i) {
    auto merged = dag.TryMerge(current, i);
    ASSERT_TRUE(merged.has_value());
    current = *merged;
  }
  EXPECT_TRUE(dag.successors(current).empty());
}

}  // namespace
}  // namespace ge::partition
