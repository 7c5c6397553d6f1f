// ConstantFoldingPass: Shape/Size of static tensors and nodes over Consts
// become Consts, computed by the reference engine's kernels.
#include "compiler/passes/constant_folding_pass.h"

#include <algorithm>
#include <optional>

#include "absl/container/flat_hash_set.h"
#include "base/ir/op_types.h"
#include "base/logging.h"
#include "base/ops/op_registry.h"
#include "base/status.h"
#include "base/thread_pool.h"
#include "compiler/passes/variable_util.h"
#include "runtime/engines/api/kernel.h"

namespace ge::compiler {
namespace {

// What a kernel sees when it runs at compile time: Const values in, host
// tensors out.
class FoldingContext final : public engine::ExecuteContext {
 public:
  FoldingContext(std::vector<Value> inputs, std::vector<ir::ValueType> output_types, ThreadPool* pool,
                 size_t workspace_bytes)
      : inputs_(std::move(inputs)),
        output_types_(std::move(output_types)),
        outputs_(output_types_.size()),
        pool_(pool),
        workspace_(workspace_bytes) {}

  int num_inputs() const override { return static_cast<int>(inputs_.size()); }
  int num_outputs() const override { return static_cast<int>(output_types_.size()); }
  const Value& input_value(int i) const override { return inputs_[i]; }
  const ir::ValueType& output_type(int i) const override { return output_types_[i]; }
  using engine::ExecuteContext::Output;
  absl::StatusOr<Tensor> Output(int i, const Shape& shape) override {
    GE_ASSIGN_OR_RETURN(Tensor t, Tensor::Allocate(output_types_[i].dtype(), shape));
    outputs_[i] = Value(t);
    return t;
  }
  absl::Status SetOutputValue(int i, Value value) override {
    outputs_[i] = std::move(value);
    return absl::OkStatus();
  }
  void* workspace() override { return workspace_.data(); }
  ThreadPool* thread_pool() override { return pool_; }
  int num_threads() const override { return 1; }

  std::vector<Value>& outputs() { return outputs_; }

 private:
  std::vector<Value> inputs_;
  std::vector<ir::ValueType> output_types_;
  std::vector<Value> outputs_;
  ThreadPool* pool_;
  std::vector<char> workspace_;
};

bool IsConst(const ir::Node* node) { return node != nullptr && node->type() == ir::kConst; }

// The value of Shape or Size over a tensor of fully known shape.
std::optional<Tensor> FoldShapeOp(const ir::Node& node) {
  if (node.num_inputs() != 1 || !node.input(0)) return std::nullopt;
  const ir::ValueType& in = node.op_desc().input(0).type;
  if (!in.is_tensor() || !in.shape().IsFullyKnown()) return std::nullopt;
  const auto& dims = in.shape().dims();
  if (node.type() == "Size") return Tensor::Scalar<int64_t>(in.shape().NumElementsUnchecked());
  const auto rank = static_cast<int64_t>(dims.size());
  auto clamp = [rank](int64_t axis) { return std::clamp(axis < 0 ? axis + rank : axis, int64_t{0}, rank); };
  const int64_t start = clamp(node.op_desc().GetAttrOr<int64_t>("start", 0));
  const int64_t end = clamp(node.op_desc().GetAttrOr<int64_t>("end", rank));
  std::vector<int64_t> values;
  for (int64_t d = start; d < end; ++d) values.push_back(dims[d]);
  const auto n = static_cast<int64_t>(values.size());
  return Tensor::FromVector<int64_t>(values, Shape{n});
}

// Whether `node` is of a kind that may be evaluated from Const inputs.
bool MayEvaluate(const ir::Node& node) {
  const ir::OpDesc& op = node.op_desc();
  if (node.num_inputs() == 0 || !node.control_inputs().empty() || !op.subgraph_names().empty()) return false;
  const ops::OpSchema* schema = ops::OpRegistry::Global().Find(op.type(), "");
  if (schema == nullptr || schema->stateful || schema->domain != "") return false;
  if (op.type() == ir::kConst || op.type() == ir::kNetOutput || op.type() == ir::kData) return false;
  for (const ir::IoDesc& out : op.outputs()) {
    if (!out.type.is_tensor()) return false;
    if (!out.type.shape().IsFullyKnown() && !schema->value_dependent_output_shape) return false;
  }
  for (int i = 0; i < node.num_inputs(); ++i) {
    if (node.input(i) && !IsConst(node.input(i).node)) return false;
  }
  return true;
}

size_t TensorBytes(const ir::ValueType& type) {
  if (!type.is_tensor() || !type.shape().IsFullyKnown()) return 0;
  auto bytes = ByteSizeOf(type.dtype(), type.shape().NumElementsUnchecked());
  return bytes.ok() ? *bytes : 0;
}

class Folder {
 public:
  Folder(const engine::KernelFactory* kernels, ThreadPool* pool) : kernels_(kernels), pool_(pool) {}

