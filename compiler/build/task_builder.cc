// TaskBuilder: memory plan + engine tasks -> StaticProgram.
#include "compiler/build/task_builder.h"

#include <algorithm>

#include "absl/container/flat_hash_map.h"
#include "base/ir/op_types.h"
#include "base/status.h"
#include "compiler/memory/memory_planner.h"

namespace ge::compiler {
namespace {

using runtime::ValueRef;

bool IsStaticTensor(const ir::ValueType& type) {
  return type.is_tensor() && type.shape().IsFullyKnown() && type.dtype() != DataType::kUndefined &&
         type.dtype() != DataType::kString;
}

// `order` (a topological order) re-ordered so that pipeline stages run in
// ascending `_stage_level`: among the nodes whose inputs are done, the lowest
// level first (nodes without a level as soon as they can), ties in `order`'s
// order. The static path runs tasks one after another, so this order is its
// stage ordering. Unimplemented (the dynamic path then decides) when the
// edges make a later stage feed an earlier one. Unchanged for fewer than two levels.
absl::StatusOr<std::vector<ir::Node*>> StageOrder(std::vector<ir::Node*> order) {
  absl::flat_hash_map<const ir::Node*, std::pair<int64_t, size_t>> key;  // (level, position)
  int64_t first_level = -1;
  bool several = false;
  for (size_t i = 0; i < order.size(); ++i) {
    const int64_t level = order[i]->op_desc().GetAttrOr<int64_t>(ir::kAttrStageLevel, -1);
    key[order[i]] = {level, i};
    if (level < 0) continue;
    several = several || (first_level >= 0 && level != first_level);
    if (first_level < 0) first_level = level;
  }
  if (!several) return order;
  absl::flat_hash_map<const ir::Node*, int> pending;
  auto later = [&](const ir::Node* a, const ir::Node* b) { return key[a] > key[b]; };
  std::vector<ir::Node*> ready;  // a min-heap by key
  for (ir::Node* n : order) {
    pending[n] = static_cast<int>(n->InNodes().size());
    if (pending[n] == 0) ready.push_back(n);
  }
  std::make_heap(ready.begin(), ready.end(), later);
  std::vector<ir::Node*> staged;
  int64_t reached = -1;
  while (!ready.empty()) {
    std::pop_heap(ready.begin(), ready.end(), later);
    ir::Node* n = ready.back();
    ready.pop_back();
    const int64_t level = key[n].first;
    if (level >= 0 && level < reached) {
      return Unimplemented("pipeline stage ", level, " (node '", n->name(), "') depends on stage ", reached,
                           ": the stages cannot run in ascending order");
    }
    reached = std::max(reached, level);
    staged.push_back(n);
    for (ir::Node* next : n->OutNodes()) {
      if (--pending[next] == 0) {
        ready.push_back(next);
        std::push_heap(ready.begin(), ready.end(), later);
      }
    }
  }
  if (staged.size() != order.size()) return Internal("stage ordering lost ", order.size() - staged.size(), " node(s)");
  return staged;
}

absl::Status CheckStaticNode(const ir::Node& node) {
  if (!node.op_desc().subgraph_names().empty()) {
    return Unimplemented("node '", node.name(), "' (", node.type(), ") owns subgraphs; it runs dynamically");
  }
  for (int o = 0; o < node.num_outputs(); ++o) {
    const ir::ValueType& type = node.op_desc().output(o).type;
    if (!IsStaticTensor(type)) {
      return Unimplemented("node '", node.name(), "' output ", o, " has type ", type.ToString(),
                           ": the static path needs fixed-size tensors of known shape");
    }
  }
  return absl::OkStatus();
}

class ProgramBuilder {
 public:
  ProgramBuilder(const ir::Graph& graph, const engine::EngineRegistry& engines, int num_threads)
      : graph_(graph), engines_(engines), num_threads_(num_threads) {}

  absl::StatusOr<runtime::StaticProgram> Build(StaticLayout layout) {
    const std::vector<ir::Node*> order = std::move(layout.order);
    plan_ = std::move(layout.plan);
    program_.graph_name = graph_.name();
    program_.arena_bytes = plan_.arena_bytes;
    program_.lower_bound_bytes = plan_.lower_bound;
    program_.no_reuse_bytes = plan_.no_reuse_bytes;
    GE_RETURN_IF_ERROR(AddInputs());
    for (const ir::Node* node : order) GE_RETURN_IF_ERROR(AddSources(*node));
    GE_RETURN_IF_ERROR(AddOutputs());
    for (const ir::Node* node : order) GE_RETURN_IF_ERROR(AddTask(*node));
    return std::move(program_);
  }

