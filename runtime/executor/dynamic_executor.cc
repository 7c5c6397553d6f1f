// DynamicExecutor: topological execution with run-time shape inference, and
// the subgraph executors control-flow kernels call through RunSubgraph.
#include "runtime/executor/dynamic_executor.h"

#include <algorithm>
#include <atomic>
#include <mutex>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "base/ir/op_types.h"
#include "base/ops/op_registry.h"
#include "base/status.h"
#include "runtime/device/stream.h"
#include "runtime/executor/alloc_guard.h"
#include "runtime/executor/dynamic_executor_step.h"
#include "runtime/executor/static_body.h"
#include "runtime/executor/static_executor.h"

namespace ge::runtime {
namespace {

ir::ValueType TypeOfValue(const Value& v, const ir::ValueType& declared) {
  switch (v.kind()) {
    case Value::Kind::kTensor:
      return ir::ValueType::Tensor(v.tensor().dtype(), v.tensor().shape());
    case Value::Kind::kSequence: {
      // Element shapes may differ; keep the declared element shape's rank only if all agree.
      // (Remembered by the sequence: O(1) per step for a growing one.)
      ir::ValueType element = ir::ValueType::Tensor(v.element_dtype(), Shape::UnknownRank());
      if (!v.sequence().empty() && v.sequence_shapes_uniform()) {
        element = ir::ValueType::Tensor(v.element_dtype(), v.sequence()[0].shape());
      }
      ir::ValueType seq = ir::ValueType::Sequence(element);
      return declared.kind() == ir::ValueType::Kind::kOptional ? ir::ValueType::Optional(seq) : seq;
    }
    case Value::Kind::kNone:
      return declared;
  }
  return declared;
}

bool IsInputNode(const std::string& type) { return type == ir::kData || type == ir::kInnerData; }
bool IsOutputNode(const std::string& type) { return type == ir::kNetOutput || type == ir::kInnerNetOutput; }

// Data index i of an If / Case branch is the parent's input i + 1 (input 0
// selects the branch); every other owner passes its inputs straight through.
int64_t ParentIndexOffset(const ir::Graph& graph) {
  const ir::Node* parent = graph.parent_node();
  if (parent == nullptr) return 0;
  return parent->type() == ir::kIf || parent->type() == ir::kCase ? 1 : 0;
}

// The engine whose own stream `node` runs on: its engine when that engine
// is independent (EngineAttributes::independent_stream); for a
// PartitionedCall on another engine, the one independent engine every
// compute node of its subgraph is placed on. Empty for none.
std::string IndependentEngineOf(const ir::Graph& graph, const ir::Node& node, const engine::EngineRegistry& engines) {
  auto independent = [&](const std::string& name) {
    const engine::Engine* e = engines.Find(name);
    return e != nullptr && e->attributes().independent_stream;
  };
  const std::string own = node.op_desc().GetAttrOr<std::string>(ir::kAttrEngineName, "");
  if (independent(own)) return own;
  if (node.type() != ir::kPartitionedCall || node.op_desc().subgraph_names().size() != 1) return "";
  const ir::Graph* sub = graph.FindSubgraph(node.op_desc().subgraph_names()[0]);
  if (sub == nullptr) return "";
  std::string common;
  for (const ir::Node* n : sub->nodes()) {
    if (IsInputNode(n->type()) || IsOutputNode(n->type())) continue;
    const std::string e = n->op_desc().GetAttrOr<std::string>(ir::kAttrEngineName, "");
    if (!common.empty() && e != common) return "";
    common = e;
  }
  return independent(common) ? common : "";
}

}  // namespace

namespace {

// Into `out`, the bytes of value input `v` that inference read (none for
// an absent or non-tensor input); false when they are not worth remembering
// (strings, large tensors): the node is then inferred on every run. Its
// dtype and shape are in the input types the cache is keyed by too.
constexpr size_t kMaxCachedValueBytes = 4096;
bool ValueBytes(const Value* v, std::string& out) {
  out.clear();
  if (v == nullptr || !v->is_tensor()) return true;
  const Tensor& t = v->tensor();
  if (t.dtype() == DataType::kString) return false;
  const size_t bytes = static_cast<size_t>(t.NumElements()) * DataTypeSize(t.dtype());
  if (bytes > kMaxCachedValueBytes) return false;
  if (bytes > 0) out.assign(static_cast<const char*>(t.raw_data()), bytes);
  return true;
}

// Whether value input `v` has the bytes ValueBytes remembered.
bool SameValueBytes(const Value* v, const std::string& remembered) {
  if (v == nullptr || !v->is_tensor()) return remembered.empty();
  const Tensor& t = v->tensor();
  if (t.dtype() == DataType::kString) return false;
  const size_t bytes = static_cast<size_t>(t.NumElements()) * DataTypeSize(t.dtype());
  return bytes == remembered.size() && (bytes == 0 || std::memcmp(t.raw_data(), remembered.data(), bytes) == 0);
}

}  // namespace

class DynamicExecutor::StepContext final : public engine::ExecuteContext {
 public:
  StepContext(DynamicExecutor& exec, const Step& step, const std::vector<const Value*>& inputs,
              const std::vector<ir::ValueType>& output_types, std::vector<Value>& outputs, void* workspace, int threads,
              std::vector<Value>& slots, const std::atomic<int>* uses)
      : exec_(exec),
        step_(step),
        inputs_(inputs),
        output_types_(output_types),
        outputs_(outputs),
        workspace_(workspace),
        threads_(threads),
        slots_(slots),
        uses_(uses) {}

