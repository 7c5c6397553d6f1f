// The op registry and the per-node checks built on it: ValidateOp (counts,
// attributes, dtypes against type constraints), InferOutputTypes (one op,
// no graph: what the dynamic executor calls at run time) and InferNode (one
// node of a graph: gathers its producers' types and Const values, infers,
// and merges the result into the node's declared output types).
#include "base/ops/op_registry.h"

#include <algorithm>

#include "absl/strings/match.h"
#include "base/ir/op_types.h"
#include "base/ops/op_families.h"
#include "base/ops/shape_utils.h"
#include "base/status.h"

namespace ge::ops {
namespace {

std::string NodePrefix(const ir::OpDesc& op) { return StrCat("node '", op.name(), "' (", op.type(), ")"); }

absl::Status WithNode(const ir::OpDesc& op, const absl::Status& status) {
  if (status.ok()) return status;
  const std::string prefix = NodePrefix(op);
  if (absl::StartsWith(status.message(), AbslView(prefix))) return status;
  return Annotate(status, prefix);
}

std::string CountRange(int min, int max) {
  if (max < 0) return StrCat("at least ", min);
  if (min == max) return StrCat(min);
  return StrCat(min, " to ", max);
}

absl::Status CheckArity(const OpSchema& schema, const ir::OpDesc& op) {
  const int min_in = schema.min_inputs(), max_in = schema.max_inputs();
  if (op.num_inputs() < min_in || (max_in >= 0 && op.num_inputs() > max_in)) {
    return InvalidArgument("has ", op.num_inputs(), " inputs, expected ", CountRange(min_in, max_in));
  }
  const int min_out = schema.min_outputs(), max_out = schema.max_outputs();
  if (op.num_outputs() < min_out || (max_out >= 0 && op.num_outputs() > max_out)) {
    return InvalidArgument("has ", op.num_outputs(), " outputs, expected ", CountRange(min_out, max_out));
  }
  return absl::OkStatus();
}

absl::Status CheckAttrs(const OpSchema& schema, const ir::OpDesc& op) {
  for (const auto& [name, value] : op.attrs()) {
    const AttrSpec* spec = schema.FindAttr(name);
    if (spec == nullptr) {
      // Names starting with '_' are ged's private attributes (placement,
      // partitioning marks); any op may carry them.
      if (absl::StartsWith(name, "_")) continue;
      return InvalidArgument("unknown attribute '", name, "'");
    }
    if (value.kind() != spec->kind) {
      return InvalidArgument("attribute '", name, "' is ", ir::AttrKindName(value.kind()),
                             ", expected ", ir::AttrKindName(spec->kind));
    }
  }
  for (const AttrSpec& spec : schema.attrs) {
    if (spec.required && !op.HasAttr(spec.name)) {
      return InvalidArgument("missing required attribute '", spec.name, "' (",
                             ir::AttrKindName(spec.kind), ")");
    }
  }
  return absl::OkStatus();
}

std::string DtypeList(const std::vector<DataType>& dtypes) {
  std::string out;
  for (DataType d : dtypes) StrAppend(&out, out.empty() ? "" : ", ", DataTypeName(d));
  return out;
}

// Which dtype each type constraint is bound to so far, and by which port.
struct Binding {
  DataType dtype;
  std::string where;
};
using Bindings = StringMap<Binding>;

absl::Status CheckKind(const TypeConstraint& c, const ir::ValueType& type, std::string_view where) {
  using Kind = ir::ValueType::Kind;
  const bool ok = (type.kind() == Kind::kTensor && c.allow_tensor) ||
                  (type.kind() == Kind::kSequence && c.allow_sequence) ||
                  (type.kind() == Kind::kOptional && c.allow_optional);
  if (ok) return absl::OkStatus();
  return InvalidArgument(where, " is ", type.ToString(), ", a kind that ", c.name, " does not allow");
}

// Checks one port's type against its formal parameter's constraint.
absl::Status CheckPortType(const OpSchema& schema, const FormalParameter& param,
                           const ir::ValueType& type, const std::string& where,
                           Bindings& bindings) {
  if (param.type_constraint.empty()) return absl::OkStatus();
  const DataType dtype = type.dtype();
  const TypeConstraint* c = schema.FindTypeConstraint(param.type_constraint);
  if (c == nullptr) {  // a fixed dtype spelled by name
    const auto fixed = ParseDataType(param.type_constraint);
    if (!type.is_tensor()) return InvalidArgument(where, " is ", type.ToString(), ", expected a tensor");
    if (dtype != DataType::kUndefined && fixed && dtype != *fixed) {
      return InvalidArgument(where, " has dtype ", DataTypeName(dtype), ", expected ", DataTypeName(*fixed));
    }
    return absl::OkStatus();
  }
  GE_RETURN_IF_ERROR(CheckKind(*c, type, where));
  if (dtype == DataType::kUndefined) return absl::OkStatus();
  if (!c->allowed_dtypes.empty() &&
      std::find(c->allowed_dtypes.begin(), c->allowed_dtypes.end(), dtype) == c->allowed_dtypes.end()) {
    return InvalidArgument(where, " has dtype ", DataTypeName(dtype), ", not allowed for ", c->name,
                           " (allowed: ", DtypeList(c->allowed_dtypes), ")");
  }
  auto [it, inserted] = bindings.try_emplace(c->name, Binding{dtype, where});
  if (!inserted && it->second.dtype != dtype) {
    return InvalidArgument(where, " has dtype ", DataTypeName(dtype), " but ", c->name, " is ",
                           DataTypeName(it->second.dtype), " from ", it->second.where);
  }
  return absl::OkStatus();
}

absl::Status CheckTypes(const OpSchema& schema, const std::vector<const ir::ValueType*>& inputs,
                        const std::vector<const ir::ValueType*>& outputs) {
  Bindings bindings;
  for (int pass = 0; pass < 2; ++pass) {
    const auto& types = pass == 0 ? inputs : outputs;
    for (int i = 0; i < static_cast<int>(types.size()); ++i) {
      const FormalParameter* param = pass == 0 ? schema.InputParam(i) : schema.OutputParam(i);
      if (types[i] == nullptr || param == nullptr) continue;
      const std::string where = StrCat(pass == 0 ? "input " : "output ", i, " (", param->name, ")");
      GE_RETURN_IF_ERROR(CheckPortType(schema, *param, *types[i], where, bindings));
    }
  }
  return absl::OkStatus();
}

absl::Status CheckRequiredInputs(const OpSchema& schema,
                                 const std::vector<const ir::ValueType*>& inputs) {
  for (int i = 0; i < static_cast<int>(inputs.size()); ++i) {
    const FormalParameter* param = schema.InputParam(i);
    if (inputs[i] == nullptr && param != nullptr && param->arity != FormalParameter::Arity::kOptional) {
      return InvalidArgument("required input ", i, " (", param->name, ") is missing");
    }
  }
  return absl::OkStatus();
}

const OpSchema* FindOrNull(const OpRegistry& registry, const ir::OpDesc& op) {
  // Ops outside the default domain (user operators of plugins) carry theirs.
  const ir::AttrValue* domain = op.FindAttr(ir::kAttrOpDomain);
  const std::string* name = domain != nullptr ? domain->get<std::string>() : nullptr;
  return registry.Find(op.type(), name != nullptr ? std::string_view(*name) : std::string_view());
}

absl::Status UnknownOp(const ir::OpDesc& op) {
  return InvalidArgument(NodePrefix(op), ": unknown op type '", op.type(), "'");
}

}  // namespace

// ---- OpRegistry ----

OpRegistry& OpRegistry::Global() {
  // A function-local static: initialized once, thread-safe, never destroyed
  // (kernels in plugins may look schemas up during process exit).
  static OpRegistry* registry = [] {
    auto* r = new OpRegistry();
    RegisterBuiltinOps(*r);
    return r;
  }();
  return *registry;
}

absl::Status OpRegistry::Register(OpSchema schema) {
  std::string key = StrCat(schema.domain, "::", schema.type);
  if (schemas_.contains(key)) {
    return InvalidArgument("op '", schema.type, "' of domain '", schema.domain, "' is already registered");
  }
  schemas_.emplace(std::move(key), std::make_unique<OpSchema>(std::move(schema)));
  return absl::OkStatus();
}

const OpSchema* OpRegistry::Find(std::string_view type, std::string_view domain) const {
  auto it = schemas_.find(StrCat(domain, "::", type));
  return it == schemas_.end() ? nullptr : it->second.get();
}

std::vector<const OpSchema*> OpRegistry::All() const {
  std::vector<const OpSchema*> out;
  out.reserve(schemas_.size());
  for (const auto& [key, schema] : schemas_) out.push_back(schema.get());
  std::sort(out.begin(), out.end(), [](const OpSchema* a, const OpSchema* b) {
    return std::tie(a->domain, a->type) < std::tie(b->domain, b->type);
  });
  return out;
}

void RegisterBuiltinOps(OpRegistry& registry) {
  RegisterGeOps(registry);
  RegisterElementwiseOps(registry);
  RegisterNnOps(registry);
  RegisterTensorOps(registry);
  RegisterReductionOps(registry);
  RegisterLoopOps(registry);
  RegisterSequenceOps(registry);
  RegisterTextOps(registry);
  RegisterIndexingOps(registry);
  RegisterLossOps(registry);
  RegisterQuantizeWindowOps(registry);
  RegisterRnnOps(registry);
  RegisterVariableOps(registry);
  RegisterNormPoolOps(registry);
  RegisterRandomOps(registry);
  RegisterQuantizedOps(registry);
  RegisterSignalOps(registry);
  RegisterGearOps(registry);
}

// ---- Checks and inference of one op ----

absl::Status ValidateOp(const ir::OpDesc& op, const OpRegistry& registry) {
  const OpSchema* schema = FindOrNull(registry, op);
  if (schema == nullptr) return UnknownOp(op);
  GE_RETURN_IF_ERROR(WithNode(op, CheckArity(*schema, op)));
  GE_RETURN_IF_ERROR(WithNode(op, CheckAttrs(*schema, op)));
  // Declared types with no dtype are not known yet and are not checked.
  std::vector<const ir::ValueType*> inputs, outputs;
  for (const ir::IoDesc& in : op.inputs()) inputs.push_back(&in.type);
  for (const ir::IoDesc& out : op.outputs()) outputs.push_back(&out.type);
  return WithNode(op, CheckTypes(*schema, inputs, outputs));
}

absl::StatusOr<std::vector<ir::ValueType>> InferOutputTypes(
    const ir::OpDesc& op, const std::vector<const ir::ValueType*>& input_types,
    const std::vector<const Tensor*>& input_values, const ir::Graph* graph,
    const OpRegistry& registry) {
  const OpSchema* schema = FindOrNull(registry, op);
  if (schema == nullptr) return UnknownOp(op);
  if (static_cast<int>(input_types.size()) != op.num_inputs()) {
    return Internal(NodePrefix(op), ": ", input_types.size(), " input types given for ",
                    op.num_inputs(), " inputs");
  }
  GE_RETURN_IF_ERROR(WithNode(op, CheckArity(*schema, op)));
  GE_RETURN_IF_ERROR(WithNode(op, CheckAttrs(*schema, op)));
  GE_RETURN_IF_ERROR(WithNode(op, CheckRequiredInputs(*schema, input_types)));
  GE_RETURN_IF_ERROR(WithNode(op, CheckTypes(*schema, input_types, {})));
  // Only the declared value inputs reach the inference, so that compile
  // time and run time see the same dependencies.
  std::vector<const Tensor*> values(input_types.size(), nullptr);
  for (int i : schema->value_inputs) {
    if (i < static_cast<int>(input_values.size()) && i < static_cast<int>(values.size())) {
      values[i] = input_values[i];
    }
  }
  InferenceContext ctx(op, input_types, std::move(values), graph);
  ctx.set_schema(schema);
  if (schema->infer) GE_RETURN_IF_ERROR(WithNode(op, schema->infer(ctx)));
  return std::move(ctx.output_types());
}

absl::Status InferNode(ir::Node& node, const OpRegistry& registry) {
  ir::OpDesc& op = node.mutable_op_desc();
  const OpSchema* schema = FindOrNull(registry, op);
  if (schema == nullptr) return UnknownOp(op);
  // Copies, so that writing this node's descs cannot disturb what we read.
  std::vector<ir::ValueType> types(node.num_inputs());
  std::vector<const ir::ValueType*> type_ptrs(node.num_inputs(), nullptr);
  std::vector<const Tensor*> values(node.num_inputs(), nullptr);
  for (int i = 0; i < node.num_inputs(); ++i) {
    const ir::OutPort p = node.input(i);
    if (p) {
      types[i] = p.node->op_desc().output(p.index).type;
      if (p.node->type() == ir::kConst) {
        if (const ir::AttrValue* v = p.node->op_desc().FindAttr(ir::kAttrValue)) values[i] = v->get<Tensor>();
      }
    } else {
      // An unconnected input is absent unless its desc says otherwise (a
      // lone node whose inputs the caller described).
      types[i] = op.input(i).type;
      if (types[i].is_tensor() && types[i].dtype() == DataType::kUndefined) continue;
    }
    type_ptrs[i] = &types[i];
  }
  GE_ASSIGN_OR_RETURN(std::vector<ir::ValueType> inferred,
                      InferOutputTypes(op, type_ptrs, values, node.owner_graph(), registry));
  for (int i = 0; i < op.num_outputs(); ++i) {
    auto merged = MergeValueTypes(op.output(i).type, inferred[i]);
    if (!merged.ok()) {
      return InvalidArgument(NodePrefix(op), ": output ", i, ": inferred ", inferred[i].ToString(),
                             " contradicts the declared ", op.output(i).type.ToString());
    }
    op.mutable_output(i).type = *std::move(merged);
  }
  for (int i = 0; i < node.num_inputs(); ++i) {
    if (node.input(i)) op.mutable_input(i).type = std::move(types[i]);
  }
  return absl::OkStatus();
}

}  // namespace ge::ops
