// ReduceToPool: spatial reductions of convolution outputs as global pooling
// (reduce_to_pool.h).
#include "runtime/engines/cpu_dense/reduce_to_pool.h"

#include <algorithm>
#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "runtime/engines/sdk/kernel_util.h"

namespace ge::engine::cpu_dense {
namespace {

// Producers whose output the layout pass may block.
constexpr std::array<std::string_view, 6> kWindowOps = {"Conv",        "ConvTranspose",      "MaxPool",
                                                        "AveragePool", "BatchNormalization", "InstanceNormalization"};
// Element-wise nodes looked through on the way up.
constexpr std::array<std::string_view, 17> kElementwise = {
    "Relu",     "LeakyRelu", "Clip", "Sigmoid", "HardSigmoid", "HardSwish", "Tanh", "Elu", "Selu",
    "Softplus", "Identity",  "Add",  "Sub",     "Mul",         "Div",       "Max",  "Min"};

bool In(std::string_view t, const auto& set) { return std::find(set.begin(), set.end(), t) != set.end(); }

// Whether `port`'s value comes from a window op within `hops` element-wise
// nodes.
bool FromWindowOp(const ir::OutPort& port, int hops) {
  if (port.node == nullptr) return false;
  const std::string& t = port.node->type();
  if (In(t, kWindowOps)) return true;
  if (hops == 0 || !In(t, kElementwise)) return false;
  for (int i = 0; i < port.node->num_inputs(); ++i) {
    if (FromWindowOp(port.node->input(i), hops - 1)) return true;
  }
  return false;
}

// What replaces a reduction: a global pooling ("GlobalMaxPool" or
// "GlobalAveragePool") over every spatial axis, or a windowed one
// ("MaxPool" or "AveragePool") whose window spans the reduced axes.
struct Replacement {
  std::string pool_type;
  bool keepdims = true;
  std::vector<int64_t> axes;    // the reduced axes, ascending
  std::vector<int64_t> kernel;  // empty for a global pooling
};

std::optional<Replacement> Match(const ir::Node& reduce, const NodeFilter& can_rewrite) {
  const std::string& t = reduce.type();
  if ((t != "ReduceMax" && t != "ReduceMean") || !can_rewrite(reduce) || reduce.num_outputs() != 1) {
    return std::nullopt;
  }
  if (reduce.num_inputs() < 1 || !reduce.input(0) || !reduce.control_inputs().empty()) return std::nullopt;
  const ir::OpDesc& op = reduce.op_desc();
  const ir::ValueType& in = op.input(0).type;
  if (!in.is_tensor() || in.dtype() != DataType::kFloat || in.shape().unknown_rank()) return std::nullopt;
  const Shape& shape = in.shape();
  const int64_t rank = shape.rank();
  if (rank < 3 || rank > 5) return std::nullopt;
  std::vector<int64_t> axes;
  if (reduce.num_inputs() > 1 && reduce.input(1)) {
    const Tensor* given = ConstInput(reduce, 1);
    if (given == nullptr) return std::nullopt;
    axes = given->ToInt64Vector();
  } else {
    axes = op.GetAttrOr<std::vector<int64_t>>("axes", {});
  }
  for (int64_t& a : axes) a = a < 0 ? a + rank : a;
  std::sort(axes.begin(), axes.end());
  if (axes.empty() || std::adjacent_find(axes.begin(), axes.end()) != axes.end() || axes.front() < 2 ||
      axes.back() >= rank) {
    return std::nullopt;  // the batch or the channels, a repeated axis, or none (every axis)
  }
  if (!FromWindowOp(reduce.input(0), 3)) return std::nullopt;
  Replacement r;
  r.keepdims = sdk::IntAttr(op, "keepdims", 1) != 0;
  r.axes = axes;
  const bool max = t == "ReduceMax";
  if (static_cast<int64_t>(axes.size()) == rank - 2) {
    r.pool_type = max ? "GlobalMaxPool" : "GlobalAveragePool";
    return r;
  }
  // Some spatial axes: a window of their extents (which must be known),
  // 1 along the others.
  r.pool_type = max ? "MaxPool" : "AveragePool";
  for (int64_t a = 2; a < rank; ++a) {
    const bool reduced = std::binary_search(axes.begin(), axes.end(), a);
    if (reduced && shape.dim(a) <= 0) return std::nullopt;
    r.kernel.push_back(reduced ? shape.dim(a) : 1);
  }
  return r;
}

absl::Status Rewrite(ir::Graph& graph, ir::Node* reduce, const Replacement& r) {
  const std::string name = reduce->name();
  const ir::OutPort src = reduce->input(0);
  const ir::ValueType& in = reduce->op_desc().input(0).type;
  Shape pooled = in.shape();
  for (int64_t a : r.axes) pooled.set_dim(a, 1);
  const ir::ValueType out_type = reduce->op_desc().output(0).type;

  ir::OpDesc pool_op(graph.UniqueNodeName(name + "_" + r.pool_type), r.pool_type);
  pool_op.AddInput({"", in});
  pool_op.AddOutput({"", r.keepdims ? out_type : ir::ValueType::Tensor(DataType::kFloat, pooled)});
  if (!r.kernel.empty()) pool_op.SetAttr("kernel_shape", ir::AttrValue(r.kernel));
  GE_ASSIGN_OR_RETURN(ir::Node * pool, graph.AddNode(std::move(pool_op)));
  GE_RETURN_IF_ERROR(graph.AddEdge(src.node, src.index, pool, 0));
  ir::Node* last = pool;
  if (!r.keepdims && r.kernel.empty()) {
    // [N, C, 1...] -> [N, C]
    ir::OpDesc flat(graph.UniqueNodeName(name + "_Flatten"), "Flatten");
    flat.AddInput({"", pool->op_desc().output(0).type});
    flat.AddOutput({"", out_type});
    flat.SetAttr("axis", ir::AttrValue(int64_t{1}));
    GE_ASSIGN_OR_RETURN(last, graph.AddNode(std::move(flat)));
    GE_RETURN_IF_ERROR(graph.AddEdge(pool, 0, last, 0));
  } else if (!r.keepdims) {
    // the reduced axes of ones go
    GE_ASSIGN_OR_RETURN(ir::Node * axes, AddConst(graph, name + "_axes",
                                                  Tensor::FromVector<int64_t>(r.axes, Shape{int64_t(r.axes.size())})));
    ir::OpDesc squeeze(graph.UniqueNodeName(name + "_Squeeze"), "Squeeze");
    squeeze.AddInput({"", pool->op_desc().output(0).type});
    squeeze.AddInput({"", axes->op_desc().output(0).type});
    squeeze.AddOutput({"", out_type});
    GE_ASSIGN_OR_RETURN(last, graph.AddNode(std::move(squeeze)));
    GE_RETURN_IF_ERROR(graph.AddEdge(pool, 0, last, 0));
    GE_RETURN_IF_ERROR(graph.AddEdge(axes, 0, last, 1));
  }
  GE_RETURN_IF_ERROR(graph.ReplaceAllUses(reduce, 0, last, 0));
  graph.RemoveNode(reduce);
  return graph.RenameNode(last, name);
}

}  // namespace

absl::StatusOr<bool> ReduceToGlobalPool(ir::Graph& graph, const NodeFilter& can_rewrite) {
  std::vector<std::string> names;
  graph.ForEachNode([&](const ir::Node* n) {
    if (n->type() == "ReduceMax" || n->type() == "ReduceMean") names.push_back(n->name());
  });
  bool changed = false;
  for (const std::string& name : names) {
    ir::Node* reduce = graph.FindNode(name);
    if (reduce == nullptr) continue;
    const std::optional<Replacement> match = Match(*reduce, can_rewrite);
    if (!match) continue;
    GE_RETURN_IF_ERROR(Rewrite(graph, reduce, *match));
    changed = true;
  }
  return changed;
}

}  // namespace ge::engine::cpu_dense
