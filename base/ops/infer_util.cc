// Helpers shared by the op family files: dtype lists, registration, value
// inputs, outputs and subgraph lookups.
#include "base/ops/infer_util.h"

#include <algorithm>

#include "base/ir/op_types.h"
#include "base/status.h"

namespace ge::ops {

using DT = DataType;

const std::vector<DataType>& FloatTypes() {
  static const auto* v = new std::vector<DataType>{DT::kFloat16, DT::kFloat, DT::kDouble, DT::kBFloat16};
  return *v;
}

const std::vector<DataType>& SignedNumericTypes() {
  static const auto* v = new std::vector<DataType>(
      Union(FloatTypes(), {DT::kInt8, DT::kInt16, DT::kInt32, DT::kInt64}));
  return *v;
}

const std::vector<DataType>& UnsignedTypes() {
  static const auto* v = new std::vector<DataType>{DT::kUint8, DT::kUint16, DT::kUint32, DT::kUint64};
  return *v;
}

const std::vector<DataType>& IntegerTypes() {
  static const auto* v = new std::vector<DataType>(
      Union({DT::kInt8, DT::kInt16, DT::kInt32, DT::kInt64}, UnsignedTypes()));
  return *v;
}

const std::vector<DataType>& NumericTypes() {
  static const auto* v = new std::vector<DataType>(Union(FloatTypes(), IntegerTypes()));
  return *v;
}

const std::vector<DataType>& AllTensorTypes() {
  static const auto* v = new std::vector<DataType>(Union(NumericTypes(), {DT::kBool, DT::kString}));
  return *v;
}

const std::vector<DataType>& IndexTypes() {
  static const auto* v = new std::vector<DataType>{DT::kInt32, DT::kInt64};
  return *v;
}

std::vector<DataType> Types(std::initializer_list<DataType> dtypes) { return dtypes; }

std::vector<DataType> Union(const std::vector<DataType>& a, const std::vector<DataType>& b) {
  std::vector<DataType> out = a;
  for (DataType d : b) {
    if (std::find(out.begin(), out.end(), d) == out.end()) out.push_back(d);
  }
  return out;
}

void MustRegister(OpRegistry& registry, OpSchemaBuilder& builder) {
  absl::Status status = registry.Register(std::move(builder).Build());
  GE_CHECK_MSG(status.ok(), std::string(status.message()).c_str());
}

std::optional<std::vector<int64_t>> IntsValue(const InferenceContext& ctx, int i) {
  const Tensor* value = ctx.input_value(i);
  if (value == nullptr || !value->defined()) return std::nullopt;
  return value->ToInt64Vector();
}

int64_t Length1D(const InferenceContext& ctx, int i) {
  if (const Tensor* value = ctx.input_value(i); value != nullptr && value->defined()) {
    return value->NumElements();
  }
  if (!ctx.has_input(i)) return kUnknownDim;
  const Shape& shape = ctx.input_tensor(i).shape;
  return shape.rank() == 1 ? shape.dim(0) : kUnknownDim;
}

Shape InputShape(const InferenceContext& ctx, int i) {
  return ctx.has_input(i) ? ctx.input_tensor(i).shape : Shape::UnknownRank();
}

void SetOutput(InferenceContext& ctx, int i, DataType dtype, Shape shape) {
  if (i < ctx.num_outputs()) ctx.set_output(i, dtype, std::move(shape));
}

void SetOutput(InferenceContext& ctx, int i, ir::ValueType type) {
  if (i < ctx.num_outputs()) ctx.set_output(i, std::move(type));
}

absl::Status SameAsInput0(InferenceContext& ctx) {
  SetOutput(ctx, 0, ctx.input_type(0));
  return absl::OkStatus();
}

std::string SubgraphName(const ir::OpDesc& op, size_t slot, std::string_view attr) {
  if (auto ref = op.GetAttr<ir::GraphRef>(attr)) return ref->name;
  return slot < op.subgraph_names().size() ? op.subgraph_names()[slot] : std::string();
}

std::vector<std::string> SubgraphNames(const ir::OpDesc& op, std::string_view attr) {
  if (auto refs = op.GetAttr<std::vector<ir::GraphRef>>(attr)) {
    std::vector<std::string> names;
    for (const ir::GraphRef& r : *refs) names.push_back(r.name);
    return names;
  }
  return op.subgraph_names();
}

const ir::Node* SubgraphOutputNode(const ir::Graph& graph) {
  const ir::Node* found = nullptr;
  graph.ForEachNode([&](const ir::Node* n) {
    if (found == nullptr && (n->type() == ir::kNetOutput || n->type() == ir::kInnerNetOutput)) found = n;
  });
  return found;
}

absl::StatusOr<std::vector<ir::ValueType>> SubgraphOutputTypes(const ir::Graph& graph) {
  const ir::Node* out = SubgraphOutputNode(graph);
  if (out == nullptr) return InvalidArgument("subgraph '", graph.name(), "' has no NetOutput");
  std::vector<ir::ValueType> types;
  for (int i = 0; i < out->num_inputs(); ++i) {
    const ir::OutPort p = out->input(i);
    types.push_back(p ? p.node->op_desc().output(p.index).type : out->op_desc().input(i).type);
  }
  return types;
}

}  // namespace ge::ops
