// BasePartitioner: the six-step pipeline and the construction of
// PartitionedCall nodes, their subgraphs and their boundary nodes.
#include "compiler/partition/base_partitioner.h"

#include <algorithm>
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
    // consumer, its input, the unit's own copy of a Const read from outside
    std::vector<std::tuple<ir::Node*, int, ir::Node*>> const_reads;
    std::vector<ir::Node*> const_copies;  // in order of creation
  };
  std::vector<Unit> units;
  std::vector<int32_t> unit_of_position;  // by node position; -1 for nodes that stay outside
  absl::flat_hash_map<std::pair<int32_t, int>, int> output_index;  // (producer position, port)
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

bool BasePartitioner::CopiesConstInto(const ir::Node&, const BaseCluster&) { return true; }

absl::Status BasePartitioner::BuildPartitionFrame() {
  Frame& f = *frame_;
  f.unit_of_position.assign(clusters_->num_nodes(), -1);
  f.units.reserve(partitioned_.size());
  std::vector<std::pair<ir::Node*, ir::Graph*>> moves;
  moves.reserve(clusters_->num_nodes());
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
    for (int32_t p : c->members()) {
      f.unit_of_position[p] = static_cast<int32_t>(f.units.size());
      moves.emplace_back(clusters_->node(p), sub);
    }
    Frame::Unit unit;
    unit.cluster = c;
    unit.call = call;
    unit.subgraph = sub;
    f.units.push_back(std::move(unit));
  }
  // One batch: the graph's name index is updated once, not per node.
  return graph_->MoveNodesTo(moves);
}

