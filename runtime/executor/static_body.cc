// StaticBody: a fully typed control-flow subgraph on a StaticExecutor.
#include "runtime/executor/static_body.h"

#include <algorithm>
#include <string>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "base/ir/op_types.h"
#include "base/logging.h"
#include "base/ops/op_registry.h"
#include "base/status.h"
#include "runtime/executor/static_executor.h"

namespace ge::runtime {
namespace {

// The dynamic-shape partitioner's node flags (compiler/partition/partition_attrs.h).
constexpr std::string_view kAttrSupportAddrRefresh = "_is_support_addr_refresh";
constexpr std::string_view kAttrTilingDepend = "_tiling_depend";
// The scan outputs' append (runtime/engines/control_flow/accumulator_kernels.cc).
constexpr std::string_view kAccumulatorAppend = "LoopAccumulatorAppend";

bool IsInputNode(const ir::Node& node) { return node.type() == ir::kData || node.type() == ir::kInnerData; }
bool IsOutputNode(const ir::Node& node) { return node.type() == ir::kNetOutput || node.type() == ir::kInnerNetOutput; }

bool IsStaticTensor(const ir::ValueType& type) {
  return type.is_tensor() && type.shape().IsFullyKnown() && type.dtype() != DataType::kUndefined &&
         type.dtype() != DataType::kString;
}

// The order of a static program's inputs (compiler::StaticInputKey).
int64_t ProgramKey(const ir::Node& node) {
  const ir::OpDesc& op = node.op_desc();
  return op.GetAttrOr<int64_t>(ir::kAttrParentIndex, op.GetAttrOr<int64_t>(ir::kAttrIndex, 0));
}

// The input nodes in the order of the program's inputs (compiler::StaticInputNodes).
std::vector<const ir::Node*> InputNodes(const ir::Graph& graph) {
  std::vector<const ir::Node*> inputs;
  for (const ir::Node* node : graph.nodes()) {
    if (IsInputNode(*node)) inputs.push_back(node);
  }
  std::stable_sort(inputs.begin(), inputs.end(),
                   [](const ir::Node* a, const ir::Node* b) { return ProgramKey(*a) < ProgramKey(*b); });
  return inputs;
}

// The parent input an input node takes (DynamicExecutor::BindInputNode's rule).
int64_t ParentIndex(const ir::Node& node, int64_t parent_offset) {
  const ir::OpDesc& op = node.op_desc();
  if (auto p = op.GetAttr<int64_t>(ir::kAttrParentIndex)) return *p;
  return op.GetAttrOr<int64_t>(ir::kAttrIndex, 0) + parent_offset;
}

// `inferred` in the layout `declared` has: inference knows the logical dims
// only, and a value an engine keeps channels-last (`@NHWC`, read so by the
// TransData after it) must stay so in the plan.
ir::ValueType InLayoutOf(const ir::ValueType& declared, const ir::ValueType& inferred) {
  if (!declared.is_tensor() || !inferred.is_tensor()) return inferred;
  return ir::TensorDesc(inferred.dtype(), inferred.shape(), declared.tensor().format);
}

}  // namespace

StaticBody::~StaticBody() = default;

absl::StatusOr<std::unique_ptr<StaticBody>> StaticBody::Load(const ir::Graph& sub, int64_t parent_offset,
                                                             const Loader& loader,
                                                             const std::vector<int64_t>& appends) {
  absl::StatusOr<std::unique_ptr<StaticExecutor>> loaded = loader(sub);
  if (!loaded.ok()) {
    if (loaded.status().code() == absl::StatusCode::kUnimplemented) return nullptr;
    return Annotate(loaded.status(), StrCat("static plan of subgraph '", sub.name(), "'"));
  }
  std::unique_ptr<StaticBody> body(new StaticBody());
  const std::vector<const ir::Node*> inputs = InputNodes(sub);
  const ir::Node* net_output = nullptr;
  for (const ir::Node* node : sub.nodes()) {
    if (IsOutputNode(*node)) net_output = node;
  }
  if (net_output == nullptr) return InvalidArgument("subgraph '", sub.name(), "' has no NetOutput");
  if (static_cast<int>(inputs.size()) != (*loaded)->num_inputs()) {
    return Internal("subgraph '", sub.name(), "' has ", inputs.size(), " input nodes but its program takes ",
                    (*loaded)->num_inputs());
  }
  for (const ir::Node* node : inputs) {
    const int64_t index = ParentIndex(*node, parent_offset);
    if (index < 0) return InvalidArgument("input node '", node->name(), "' maps to parent input ", index);
    body->parent_index_.push_back(index);
    body->max_parent_index_ = std::max(body->max_parent_index_, index);
    body->input_types_.push_back(node->op_desc().output(0).type);
  }
  for (int i = 0; i < net_output->num_inputs(); ++i) {
    const ir::OutPort p = net_output->input(i);
    if (!p) return InvalidArgument("NetOutput input ", i, " of subgraph '", sub.name(), "' is not connected");
    Output out;
    if (IsInputNode(*p.node)) {
      out.parent_input = ParentIndex(*p.node, parent_offset);
    } else if (p.node->type() == ir::kConst) {
      GE_ASSIGN_OR_RETURN(out.constant, p.node->op_desc().RequireAttr<Tensor>(ir::kAttrValue));
    }
    body->caller_filled_.push_back(out.parent_input >= 0 || out.constant.defined());
    if (static_cast<size_t>(i) < appends.size() && appends[i] >= 0) {
      out.append_to = appends[i];
      out.append_dtype = p.node->op_desc().output(p.index).type.dtype();
      body->max_parent_index_ = std::max(body->max_parent_index_, out.append_to);
    }
    body->outputs_.push_back(std::move(out));
  }
  body->exec_ = *std::move(loaded);
  return body;
}

bool StaticBody::Accepts(const std::vector<Value>& parent_inputs) const {
  if (max_parent_index_ >= static_cast<int64_t>(parent_inputs.size())) return false;
  for (size_t k = 0; k < parent_index_.size(); ++k) {
    const Value& v = parent_inputs[parent_index_[k]];
    if (!v.is_tensor()) return false;
    const Tensor& t = v.tensor();
    if (t.dtype() != input_types_[k].dtype() || t.shape() != input_types_[k].shape()) return false;
  }
  for (const Output& out : outputs_) {
    if (out.append_to < 0) continue;
    const Value& acc = parent_inputs[out.append_to];
    if (!acc.is_sequence() || acc.element_dtype() != out.append_dtype) return false;
  }
  return true;
}

absl::StatusOr<std::vector<Value>> StaticBody::Run(std::vector<Value>& parent_inputs, const RunControl* control) {
  inputs_.resize(parent_index_.size());
  for (size_t k = 0; k < parent_index_.size(); ++k) inputs_[k] = parent_inputs[parent_index_[k]];
  tensors_.assign(outputs_.size(), Tensor());
  absl::Status ran = exec_->RunWithOutputs(inputs_, tensors_, control, &caller_filled_);
  // The program keeps what it read bound; the handles go (a loop-carried
  // value dies when the next iteration has read it).
  for (Value& v : inputs_) v = Value();
  GE_RETURN_IF_ERROR(ran);
  std::vector<Value> results;
  results.reserve(outputs_.size());
  for (size_t o = 0; o < outputs_.size(); ++o) {
    const Output& out = outputs_[o];
    Value piece;
    if (out.constant.defined()) {
      piece = Value(out.constant);
    } else if (out.parent_input < 0) {
      piece = Value(std::move(tensors_[o]));
    } else {
      // The last output passing a parent input through takes it.
      bool last = true;
      for (size_t later = o + 1; later < outputs_.size() && last; ++later) {
        last = outputs_[later].parent_input != out.parent_input;
      }
      Value& v = parent_inputs[out.parent_input];
      piece = last ? std::move(v) : v;
    }
    if (out.append_to < 0) {
      results.push_back(std::move(piece));
      continue;
    }
    // A scan output's accumulator, which only this output reads: it grows
    // in place, as LoopAccumulatorAppend does when it owns the sequence.
    Value acc = std::move(parent_inputs[out.append_to]);
    acc.AppendToSequence(piece.tensor());
    results.push_back(std::move(acc));
  }
  return results;
}

// ---- StaticBodies ----

StaticBodies::~StaticBodies() = default;

std::vector<const ir::Node*> StaticBodies::OutsideAppends(const ir::Graph& sub) {
  std::vector<const ir::Node*> appends;
  for (const ir::Node* node : sub.nodes()) {
    if (node->type() != kAccumulatorAppend || node->op_desc().FindAttr("merge_axis") != nullptr ||
        node->num_inputs() != 2 || node->num_outputs() != 1) {
      continue;
    }
    const ir::OutPort acc = node->input(0);
    if (!acc || !node->input(1) || !IsInputNode(*acc.node) || acc.node->consumers(0).size() != 1) continue;
    const auto& uses = node->consumers(0);
    if (uses.size() != 1 || !IsOutputNode(*uses[0].node)) continue;
    appends.push_back(node);
  }
  return appends;
}

absl::StatusOr<StaticBodies::Stripped> StaticBodies::StripAppends(const ir::Graph& sub) {
  Stripped out;
  out.graph = sub.Clone();
  for (const ir::Node* original : OutsideAppends(sub)) {
    ir::Node* append = out.graph->FindNode(original->name());
    ir::Node* acc = append->input(0).node;
    const ir::InPort use = append->consumers(0)[0];
    const int64_t parent = ParentIndex(*acc, parent_offset_);
    if (out.appends.size() <= static_cast<size_t>(use.index)) out.appends.resize(use.index + 1, -1);
    out.appends[use.index] = parent;
    const ir::OutPort piece = append->input(1);
    GE_RETURN_IF_ERROR(out.graph->ReplaceAllUses(append, 0, piece.node, piece.index));
    out.graph->RemoveNode(append);
    out.graph->RemoveNode(acc);
  }
  return out;
}

bool StaticBodies::Plannable(const ir::Graph& sub, const engine::EngineRegistry& engines) {
  bool has_output = false;
  // Scan outputs' appends are made outside the program (StaticBody::Run).
  absl::flat_hash_set<const ir::Node*> outside;
  for (const ir::Node* append : OutsideAppends(sub)) {
    outside.insert(append);
    outside.insert(append->input(0).node);
  }
  for (const ir::Node* node : sub.nodes()) {
    if (outside.contains(node)) continue;
    const ir::OpDesc& op = node->op_desc();
    if (!op.subgraph_names().empty()) return false;
    for (int o = 0; o < node->num_outputs(); ++o) {
      if (!op.output(o).type.is_tensor()) return false;
    }
    if (IsOutputNode(*node)) {
      has_output = true;
      for (int i = 0; i < node->num_inputs(); ++i) {
        const ir::OutPort p = node->input(i);
        if (!p) return false;
        if (!outside.contains(p.node) && !op.input(i).type.is_tensor()) return false;
      }
      continue;
    }
    if (IsInputNode(*node) || node->type() == ir::kConst) continue;
    // The dynamic-shape partitioner's rules for a node of known shapes.
    if (op.GetAttrOr<bool>(ir::kAttrForceUnknownShape, false) || !op.GetAttrOr<bool>(kAttrSupportAddrRefresh, true) ||
        op.GetAttrOr<bool>(kAttrTilingDepend, false)) {
      return false;
    }
    const engine::Engine* engine = engines.Find(op.GetAttrOr<std::string>(ir::kAttrEngineName, ""));
    if (engine == nullptr || engine->attributes().reference) return false;
    const ops::OpSchema* schema = ops::OpRegistry::Global().Find(node->type());
    if (schema == nullptr || schema->value_dependent_output_shape) return false;
    for (int i : schema->value_inputs) {
      if (i >= node->num_inputs()) continue;
      const ir::OutPort p = node->input(i);
      if (p && p.node->type() != ir::kConst) return false;
    }
  }
  return has_output;
}

bool StaticBodies::FullyTyped(const ir::Graph& graph) {
  for (const ir::Node* node : graph.nodes()) {
    for (int o = 0; o < node->num_outputs(); ++o) {
      if (!IsStaticTensor(node->op_desc().output(o).type)) return false;
    }
  }
  return true;
}

absl::StatusOr<std::unique_ptr<ir::Graph>> StaticBodies::Specialize(const ir::Graph& sub,
                                                                    const std::vector<ir::ValueType>& input_types) {
  std::unique_ptr<ir::Graph> copy = sub.Clone();
  const std::vector<const ir::Node*> inputs = InputNodes(*copy);
  if (inputs.size() != input_types.size()) {
    return InvalidArgument("subgraph '", sub.name(), "' has ", inputs.size(), " input nodes, got ", input_types.size(),
                           " types");
  }
  for (size_t k = 0; k < inputs.size(); ++k) {
    ir::ValueType& type = copy->FindNode(inputs[k]->name())->mutable_op_desc().mutable_output(0).type;
    type = InLayoutOf(type, input_types[k]);
  }
  GE_ASSIGN_OR_RETURN(std::vector<ir::Node*> order, copy->TopologicalOrder());
  std::vector<const ir::ValueType*> types;
  std::vector<const Tensor*> values;
  for (ir::Node* node : order) {
    if (IsInputNode(*node) || node->type() == ir::kConst) continue;
    ir::OpDesc& op = node->mutable_op_desc();
    const int n = node->num_inputs();
    types.assign(n, nullptr);
    values.assign(n, nullptr);
    for (int i = 0; i < n; ++i) {
      const ir::OutPort p = node->input(i);
      if (!p) continue;
      op.mutable_input(i).type = p.node->op_desc().output(p.index).type;
      types[i] = &op.input(i).type;
      if (p.node->type() != ir::kConst) continue;
      if (const ir::AttrValue* value = p.node->op_desc().FindAttr(ir::kAttrValue)) values[i] = value->get<Tensor>();
    }
    if (IsOutputNode(*node)) continue;
    GE_ASSIGN_OR_RETURN(std::vector<ir::ValueType> inferred, ops::InferOutputTypes(op, types, values));
    for (size_t o = 0; o < inferred.size() && o < op.outputs().size(); ++o) {
      ir::ValueType& type = op.mutable_output(static_cast<int>(o)).type;
      type = InLayoutOf(type, inferred[o]);
    }
  }
  return copy;
}

std::unique_ptr<StaticBodies> StaticBodies::Create(const ir::Graph& sub, int64_t parent_offset,
                                                   const engine::EngineRegistry& engines, StaticBody::Loader loader) {
  if (!loader || !Plannable(sub, engines)) return nullptr;
  std::unique_ptr<StaticBodies> bodies(new StaticBodies());
  bodies->sub_ = &sub;
  bodies->parent_offset_ = parent_offset;
  bodies->loader_ = std::move(loader);
  bodies->planned_sub_ = &sub;
  if (!OutsideAppends(sub).empty()) {
    absl::StatusOr<Stripped> stripped = bodies->StripAppends(sub);
    if (!stripped.ok()) {
      GE_LOG_DEBUG("executor", "no static plans of subgraph '{}': {}", sub.name(), stripped.status().message());
      return nullptr;
    }
    bodies->stripped_ = std::move(stripped->graph);
    bodies->appends_ = std::move(stripped->appends);
    bodies->planned_sub_ = bodies->stripped_.get();
  }
  bodies->input_nodes_ = InputNodes(*bodies->planned_sub_);
  for (const ir::Node* node : bodies->input_nodes_) bodies->parent_index_.push_back(ParentIndex(*node, parent_offset));
  return bodies;
}

int StaticBodies::num_plans() const {
  int n = 0;
  for (const Plan& plan : plans_) n += plan.body != nullptr;
  return n;
}

absl::StatusOr<StaticBody*> StaticBodies::Find(const std::vector<Value>& parent_inputs) {
  if (last_ != nullptr && last_->Accepts(parent_inputs)) return last_;
  std::vector<ir::ValueType> signature;
  signature.reserve(parent_index_.size());
  for (int64_t index : parent_index_) {
    if (index < 0 || index >= static_cast<int64_t>(parent_inputs.size())) return nullptr;
    const Value& v = parent_inputs[index];
    if (!v.is_tensor()) return nullptr;
    signature.push_back(ir::ValueType::Tensor(v.tensor().dtype(), v.tensor().shape()));
  }
  for (const Plan& plan : plans_) {
    if (plan.signature != signature) continue;
    // The tensors match; the accumulators must be sequences of their dtype.
    if (plan.body == nullptr || !plan.body->Accepts(parent_inputs)) return nullptr;
    last_ = plan.body.get();
    return last_;
  }
  if (plans_.size() >= kMaxSignatures) return nullptr;
  Plan plan;
  plan.signature = std::move(signature);
  bool as_compiled = FullyTyped(*planned_sub_);
  for (size_t k = 0; k < input_nodes_.size() && as_compiled; ++k) {
    as_compiled = input_nodes_[k]->op_desc().output(0).type == plan.signature[k];
  }
  const ir::Graph* planned = planned_sub_;
  if (!as_compiled) {
    absl::StatusOr<std::unique_ptr<ir::Graph>> specialized = Specialize(*planned_sub_, plan.signature);
    if (!specialized.ok()) {
      GE_LOG_DEBUG("executor", "no static plan of subgraph '{}': {}", sub_->name(), specialized.status().message());
      planned = nullptr;
    } else if (!FullyTyped(**specialized)) {
      planned = nullptr;
    } else {
      plan.graph = *std::move(specialized);
      planned = plan.graph.get();
    }
  }
  if (planned != nullptr) {
    absl::StatusOr<std::unique_ptr<StaticBody>> body = StaticBody::Load(*planned, parent_offset_, loader_, appends_);
    if (body.ok()) {
      plan.body = *std::move(body);
    } else {
      GE_LOG_DEBUG("executor", "no static plan of subgraph '{}': {}", sub_->name(), body.status().message());
    }
  }
  StaticBody* found = plan.body.get();
  plans_.push_back(std::move(plan));
  if (found == nullptr || !found->Accepts(parent_inputs)) return nullptr;
  last_ = found;
  return found;
}

}  // namespace ge::runtime
