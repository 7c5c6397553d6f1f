// OpSchema: the contract of one op type — inputs, outputs, attributes, type
// constraints, aliasing rules and shape/type inference.
//
// ged's ops follow ONNX semantics at one canonical opset per op (the newest
// one up to 17 that ged implements); the importer rewrites older opsets'
// forms into the canonical one (for example Squeeze's `axes` attribute of
// opset 11 becomes the `axes` input of opset 13), so kernels and passes see
// one form only. ged's own ops (Data, NetOutput, PartitionedCall, ...) live in
// the same registry.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "base/ir/graph.h"
#include "base/tensor.h"

namespace ge::ops {

struct OpSchema;

// What shape inference sees of one node. Used at compile time (types may
// have -1 dims, values are known only for constants) and at run time
// (concrete shapes, and the values of host inputs the schema asks for).
class InferenceContext {
 public:
  // `input_types[i]` is null for an absent optional input; `input_values[i]`
  // is null when the value is not known. `graph` (may be null) resolves
  // subgraph names.
  InferenceContext(const ir::OpDesc& op, std::vector<const ir::ValueType*> input_types,
                   std::vector<const Tensor*> input_values, const ir::Graph* graph);

  const ir::OpDesc& op() const { return op_; }
  int num_inputs() const { return static_cast<int>(input_types_.size()); }
  bool has_input(int i) const { return i < num_inputs() && input_types_[i] != nullptr; }
  // The type of input `i`; requires has_input(i).
  const ir::ValueType& input_type(int i) const { return *input_types_[i]; }
  const ir::TensorDesc& input_tensor(int i) const { return input_types_[i]->tensor(); }
  // The value of input `i` when known, else null.
  const Tensor* input_value(int i) const {
    return i < static_cast<int>(input_values_.size()) ? input_values_[i] : nullptr;
  }
  int num_outputs() const { return static_cast<int>(output_types_.size()); }
  ir::ValueType& output_type(int i) { return output_types_[i]; }
  void set_output(int i, ir::ValueType type) { output_types_[i] = std::move(type); }
  void set_output(int i, DataType dtype, Shape shape) {
    output_types_[i] = ir::ValueType::Tensor(dtype, std::move(shape));
  }
  std::vector<ir::ValueType>& output_types() { return output_types_; }
  // Whether a graph was given to resolve subgraph names with.
  bool has_graph() const { return graph_ != nullptr; }
  const ir::Graph* FindSubgraph(std::string_view name) const {
    return graph_ ? graph_->FindSubgraph(name) : nullptr;
  }

  // The schema of the op: the one set by set_schema (InferOutputTypes sets
  // it), else the global registry's schema of op().type(); null if unknown.
  const OpSchema* schema() const;
  void set_schema(const OpSchema* schema) { schema_ = schema; }
  // Attribute `name` as a T: the node's value, else the schema's default;
  // nullopt when neither exists (or the kinds differ: ValidateOp's concern).
  template <typename T>
  std::optional<T> Attr(std::string_view name) const;
  template <typename T>
  T AttrOr(std::string_view name, T fallback) const {
    auto v = Attr<T>(name);
    return v ? *std::move(v) : std::move(fallback);
  }

  // InvalidArgument prefixed with the node's name and type.
  template <typename... Args>
  absl::Status Error(const Args&... args) const {
    return absl::InvalidArgumentError(
        absl::StrCat("node '", op_.name(), "' (", op_.type(), "): ", args...));
  }

