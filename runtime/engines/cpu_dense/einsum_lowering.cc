// EinsumLowering: two-operand Einsum products as Transpose / Unsqueeze /
// MatMul / Squeeze / Transpose (einsum_lowering.h).
#include "runtime/engines/cpu_dense/einsum_lowering.h"

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/ops/shape_utils.h"
#include "base/status.h"
#include "runtime/engines/sdk/kernel_util.h"

namespace ge::engine::cpu_dense {
namespace {

constexpr int kNone = 0;  // no label (labels are letters' character codes)

// A matched Einsum: the labels of each group and every label's size (-1 when
// unknown in both inputs).
struct Product {
  std::vector<int> a, b, out;  // the terms
  std::vector<int> batch;      // in the output's order
  int m = kNone, n = kNone, k = kNone;
  std::map<int, int64_t> size;
};

bool Unique(const std::vector<int>& labels) {
  std::vector<int> sorted = labels;
  std::sort(sorted.begin(), sorted.end());
  return std::adjacent_find(sorted.begin(), sorted.end()) == sorted.end();
}

bool Has(const std::vector<int>& labels, int label) {
  return std::find(labels.begin(), labels.end(), label) != labels.end();
}

std::optional<Product> Match(const ir::Node& node, const NodeFilter& can_rewrite) {
  if (node.type() != "Einsum" || !can_rewrite(node) || node.num_inputs() != 2 || node.num_outputs() != 1) {
    return std::nullopt;
  }
  if (!node.input(0) || !node.input(1) || !node.control_inputs().empty() || !node.control_outputs().empty()) {
    return std::nullopt;
  }
  const ir::OpDesc& op = node.op_desc();
  std::vector<int64_t> ranks;
  for (int i = 0; i < 2; ++i) {
    const ir::ValueType& t = op.input(i).type;
    if (!t.is_tensor() || t.dtype() != DataType::kFloat || t.shape().unknown_rank()) return std::nullopt;
    ranks.push_back(t.shape().rank());
  }
  const ir::ValueType& out_type = op.output(0).type;
  if (!out_type.is_tensor() || out_type.dtype() != DataType::kFloat) return std::nullopt;
  auto spec = ops::ParseEinsum(sdk::StringAttr(op, "equation", ""), ranks);
  if (!spec.ok()) return std::nullopt;
  Product p{spec->inputs[0], spec->inputs[1], spec->output, {}, kNone, kNone, kNone, {}};
  for (const std::vector<int>* term : {&p.a, &p.b, &p.out}) {
    if (!Unique(*term)) return std::nullopt;
    for (int label : *term) {
      if (label < 0) return std::nullopt;  // an ellipsis
    }
  }
  std::vector<int> all = p.a;
  for (int label : p.b) {
    if (!Has(all, label)) all.push_back(label);
  }
  for (int label : p.out) {
    if (!Has(all, label)) return std::nullopt;
  }
  for (int label : all) {
    const bool in_a = Has(p.a, label), in_b = Has(p.b, label), in_out = Has(p.out, label);
    int* slot = nullptr;
    if (in_a && in_b) {
      slot = in_out ? nullptr : &p.k;
    } else if (in_out) {
      slot = in_a ? &p.m : &p.n;
    } else {
      return std::nullopt;  // summed out of one input alone
    }
    if (slot != nullptr) {
      if (*slot != kNone) return std::nullopt;  // a second label of the group
      *slot = label;
    }
  }
  for (int label : p.out) {
    if (Has(p.a, label) && Has(p.b, label)) p.batch.push_back(label);
  }
  // Sizes: a known dim wins; two known dims must agree (Einsum broadcasts
  // no letter, host_cpu rejects a 1 against another size).
  for (int i = 0; i < 2; ++i) {
    const std::vector<int>& term = i == 0 ? p.a : p.b;
    const Shape& shape = op.input(i).type.shape();
    for (size_t d = 0; d < term.size(); ++d) {
      const int64_t dim = shape.dim(static_cast<int64_t>(d));
      auto [it, inserted] = p.size.emplace(term[d], dim);
      if (inserted || dim < 0) continue;
      if (it->second < 0) {
        it->second = dim;
      } else if (it->second != dim) {
        return std::nullopt;
      }
    }
  }
  return p;
}

// The permutation taking `from`'s labels to `to`'s order (both hold the same
// labels).
std::vector<int64_t> Permutation(const std::vector<int>& from, const std::vector<int>& to) {
  std::vector<int64_t> perm;
  for (int label : to) perm.push_back(std::find(from.begin(), from.end(), label) - from.begin());
  return perm;
}

bool Identity(const std::vector<int64_t>& perm) {
  for (size_t i = 0; i < perm.size(); ++i) {
    if (perm[i] != static_cast<int64_t>(i)) return false;
  }
  return true;
}

// `labels` followed by `extra`, skipping kNone.
std::vector<int> Concat(std::vector<int> labels, std::initializer_list<int> extra) {
  for (int label : extra) {
    if (label != kNone) labels.push_back(label);
  }
  return labels;
}

class Builder {
 public:
  Builder(ir::Graph& graph, const Product& p, std::string base) : graph_(graph), p_(p), base_(std::move(base)) {}

