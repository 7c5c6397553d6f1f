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

// The pooling that replaces `reduce` ("GlobalMaxPool" or
// "GlobalAveragePool") and its keepdims, or nothing.
std::optional<std::pair<std::string, bool>> Match(const ir::Node& reduce, const NodeFilter& can_rewrite) {
  const std::string& t = reduce.type();
  if ((t != "ReduceMax" && t != "ReduceMean") || !can_rewrite(reduce) || reduce.num_outputs() != 1) {
    return std::nullopt;
  }
  if (reduce.num_inputs() < 1 || !reduce.input(0) || !reduce.control_inputs().empty()) return std::nullopt;
  const ir::OpDesc& op = reduce.op_desc();
  const ir::ValueType& in = op.input(0).type;
  if (!in.is_tensor() || in.dtype() != DataType::kFloat || in.shape().unknown_rank()) return std::nullopt;
  const int64_t rank = in.shape().rank();
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
  std::vector<int64_t> spatial;
  for (int64_t a = 2; a < rank; ++a) spatial.push_back(a);
  if (axes != spatial) return std::nullopt;
  if (!FromWindowOp(reduce.input(0), 3)) return std::nullopt;
  const bool keepdims = sdk::IntAttr(op, "keepdims", 1) != 0;
  return std::make_pair(std::string(t == "ReduceMax" ? "GlobalMaxPool" : "GlobalAveragePool"), keepdims);
}

absl::Status Rewrite(ir::Graph& graph, ir::Node* reduce, const std::string& pool_type, bool keepdims) {
  const std::string name = reduce->name();
  const ir::OutPort src = reduce->input(0);
  const ir::ValueType& in = reduce->op_desc().input(0).type;
  Shape pooled = in.shape();
  for (int64_t a = 2; a < pooled.rank(); ++a) pooled.set_dim(a, 1);
  const ir::ValueType out_type = reduce->op_desc().output(0).type;

  ir::OpDesc pool_op(graph.UniqueNodeName(name + "_" + pool_type), pool_type);
  pool_op.AddInput({"", in});
  pool_op.AddOutput({"", keepdims ? out_type : ir::ValueType::Tensor(DataType::kFloat, pooled)});
  GE_ASSIGN_OR_RETURN(ir::Node * pool, graph.AddNode(std::move(pool_op)));
  GE_RETURN_IF_ERROR(graph.AddEdge(src.node, src.index, pool, 0));
  ir::Node* last = pool;
  if (!keepdims) {
    ir::OpDesc flat(graph.UniqueNodeName(name + "_Flatten"), "Flatten");
    flat.AddInput({"", pool->op_desc().output(0).type});
    flat.AddOutput({"", out_type});
    flat.SetAttr("axis", ir::AttrValue(int64_t{1}));
    GE_ASSIGN_OR_RETURN(last, graph.AddNode(std::move(flat)));
    GE_RETURN_IF_ERROR(graph.AddEdge(pool, 0, last, 0));
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
    const auto match = Match(*reduce, can_rewrite);
    if (!match) continue;
    GE_RETURN_IF_ERROR(Rewrite(graph, reduce, match->first, match->second));
    changed = true;
  }
  return changed;
}

}  // namespace ge::engine::cpu_dense