 private:
  // Graph inputs, in StaticInputNodes order.
  absl::Status AddInputs() {
    for (const ir::Node* node : StaticInputNodes(graph_)) {
      const ir::IoDesc& out = node->op_desc().output(0);
      refs_[{node, 0}] = {ValueRef::Kind::kInput, 0, static_cast<int>(program_.inputs.size()), -1, out.type};
      program_.inputs.push_back({out.name.empty() ? node->name() : out.name, out.type});
    }
    return absl::OkStatus();
  }

  // Weights.
  absl::Status AddSources(const ir::Node& node) {
    if (node.type() == ir::kConst) {
      GE_ASSIGN_OR_RETURN(Tensor value, node.op_desc().RequireAttr<Tensor>(ir::kAttrValue));
      const int index = static_cast<int>(program_.weights.size());
      program_.weights.push_back({node.name(), value});
      refs_[{&node, 0}] = {ValueRef::Kind::kWeight, 0, index, -1, node.op_desc().output(0).type};
    } else if (node.type() == ir::kVariable || node.type() == ir::kFileConstant) {
      const int index = static_cast<int>(program_.variables.size());
      program_.variables.push_back({node.name(), node.op_desc()});
      refs_[{&node, 0}] = {ValueRef::Kind::kVariable, 0, index, -1, node.op_desc().output(0).type};
    }
    return absl::OkStatus();
  }

  absl::Status AddOutputs() {
    const ir::Node* net_output = nullptr;
    for (const ir::Node* node : graph_.nodes()) {
      if (node->type() == ir::kNetOutput || node->type() == ir::kInnerNetOutput) net_output = node;
    }
    if (net_output == nullptr) return InvalidArgument("graph '", graph_.name(), "' has no NetOutput");
    absl::flat_hash_map<int, int> values_per_buffer;
    for (const auto& [node, placements] : plan_.values) {
      for (const auto& p : placements) {
        if (p.kind == ValuePlacement::Kind::kArena) ++values_per_buffer[p.buffer];
      }
    }
    absl::flat_hash_map<int, int> outputs_per_buffer;
    for (int i = 0; i < net_output->num_inputs(); ++i) {
      ir::OutPort p = net_output->input(i);
      if (!p) return InvalidArgument("NetOutput input ", i, " of graph '", graph_.name(), "' is not connected");
      const int buffer = plan_.values.at(p.node)[p.index].buffer;
      if (buffer >= 0) ++outputs_per_buffer[buffer];
    }
    for (int i = 0; i < net_output->num_inputs(); ++i) {
      ir::OutPort p = net_output->input(i);
      const ir::IoDesc& in = net_output->op_desc().input(i);
      program_.outputs.push_back({in.name.empty() ? StrCat("output_", i) : in.name,
                                  p.node->op_desc().output(p.index).type});
      const int buffer = plan_.values.at(p.node)[p.index].buffer;
      const bool dedicated = buffer >= 0 && values_per_buffer[buffer] == 1 && outputs_per_buffer[buffer] == 1;
      program_.output_dedicated.push_back(dedicated);
      if (dedicated) dedicated_[{p.node, p.index}] = i;
      program_.output_values.push_back(RefOf(p));
    }
    return absl::OkStatus();
  }

  ValueRef RefOf(ir::OutPort p) const {
    auto it = refs_.find({p.node, p.index});
    if (it != refs_.end()) return it->second;
    const ValuePlacement& v = plan_.values.at(p.node)[p.index];
    ValueRef ref{ValueRef::Kind::kArena, plan_.buffers[v.buffer].offset, -1, -1,
                 p.node->op_desc().output(p.index).type};
    auto d = dedicated_.find({p.node, p.index});
    if (d != dedicated_.end()) ref.output = d->second;
    return ref;
  }