  ir::ValueType Type(const std::vector<int>& labels) const {
    Shape shape;
    for (int label : labels) shape.push_back(label == kNone ? 1 : p_.size.at(label));
    return ir::ValueType::Tensor(DataType::kFloat, shape);
  }

  // Adds a node of `type` on `inputs` with one output of `out_type`.
  absl::StatusOr<ir::OutPort> Add(const std::string& type, const std::vector<ir::OutPort>& inputs,
                                  const ir::ValueType& out_type, ir::AttrMap attrs = {}) {
    ir::OpDesc op(graph_.UniqueNodeName(base_ + "_" + type), type);
    for (const ir::OutPort& in : inputs) op.AddInput({"", in.node->op_desc().output(in.index).type});
    op.AddOutput({"", out_type});
    for (auto& [key, value] : attrs) op.SetAttr(key, std::move(value));
    GE_ASSIGN_OR_RETURN(ir::Node * node, graph_.AddNode(std::move(op)));
    for (size_t i = 0; i < inputs.size(); ++i) {
      GE_RETURN_IF_ERROR(graph_.AddEdge(inputs[i].node, inputs[i].index, node, static_cast<int>(i)));
    }
    last_ = node;
    return ir::OutPort{node, 0};
  }

  absl::StatusOr<ir::OutPort> Transpose(ir::OutPort in, const std::vector<int>& from, const std::vector<int>& to) {
    const std::vector<int64_t> perm = Permutation(from, to);
    if (Identity(perm)) return in;
    return Add("Transpose", {in}, Type(to), {{"perm", ir::AttrValue(perm)}});
  }

  // Squeeze or Unsqueeze `axes` of `in`, giving `labels` (kNone: a dim of 1).
  absl::StatusOr<ir::OutPort> Axes(const std::string& type, ir::OutPort in, const std::vector<int64_t>& axes,
                                   const std::vector<int>& labels) {
    if (axes.empty()) return in;
    GE_ASSIGN_OR_RETURN(ir::Node * c, AddConst(graph_, base_ + "_axes",
                                               Tensor::FromVector<int64_t>(axes, Shape{int64_t(axes.size())})));
    return Add(type, {in, ir::OutPort{c, 0}}, Type(labels));
  }

  ir::Node* last() const { return last_; }

