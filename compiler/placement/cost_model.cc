// Placement cost estimates: node and boundary costs from engines' tables.
#include "compiler/placement/cost_model.h"

namespace ge::compiler {

double OutputElements(const ir::Node& node, int index) {
  const ir::ValueType& type = node.op_desc().output(index).type;
  if (!type.is_tensor() || type.shape().unknown_rank()) return 1;
  double n = 1;
  for (int64_t d : type.shape().dims()) n *= d > 0 ? static_cast<double>(d) : (d == 0 ? 0.0 : 1.0);
  return n;
}

bool EstimateNode(const ir::Node& node, const engine::CostTable& table, double& ns) {
  const engine::OpCost* cost = table.Find(node.type());
  if (cost == nullptr) return false;
  double elements = 0;
  for (int i = 0; i < node.num_outputs(); ++i) elements += OutputElements(node, i);
  ns = cost->Estimate(elements);
  return true;
}

double EstimateBoundary(const engine::CostTable& a, const engine::CostTable& b, double elements) {
  if (&a == &b) return 0;
  return a.boundary.Estimate(elements) + b.boundary.Estimate(elements);
}

}  // namespace ge::compiler