  int num_inputs() const override { return static_cast<int>(inputs_.size()); }
  int num_outputs() const override { return static_cast<int>(outputs_.size()); }
  const Value& input_value(int i) const override {
    static const Value* kNone = new Value();
    return inputs_[i] ? *inputs_[i] : *kNone;
  }
  const ir::ValueType& output_type(int i) const override { return output_types_[i]; }
  absl::StatusOr<Tensor> Output(int i, const Shape& shape) override {
    const DataType dtype = output_types_[i].dtype();
    if (dtype == DataType::kString) {  // constructed strings
      GE_ASSIGN_OR_RETURN(Tensor t, exec_.options_.output_allocator->AllocateTensor(dtype, shape));
      outputs_[i] = Value(t);
      return t;
    }
    // Kernels write every element of the outputs they ask for (the static
    // executor's arena is not cleared either: docs/design/engines.md,
    // "Outputs"), so the block comes as it is, without AllocateTensor's zero
    // fill (5-6 % of a CNN's run, on one thread between parallel regions).
    GE_ASSIGN_OR_RETURN(int64_t count, shape.NumElements());
    GE_ASSIGN_OR_RETURN(size_t bytes, ByteSizeOf(dtype, count));
    GE_ASSIGN_OR_RETURN(std::shared_ptr<Buffer> buffer, exec_.options_.output_allocator->AllocateBuffer(bytes));
    Tensor t(dtype, shape, std::move(buffer));
    outputs_[i] = Value(t);
    return t;
  }
  absl::Status SetOutputValue(int i, Value value) override {
    outputs_[i] = std::move(value);
    return absl::OkStatus();
  }
  void* workspace() override { return workspace_; }
  // Kernels thread on OpenMP (runtime/engines/sdk/parallel.h); the pool
  // stays for the interface and has no workers.
  ThreadPool* thread_pool() override { return SerialPool(); }
  int num_threads() const override { return threads_; }
  absl::StatusOr<std::vector<Value>> RunSubgraph(std::string_view name, std::vector<Value> inputs) override {
    return exec_.RunSubgraphOf(step_, name, std::move(inputs));
  }
  engine::VariableStore* variables() override { return exec_.options_.variables; }
  Value* owned_input(int i) override {
    if (i < 0 || i >= static_cast<int>(inputs_.size()) || inputs_[i] == nullptr) return nullptr;
    const int slot = step_.inputs[i];
    if (uses_ == nullptr) return step_.takeable[i] ? &slots_[slot] : nullptr;
    // A parallel run: the other consumers decrement the count once done.
    if (!step_.takeable_if_last[i] || uses_[slot].load(std::memory_order_acquire) != 1) return nullptr;
    return &slots_[slot];
  }

