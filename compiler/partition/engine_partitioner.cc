// EnginePartitioner: engine clusters, End / PlaceHolder pairs, parallel
// graph optimization and the merge back.
#include "compiler/partition/engine_partitioner.h"

#include <chrono>

#include <algorithm>
#include <tuple>

#include "base/ir/op_types.h"
#include "base/logging.h"
#include "base/status.h"
#include "compiler/partition/base_cluster.h"
#include "compiler/partition/partition_attrs.h"

namespace ge::partition {
namespace {

constexpr char kLabelSeparator = '\x1f';
constexpr std::string_view kAttrControlPair = "_control";

struct PairBuilder {
  EnginePartition& part;
  std::vector<ir::Graph*> graphs;  // by subgraph index
  // (producer, port or -1 for control, reading subgraph) -> PlaceHolder
  absl::flat_hash_map<std::tuple<const ir::Node*, int, int>, ir::Node*> placeholders;

  absl::StatusOr<ir::Node*> Get(ir::Node* producer, int port, int from, int to) {
    auto it = placeholders.find({producer, port, to});
    if (it != placeholders.end()) return it->second;
    const bool control = port < 0;
    const auto id = static_cast<int64_t>(part.num_pairs++);
    auto boundary = [&](std::string_view type, std::string_view prefix, int sub) {
      ir::OpDesc op(graphs[sub]->UniqueNodeName(StrCat(prefix, id)), std::string(type));
      op.SetAttr(kAttrPeerIndex, id);
      op.SetAttr(kAttrPeerNode, producer->name());
      op.SetAttr(kAttrPeerPort, static_cast<int64_t>(port));
      op.SetAttr(ir::kAttrEngineName, part.subgraphs[sub].engine);
      if (control) op.SetAttr(kAttrControlPair, true);
      return op;
    };
    ir::OpDesc end = boundary(ir::kEnd, "end_", from);
    if (!control) end.AddInput(producer->op_desc().output(port));
    GE_ASSIGN_OR_RETURN(ir::Node * end_node, graphs[from]->AddNode(std::move(end)));
    if (control) {
      GE_RETURN_IF_ERROR(graphs[from]->AddControlEdge(producer, end_node));
    } else {
      GE_RETURN_IF_ERROR(graphs[from]->AddEdge(producer, port, end_node, 0));
    }
    ir::OpDesc ph = boundary(ir::kPlaceHolder, "placeholder_", to);
    if (!control) ph.AddOutput(producer->op_desc().output(port));
    GE_ASSIGN_OR_RETURN(ir::Node * ph_node, graphs[to]->AddNode(std::move(ph)));
    placeholders.emplace(std::tuple<const ir::Node*, int, int>{producer, port, to}, ph_node);
    return ph_node;
  }
};

// A name unused in both graphs.
std::string FreeName(const ir::Graph& a, const ir::Graph& b, const std::string& name) {
  for (int64_t i = 1;; ++i) {
    std::string candidate = StrCat(name, "_", i);
    if (a.FindNode(candidate) == nullptr && b.FindNode(candidate) == nullptr) return candidate;
  }
}

int Depth(const ir::Graph& g) {
  int depth = 0;
  for (const ir::Graph* p = g.parent_graph(); p != nullptr && depth < 1024; p = p->parent_graph()) ++depth;
  return depth;
}

}  // namespace

std::string_view EnginePartitionModeName(EnginePartitionMode mode) {
  return mode == EnginePartitionMode::kComposite ? "CompositeEnginePartition" : "AtomicEnginePartition";
}

EnginePartitioner::EnginePartitioner(const engine::EngineRegistry& engines, ThreadPool* pool,
                                     std::vector<std::string> exclude_engines)
    : engines_(engines), pool_(pool), exclude_engines_(std::move(exclude_engines)) {}

namespace {

// A string attribute without copying it; empty when absent or not a string.
std::string_view StringAttr(const ir::Node& node, std::string_view name) {
  const ir::AttrValue* v = node.op_desc().FindAttr(name);
  const std::string* s = v == nullptr ? nullptr : v->get<std::string>();
  return s == nullptr ? std::string_view() : std::string_view(*s);
}

}  // namespace

std::string_view EnginePartitioner::EngineKey(const ir::Node& node, EnginePartitionMode mode) const {
  const std::string_view engine = StringAttr(node, ir::kAttrEngineName);
  if (mode == EnginePartitionMode::kAtomic || engine.empty()) return engine;
  const engine::EngineAttributes* attrs = engines_.FindAttributes(engine);
  if (attrs == nullptr || attrs->composite_engine.empty()) return engine;
  const std::string& composite = attrs->composite_engine;
  const bool excluded = std::find(exclude_engines_.begin(), exclude_engines_.end(), composite) != exclude_engines_.end();
  return engines_.Find(composite) != nullptr && !excluded ? std::string_view(composite) : engine;
}

std::vector<engine::GraphOptimizer*> EnginePartitioner::Optimizers(engine::Engine& e) const {
  std::vector<engine::GraphOptimizer*> out = e.graph_optimizers();
  if (skipped_.empty()) return out;
  std::erase_if(out, [&](const engine::GraphOptimizer* o) {
    return std::find(skipped_.begin(), skipped_.end(), o->name()) != skipped_.end();
  });
  return out;
}

bool EnginePartitioner::HasWork(const ir::Graph& graph, EnginePartitionMode mode) const {
  // Few distinct engines: remember each key's optimizers (none when the
  // engine is of the other kind); stop at the first node one of them may
  // rewrite.
  std::vector<std::pair<std::string, std::vector<engine::GraphOptimizer*>>> seen;
  bool work = false;
  graph.ForEachNode([&](const ir::Node* n) {
    if (work) return;
    const std::string_view key = EngineKey(*n, mode);
    auto it = std::find_if(seen.begin(), seen.end(), [&](const auto& e) { return e.first == key; });
    if (it == seen.end()) {
      engine::Engine* e = engines_.Find(key);
      const engine::EngineAttributes* attrs = engines_.FindAttributes(key);
      const bool right_kind = attrs != nullptr && attrs->atomic == (mode == EnginePartitionMode::kAtomic);
      seen.emplace_back(std::string(key),
                        e != nullptr && right_kind ? Optimizers(*e) : std::vector<engine::GraphOptimizer*>{});
      it = std::prev(seen.end());
    }
    for (const engine::GraphOptimizer* optimizer : it->second) work = work || optimizer->MayOptimizeFused(*n);
  });
  return work;
}

absl::StatusOr<EnginePartition> EnginePartitioner::Split(ir::Graph& graph, EnginePartitionMode mode) const {
  EnginePartition part;
  part.graph = &graph;
  int64_t order = 0;
  graph.ForEachNode([&](ir::Node* n) { part.original_order[n] = order++; });
  ClusterSet clusters;
  GE_RETURN_IF_ERROR(clusters.Init(graph, [](const ir::Node&) { return 0; }));
  for (int32_t p = 0; p < static_cast<int32_t>(clusters.num_nodes()); ++p) {
    const ir::Node& n = *clusters.node(p);
    clusters.ClusterOf(p).set_label(
        StrCat(EngineKey(n, mode), std::string_view(&kLabelSeparator, 1), StringAttr(n, kAttrStreamLabel)));
  }
  // MarkClusters: same engine and stream label, and no second path.
  for (BaseCluster* c : clusters.OrderedClusters()) {
    if (!c->alive()) continue;
    for (BaseCluster* in : c->Inputs()) {
      if (in->alive() && in->label_id() == c->label_id()) c->TryMerge(*in);
    }
  }
  clusters.SortMembers();
  std::vector<BaseCluster*> ordered = clusters.OrderedClusters();
  std::vector<int32_t> sub_of_cluster(clusters.num_clusters(), -1);
  PairBuilder pairs{part, {}, {}};
  std::vector<std::pair<ir::Node*, ir::Graph*>> moves;
  moves.reserve(clusters.num_nodes());
  for (size_t k = 0; k < ordered.size(); ++k) {
    const std::string& label = ordered[k]->label();
    const size_t sep = label.find(kLabelSeparator);
    EngineSubgraph sub;
    sub.engine = label.substr(0, sep);
    sub.stream_label = label.substr(sep + 1);
    sub.graph = std::make_unique<ir::Graph>(StrCat(graph.name(), "/", sub.engine.empty() ? "unplaced" : sub.engine, "_", k));
    for (int32_t p : ordered[k]->members()) moves.emplace_back(clusters.node(p), sub.graph.get());
    sub_of_cluster[ordered[k]->id()] = static_cast<int32_t>(k);
    pairs.graphs.push_back(sub.graph.get());
    part.subgraphs.push_back(std::move(sub));
  }
  GE_RETURN_IF_ERROR(graph.MoveNodesTo(moves));
  // Positions, not lookups by node: the nodes have moved.
  std::vector<int32_t> sub_of_position(clusters.num_nodes(), -1);
  for (size_t k = 0; k < ordered.size(); ++k) {
    for (int32_t p : ordered[k]->members()) sub_of_position[p] = static_cast<int32_t>(k);
  }
  for (size_t k = 0; k < ordered.size(); ++k) {
    ir::Graph& g = *part.subgraphs[k].graph;
    const auto self = static_cast<int32_t>(k);
    for (int32_t p : ordered[k]->members()) {
      ir::Node* n = clusters.node(p);
      const absl::Span<const int32_t> producers = clusters.InputPositions(p);
      for (int i = 0; i < n->num_inputs(); ++i) {
        const ir::OutPort producer = n->input(i);
        if (producer.node == nullptr) continue;
        if (producers[i] < 0) return FailedPrecondition("node '", n->name(), "' reads '", producer.node->name(), "' of another graph");
        const int32_t from = sub_of_position[producers[i]];
        if (from == self) continue;
        GE_ASSIGN_OR_RETURN(ir::Node * ph, pairs.Get(producer.node, producer.index, from, self));
        g.RemoveInputEdge(n, i);
        GE_RETURN_IF_ERROR(g.AddEdge(ph, 0, n, i));
      }
      const absl::Span<const int32_t> positions = clusters.ControlInputPositions(p);
      const std::vector<ir::Node*> control = n->control_inputs();
      for (size_t c = 0; c < control.size(); ++c) {
        const int32_t from = positions[c] < 0 ? -1 : sub_of_position[positions[c]];
        if (from < 0 || from == self) continue;
        GE_ASSIGN_OR_RETURN(ir::Node * ph, pairs.Get(control[c], -1, from, self));
        g.RemoveControlEdge(control[c], n);
        GE_RETURN_IF_ERROR(g.AddControlEdge(ph, n));
      }
    }
  }
  return part;
}

absl::StatusOr<bool> EnginePartitioner::OptimizeSubgraphs(const std::vector<EngineSubgraph*>& subgraphs) const {
  std::vector<absl::Status> statuses(subgraphs.size());
  auto work = [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      EngineSubgraph& sub = *subgraphs[i];
      engine::Engine* e = engines_.Find(sub.engine);
      if (e == nullptr) continue;
      for (engine::GraphOptimizer* optimizer : Optimizers(*e)) {
        absl::StatusOr<bool> changed = optimizer->OptimizeFusedGraph(*sub.graph);
        if (!changed.ok()) {
          statuses[i] = Annotate(changed.status(), StrCat("engine '", sub.engine, "' optimizer '", optimizer->name(),
                                                          "' on subgraph '", sub.graph->name(), "'"));
          break;
        }
        sub.changed = sub.changed || *changed;
      }
    }
  };
  if (pool_ != nullptr) {
    pool_->ParallelFor(static_cast<int64_t>(subgraphs.size()), 1, work);
  } else {
    work(0, static_cast<int64_t>(subgraphs.size()));
  }
  bool changed = false;
  for (size_t i = 0; i < subgraphs.size(); ++i) {
    GE_RETURN_IF_ERROR(statuses[i]);
    changed = changed || subgraphs[i]->changed;
  }
  return changed;
}

