// BasePartitioner: the six-step pipeline and the construction of
// PartitionedCall nodes, their subgraphs and their boundary nodes.
#include "compiler/partition/base_partitioner.h"

#include <tuple>

#include "absl/container/flat_hash_map.h"
#include "base/ir/op_types.h"
#include "base/status.h"

namespace ge::partition {

bool IsBoundaryNode(const ir::Node& node) {
  const std::string& t = node.type();
  return t == ir::kInnerData || t == ir::kInnerNetOutput || t == ir::kPlaceHolder || t == ir::kEnd;
}

bool IsGraphInput(const ir::Node& node) { return node.type() == ir::kData || node.type() == ir::kInnerData; }

bool IsGraphOutput(const ir::Node& node) {
  return node.type() == ir::kNetOutput || node.type() == ir::kInnerNetOutput;
}

// Bookkeeping shared by steps 4 to 6.
struct BasePartitioner::Frame {
  struct Unit {
    BaseCluster* cluster = nullptr;
    ir::Node* call = nullptr;
    ir::Graph* subgraph = nullptr;
    std::vector<ir::OutPort> inputs;   // parent-level source per call input
    std::vector<ir::OutPort> outputs;  // inner producer per call output
    std::vector<std::tuple<ir::Node*, int, int>> inner_reads;  // consumer, its input, call input
  };
  std::vector<Unit> units;
  std::vector<int32_t> unit_of_cluster;  // by cluster id; -1 when the cluster stays outside
  absl::flat_hash_map<std::pair<const ir::Node*, int>, int> output_index;
};

BasePartitioner::BasePartitioner(const PartitionAttrRegistry* attrs)
    : attrs_(attrs != nullptr ? attrs : &PartitionAttrRegistry::Builtin()) {}

BasePartitioner::~BasePartitioner() = default;

absl::Status BasePartitioner::Step(std::string_view step, absl::Status (BasePartitioner::*fn)()) {
  if (observer_ != nullptr) observer_->OnStep(name(), step, /*after=*/false, *graph_, clusters_.get());
  absl::Status s = (this->*fn)();
  if (!s.ok()) return Annotate(s, StrCat(name(), " ", step));
  if (observer_ != nullptr) observer_->OnStep(name(), step, /*after=*/true, *graph_, clusters_.get());
  return absl::OkStatus();
}

absl::StatusOr<std::vector<PartitionedSubgraph>> BasePartitioner::Partition(ir::Graph& graph) {
  graph_ = &graph;
  clusters_.reset();
  partitioned_.clear();
  frame_ = std::make_unique<Frame>();
  GE_RETURN_IF_ERROR(Step("InitClusters", &BasePartitioner::InitClusters));
  GE_ASSIGN_OR_RETURN(bool split, ShouldSplit());
  if (!split) return std::vector<PartitionedSubgraph>();
  GE_RETURN_IF_ERROR(Step("MergeClusters", &BasePartitioner::MergeClusters));
  GE_RETURN_IF_ERROR(Step("ProcessUniqueClusters", &BasePartitioner::ProcessUniqueClusters));
  GE_RETURN_IF_ERROR(Step("BuildPartitionFrame", &BasePartitioner::BuildPartitionFrame));
  GE_RETURN_IF_ERROR(Step("CombinePartitionFrame", &BasePartitioner::CombinePartitionFrame));
  GE_RETURN_IF_ERROR(Step("BuildPartitionSubgraph", &BasePartitioner::BuildPartitionSubgraph));
  std::vector<PartitionedSubgraph> result;
  for (const Frame::Unit& u : frame_->units) {
    result.push_back({u.call, u.subgraph, u.cluster->type_index(), u.cluster->label()});
  }
  frame_.reset();
  return result;
}

absl::Status BasePartitioner::InitClusters() {
  if (clusters_ == nullptr) clusters_ = std::make_unique<ClusterSet>();
  return clusters_->Init(*graph_, [this](const ir::Node& n) { return ClassifyNode(n); });
}

bool BasePartitioner::NeedsSubgraph(const BaseCluster& cluster) const {
  return cluster.type_index() != kClusterData && cluster.type_index() != kClusterNetOutput;
}

absl::Status BasePartitioner::ProcessUniqueClusters() {
  clusters_->SortMembers();
  partitioned_.clear();
  for (BaseCluster* c : clusters_->OrderedClusters()) {
    if (!NeedsSubgraph(*c)) continue;
    c->index = static_cast<int>(partitioned_.size());
    partitioned_.push_back(c);
  }
  return absl::OkStatus();
}

std::string BasePartitioner::CallName(const BaseCluster& cluster) const {
  return StrCat(ClusterTypeName(cluster.type_index()), "_", cluster.index);
}

absl::Status BasePartitioner::DecorateCall(const BaseCluster&, ir::Node&, ir::Graph&) { return absl::OkStatus(); }

absl::Status BasePartitioner::BuildPartitionFrame() {
  Frame& f = *frame_;
  f.unit_of_cluster.assign(clusters_->num_clusters(), -1);
  f.units.reserve(partitioned_.size());
  for (BaseCluster* c : partitioned_) {
    const std::string call_name = graph_->UniqueNodeName(CallName(*c));
    std::string sub_name = StrCat(graph_->name(), "_", call_name);
    for (int i = 1; graph_->FindSubgraph(sub_name) != nullptr || sub_name == graph_->root()->name(); ++i) {
      sub_name = StrCat(graph_->name(), "_", call_name, "_", i);
    }
    ir::OpDesc op(call_name, std::string(ir::kPartitionedCall));
    op.mutable_subgraph_names().push_back(sub_name);
    op.SetAttr(kAttrPartitionedBy, std::string(name()));
    GE_ASSIGN_OR_RETURN(ir::Node * call, graph_->AddNode(std::move(op)));
    GE_ASSIGN_OR_RETURN(ir::Graph * sub, graph_->AddSubgraph(std::make_unique<ir::Graph>(sub_name), call));
    for (int32_t p : c->members()) GE_RETURN_IF_ERROR(graph_->MoveNodeTo(clusters_->node(p), sub));
    f.unit_of_cluster[c->id()] = static_cast<int32_t>(f.units.size());
    Frame::Unit unit;
    unit.cluster = c;
    unit.call = call;
    unit.subgraph = sub;
    f.units.push_back(std::move(unit));
  }
  return absl::OkStatus();
}

absl::Status BasePartitioner::CombinePartitionFrame() {
  Frame& f = *frame_;
  auto unit_of = [&](const ir::Node* n) -> int32_t {
    const int32_t p = clusters_->PositionOf(n);
    return p < 0 ? -1 : f.unit_of_cluster[clusters_->ClusterOf(p).id()];
  };
  // Outputs: every value produced inside a unit and read outside it.
  for (Frame::Unit& u : f.units) {
    const int32_t self = f.unit_of_cluster[u.cluster->id()];
    for (int32_t p : u.cluster->members()) {
      ir::Node* n = clusters_->node(p);
      for (int o = 0; o < n->num_outputs(); ++o) {
        bool outside = false;
        for (const ir::InPort& c : n->consumers(o)) outside = outside || unit_of(c.node) != self;
        if (!outside) continue;
        f.output_index[{n, o}] = static_cast<int>(u.outputs.size());
        u.outputs.push_back({n, o});
        graph_->AddOutputPort(u.call, n->op_desc().output(o));
      }
    }
  }
  auto source_of = [&](ir::OutPort p) -> ir::OutPort {
    const int32_t pu = unit_of(p.node);
    if (pu < 0) return p;
    return {f.units[pu].call, f.output_index.at({p.node, p.index})};
  };
  // Inputs: every distinct outside value a unit reads.
  for (Frame::Unit& u : f.units) {
    const int32_t self = f.unit_of_cluster[u.cluster->id()];
    absl::flat_hash_map<std::pair<const ir::Node*, int>, int> seen;
    for (int32_t p : u.cluster->members()) {
      ir::Node* n = clusters_->node(p);
      for (int i = 0; i < n->num_inputs(); ++i) {
        const ir::OutPort producer = n->input(i);
        if (producer.node == nullptr || unit_of(producer.node) == self) continue;
        const ir::OutPort src = source_of(producer);
        auto [it, fresh] = seen.try_emplace({src.node, src.index}, static_cast<int>(u.inputs.size()));
        if (fresh) {
          u.inputs.push_back(src);
          graph_->AddInputPort(u.call, src.node->op_desc().output(src.index));
          GE_RETURN_IF_ERROR(graph_->AddEdge(src.node, src.index, u.call, it->second));
        }
        u.inner_reads.emplace_back(n, i, it->second);
      }
    }
  }
  // Nodes that stay outside read partitioned values through the calls.
  for (int32_t p = 0; p < static_cast<int32_t>(clusters_->num_nodes()); ++p) {
    ir::Node* n = clusters_->node(p);
    if (unit_of(n) >= 0) continue;
    for (int i = 0; i < n->num_inputs(); ++i) {
      const ir::OutPort producer = n->input(i);
      if (producer.node == nullptr || unit_of(producer.node) < 0) continue;
      const ir::OutPort src = source_of(producer);
      graph_->RemoveInputEdge(n, i);
      GE_RETURN_IF_ERROR(graph_->AddEdge(src.node, src.index, n, i));
    }
  }
  // Control edges that cross units join the units' nodes.
  auto unit_node = [&](ir::Node* x) {
    const int32_t u = unit_of(x);
    return u < 0 ? x : f.units[u].call;
  };
  for (int32_t p = 0; p < static_cast<int32_t>(clusters_->num_nodes()); ++p) {
    ir::Node* n = clusters_->node(p);
    const int32_t un = unit_of(n);
    const std::vector<ir::Node*> control = n->control_inputs();
    for (ir::Node* c : control) {
      const int32_t uc = unit_of(c);
      if (uc == un) continue;  // inside one unit, or both outside
      graph_->RemoveControlEdge(c, n);
      ir::Node* from = unit_node(c);
      ir::Node* to = unit_node(n);
      if (from != to) GE_RETURN_IF_ERROR(graph_->AddControlEdge(from, to));
    }
  }
  return absl::OkStatus();
}

absl::Status BasePartitioner::BuildPartitionSubgraph() {
  for (Frame::Unit& u : frame_->units) {
    ir::Graph& sub = *u.subgraph;
    std::vector<ir::Node*> inner_data;
    inner_data.reserve(u.inputs.size());
    for (size_t j = 0; j < u.inputs.size(); ++j) {
      ir::OpDesc op(sub.UniqueNodeName(StrCat(u.call->name(), "/in", j)), std::string(ir::kInnerData));
      op.SetAttr(ir::kAttrParentIndex, static_cast<int64_t>(j));
      op.AddOutput(u.call->op_desc().input(static_cast<int>(j)));
      GE_ASSIGN_OR_RETURN(ir::Node * d, sub.AddNode(std::move(op)));
      inner_data.push_back(d);
    }
    for (const auto& [n, i, j] : u.inner_reads) {
      sub.RemoveInputEdge(n, i);
      GE_RETURN_IF_ERROR(sub.AddEdge(inner_data[j], 0, n, i));
    }
    ir::OpDesc out(sub.UniqueNodeName(StrCat(u.call->name(), "/out")), std::string(ir::kInnerNetOutput));
    for (const ir::OutPort& o : u.outputs) out.AddInput(o.node->op_desc().output(o.index));
    GE_ASSIGN_OR_RETURN(ir::Node * inner_out, sub.AddNode(std::move(out)));
    for (size_t k = 0; k < u.outputs.size(); ++k) {
      GE_RETURN_IF_ERROR(sub.AddEdge(u.outputs[k].node, u.outputs[k].index, inner_out, static_cast<int>(k)));
    }
    const std::vector<ir::Node*> members = u.cluster->Nodes();
    attrs_->ApplyToCall(*u.call, members);
    GE_RETURN_IF_ERROR(DecorateCall(*u.cluster, *u.call, sub));
    attrs_->ApplyToNodes(*u.call, members);
  }
  return absl::OkStatus();
}

}  // namespace ge::partition