 private:
  static ThreadPool* SerialPool() {
    static ThreadPool* pool = new ThreadPool(0, "serial");
    return pool;
  }
  DynamicExecutor& exec_;
  const Step& step_;
  const std::vector<const Value*>& inputs_;
  const std::vector<ir::ValueType>& output_types_;
  std::vector<Value>& outputs_;
  void* workspace_;
  int threads_;
  std::vector<Value>& slots_;
  const std::atomic<int>* uses_;
};

DynamicExecutor::~DynamicExecutor() {
  if (owns_output_allocator_) options_.output_allocator->Close();
}

absl::StatusOr<std::unique_ptr<DynamicExecutor>> DynamicExecutor::Create(
    const ir::Graph& graph, const engine::EngineRegistry& engines, ExecutorOptions options) {
  std::unique_ptr<DynamicExecutor> exec(new DynamicExecutor());
  exec->graph_ = &graph;
  if (!options.output_allocator) {
    device::CachingAllocatorOptions cache_options;
    cache_options.name = StrCat("host (outputs of graph '", graph.name(), "')");
    options.output_allocator = std::make_shared<device::CachingAllocator>(nullptr, std::move(cache_options));
    exec->owns_output_allocator_ = true;
  }
  if (options.inter_op_parallelism > 1 && !options.inter_op_pool) {
    options.inter_op_pool = std::make_shared<ThreadPool>(options.inter_op_parallelism - 1, "inter_op");
  }
  exec->options_ = options;
  GE_RETURN_IF_ERROR(exec->Build(graph, engines, /*is_subgraph=*/false));
  exec->owned_subgraphs_ = std::make_unique<SubgraphTable>();
  GE_RETURN_IF_ERROR(BuildSubgraphs(graph, engines, options, *exec->owned_subgraphs_));
  exec->subgraphs_ = exec->owned_subgraphs_.get();
  exec->ResolveSubgraphs();
  for (auto& [name, child] : *exec->owned_subgraphs_) {
    child->subgraphs_ = exec->subgraphs_;
    child->ResolveSubgraphs();
  }
  return exec;
}

absl::Status DynamicExecutor::BuildSubgraphs(const ir::Graph& graph, const engine::EngineRegistry& engines,
                                             const ExecutorOptions& options, SubgraphTable& table) {
  for (const ir::Node* node : graph.nodes()) {
    for (const std::string& name : node->op_desc().subgraph_names()) {
      if (table.contains(name)) continue;
      const ir::Graph* sub = graph.FindSubgraph(name);
      if (sub == nullptr) {
        return InvalidArgument("node '", node->name(), "' (", node->type(), ") names subgraph '", name,
                               "', which is not in the graph tree");
      }
      std::unique_ptr<DynamicExecutor> child(new DynamicExecutor());
      child->graph_ = sub;
      child->options_ = options;
      GE_ASSIGN_OR_RETURN(bool is_static, child->TryLoadStatic(*node, *sub));
      if (is_static) {
        table.emplace(name, std::move(child));
        continue;
      }
      GE_RETURN_IF_ERROR(Annotate(child->Build(*sub, engines, /*is_subgraph=*/true),
                                  StrCat("subgraph '", name, "' of node '", node->name(), "'")));
      if (node->type() != ir::kPartitionedCall) {
        child->static_bodies_ =
            StaticBodies::Create(*sub, ParentIndexOffset(*sub), engines, options.static_body_loader);
      }
      table.emplace(name, std::move(child));
      GE_RETURN_IF_ERROR(BuildSubgraphs(*sub, engines, options, table));
    }
  }
  return absl::OkStatus();
}

void DynamicExecutor::ResolveSubgraphs() {
  for (Step& step : steps_) {
    if (step.node == nullptr) continue;
    step.subgraphs.clear();
    for (const std::string& name : step.node->op_desc().subgraph_names()) {
      auto it = subgraphs_->find(name);
      step.subgraphs.push_back(it == subgraphs_->end() ? nullptr : it->second.get());
    }
  }
}

int DynamicExecutor::num_static_bodies() const {
  int n = 0;
  if (subgraphs_ != nullptr) {
    for (const auto& [name, child] : *subgraphs_) n += child->static_bodies_ != nullptr;
  }
  return n;
}

int DynamicExecutor::num_static_plans() const {
  int n = 0;
  if (subgraphs_ != nullptr) {
    for (const auto& [name, child] : *subgraphs_) n += child->static_bodies_ ? child->static_bodies_->num_plans() : 0;
  }
  return n;
}

int DynamicExecutor::num_static_subgraphs() const {
  int n = 0;
  if (subgraphs_ != nullptr) {
    for (const auto& [name, child] : *subgraphs_) n += child->static_ != nullptr;
  }
  return n;
}

absl::StatusOr<bool> DynamicExecutor::TryLoadStatic(const ir::Node& owner, const ir::Graph& sub) {
  if (!options_.static_loader || owner.type() != ir::kPartitionedCall ||
      owner.op_desc().GetAttrOr<bool>(ir::kAttrIsUnknownShape, true)) {
    return false;
  }
  absl::StatusOr<std::unique_ptr<StaticExecutor>> loaded = options_.static_loader(sub);
  if (!loaded.ok()) {
    if (loaded.status().code() == absl::StatusCode::kUnimplemented) return false;
    return Annotate(loaded.status(), StrCat("static subgraph '", sub.name(), "' of node '", owner.name(), "'"));
  }
  // The program's inputs are the Data / InnerData nodes by parent index
  // (compiler::StaticInputNodes): input i takes parent input key(i).
  for (const ir::Node* node : sub.nodes()) {
    if (node->type() != ir::kData && node->type() != ir::kInnerData) continue;
    const ir::OpDesc& op = node->op_desc();
    static_parent_index_.push_back(op.GetAttrOr<int64_t>(ir::kAttrParentIndex, op.GetAttrOr<int64_t>(ir::kAttrIndex, 0)));
  }
  std::stable_sort(static_parent_index_.begin(), static_parent_index_.end());
  if (static_cast<int>(static_parent_index_.size()) != (*loaded)->num_inputs()) {
    return Internal("static subgraph '", sub.name(), "' has ", static_parent_index_.size(), " Data nodes but ",
                    (*loaded)->num_inputs(), " program inputs");
  }
  static_ = *std::move(loaded);
  return true;
}

absl::Status DynamicExecutor::BindInputNode(const ir::Node& node, int slot, bool is_subgraph) {
  const ir::OpDesc& op = node.op_desc();
  if (is_subgraph) {
    int64_t index;
    if (auto p = op.GetAttr<int64_t>(ir::kAttrParentIndex)) {
      index = *p;
    } else if (node.type() == ir::kData) {
      index = op.GetAttrOr<int64_t>(ir::kAttrIndex, 0) + ParentIndexOffset(*graph_);
    } else {
      return InvalidArgument("InnerData node '", node.name(), "' has no integer '", ir::kAttrParentIndex, "'");
    }
    if (index < 0) return InvalidArgument("input node '", node.name(), "' maps to parent input ", index);
    parent_bindings_.push_back({slot, index, &node});
    return absl::OkStatus();
  }
  if (node.type() != ir::kData) {
    return InvalidArgument("node '", node.name(), "' (", node.type(), ") can only appear in a subgraph");
  }
  int64_t index = op.GetAttrOr<int64_t>(ir::kAttrIndex, 0);
  if (index < 0 || index >= 1 << 20) return InvalidArgument("Data node '", node.name(), "' has bad index ", index);
  if (static_cast<size_t>(index) >= input_slots_.size()) input_slots_.resize(index + 1, -1);
  input_slots_[index] = slot;
  return absl::OkStatus();
}

absl::Status DynamicExecutor::Build(const ir::Graph& graph, const engine::EngineRegistry& engines, bool is_subgraph) {
  GE_ASSIGN_OR_RETURN(std::vector<ir::Node*> order, graph.TopologicalOrder());
  absl::flat_hash_map<const ir::Node*, int> output_base;
  steps_.resize(order.size());
  absl::flat_hash_map<int, size_t> last_use;  // slot -> step index
  for (size_t s = 0; s < order.size(); ++s) {
    const ir::Node* node = order[s];
    Step& step = steps_[s];
    step.node = node;
    step.output_base = static_cast<int>(num_slots_);
    step.num_outputs = node->num_outputs();
    output_base[node] = step.output_base;
    num_slots_ += node->num_outputs();
    for (int i = 0; i < node->num_inputs(); ++i) {
      ir::OutPort p = node->input(i);
      int slot = p.node ? output_base.at(p.node) + p.index : -1;
      step.inputs.push_back(slot);
      if (slot >= 0) last_use[slot] = s;
    }
    const std::string& type = node->type();
    if (IsInputNode(type)) {
      step.is_data = true;
      GE_RETURN_IF_ERROR(BindInputNode(*node, step.output_base, is_subgraph));
      continue;
    }
    if (IsOutputNode(type)) {
      step.is_net_output = true;
      output_slots_ = step.inputs;
      continue;
    }
    step.schema = ops::OpRegistry::Global().Find(type);
    if (step.schema == nullptr) return InvalidArgument("node '", node->name(), "': unknown op type ", type);
    auto engine_name = node->op_desc().GetAttr<std::string>(ir::kAttrEngineName);
    if (!engine_name) return FailedPrecondition("node '", node->name(), "' was not placed on an engine");
    engine::Engine* engine = engines.Find(*engine_name);
    if (engine == nullptr) {
      return FailedPrecondition("node '", node->name(), "' is placed on engine '", *engine_name, "', which is not loaded");
    }
    GE_ASSIGN_OR_RETURN(step.kernel, engine->kernel_factory().CreateKernel(node->op_desc()));
    if (std::string independent = IndependentEngineOf(graph, *node, engines); !independent.empty()) {
      auto it = std::find(stream_engines_.begin(), stream_engines_.end(), independent);
      step.stream = static_cast<int>(it - stream_engines_.begin());
      if (it == stream_engines_.end()) {
        stream_engines_.push_back(independent);
        streams_.push_back(std::make_unique<device::Stream>(StrCat(graph.name(), "/", independent)));
      }
    }
    step.value_inputs = step.schema->value_inputs;
    step.static_types = true;
    for (const ir::IoDesc& io : node->op_desc().inputs()) {
      step.static_types = step.static_types && io.type.is_tensor() && io.type.shape().IsFullyKnown();
    }
    for (const ir::IoDesc& io : node->op_desc().outputs()) {
      step.static_types = step.static_types && io.type.is_tensor() && io.type.shape().IsFullyKnown();
    }
  }
  for (size_t i = 0; i < input_slots_.size(); ++i) {
    if (input_slots_[i] < 0) return InvalidArgument("graph '", graph.name(), "' has no Data node with index ", i);
  }
  num_inputs_ = static_cast<int>(input_slots_.size());
  ComputeReleases({last_use.begin(), last_use.end()});
  absl::flat_hash_set<int> outputs(output_slots_.begin(), output_slots_.end());
  for (Step& step : steps_) {
    step.takeable.assign(step.inputs.size(), false);
    step.takeable_if_last.assign(step.inputs.size(), false);
    for (size_t i = 0; i < step.inputs.size(); ++i) {
      const int slot = step.inputs[i];
      if (slot < 0 || outputs.contains(slot) || std::count(step.inputs.begin(), step.inputs.end(), slot) != 1) continue;
      step.takeable_if_last[i] = true;
      step.takeable[i] = std::find(step.release.begin(), step.release.end(), slot) != step.release.end();
    }
  }
  absl::flat_hash_map<int64_t, int> parent_uses;
  for (const ParentBinding& b : parent_bindings_) ++parent_uses[b.index];
  for (ParentBinding& b : parent_bindings_) {
    b.move = parent_uses[b.index] == 1;
    max_parent_index_ = std::max(max_parent_index_, b.index);
  }
  std::vector<int64_t> levels(steps_.size(), -1);
  for (size_t s = 0; s < steps_.size(); ++s) {
    if (steps_[s].is_data || steps_[s].is_net_output) continue;
    levels[s] = steps_[s].node->op_desc().GetAttrOr<int64_t>(ir::kAttrStageLevel, -1);
  }
  stages_ = PipelineStages(levels);
  for (size_t s = 0; s < steps_.size(); ++s) steps_[s].stage = stages_.stage_of(static_cast<int>(s));
  if (CountsDependencies()) GE_RETURN_IF_ERROR(ComputeDependencies());
  return absl::OkStatus();
}

absl::Status DynamicExecutor::ComputeDependencies() {
  absl::flat_hash_map<const ir::Node*, int> step_of;
  for (size_t s = 0; s < steps_.size(); ++s) {
    if (!steps_[s].is_data && !steps_[s].is_net_output) step_of[steps_[s].node] = static_cast<int>(s);
  }
  successors_.assign(steps_.size(), {});
  num_predecessors_.assign(steps_.size(), 0);
  slot_uses_.assign(num_slots_, 0);
  num_compute_steps_ = step_of.size();
  std::vector<int> compute_steps;
  for (size_t s = 0; s < steps_.size(); ++s) {
    const Step& step = steps_[s];
    if (step.is_data || step.is_net_output) continue;
    compute_steps.push_back(static_cast<int>(s));
    for (int slot : step.inputs) {
      if (slot >= 0) ++slot_uses_[slot];
    }
    absl::flat_hash_set<int> predecessors;
    for (const ir::Node* in : step.node->InNodes()) {
      auto it = step_of.find(in);
      if (it != step_of.end()) predecessors.insert(it->second);
    }
    for (int p : predecessors) successors_[p].push_back(static_cast<int>(s));
    // A node of a later stage also waits for the previous stage as a whole.
    num_predecessors_[s] = static_cast<int>(predecessors.size()) + (step.stage > 0 ? 1 : 0);
    if (num_predecessors_[s] == 0) initial_ready_.push_back(static_cast<int>(s));
  }
  GE_RETURN_IF_ERROR(stages_.CheckOrder(successors_, compute_steps,
                                        [this](int s) { return steps_[s].node->name(); }));
  for (int slot : output_slots_) {
    if (slot >= 0) slot_uses_[slot] = std::numeric_limits<int>::max();
  }
  // Ready steps are taken from the back: start with the first in topological order.
  std::reverse(initial_ready_.begin(), initial_ready_.end());
  return absl::OkStatus();
}

void DynamicExecutor::ComputeReleases(const std::vector<std::pair<int, size_t>>& last_use) {
  // Values die after their last consumer, except graph outputs.
  absl::flat_hash_map<int, bool> is_output;
  for (int slot : output_slots_) is_output[slot] = true;
  for (const auto& [slot, step_index] : last_use) {
    if (!is_output.contains(slot)) steps_[step_index].release.push_back(slot);
  }
}

absl::Status DynamicExecutor::RunStep(Step& step, std::vector<Value>& slots, const std::atomic<int>* uses) {
  const ir::Node& node = *step.node;
  const ir::OpDesc& op = node.op_desc();
  const size_t n = step.inputs.size();
  std::vector<const Value*>& inputs = step.input_values;
  std::vector<ir::ValueType>& input_types = step.input_types;
  inputs.assign(n, nullptr);
  input_types.resize(n);
  for (size_t i = 0; i < n; ++i) {
    input_types[i] = ir::ValueType();
    if (step.inputs[i] < 0) continue;
    const Value& v = slots[step.inputs[i]];
    if (v.is_none() && op.input(static_cast<int>(i)).type.kind() != ir::ValueType::Kind::kOptional) continue;
    inputs[i] = &v;
    input_types[i] = TypeOfValue(v, op.input(static_cast<int>(i)).type);
  }
  const bool same_types = step.prepared && step.prepared_inputs == input_types;
  // The cached inference holds when the types and the values it read are
  // the ones it was made for.
  bool cached = same_types && step.inferred;
  for (size_t k = 0; cached && k < step.value_inputs.size(); ++k) {
    const size_t i = static_cast<size_t>(step.value_inputs[k]);
    cached = i < n && SameValueBytes(inputs[i], step.inferred_values[k]);
  }
  if (!cached) {
    step.inferred = false;
    bool matches_static = step.static_types;
    for (size_t i = 0; i < n && matches_static; ++i) {
      matches_static = inputs[i] == nullptr || input_types[i] == op.input(static_cast<int>(i)).type;
    }
    if (matches_static) {
      step.output_types.clear();
      for (const ir::IoDesc& io : op.outputs()) step.output_types.push_back(io.type);
    } else {
      std::vector<const ir::ValueType*> type_ptrs(n, nullptr);
      std::vector<const Tensor*> values(n, nullptr);
      for (size_t i = 0; i < n; ++i) {
        if (inputs[i] == nullptr) continue;
        type_ptrs[i] = &input_types[i];
        if (inputs[i]->is_tensor()) values[i] = &inputs[i]->tensor();
      }
      GE_ASSIGN_OR_RETURN(step.output_types, ops::InferOutputTypes(op, type_ptrs, values, graph_));
    }
    step.inferred_values.resize(step.value_inputs.size());
    bool cacheable = true;
    for (size_t k = 0; k < step.value_inputs.size(); ++k) {
      const size_t i = static_cast<size_t>(step.value_inputs[k]);
      cacheable = cacheable && i < n && ValueBytes(inputs[i], step.inferred_values[k]);
    }
    step.inferred = cacheable;
  }
  const std::vector<ir::ValueType>& output_types = step.output_types;
  if (!same_types) {
    engine::PrepareContext pctx;
    pctx.op = &op;
    pctx.input_types = input_types;
    pctx.output_types = output_types;
    pctx.num_threads = std::max(1, options_.intra_op_threads);
    pctx.const_inputs.assign(n, nullptr);
    step.prepared = false;
    GE_RETURN_IF_ERROR(CallKernel([&] { return step.kernel->Prepare(pctx); }));
    if (pctx.workspace_bytes > step.workspace_bytes || !step.workspace) {
      // Charged like the outputs (the session's memory quota); an empty one
      // needs no accounting.
      if (pctx.workspace_bytes > 0) {
        GE_ASSIGN_OR_RETURN(step.workspace, options_.output_allocator->AllocateBuffer(pctx.workspace_bytes));
      } else {
        GE_ASSIGN_OR_RETURN(step.workspace, Buffer::Allocate(0));
      }
      step.workspace_bytes = pctx.workspace_bytes;
    }
    step.prepared_inputs = input_types;
    step.prepared = true;
  }
  std::vector<Value>& outputs = step.outputs;
  outputs.clear();
  outputs.resize(step.num_outputs);
  StepContext ctx(*this, step, inputs, output_types, outputs, step.workspace->data(),
                  std::max(1, options_.intra_op_threads), slots, uses);
  absl::Status computed = CallKernel([&] { return step.kernel->Compute(ctx); });
  if (!computed.ok()) {
    outputs.clear();
    return computed;
  }
  for (int o = 0; o < step.num_outputs; ++o) {
    if (outputs[o].is_none() && !node.consumers(o).empty() &&
        output_types[o].kind() != ir::ValueType::Kind::kOptional) {
      outputs.clear();
      return Internal("kernel did not produce output ", o);
    }
    slots[step.output_base + o] = std::move(outputs[o]);
  }
  outputs.clear();
  return absl::OkStatus();
}

absl::StatusOr<std::vector<Value>> DynamicExecutor::Execute(std::vector<Value>& slots) {
  if (CountsDependencies()) return ExecuteParallel(slots);
  // One thread runs every node: one token of the device's budget for the
  // run (none more when this thread already holds one: a subgraph run by a
  // control-flow kernel).
  const ComputeScope compute(options_.compute_budget);
  for (Step& step : steps_) {
    if (step.is_data || step.is_net_output) continue;
    if (control_ != nullptr) GE_RETURN_IF_ERROR(control_->Check(step.node->name()));
    absl::Status s = RunStep(step, slots);
    if (!s.ok()) return WithNodePrefix(s, step.node->name(), step.node->type());
    for (int slot : step.release) slots[slot] = Value();
  }
  return CollectOutputs(slots);
}

// The outputs move out of the slots, which die with the run (both callers
// own them): a sequence a loop body returns is not copied per iteration. A
// slot that feeds a later output too is copied until then.
std::vector<Value> DynamicExecutor::CollectOutputs(std::vector<Value>& slots) const {
  std::vector<Value> outputs;
  outputs.reserve(output_slots_.size());
  for (size_t k = 0; k < output_slots_.size(); ++k) {
    const int slot = output_slots_[k];
    if (slot < 0) {
      outputs.emplace_back();
      continue;
    }
    bool last = true;
    for (size_t later = k + 1; later < output_slots_.size() && last; ++later) last = output_slots_[later] != slot;
    outputs.push_back(last ? std::move(slots[slot]) : slots[slot]);
  }
  return outputs;
}

absl::StatusOr<std::vector<Value>> DynamicExecutor::Run(std::vector<Value> inputs, const RunControl* control) {
  if (static_cast<int>(inputs.size()) != num_inputs_) {
    return InvalidArgument("graph '", graph_->name(), "' takes ", num_inputs_, " inputs, got ", inputs.size());
  }
  std::lock_guard<std::mutex> lock(run_mu_);
  control_ = control;
  std::vector<Value> slots(num_slots_);
  for (int i = 0; i < num_inputs_; ++i) slots[input_slots_[i]] = std::move(inputs[i]);
  return Execute(slots);
}

absl::StatusOr<std::vector<Value>> DynamicExecutor::RunAsSubgraph(std::vector<Value> parent_inputs,
                                                                   const RunControl* control) {
  std::unique_lock<std::mutex> lock(run_mu_, std::try_to_lock);
  if (!lock.owns_lock()) {
    return FailedPrecondition("already running (re-entrant or concurrent RunSubgraph calls)");
  }
  control_ = control;
  if (static_) {
    std::vector<Value> inputs;
    inputs.reserve(static_parent_index_.size());
    for (int64_t index : static_parent_index_) {
      if (index < 0 || index >= static_cast<int64_t>(parent_inputs.size())) {
        return InvalidArgument("static subgraph input takes parent input ", index, " but only ", parent_inputs.size(),
                               " value(s) were passed");
      }
      inputs.push_back(parent_inputs[index]);
    }
    return static_->Run(std::move(inputs), control);
  }
  if (static_bodies_) {
    GE_ASSIGN_OR_RETURN(StaticBody * body, static_bodies_->Find(parent_inputs));
    if (body != nullptr) return body->Run(parent_inputs, control);
  }
  if (max_parent_index_ >= static_cast<int64_t>(parent_inputs.size())) {
    for (const ParentBinding& b : parent_bindings_) {
      if (b.index < static_cast<int64_t>(parent_inputs.size())) continue;
      return InvalidArgument("input node '", b.node->name(), "' takes parent input ", b.index, " but only ",
                             parent_inputs.size(), " value(s) were passed");
    }
  }
  // A parent input bound to one input node only is moved, so that it dies
  // with its last consumer inside the subgraph rather than after the run.
  std::vector<Value>& slots = subgraph_slots_;
  slots.resize(num_slots_);
  for (const ParentBinding& b : parent_bindings_) {
    Value& v = parent_inputs[b.index];
    slots[b.slot] = b.move ? std::move(v) : v;
  }
  absl::StatusOr<std::vector<Value>> outputs = Execute(slots);
  // Empty between runs: what the run left (inputs nothing read, values of
  // a failed run) dies now, as it did with the run's own slots.
  for (Value& v : slots) {
    if (!v.is_none()) v = Value();
  }
  return outputs;
}

absl::StatusOr<std::vector<Value>> DynamicExecutor::RunSubgraphOf(const Step& step, std::string_view name,
                                                                  std::vector<Value> inputs) {
  const std::vector<std::string>& owned = step.node->op_desc().subgraph_names();
  size_t k = 0;
  while (k < owned.size() && owned[k] != name) ++k;
  if (k == owned.size()) return InvalidArgument("asked to run subgraph '", name, "', which the node does not own");
  DynamicExecutor* sub = k < step.subgraphs.size() ? step.subgraphs[k] : nullptr;
  if (sub == nullptr) return Internal("no executor was built for subgraph '", name, "'");
  absl::StatusOr<std::vector<Value>> outputs = sub->RunAsSubgraph(std::move(inputs), control_);
  if (!outputs.ok()) return Annotate(outputs.status(), StrCat("subgraph '", name, "'"));
  return outputs;
}

}  // namespace ge::runtime