absl::Status EnginePartitioner::MergeAfterSubGraphOptimization(EnginePartition& part) const {
  ir::Graph& graph = *part.graph;
  std::vector<ir::Node*> ends(part.num_pairs, nullptr);
  std::vector<ir::Node*> placeholders(part.num_pairs, nullptr);
  for (const EngineSubgraph& sub : part.subgraphs) {
    sub.graph->ForEachNode([&](ir::Node* n) {
      if (n->type() != ir::kEnd && n->type() != ir::kPlaceHolder) return;
      const int64_t id = n->op_desc().GetAttrOr<int64_t>(kAttrPeerIndex, -1);
      if (id < 0 || id >= part.num_pairs) return;
      (n->type() == ir::kEnd ? ends : placeholders)[id] = n;
    });
  }
  for (int id = 0; id < part.num_pairs; ++id) {
    if (ends[id] == nullptr || placeholders[id] == nullptr) {
      return Internal("graph '", graph.name(), "': an engine optimizer removed the ",
                      ends[id] == nullptr ? "End" : "PlaceHolder", " of boundary pair ", id,
                      "; optimizers must keep End and PlaceHolder nodes");
    }
  }
  for (int id = 0; id < part.num_pairs; ++id) {
    ir::Node* end = ends[id];
    ir::Node* ph = placeholders[id];
    const ir::OutPort src = end->num_inputs() > 0 ? end->input(0) : ir::OutPort{};
    if (ph->num_outputs() > 0) {
      if (src.node != nullptr) {
        GE_RETURN_IF_ERROR(graph.ReplaceAllUses(ph, 0, src.node, src.index));
      } else {
        const std::vector<ir::InPort> consumers = ph->consumers(0);
        for (const ir::InPort& c : consumers) graph.RemoveInputEdge(c.node, c.index);
      }
    }
    std::vector<ir::Node*> before = end->control_inputs();
    if (src.node != nullptr) before.push_back(src.node);
    for (ir::Node* v : std::vector<ir::Node*>(ph->control_outputs())) {
      for (ir::Node* u : before) GE_RETURN_IF_ERROR(graph.AddControlEdge(u, v));
    }
    end->owner_graph()->RemoveNode(end);
    ph->owner_graph()->RemoveNode(ph);
  }
  // Original nodes in their original order, then what optimizers added.
  std::vector<std::pair<int64_t, ir::Node*>> originals;
  std::vector<ir::Node*> added;
  for (const EngineSubgraph& sub : part.subgraphs) {
    sub.graph->ForEachNode([&](ir::Node* n) {
      auto it = part.original_order.find(n);
      if (it != part.original_order.end()) {
        originals.emplace_back(it->second, n);
      } else {
        added.push_back(n);
      }
    });
  }
  std::sort(originals.begin(), originals.end());
  std::vector<ir::Node*> moving;
  moving.reserve(originals.size() + added.size());
  for (const auto& [order, n] : originals) moving.push_back(n);
  moving.insert(moving.end(), added.begin(), added.end());
  for (ir::Node* n : moving) {
    ir::Graph* from = n->owner_graph();
    if (graph.FindNode(n->name()) != nullptr) GE_RETURN_IF_ERROR(from->RenameNode(n, FreeName(graph, *from, n->name())));
    GE_RETURN_IF_ERROR(from->MoveNodeTo(n, &graph));
    // Bodies owned by the node live in the tree's table, which the engine
    // subgraph could not see: point them back at the graph.
    for (const std::string& name : n->op_desc().subgraph_names()) {
      if (ir::Graph* body = graph.FindSubgraph(name)) body->SetParent(&graph, n);
    }
  }
  part.subgraphs.clear();
  return absl::OkStatus();
}

