// Element-wise ops: unary maps (output = input type), binary and variadic
// ops with numpy broadcasting, comparisons (bool results), Clip, PRelu and
// Where. Each family has one registration helper, so a new op is one line
// in the tables of RegisterElementwiseOps. Unary and same-dtype binary ops
// may run in place over an input (the memory planner still checks that the
// broadcast output has the input's size).
#include "base/ops/op_families.h"

#include "base/ops/infer_util.h"
#include "base/ops/shape_utils.h"
#include "base/status.h"

namespace ge::ops {
namespace {

using Kind = ir::AttrValue::Kind;
using DT = DataType;

struct FloatAttr {
  const char* name;
  float default_value;
};

// The format every present input shares, else ND.
ir::Format CommonFormat(const InferenceContext& ctx) {
  std::optional<ir::Format> format;
  for (int i = 0; i < ctx.num_inputs(); ++i) {
    if (!ctx.has_input(i)) continue;
    const ir::Format f = ctx.input_tensor(i).format;
    if (format && *format != f) return ir::Format::kND;
    format = f;
  }
  return format.value_or(ir::Format::kND);
}

// Output 0 broadcasts inputs [first, num_inputs) and has `dtype`.
absl::Status InferBroadcast(InferenceContext& ctx, int first, DataType dtype) {
  std::vector<Shape> shapes;
  for (int i = first; i < ctx.num_inputs(); ++i) shapes.push_back(InputShape(ctx, i));
  GE_ASSIGN_OR_RETURN(Shape shape, BroadcastShapes(shapes));
  SetOutput(ctx, 0, ir::ValueType(ir::TensorDesc(dtype, std::move(shape), CommonFormat(ctx))));
  return absl::OkStatus();
}

absl::Status InferSameDtypeBroadcast(InferenceContext& ctx) {
  return InferBroadcast(ctx, 0, ctx.input_tensor(0).dtype);
}

absl::Status InferBoolBroadcast(InferenceContext& ctx) { return InferBroadcast(ctx, 0, DT::kBool); }

absl::Status InferBoolSameShape(InferenceContext& ctx) {
  SetOutput(ctx, 0, DT::kBool, ctx.input_tensor(0).shape);
  return absl::OkStatus();
}

absl::Status InferWhere(InferenceContext& ctx) { return InferBroadcast(ctx, 0, ctx.input_tensor(1).dtype); }

absl::Status InferClip(InferenceContext& ctx) {
  for (int i = 1; i <= 2; ++i) {
    if (!ctx.has_input(i)) continue;
    const Shape& s = ctx.input_tensor(i).shape;
    if (s.IsFullyKnown() && s.NumElementsUnchecked() != 1) {
      return InvalidArgument("input ", i, " (", i == 1 ? "min" : "max", ") must be a scalar, got ",
                             s.ToString());
    }
  }
  return SameAsInput0(ctx);
}

absl::Status InferPRelu(InferenceContext& ctx) {
  absl::Status s = CheckUnidirectionalBroadcast(ctx.input_tensor(1).shape, ctx.input_tensor(0).shape);
  if (!s.ok()) return Annotate(s, "input 1 (slope)");
  return SameAsInput0(ctx);
}

void Unary(OpRegistry& r, std::string type, int since, std::vector<DataType> types,
           std::vector<FloatAttr> attrs = {}) {
  OpSchemaBuilder b(std::move(type), since);
  b.Input("X", "T").Output("Y", "T").TypeConstraint("T", std::move(types)).Inplace(0, 0).Infer(SameAsInput0);
  for (const FloatAttr& a : attrs) b.Attr(a.name, Kind::kFloat, a.default_value);
  MustRegister(r, std::move(b));
}

void UnaryPredicate(OpRegistry& r, std::string type, int since, std::vector<DataType> types) {
  MustRegister(r, OpSchemaBuilder(std::move(type), since)
                      .Input("X", "T")
                      .Output("Y", "bool")
                      .TypeConstraint("T", std::move(types))
                      .Infer(InferBoolSameShape));
}

OpSchemaBuilder Binary(std::string type, int since, std::vector<DataType> types) {
  OpSchemaBuilder b(std::move(type), since);
  b.Input("A", "T").Input("B", "T").Output("C", "T").TypeConstraint("T", std::move(types));
  b.Inplace(0, 0).Inplace(0, 1).Infer(InferSameDtypeBroadcast);
  return b;
}

void Comparison(OpRegistry& r, std::string type, int since, std::vector<DataType> types) {
  MustRegister(r, OpSchemaBuilder(std::move(type), since)
                      .Input("A", "T")
                      .Input("B", "T")
                      .Output("C", "bool")
                      .TypeConstraint("T", std::move(types))
                      .Infer(InferBoolBroadcast));
}

void Variadic(OpRegistry& r, std::string type, int since, std::vector<DataType> types) {
  MustRegister(r, OpSchemaBuilder(std::move(type), since)
                      .VariadicInput("data_0", "T", 1)
                      .Output("result", "T")
                      .TypeConstraint("T", std::move(types))
                      .Inplace(0, 0)
                      .Infer(InferSameDtypeBroadcast));
}

void RegisterUnaryOps(OpRegistry& r) {
  const auto& floats = FloatTypes();
  const auto& numeric = NumericTypes();
  const auto& signed_numeric = SignedNumericTypes();
  Unary(r, "Relu", 14, signed_numeric);
  Unary(r, "Sigmoid", 13, floats);
  Unary(r, "Tanh", 13, floats);
  Unary(r, "Erf", 13, numeric);
  Unary(r, "Sqrt", 13, floats);
  Unary(r, "Neg", 13, signed_numeric);
  Unary(r, "Abs", 13, numeric);
  Unary(r, "Exp", 13, floats);
  Unary(r, "Log", 13, floats);
  Unary(r, "Ceil", 13, floats);
  Unary(r, "Floor", 13, floats);
  Unary(r, "Round", 11, floats);
  Unary(r, "Reciprocal", 13, floats);
  Unary(r, "Sign", 13, numeric);
  Unary(r, "Not", 1, Types({DT::kBool}));
  Unary(r, "Sin", 7, floats);
  Unary(r, "Cos", 7, floats);
  Unary(r, "Tan", 7, floats);
  Unary(r, "Asin", 7, floats);
  Unary(r, "Acos", 7, floats);
  Unary(r, "Atan", 7, floats);
  Unary(r, "Sinh", 9, floats);
  Unary(r, "Cosh", 9, floats);
  Unary(r, "Asinh", 9, floats);
  Unary(r, "Acosh", 9, floats);
  Unary(r, "Atanh", 9, floats);
  Unary(r, "Softplus", 1, floats);
  Unary(r, "Softsign", 1, floats);
  Unary(r, "HardSwish", 14, floats);
  Unary(r, "HardSigmoid", 6, floats, {{"alpha", 0.2f}, {"beta", 0.5f}});
  Unary(r, "LeakyRelu", 16, floats, {{"alpha", 0.01f}});
  Unary(r, "Elu", 6, floats, {{"alpha", 1.0f}});
  Unary(r, "Selu", 6, floats, {{"alpha", 1.67326319217681884765625f}, {"gamma", 1.05070102214813232421875f}});
  Unary(r, "Celu", 12, Types({DT::kFloat}), {{"alpha", 1.0f}});
  Unary(r, "ThresholdedRelu", 10, floats, {{"alpha", 1.0f}});
  Unary(r, "Shrink", 9, numeric, {{"bias", 0.0f}, {"lambd", 0.5f}});
  UnaryPredicate(r, "IsNaN", 13, floats);
  MustRegister(r, OpSchemaBuilder("IsInf", 10)
                      .Input("X", "T")
                      .Output("Y", "bool")
                      .TypeConstraint("T", Types({DT::kFloat, DT::kDouble}))
                      .Attr("detect_negative", Kind::kInt, int64_t{1})
                      .Attr("detect_positive", Kind::kInt, int64_t{1})
                      .Infer(InferBoolSameShape));
  MustRegister(r, OpSchemaBuilder("Clip", 13)
                      .Input("input", "T")
                      .OptionalInput("min", "T")
                      .OptionalInput("max", "T")
                      .Output("output", "T")
                      .TypeConstraint("T", numeric)
                      .Inplace(0, 0)
                      .Infer(InferClip));
}

void RegisterBinaryOps(OpRegistry& r) {
  const auto& numeric = NumericTypes();
  const auto bools = Types({DT::kBool});
  MustRegister(r, Binary("Add", 14, numeric));
  MustRegister(r, Binary("Sub", 14, numeric));
  MustRegister(r, Binary("Mul", 14, numeric));
  MustRegister(r, Binary("Div", 14, numeric));
  MustRegister(r, Binary("Mod", 13, numeric).Attr("fmod", Kind::kInt, int64_t{0}));
  MustRegister(r, Binary("BitShift", 11, UnsignedTypes()).RequiredAttr("direction", Kind::kString));
  MustRegister(r, Binary("And", 7, bools));
  MustRegister(r, Binary("Or", 7, bools));
  MustRegister(r, Binary("Xor", 7, bools));
  // Pow's exponent has its own type, so only the base can share the output.
  MustRegister(r, OpSchemaBuilder("Pow", 15)
                      .Input("X", "T")
                      .Input("Y", "T1")
                      .Output("Z", "T")
                      .TypeConstraint("T", Union(FloatTypes(), IndexTypes()))
                      .TypeConstraint("T1", numeric)
                      .Inplace(0, 0)
                      .Infer(InferSameDtypeBroadcast));
  MustRegister(r, OpSchemaBuilder("PRelu", 16)
                      .Input("X", "T")
                      .Input("slope", "T")
                      .Output("Y", "T")
                      .TypeConstraint("T", Union(FloatTypes(), Types({DT::kInt32, DT::kInt64,
                                                                      DT::kUint32, DT::kUint64})))
                      .Inplace(0, 0)
                      .Infer(InferPRelu));
  Comparison(r, "Equal", 13, Union(numeric, bools));
  Comparison(r, "Less", 13, numeric);
  Comparison(r, "Greater", 13, numeric);
  Comparison(r, "LessOrEqual", 16, numeric);
  Comparison(r, "GreaterOrEqual", 16, numeric);
  Variadic(r, "Max", 13, numeric);
  Variadic(r, "Min", 13, numeric);
  Variadic(r, "Sum", 13, FloatTypes());
  Variadic(r, "Mean", 13, FloatTypes());
  MustRegister(r, OpSchemaBuilder("Where", 16)
                      .Input("condition", "bool")
                      .Input("X", "T")
                      .Input("Y", "T")
                      .Output("output", "T")
                      .TypeConstraint("T", AllTensorTypes())
                      .Inplace(0, 1)
                      .Inplace(0, 2)
                      .Infer(InferWhere));
}

}  // namespace

void RegisterElementwiseOps(OpRegistry& registry) {
  RegisterUnaryOps(registry);
  RegisterBinaryOps(registry);
}

}  // namespace ge::ops