  absl::StatusOr<bool> FoldGraph(ir::Graph& graph) {
    GE_ASSIGN_OR_RETURN(std::vector<ir::Node*> order, graph.TopologicalOrder());
    bool changed = false;
    std::vector<ir::Node*> inputs_of_folded;
    for (ir::Node* node : order) {
      GE_RETURN_IF_ERROR(Reinfer(*node));
      GE_ASSIGN_OR_RETURN(std::optional<std::vector<Tensor>> values, Evaluate(*node));
      if (!values) continue;
      for (const ir::OutPort& in : node->inputs()) {
        if (IsConst(in.node)) inputs_of_folded.push_back(in.node);
      }
      GE_RETURN_IF_ERROR(Replace(graph, *node, std::move(*values)));
      changed = true;
    }
    // Consts that fed only folded nodes are dead now.
    absl::flat_hash_set<ir::Node*> removed;
    for (ir::Node* c : inputs_of_folded) {
      if (removed.contains(c) || c->HasConsumers() || !c->control_outputs().empty()) continue;
      removed.insert(c);
      refined_.erase(c);  // a later node may reuse the address
      graph.RemoveNode(c);
    }
    return changed;
  }

  int folded() const { return folded_; }

 private:
  // Infers `node` again when a producer was folded or refined.
  absl::Status Reinfer(ir::Node& node) {
    bool stale = false;
    for (const ir::OutPort& in : node.inputs()) stale = stale || (in && refined_.contains(in.node));
    if (!stale) return absl::OkStatus();
    std::vector<ir::ValueType> before;
    for (const ir::IoDesc& out : node.op_desc().outputs()) before.push_back(out.type);
    GE_RETURN_IF_ERROR(ops::InferNode(node));
    for (int i = 0; i < node.num_outputs(); ++i) {
      if (node.op_desc().output(i).type != before[i]) {
        refined_.insert(&node);
        break;
      }
    }
    return absl::OkStatus();
  }

  // The outputs of `node` when it folds, else nullopt.
  absl::StatusOr<std::optional<std::vector<Tensor>>> Evaluate(const ir::Node& node) {
    const std::string& type = node.type();
    if ((type == "Shape" || type == "Size") && !IsConst(node.input(0).node)) {
      std::optional<Tensor> value = FoldShapeOp(node);
      if (!value) return std::nullopt;
      return std::vector<Tensor>{std::move(*value)};
    }
    if (kernels_ == nullptr || !MayEvaluate(node)) return std::nullopt;
    size_t in_bytes = 0, out_bytes = 0;
    int64_t in_elements = 0;  // of the largest input
    std::vector<Value> inputs;
    for (int i = 0; i < node.num_inputs(); ++i) {
      if (!node.input(i)) {
        inputs.emplace_back();
        continue;
      }
      std::optional<Tensor> value = node.input(i).node->op_desc().GetAttr<Tensor>(ir::kAttrValue);
      if (!value) return std::nullopt;
      in_bytes += value->SizeInBytes();
      in_elements = std::max(in_elements, value->NumElements());
      inputs.emplace_back(std::move(*value));
    }
    std::vector<ir::ValueType> output_types;
    bool no_more_elements = true;  // every output has at most the largest input's elements
    for (const ir::IoDesc& out : node.op_desc().outputs()) {
      out_bytes += TensorBytes(out.type);
      output_types.push_back(out.type);
      no_more_elements = no_more_elements && out.type.is_tensor() && out.type.shape().IsFullyKnown() &&
                         out.type.shape().NumElementsUnchecked() <= in_elements;
    }
    auto too_large = [&] { return !no_more_elements && out_bytes > in_bytes + ConstantFoldingPass::kMaxGrowthBytes; };
    if (too_large()) return std::nullopt;

    absl::StatusOr<std::vector<Tensor>> outputs = Run(node, std::move(inputs), std::move(output_types));
    if (!outputs.ok()) {
      GE_LOG_DEBUG("compiler", "ConstantFoldingPass: leaving node '{}' ({}): {}", node.name(), type,
                   StdView(outputs.status().message()));
      return std::nullopt;
    }
    out_bytes = 0;
    no_more_elements = true;
    for (const Tensor& t : *outputs) {
      out_bytes += t.SizeInBytes();
      no_more_elements = no_more_elements && t.NumElements() <= in_elements;
    }
    if (too_large()) return std::nullopt;
    return std::optional<std::vector<Tensor>>(std::move(*outputs));
  }