 private:
  const ir::OpDesc& op_;
  std::vector<const ir::ValueType*> input_types_;
  std::vector<const Tensor*> input_values_;
  std::vector<ir::ValueType> output_types_;
  const ir::Graph* graph_;
  mutable const OpSchema* schema_ = nullptr;
};

using ShapeInferenceFn = std::function<absl::Status(InferenceContext&)>;

struct FormalParameter {
  enum class Arity : uint8_t { kSingle, kOptional, kVariadic };
  std::string name;
  std::string type_constraint;  // a TypeConstraint name ("T") or a dtype name ("i64")
  Arity arity = Arity::kSingle;
  int min_arity = 1;  // for kVariadic
};

struct AttrSpec {
  std::string name;
  ir::AttrValue::Kind kind;
  bool required = false;
  std::optional<ir::AttrValue> default_value;
};

struct TypeConstraint {
  std::string name;
  std::vector<DataType> allowed_dtypes;
  // Which kinds of value the constraint admits (ONNX's seq(tensor(T)) and
  // optional(...) type strings).
  bool allow_tensor = true;
  bool allow_sequence = false;
  bool allow_optional = false;
};

struct OpSchema {
  std::string type;
  std::string domain;  // "" is ONNX's default domain and ged's own ops
  int since_version = 1;
  std::string doc;
  std::vector<FormalParameter> inputs;
  std::vector<FormalParameter> outputs;
  std::vector<AttrSpec> attrs;
  std::vector<TypeConstraint> type_constraints;
  // (output, input): the output may be written into the input's buffer when
  // the input has no other consumer (memory planning's in-place reuse).
  std::vector<std::pair<int, int>> inplace;
  // (output, input): the output IS the input's storage (Reshape, Identity,
  // Squeeze): no compute and no new memory.
  std::vector<std::pair<int, int>> views;
  // Inputs whose values shape inference reads (Reshape's shape, Slice's
  // starts): a dependency GE calls "tiling dependency".
  std::vector<int> value_inputs;
  // Output shapes are known only after the kernel runs (NonZero, Unique).
  bool value_dependent_output_shape = false;
  // Whether the op has side effects / state (Variable writes, random ops):
  // passes must not fold or deduplicate it.
  bool stateful = false;
  ShapeInferenceFn infer;

  const AttrSpec* FindAttr(std::string_view name) const;
  const TypeConstraint* FindTypeConstraint(std::string_view name) const;

  // The node's attribute `name` as a T, else this schema's default for it;
  // nullopt when neither exists. Kernels use it so that defaults live only
  // in the schema.
  template <typename T>
  std::optional<T> GetAttr(const ir::OpDesc& op, std::string_view name) const;
  // Allowed input counts: [min_inputs, max_inputs]; max is -1 when the last
  // formal input is variadic. Likewise for outputs.
  int min_inputs() const;
  int max_inputs() const;
  int min_outputs() const;
  int max_outputs() const;
  // The formal parameter that actual input (output) `i` binds to; null when
  // `i` is past the formal parameters.
  const FormalParameter* InputParam(int i) const;
  const FormalParameter* OutputParam(int i) const;
};

template <typename T>
std::optional<T> OpSchema::GetAttr(const ir::OpDesc& op, std::string_view name) const {
  if (auto v = op.GetAttr<T>(name)) return v;
  const AttrSpec* spec = FindAttr(name);
  if (spec == nullptr || !spec->default_value) return std::nullopt;
  const T* p = spec->default_value->template get<T>();
  return p ? std::optional<T>(*p) : std::nullopt;
}

template <typename T>
std::optional<T> InferenceContext::Attr(std::string_view name) const {
  const OpSchema* s = schema();
  return s ? s->GetAttr<T>(op_, name) : op_.GetAttr<T>(name);
}

// Fluent construction of schemas for the registration functions.
class OpSchemaBuilder {
 public:
  OpSchemaBuilder(std::string type, int since_version);
  OpSchemaBuilder& Domain(std::string domain);
  OpSchemaBuilder& Doc(std::string doc);
  OpSchemaBuilder& Input(std::string name, std::string type_constraint);
  OpSchemaBuilder& OptionalInput(std::string name, std::string type_constraint);
  OpSchemaBuilder& VariadicInput(std::string name, std::string type_constraint, int min_arity = 1);
  OpSchemaBuilder& Output(std::string name, std::string type_constraint);
  OpSchemaBuilder& OptionalOutput(std::string name, std::string type_constraint);
  OpSchemaBuilder& VariadicOutput(std::string name, std::string type_constraint, int min_arity = 1);
  OpSchemaBuilder& Attr(std::string name, ir::AttrValue::Kind kind, ir::AttrValue default_value);
  OpSchemaBuilder& RequiredAttr(std::string name, ir::AttrValue::Kind kind);
  OpSchemaBuilder& OptionalAttr(std::string name, ir::AttrValue::Kind kind);  // no default
  OpSchemaBuilder& TypeConstraint(std::string name, std::vector<DataType> allowed);
  OpSchemaBuilder& TypeConstraint(ops::TypeConstraint constraint);
  OpSchemaBuilder& Inplace(int output, int input);
  OpSchemaBuilder& View(int output, int input);
  OpSchemaBuilder& ValueInputs(std::vector<int> inputs);
  OpSchemaBuilder& ValueDependentOutputShape();
  OpSchemaBuilder& Stateful();
  OpSchemaBuilder& Infer(ShapeInferenceFn fn);
  OpSchema Build() &&;

 private:
  OpSchema schema_;
};

}  // namespace ge::ops
