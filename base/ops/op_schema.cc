// InferenceContext, OpSchema lookups and OpSchemaBuilder: the pieces of an
// op's contract that do not depend on the registry's contents.
#include "base/ops/op_schema.h"

#include "base/ops/op_registry.h"
#include "base/status.h"

namespace ge::ops {
namespace {

// Counts the actuals a list of formal parameters needs at least: every
// parameter up to the last required one (optional ones before it still take
// a slot) plus a variadic tail's minimum.
int MinCount(const std::vector<FormalParameter>& params) {
  int slots = 0, min = 0;
  for (const FormalParameter& p : params) {
    switch (p.arity) {
      case FormalParameter::Arity::kSingle:
        min = ++slots;
        break;
      case FormalParameter::Arity::kOptional:
        ++slots;
        break;
      case FormalParameter::Arity::kVariadic:
        min = std::max(min, slots + p.min_arity);
        break;
    }
  }
  return min;
}

int MaxCount(const std::vector<FormalParameter>& params) {
  if (!params.empty() && params.back().arity == FormalParameter::Arity::kVariadic) return -1;
  return static_cast<int>(params.size());
}

const FormalParameter* ParamFor(const std::vector<FormalParameter>& params, int i) {
  if (params.empty() || i < 0) return nullptr;
  const int last = static_cast<int>(params.size()) - 1;
  if (i >= last && params.back().arity == FormalParameter::Arity::kVariadic) return &params.back();
  return i <= last ? &params[i] : nullptr;
}

}  // namespace

// ---- InferenceContext ----

InferenceContext::InferenceContext(const ir::OpDesc& op,
                                   std::vector<const ir::ValueType*> input_types,
                                   std::vector<const Tensor*> input_values, const ir::Graph* graph)
    : op_(op),
      input_types_(std::move(input_types)),
      input_values_(std::move(input_values)),
      graph_(graph) {
  // Outputs start as declared so that ops whose type is given rather than
  // computed (Data, PlaceHolder) keep it.
  output_types_.reserve(op.num_outputs());
  for (const ir::IoDesc& out : op.outputs()) output_types_.push_back(out.type);
}

const OpSchema* InferenceContext::schema() const {
  if (schema_ == nullptr) schema_ = OpRegistry::Global().Find(op_.type());
  return schema_;
}

// ---- OpSchema ----

const AttrSpec* OpSchema::FindAttr(std::string_view name) const {
  for (const AttrSpec& a : attrs) {
    if (a.name == name) return &a;
  }
  return nullptr;
}

const TypeConstraint* OpSchema::FindTypeConstraint(std::string_view name) const {
  for (const ops::TypeConstraint& c : type_constraints) {
    if (c.name == name) return &c;
  }
  return nullptr;
}

int OpSchema::min_inputs() const { return MinCount(inputs); }
int OpSchema::max_inputs() const { return MaxCount(inputs); }
int OpSchema::min_outputs() const { return MinCount(outputs); }
int OpSchema::max_outputs() const { return MaxCount(outputs); }
const FormalParameter* OpSchema::InputParam(int i) const { return ParamFor(inputs, i); }
const FormalParameter* OpSchema::OutputParam(int i) const { return ParamFor(outputs, i); }

// ---- OpSchemaBuilder ----

OpSchemaBuilder::OpSchemaBuilder(std::string type, int since_version) {
  schema_.type = std::move(type);
  schema_.since_version = since_version;
}

OpSchemaBuilder& OpSchemaBuilder::Domain(std::string domain) {
  schema_.domain = std::move(domain);
  return *this;
}

OpSchemaBuilder& OpSchemaBuilder::Doc(std::string doc) {
  schema_.doc = std::move(doc);
  return *this;
}

OpSchemaBuilder& OpSchemaBuilder::Input(std::string name, std::string type_constraint) {
  schema_.inputs.push_back({std::move(name), std::move(type_constraint), FormalParameter::Arity::kSingle, 1});
  return *this;
}

OpSchemaBuilder& OpSchemaBuilder::OptionalInput(std::string name, std::string type_constraint) {
  schema_.inputs.push_back(
      {std::move(name), std::move(type_constraint), FormalParameter::Arity::kOptional, 0});
  return *this;
}

OpSchemaBuilder& OpSchemaBuilder::VariadicInput(std::string name, std::string type_constraint,
                                                int min_arity) {
  schema_.inputs.push_back(
      {std::move(name), std::move(type_constraint), FormalParameter::Arity::kVariadic, min_arity});
  return *this;
}

OpSchemaBuilder& OpSchemaBuilder::Output(std::string name, std::string type_constraint) {
  schema_.outputs.push_back({std::move(name), std::move(type_constraint), FormalParameter::Arity::kSingle, 1});
  return *this;
}

OpSchemaBuilder& OpSchemaBuilder::OptionalOutput(std::string name, std::string type_constraint) {
  schema_.outputs.push_back(
      {std::move(name), std::move(type_constraint), FormalParameter::Arity::kOptional, 0});
  return *this;
}

OpSchemaBuilder& OpSchemaBuilder::VariadicOutput(std::string name, std::string type_constraint,
                                                 int min_arity) {
  schema_.outputs.push_back(
      {std::move(name), std::move(type_constraint), FormalParameter::Arity::kVariadic, min_arity});
  return *this;
}

OpSchemaBuilder& OpSchemaBuilder::Attr(std::string name, ir::AttrValue::Kind kind,
                                       ir::AttrValue default_value) {
  GE_CHECK_MSG(default_value.kind() == kind, name.c_str());
  schema_.attrs.push_back({std::move(name), kind, /*required=*/false, std::move(default_value)});
  return *this;
}

OpSchemaBuilder& OpSchemaBuilder::RequiredAttr(std::string name, ir::AttrValue::Kind kind) {
  schema_.attrs.push_back({std::move(name), kind, /*required=*/true, std::nullopt});
  return *this;
}

OpSchemaBuilder& OpSchemaBuilder::OptionalAttr(std::string name, ir::AttrValue::Kind kind) {
  schema_.attrs.push_back({std::move(name), kind, /*required=*/false, std::nullopt});
  return *this;
}

OpSchemaBuilder& OpSchemaBuilder::TypeConstraint(std::string name, std::vector<DataType> allowed) {
  ops::TypeConstraint c;
  c.name = std::move(name);
  c.allowed_dtypes = std::move(allowed);
  return TypeConstraint(std::move(c));
}

OpSchemaBuilder& OpSchemaBuilder::TypeConstraint(ops::TypeConstraint constraint) {
  schema_.type_constraints.push_back(std::move(constraint));
  return *this;
}

OpSchemaBuilder& OpSchemaBuilder::Inplace(int output, int input) {
  schema_.inplace.emplace_back(output, input);
  return *this;
}

OpSchemaBuilder& OpSchemaBuilder::View(int output, int input) {
  schema_.views.emplace_back(output, input);
  return *this;
}

OpSchemaBuilder& OpSchemaBuilder::ValueInputs(std::vector<int> inputs) {
  schema_.value_inputs = std::move(inputs);
  return *this;
}

OpSchemaBuilder& OpSchemaBuilder::ValueDependentOutputShape() {
  schema_.value_dependent_output_shape = true;
  return *this;
}

OpSchemaBuilder& OpSchemaBuilder::Stateful() {
  schema_.stateful = true;
  return *this;
}

OpSchemaBuilder& OpSchemaBuilder::Infer(ShapeInferenceFn fn) {
  schema_.infer = std::move(fn);
  return *this;
}

OpSchema OpSchemaBuilder::Build() && {
  // Registration mistakes are programmer errors: catch them at startup.
  for (const auto* params : {&schema_.inputs, &schema_.outputs}) {
    for (size_t i = 0; i < params->size(); ++i) {
      const FormalParameter& p = (*params)[i];
      GE_CHECK_MSG(p.arity != FormalParameter::Arity::kVariadic || i + 1 == params->size(),
                   schema_.type.c_str());
      GE_CHECK_MSG(p.type_constraint.empty() || schema_.FindTypeConstraint(p.type_constraint) ||
                       ParseDataType(p.type_constraint).has_value(),
                   schema_.type.c_str());
    }
  }
  for (size_t i = 0; i < schema_.attrs.size(); ++i) {
    for (size_t j = 0; j < i; ++j) {
      GE_CHECK_MSG(schema_.attrs[i].name != schema_.attrs[j].name, schema_.type.c_str());
    }
  }
  return std::move(schema_);
}

}  // namespace ge::ops