 private:
  ir::Graph& graph_;
  const Product& p_;
  std::string base_;
  ir::Node* last_ = nullptr;
};

// The number of Transposes a lowering with these roles needs.
int Transposes(const Product& p, bool swap) {
  const std::vector<int>& left = swap ? p.b : p.a;
  const std::vector<int>& right = swap ? p.a : p.b;
  const int m = swap ? p.n : p.m, n = swap ? p.m : p.n;
  int count = 0;
  if (!Identity(Permutation(left, Concat(p.batch, {m, p.k})))) ++count;
  if (!Identity(Permutation(right, Concat(p.batch, {p.k, n})))) ++count;
  if (!Identity(Permutation(Concat(p.batch, {m, n}), p.out))) ++count;
  return count;
}

absl::Status Rewrite(ir::Graph& graph, ir::Node* einsum, const Product& p) {
  const bool swap = Transposes(p, true) < Transposes(p, false);
  const std::vector<int>& left_term = swap ? p.b : p.a;
  const std::vector<int>& right_term = swap ? p.a : p.b;
  const int m = swap ? p.n : p.m, n = swap ? p.m : p.n;
  const std::string name = einsum->name();
  Builder b(graph, p, name);
  const int64_t nb = static_cast<int64_t>(p.batch.size());
  // Left: [batch..., M, K]; right: [batch..., K, N]; a missing label is a dim of 1.
  GE_ASSIGN_OR_RETURN(ir::OutPort left, b.Transpose(einsum->input(swap ? 1 : 0), left_term, Concat(p.batch, {m, p.k})));
  std::vector<int64_t> axes;
  if (m == kNone) axes.push_back(nb);
  if (p.k == kNone) axes.push_back(nb + 1);
  std::vector<int> left_labels = p.batch;
  left_labels.push_back(m);
  left_labels.push_back(p.k);
  GE_ASSIGN_OR_RETURN(left, b.Axes("Unsqueeze", left, axes, left_labels));
  GE_ASSIGN_OR_RETURN(ir::OutPort right,
                      b.Transpose(einsum->input(swap ? 0 : 1), right_term, Concat(p.batch, {p.k, n})));
  axes.clear();
  if (p.k == kNone) axes.push_back(nb);
  if (n == kNone) axes.push_back(nb + 1);
  std::vector<int> right_labels = p.batch;
  right_labels.push_back(p.k);
  right_labels.push_back(n);
  GE_ASSIGN_OR_RETURN(right, b.Axes("Unsqueeze", right, axes, right_labels));
  std::vector<int> product_labels = p.batch;
  product_labels.push_back(m);
  product_labels.push_back(n);
  GE_ASSIGN_OR_RETURN(ir::OutPort y, b.Add("MatMul", {left, right}, b.Type(product_labels)));
  axes.clear();
  if (m == kNone) axes.push_back(nb);
  if (n == kNone) axes.push_back(nb + 1);
  const std::vector<int> squeezed = Concat(p.batch, {m, n});
  GE_ASSIGN_OR_RETURN(y, b.Axes("Squeeze", y, axes, squeezed));
  GE_ASSIGN_OR_RETURN(y, b.Transpose(y, squeezed, p.out));
  // The last node gives the Einsum's value under the Einsum's declared type.
  y.node->mutable_op_desc().mutable_output(y.index).type = einsum->op_desc().output(0).type;
  GE_RETURN_IF_ERROR(graph.ReplaceAllUses(einsum, 0, y.node, y.index));
  graph.RemoveNode(einsum);
  return graph.RenameNode(y.node, name);
}

}  // namespace

absl::StatusOr<bool> LowerEinsums(ir::Graph& graph, const NodeFilter& can_rewrite) {
  std::vector<std::string> names;
  graph.ForEachNode([&](const ir::Node* n) {
    if (n->type() == "Einsum") names.push_back(n->name());
  });
  bool changed = false;
  for (const std::string& name : names) {
    ir::Node* einsum = graph.FindNode(name);
    if (einsum == nullptr) continue;
    const std::optional<Product> p = Match(*einsum, can_rewrite);
    if (!p) continue;
    GE_RETURN_IF_ERROR(Rewrite(graph, einsum, *p));
    changed = true;
  }
  return changed;
}

}  // namespace ge::engine::cpu_dense