absl::StatusOr<bool> EnginePartitioner::Run(ir::Graph& root, EnginePartitionMode mode) const {
  std::vector<std::pair<int, ir::Graph*>> graphs;  // (depth, graph)
  if (HasWork(root, mode)) graphs.emplace_back(0, &root);
  for (ir::Graph* sub : root.subgraphs()) {
    if (HasWork(*sub, mode)) graphs.emplace_back(Depth(*sub), sub);
  }
  if (graphs.empty()) return false;
  // Deepest first: splitting a graph moves the nodes that own deeper
  // bodies out of the tree, after which those bodies cannot find the root.
  std::stable_sort(graphs.begin(), graphs.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  const auto start = std::chrono::steady_clock::now();
  auto ms_since = [](std::chrono::steady_clock::time_point t) {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t).count();
  };
  std::vector<EnginePartition> parts;
  parts.reserve(graphs.size());
  for (const auto& [depth, g] : graphs) {
    GE_ASSIGN_OR_RETURN(EnginePartition part, Split(*g, mode));
    parts.push_back(std::move(part));
  }
  std::vector<EngineSubgraph*> subgraphs;
  for (EnginePartition& part : parts) {
    for (EngineSubgraph& sub : part.subgraphs) {
      const engine::EngineAttributes* attrs = engines_.FindAttributes(sub.engine);
      if (attrs != nullptr && attrs->atomic == (mode == EnginePartitionMode::kAtomic)) subgraphs.push_back(&sub);
    }
  }
  const auto split_done = std::chrono::steady_clock::now();
  absl::StatusOr<bool> changed = OptimizeSubgraphs(subgraphs);
  const auto optimize_done = std::chrono::steady_clock::now();
  // Merge back even after an optimizer failed, shallowest first, so that
  // the tree is whole again; the optimizer's error is the one reported.
  absl::Status merged;
  for (auto it = parts.rbegin(); it != parts.rend(); ++it) {
    absl::Status s = MergeAfterSubGraphOptimization(*it);
    if (merged.ok()) merged = s;
  }
  GE_LOG_DEBUG("partition", "{}: {} graphs, {} engine subgraphs: split {:.1f} ms, optimize {:.1f} ms, merge {:.1f} ms",
               EnginePartitionModeName(mode), graphs.size(), subgraphs.size(),
               std::chrono::duration<double, std::milli>(split_done - start).count(),
               std::chrono::duration<double, std::milli>(optimize_done - split_done).count(), ms_since(optimize_done));
  if (!changed.ok()) return changed.status();
  GE_RETURN_IF_ERROR(merged);
  return changed;
}

}  // namespace ge::partition