  absl::StatusOr<std::vector<Tensor>> Run(const ir::Node& node, std::vector<Value> inputs,
                                          std::vector<ir::ValueType> output_types) {
    const ir::OpDesc& op = node.op_desc();
    GE_ASSIGN_OR_RETURN(std::unique_ptr<engine::Kernel> kernel, kernels_->CreateKernel(op));
    engine::PrepareContext prepare;
    prepare.op = &op;
    for (const Value& v : inputs) {
      prepare.input_types.push_back(v.is_tensor() ? ir::ValueType::Tensor(v.tensor().dtype(), v.tensor().shape())
                                                  : ir::ValueType());
      prepare.const_inputs.push_back(v.is_tensor() ? &v.tensor() : nullptr);
    }
    prepare.output_types = output_types;
    GE_RETURN_IF_ERROR(kernel->Prepare(prepare));
    FoldingContext ctx(std::move(inputs), std::move(output_types), pool_, prepare.workspace_bytes);
    GE_RETURN_IF_ERROR(kernel->Compute(ctx));
    std::vector<Tensor> outputs;
    for (int i = 0; i < ctx.num_outputs(); ++i) {
      Value& v = ctx.outputs()[i];
      if (!v.is_tensor() || !v.tensor().defined()) {
        return Internal("node '", node.name(), "': output ", i, " was not produced");
      }
      outputs.push_back(std::move(v.mutable_tensor()));
    }
    return outputs;
  }

  // Replaces `node` by one Const per output; a single-output node's Const
  // keeps its name.
  absl::Status Replace(ir::Graph& graph, ir::Node& node, std::vector<Tensor> values) {
    const std::string name = node.name();
    std::vector<ir::Node*> consts;
    for (int i = 0; i < node.num_outputs(); ++i) {
      Tensor& value = values[i];
      ir::OpDesc op(graph.UniqueNodeName(StrCat(name, "_folded")), std::string(ir::kConst));
      op.AddOutput(ir::IoDesc{node.op_desc().output(i).name, ir::TensorDesc(value.dtype(), value.shape())});
      op.SetAttr(ir::kAttrValue, std::move(value));
      GE_ASSIGN_OR_RETURN(ir::Node * c, graph.AddNode(std::move(op)));
      GE_RETURN_IF_ERROR(graph.ReplaceAllUses(&node, i, c, 0));
      for (ir::Node* out : std::vector<ir::Node*>(node.control_outputs())) GE_RETURN_IF_ERROR(graph.AddControlEdge(c, out));
      refined_.insert(c);
      consts.push_back(c);
    }
    refined_.erase(&node);
    graph.RemoveNode(&node);
    if (consts.size() == 1) GE_RETURN_IF_ERROR(graph.RenameNode(consts[0], name));
    ++folded_;
    return absl::OkStatus();
  }

  const engine::KernelFactory* kernels_;
  ThreadPool* pool_;
  absl::flat_hash_set<const ir::Node*> refined_;
  int folded_ = 0;
};

}  // namespace

absl::StatusOr<bool> ConstantFoldingPass::Run(ir::Graph& root) {
  const engine::Engine* host = engines_.Reference();
  ThreadPool pool(0, "constant-folding");
  Folder folder(host != nullptr ? &host->kernel_factory() : nullptr, &pool);
  bool changed = false;
  for (ir::Graph* graph : GraphAndSubgraphs(root)) {
    GE_ASSIGN_OR_RETURN(bool graph_changed, folder.FoldGraph(*graph));
    changed = changed || graph_changed;
  }
  if (changed) GE_LOG_DEBUG("compiler", "ConstantFoldingPass: folded {} nodes", folder.folded());
  return changed;
}

}  // namespace ge::compiler