  absl::Status AddTask(const ir::Node& node) {
    const std::string& type = node.type();
    if (type == ir::kData || type == ir::kInnerData || type == ir::kConst || type == ir::kNetOutput ||
        type == ir::kInnerNetOutput || type == ir::kNoOp || type == ir::kVariable || type == ir::kFileConstant) {
      return absl::OkStatus();
    }
    auto engine_name = node.op_desc().GetAttr<std::string>(ir::kAttrEngineName);
    if (!engine_name) return FailedPrecondition("node '", node.name(), "' was not placed on an engine");
    engine::Engine* engine = engines_.Find(*engine_name);
    if (engine == nullptr) {
      return FailedPrecondition("node '", node.name(), "' is placed on engine '", *engine_name, "', which is not loaded");
    }
    runtime::StaticTask task;
    task.op = node.op_desc();
    for (int i = 0; i < node.num_inputs(); ++i) {
      task.inputs.push_back(node.input(i) ? RefOf(node.input(i)) : ValueRef());
    }
    for (int o = 0; o < node.num_outputs(); ++o) task.outputs.push_back(RefOf({const_cast<ir::Node*>(&node), o}));
    engine::PrepareContext ctx;
    ctx.op = &task.op;
    ctx.num_threads = num_threads_;
    for (const ValueRef& ref : task.inputs) {
      ctx.input_types.push_back(ref.type);
      ctx.const_inputs.push_back(ref.kind == ValueRef::Kind::kWeight ? &program_.weights[ref.index].value : nullptr);
    }
    for (const ValueRef& ref : task.outputs) ctx.output_types.push_back(ref.type);
    auto def = engine->kernel_builder().BuildTask(engine->kernel_factory(), *engine_name, ctx);
    if (!def.ok()) return Annotate(def.status(), StrCat("node '", node.name(), "' (", type, ")"));
    task.def = *std::move(def);
    program_.tasks.push_back(std::move(task));
    return absl::OkStatus();
  }

  using PortKey = std::pair<const ir::Node*, int>;
  const ir::Graph& graph_;
  const engine::EngineRegistry& engines_;
  int num_threads_;
  MemoryPlan plan_;
  runtime::StaticProgram program_;
  absl::flat_hash_map<PortKey, ValueRef> refs_;  // inputs and weights
  absl::flat_hash_map<PortKey, int> dedicated_;  // arena values that are dedicated outputs
};

}  // namespace

int64_t StaticInputKey(const ir::Node& node) {
  const ir::OpDesc& op = node.op_desc();
  return op.GetAttrOr<int64_t>(ir::kAttrParentIndex, op.GetAttrOr<int64_t>(ir::kAttrIndex, 0));
}

std::vector<const ir::Node*> StaticInputNodes(const ir::Graph& graph) {
  std::vector<const ir::Node*> inputs;
  for (const ir::Node* node : graph.nodes()) {
    if (node->type() == ir::kData || node->type() == ir::kInnerData) inputs.push_back(node);
  }
  std::stable_sort(inputs.begin(), inputs.end(),
                   [](const ir::Node* a, const ir::Node* b) { return StaticInputKey(*a) < StaticInputKey(*b); });
  return inputs;
}

bool IsStaticGraph(const ir::Graph& graph) {
  auto it = graph.attrs().find(ir::kAttrIsUnknownShape);
  if (it != graph.attrs().end()) {
    const bool* unknown = it->second.get<bool>();
    if (unknown != nullptr && *unknown) return false;
  }
  // Flattening keeps the dynamic partitioner's verdict on the nodes.
  for (const ir::Node* node : graph.nodes()) {
    if (!node->op_desc().subgraph_names().empty()) return false;
    if (node->op_desc().GetAttrOr<bool>(ir::kAttrIsUnknownShape, false)) return false;
  }
  return true;
}

absl::StatusOr<StaticLayout> PlanStaticMemory(const ir::Graph& graph) {
  StaticLayout layout;
  GE_ASSIGN_OR_RETURN(std::vector<ir::Node*> topological, EarliestUseOrder(graph));
  GE_ASSIGN_OR_RETURN(layout.order, StageOrder(std::move(topological)));
  for (const ir::Node* node : layout.order) GE_RETURN_IF_ERROR(CheckStaticNode(*node));
  GE_ASSIGN_OR_RETURN(layout.plan, PlanMemory(graph, layout.order));
  return layout;
}

absl::StatusOr<runtime::StaticProgram> BuildStaticProgram(const ir::Graph& graph, const engine::EngineRegistry& engines,
                                                          int num_threads, StaticLayout layout) {
  return ProgramBuilder(graph, engines, num_threads).Build(std::move(layout));
}

absl::StatusOr<runtime::StaticProgram> BuildStaticProgram(const ir::Graph& graph,
                                                          const engine::EngineRegistry& engines, int num_threads) {
  GE_ASSIGN_OR_RETURN(StaticLayout layout, PlanStaticMemory(graph));
  return BuildStaticProgram(graph, engines, num_threads, std::move(layout));
}

}  // namespace ge::compiler