absl::Status BasePartitioner::CombinePartitionFrame() {
  Frame& f = *frame_;
  const auto n = static_cast<int32_t>(clusters_->num_nodes());
  // Positions stay valid although nodes moved: everything below works on
  // them, not on lookups by node.
  auto unit_at = [&](int32_t p) { return p < 0 ? -1 : f.unit_of_position[p]; };
  // Outputs: every value produced inside a unit and read outside it,
  // numbered by producer position, then port.
  // A Const read by a unit other than its own is copied into that unit
  // (below) instead of crossing: the copy shares the tensor's storage, and
  // the reader's kernel sees a constant (packed once) rather than a unit
  // input bound to another buffer on every run.
  auto copied_const = [&](int32_t q, int32_t reader_unit) {
    return reader_unit >= 0 && q >= 0 && clusters_->node(q)->type() == ir::kConst &&
           clusters_->node(q)->num_outputs() == 1 &&
           CopiesConstInto(*clusters_->node(q), *f.units[reader_unit].cluster);
  };
  std::vector<std::pair<int32_t, int>> crossing;
  for (int32_t p = 0; p < n; ++p) {
    const int32_t up = unit_at(p);
    const absl::Span<const int32_t> producers = clusters_->InputPositions(p);
    for (size_t i = 0; i < producers.size(); ++i) {
      const int32_t uq = unit_at(producers[i]);
      if (uq >= 0 && uq != up && !copied_const(producers[i], up)) {
        crossing.emplace_back(producers[i], clusters_->node(p)->input(static_cast<int>(i)).index);
      }
    }
  }
  std::sort(crossing.begin(), crossing.end());
  crossing.erase(std::unique(crossing.begin(), crossing.end()), crossing.end());
  for (const auto& [q, port] : crossing) {
    Frame::Unit& u = f.units[unit_at(q)];
    ir::Node* producer = clusters_->node(q);
    f.output_index[{q, port}] = static_cast<int>(u.outputs.size());
    u.outputs.push_back({producer, port});
    graph_->AddOutputPort(u.call, producer->op_desc().output(port));
  }
  auto source_of = [&](int32_t q, ir::OutPort producer) -> ir::OutPort {
    const int32_t uq = unit_at(q);
    if (uq < 0) return producer;  // stays outside, or another graph's node
    return {f.units[uq].call, f.output_index.at({q, producer.index})};
  };
  // Inputs: every distinct outside value a unit reads.
  for (size_t self = 0; self < f.units.size(); ++self) {
    Frame::Unit& u = f.units[self];
    absl::flat_hash_map<std::pair<const ir::Node*, int>, int> seen;
    absl::flat_hash_map<const ir::Node*, ir::Node*> copies;  // Const read from outside -> the unit's copy
    for (int32_t p : u.cluster->members()) {
      ir::Node* node = clusters_->node(p);
      const absl::Span<const int32_t> producers = clusters_->InputPositions(p);
      for (int i = 0; i < node->num_inputs(); ++i) {
        const ir::OutPort producer = node->input(i);
        if (producer.node == nullptr || unit_at(producers[i]) == static_cast<int32_t>(self)) continue;
        if (copied_const(producers[i], static_cast<int32_t>(self))) {
          ir::Node*& copy = copies[producer.node];
          if (copy == nullptr) {
            ir::OpDesc op = producer.node->op_desc();
            op.set_name(u.subgraph->UniqueNodeName(producer.node->name()));
            GE_ASSIGN_OR_RETURN(copy, u.subgraph->AddNode(std::move(op)));
            u.const_copies.push_back(copy);
          }
          u.const_reads.emplace_back(node, i, copy);
          continue;
        }
        const ir::OutPort src = source_of(producers[i], producer);
        auto [it, fresh] = seen.try_emplace({src.node, src.index}, static_cast<int>(u.inputs.size()));
        if (fresh) {
          u.inputs.push_back(src);
          graph_->AddInputPort(u.call, src.node->op_desc().output(src.index));
          GE_RETURN_IF_ERROR(graph_->AddEdge(src.node, src.index, u.call, it->second));
        }
        u.inner_reads.emplace_back(node, i, it->second);
      }
    }
  }
  // Nodes that stay outside read partitioned values through the calls.
  for (int32_t p = 0; p < n; ++p) {
    if (unit_at(p) >= 0) continue;
    ir::Node* node = clusters_->node(p);
    const absl::Span<const int32_t> producers = clusters_->InputPositions(p);
    for (int i = 0; i < node->num_inputs(); ++i) {
      if (unit_at(producers[i]) < 0) continue;
      const ir::OutPort src = source_of(producers[i], node->input(i));
      graph_->RemoveInputEdge(node, i);
      GE_RETURN_IF_ERROR(graph_->AddEdge(src.node, src.index, node, i));
    }
  }
  // Control edges that cross units join the units' nodes.
  for (int32_t p = 0; p < n; ++p) {
    ir::Node* node = clusters_->node(p);
    const int32_t up = unit_at(p);
    const absl::Span<const int32_t> positions = clusters_->ControlInputPositions(p);
    const std::vector<ir::Node*> control = node->control_inputs();
    for (size_t k = 0; k < control.size(); ++k) {
      const int32_t uc = unit_at(positions[k]);
      if (uc == up) continue;  // inside one unit, or both outside
      graph_->RemoveControlEdge(control[k], node);
      ir::Node* from = uc < 0 ? control[k] : f.units[uc].call;
      ir::Node* to = up < 0 ? node : f.units[up].call;
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
    for (const auto& [n, i, copy] : u.const_reads) {
      sub.RemoveInputEdge(n, i);
      GE_RETURN_IF_ERROR(sub.AddEdge(copy, 0, n, i));
    }
    ir::OpDesc out(sub.UniqueNodeName(StrCat(u.call->name(), "/out")), std::string(ir::kInnerNetOutput));
    for (const ir::OutPort& o : u.outputs) out.AddInput(o.node->op_desc().output(o.index));
    GE_ASSIGN_OR_RETURN(ir::Node * inner_out, sub.AddNode(std::move(out)));
    for (size_t k = 0; k < u.outputs.size(); ++k) {
      GE_RETURN_IF_ERROR(sub.AddEdge(u.outputs[k].node, u.outputs[k].index, inner_out, static_cast<int>(k)));
    }
    std::vector<ir::Node*> members = u.cluster->Nodes();
    attrs_->ApplyToCall(*u.call, members);
    GE_RETURN_IF_ERROR(DecorateCall(*u.cluster, *u.call, sub));
    // The Consts copied in take the call's verdicts like its own nodes.
    members.insert(members.end(), u.const_copies.begin(), u.const_copies.end());
    attrs_->ApplyToNodes(*u.call, members);
  }
  return absl::OkStatus();
}

}  // namespace ge::partition
