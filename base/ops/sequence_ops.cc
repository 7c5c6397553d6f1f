// ONNX's sequence and optional ops: SequenceEmpty, SequenceConstruct,
// SequenceInsert, SequenceAt, SequenceErase, SequenceLength,
// SplitToSequence, ConcatFromSequence, SequenceMap, Optional,
// OptionalHasElement, OptionalGetElement.
//
// A sequence's static type is seq<element>, the element being the
// generalization of every tensor it may hold (dims that differ become -1;
// an empty sequence's element has unknown rank). At run time a sequence is
// a Value of kind kSequence; an optional holding something is that value
// itself and an empty optional is a kNone Value, so only the static type
// tells an optional from its content.
#include "base/ops/op_families.h"

#include "base/ops/infer_util.h"
#include "base/ops/shape_utils.h"
#include "base/status.h"

namespace ge::ops {
namespace {

using Kind = ir::AttrValue::Kind;
using VKind = ir::ValueType::Kind;

TypeConstraint SequenceOf(std::string name) {
  return TypeConstraint{std::move(name), AllTensorTypes(), false, true, false};
}

TypeConstraint AnyValue(std::string name) {
  return TypeConstraint{std::move(name), AllTensorTypes(), true, true, true};
}

absl::Status RequireSequence(const InferenceContext& ctx, int i) {
  if (ctx.input_type(i).kind() != VKind::kSequence) {
    return ctx.Error("input ", i, " must be a sequence, got ", ctx.input_type(i).ToString());
  }
  return absl::OkStatus();
}

// The element type a sequence holding `element` gets when `value` joins
// it: their generalization (an empty sequence's element of unknown rank
// stays unknown: it may stand for elements already there).
absl::StatusOr<ir::ValueType> JoinElement(const InferenceContext& ctx, const ir::ValueType& element,
                                          const ir::ValueType& value) {
  if (element.dtype() != DataType::kUndefined && value.dtype() != DataType::kUndefined &&
      element.dtype() != value.dtype()) {
    return ctx.Error("a sequence of ", element.ToString(), " cannot hold ", value.ToString());
  }
  auto general = GeneralizeValueTypes(element, value);
  if (!general.ok()) return ctx.Error(general.status().message());
  return *std::move(general);
}

absl::Status InferSequenceEmpty(InferenceContext& ctx) {
  const int64_t dtype = ctx.AttrOr<int64_t>("dtype", static_cast<int64_t>(DataType::kFloat));
  if (dtype < 1 || dtype > kMaxDataTypeValue) {
    return ctx.Error("attribute 'dtype' is ", dtype, ", not a data type");
  }
  ctx.set_output(0, ir::ValueType::Sequence(
                        ir::ValueType::Tensor(static_cast<DataType>(dtype), Shape::UnknownRank())));
  return absl::OkStatus();
}

absl::Status InferSequenceConstruct(InferenceContext& ctx) {
  if (ctx.num_inputs() == 0) return ctx.Error("needs at least one tensor");
  ir::ValueType element = ctx.input_type(0);
  for (int i = 0; i < ctx.num_inputs(); ++i) {
    if (!ctx.input_type(i).is_tensor()) {
      return ctx.Error("input ", i, " must be a tensor, got ", ctx.input_type(i).ToString());
    }
    if (i > 0) {
      GE_ASSIGN_OR_RETURN(element, JoinElement(ctx, element, ctx.input_type(i)));
    }
  }
  ctx.set_output(0, ir::ValueType::Sequence(std::move(element)));
  return absl::OkStatus();
}

// ONNX asks for a scalar position; its own tests also pass shape [1], so
// any tensor of one element is taken.
absl::Status CheckScalarPosition(const InferenceContext& ctx, int i) {
  if (!ctx.has_input(i)) return absl::OkStatus();
  const Shape& shape = ctx.input_type(i).shape();
  if (shape.unknown_rank()) return absl::OkStatus();
  for (int64_t d = 0; d < shape.rank(); ++d) {
    if (shape.dim(d) != 1 && shape.dim(d) != -1) {
      return ctx.Error("the position must be a scalar (or hold one element), got ", ctx.input_type(i).ToString());
    }
  }
  return absl::OkStatus();
}

absl::Status InferSequenceInsert(InferenceContext& ctx) {
  GE_RETURN_IF_ERROR(RequireSequence(ctx, 0));
  if (!ctx.input_type(1).is_tensor()) {
    return ctx.Error("input 1 must be a tensor, got ", ctx.input_type(1).ToString());
  }
  GE_RETURN_IF_ERROR(CheckScalarPosition(ctx, 2));
  GE_ASSIGN_OR_RETURN(ir::ValueType element, JoinElement(ctx, *ctx.input_type(0).element(), ctx.input_type(1)));
  ctx.set_output(0, ir::ValueType::Sequence(std::move(element)));
  return absl::OkStatus();
}

absl::Status InferSequenceAt(InferenceContext& ctx) {
  GE_RETURN_IF_ERROR(RequireSequence(ctx, 0));
  GE_RETURN_IF_ERROR(CheckScalarPosition(ctx, 1));
  ctx.set_output(0, *ctx.input_type(0).element());
  return absl::OkStatus();
}

absl::Status InferSequenceErase(InferenceContext& ctx) {
  GE_RETURN_IF_ERROR(RequireSequence(ctx, 0));
  GE_RETURN_IF_ERROR(CheckScalarPosition(ctx, 1));
  ctx.set_output(0, ctx.input_type(0));
  return absl::OkStatus();
}

absl::Status InferSequenceLength(InferenceContext& ctx) {
  GE_RETURN_IF_ERROR(RequireSequence(ctx, 0));
  SetOutput(ctx, 0, DataType::kInt64, Shape{});
  return absl::OkStatus();
}

// Every piece has the input's shape but along `axis`: 1 or removed without
// `split`, else a length known only when every piece has the same one.
absl::Status InferSplitToSequence(InferenceContext& ctx) {
  const ir::TensorDesc& input = ctx.input_tensor(0);
  if (input.shape.unknown_rank()) {
    ctx.set_output(0, ir::ValueType::Sequence(ir::ValueType::Tensor(input.dtype, Shape::UnknownRank())));
    return absl::OkStatus();
  }
  const int64_t rank = input.shape.rank();
  auto axis = NormalizeAxis(ctx.AttrOr<int64_t>("axis", 0), rank);
  if (!axis.ok()) return ctx.Error(axis.status().message());
  Shape piece = input.shape;
  if (!ctx.has_input(1)) {
    if (ctx.AttrOr<int64_t>("keepdims", 1) == 0) {
      Shape dropped;
      for (int64_t d = 0; d < rank; ++d) {
        if (d != *axis) dropped.push_back(piece.dim(d));
      }
      piece = std::move(dropped);
    } else {
      piece.set_dim(*axis, 1);
    }
  } else {
    const Shape& split_shape = ctx.input_type(1).shape();
    if (!split_shape.unknown_rank() && split_shape.rank() > 1) {
      return ctx.Error("'split' must be a scalar or 1-D, got ", ctx.input_type(1).ToString());
    }
    int64_t length = -1;
    if (auto split = IntsValue(ctx, 1); split && !split->empty()) {
      length = (*split)[0];
      for (int64_t s : *split) {
        if (s < 0) return ctx.Error("'split' has the negative length ", s);
        if (s != length) length = -1;
      }
      const int64_t dim = input.shape.dim(*axis);
      if (!split_shape.unknown_rank() && split_shape.rank() == 0 && dim >= 0 && length > 0 && dim % length != 0) {
        length = -1;  // the last piece is shorter
      }
    }
    piece.set_dim(*axis, length);
  }
  ctx.set_output(0, ir::ValueType::Sequence(ir::ValueType::Tensor(input.dtype, std::move(piece))));
  return absl::OkStatus();
}

absl::Status InferConcatFromSequence(InferenceContext& ctx) {
  GE_RETURN_IF_ERROR(RequireSequence(ctx, 0));
  const ir::ValueType& element = *ctx.input_type(0).element();
  if (!element.is_tensor()) return ctx.Error("elements must be tensors, got ", element.ToString());
  const auto axis_attr = ctx.Attr<int64_t>("axis");
  if (!axis_attr) return ctx.Error("attribute 'axis' is required");
  const bool new_axis = ctx.AttrOr<int64_t>("new_axis", 0) != 0;
  if (element.shape().unknown_rank()) {
    ctx.set_output(0, element.dtype(), Shape::UnknownRank());
    return absl::OkStatus();
  }
  const int64_t rank = element.shape().rank();
  auto axis = NormalizeAxis(*axis_attr, new_axis ? rank + 1 : rank);
  if (!axis.ok()) return ctx.Error(axis.status().message());
  Shape out;
  for (int64_t d = 0; d < rank; ++d) {
    if (new_axis && d == *axis) out.push_back(-1);
    out.push_back(d == *axis && !new_axis ? -1 : element.shape().dim(d));
  }
  if (new_axis && *axis == rank) out.push_back(-1);
  ctx.set_output(0, element.dtype(), std::move(out));
  return absl::OkStatus();
}

// Each output is a sequence of what the body returns for one element.
absl::Status InferSequenceMap(InferenceContext& ctx) {
  GE_RETURN_IF_ERROR(RequireSequence(ctx, 0));
  const std::string name = SubgraphName(ctx.op(), 0, "body");
  const ir::Graph* body = ctx.FindSubgraph(name);
  if (body == nullptr) {
    if (ctx.has_graph()) return ctx.Error("subgraph '", name, "' not found");
    return absl::OkStatus();  // keeps the declared types
  }
  GE_ASSIGN_OR_RETURN(std::vector<ir::ValueType> results, SubgraphOutputTypes(*body));
  if (static_cast<int>(results.size()) != ctx.num_outputs()) {
    return ctx.Error("the body returns ", results.size(), " values, the node has ", ctx.num_outputs(),
                     " outputs");
  }
  for (int i = 0; i < ctx.num_outputs(); ++i) {
    if (!results[i].is_tensor()) return ctx.Error("the body's output ", i, " is not a tensor");
    ctx.set_output(i, ir::ValueType::Sequence(results[i]));
  }
  return absl::OkStatus();
}

// Optional(x) wraps x's type; Optional() with no input takes `type`.
absl::Status InferOptional(InferenceContext& ctx) {
  if (ctx.has_input(0)) {
    ctx.set_output(0, ir::ValueType::Optional(ctx.input_type(0)));
    return absl::OkStatus();
  }
  const auto text = ctx.Attr<std::string>("type");
  if (!text) return ctx.Error("an Optional without input needs the attribute 'type'");
  auto type = ir::ValueType::Parse(*text);
  if (!type.ok()) return ctx.Error("attribute 'type': ", type.status().message());
  if (type->kind() == VKind::kOptional) return ctx.Error("attribute 'type' is itself optional");
  ctx.set_output(0, ir::ValueType::Optional(*std::move(type)));
  return absl::OkStatus();
}

absl::Status InferOptionalHasElement(InferenceContext& ctx) {
  SetOutput(ctx, 0, DataType::kBool, Shape{});
  return absl::OkStatus();
}

// The element of an optional (a tensor or sequence given directly is
// itself, as opset 18 allows).
absl::Status InferOptionalGetElement(InferenceContext& ctx) {
  const ir::ValueType& input = ctx.input_type(0);
  ctx.set_output(0, input.kind() == VKind::kOptional ? *input.element() : input);
  return absl::OkStatus();
}

void RegisterSequences(OpRegistry& r) {
  MustRegister(r, OpSchemaBuilder("SequenceEmpty", 11)
                      .Doc("An empty sequence of `dtype` (ONNX's TensorProto data type, float by "
                           "default).")
                      .Output("output", "S")
                      .TypeConstraint(SequenceOf("S"))
                      .OptionalAttr("dtype", Kind::kInt)
                      .ValueDependentOutputShape()
                      .Infer(InferSequenceEmpty));
  MustRegister(r, OpSchemaBuilder("SequenceConstruct", 11)
                      .Doc("A sequence of the inputs, which share one dtype.")
                      .VariadicInput("inputs", "T", 1)
                      .Output("output_sequence", "S")
                      .TypeConstraint("T", AllTensorTypes())
                      .TypeConstraint(SequenceOf("S"))
                      .ValueDependentOutputShape()  // elements of several shapes have none
                      .Infer(InferSequenceConstruct));
  MustRegister(r, OpSchemaBuilder("SequenceInsert", 11)
                      .Doc("The sequence with `tensor` inserted before `position` (in [-n, n]; "
                           "appended when absent).")
                      .Input("input_sequence", "S")
                      .Input("tensor", "T")
                      .OptionalInput("position", "I")
                      .Output("output_sequence", "S")
                      .TypeConstraint(SequenceOf("S"))
                      .TypeConstraint("T", AllTensorTypes())
                      .TypeConstraint("I", IndexTypes())
                      .ValueDependentOutputShape()  // elements of several shapes have none
                      .Infer(InferSequenceInsert));
  MustRegister(r, OpSchemaBuilder("SequenceAt", 11)
                      .Doc("The element at `position` (in [-n, n-1]).")
                      .Input("input_sequence", "S")
                      .Input("position", "I")
                      .Output("tensor", "T")
                      .TypeConstraint(SequenceOf("S"))
                      .TypeConstraint("T", AllTensorTypes())
                      .TypeConstraint("I", IndexTypes())
                      .ValueDependentOutputShape()  // which element is a run-time value
                      .Infer(InferSequenceAt));
  MustRegister(r, OpSchemaBuilder("SequenceErase", 11)
                      .Doc("The sequence without the element at `position` (the last when absent).")
                      .Input("input_sequence", "S")
                      .OptionalInput("position", "I")
                      .Output("output_sequence", "S")
                      .TypeConstraint(SequenceOf("S"))
                      .TypeConstraint("I", IndexTypes())
                      .Infer(InferSequenceErase));
  MustRegister(r, OpSchemaBuilder("SequenceLength", 11)
                      .Doc("The number of elements, an int64 scalar.")
                      .Input("input_sequence", "S")
                      .Output("length", "i64")
                      .TypeConstraint(SequenceOf("S"))
                      .Infer(InferSequenceLength));
}

void RegisterSequenceTensorOps(OpRegistry& r) {
  MustRegister(r, OpSchemaBuilder("SplitToSequence", 11)
                      .Doc("Splits `input` along `axis` into a sequence: pieces of length 1 without "
                           "`split` (the axis dropped when keepdims is 0), pieces of length `split` "
                           "(the last may be shorter) for a scalar, the given lengths for 1-D.")
                      .Input("input", "T")
                      .OptionalInput("split", "I")
                      .Output("output_sequence", "S")
                      .TypeConstraint("T", AllTensorTypes())
                      .TypeConstraint("I", IndexTypes())
                      .TypeConstraint(SequenceOf("S"))
                      .Attr("axis", Kind::kInt, int64_t{0})
                      .Attr("keepdims", Kind::kInt, int64_t{1})
                      .ValueInputs({1})
                      .ValueDependentOutputShape()  // pieces of several lengths have none
                      .Infer(InferSplitToSequence));
  MustRegister(r, OpSchemaBuilder("ConcatFromSequence", 11)
                      .Doc("Concatenates the elements along `axis`, or stacks them along a new axis "
                           "when new_axis is 1.")
                      .Input("input_sequence", "S")
                      .Output("concat_result", "T")
                      .TypeConstraint(SequenceOf("S"))
                      .TypeConstraint("T", AllTensorTypes())
                      .RequiredAttr("axis", Kind::kInt)
                      .Attr("new_axis", Kind::kInt, int64_t{0})
                      .ValueDependentOutputShape()  // the length is the sequence's
                      .Infer(InferConcatFromSequence));
  MustRegister(r, OpSchemaBuilder("SequenceMap", 17)
                      .Doc("Runs `body` once per element of the input sequence; further sequence "
                           "inputs give their element of the same position, tensors themselves; "
                           "then captures. Each output gathers one body output per element.")
                      .Input("input_sequence", "S")
                      .VariadicInput("additional_inputs", "", 0)
                      .VariadicOutput("out_sequence", "", 1)
                      .TypeConstraint(SequenceOf("S"))
                      .OptionalAttr("body", Kind::kGraph)
                      .ValueDependentOutputShape()
                      .Infer(InferSequenceMap));
}

void RegisterOptionals(OpRegistry& r) {
  MustRegister(r, OpSchemaBuilder("Optional", 15)
                      .Doc("An optional holding `input`, or an empty optional of `type` (the "
                           "ValueType text form) without it.")
                      .OptionalInput("input", "V")
                      .Output("output", "O")
                      .TypeConstraint(AnyValue("V"))
                      .TypeConstraint(AnyValue("O"))
                      .OptionalAttr("type", Kind::kString)
                      .ValueDependentOutputShape()
                      .Infer(InferOptional));
  MustRegister(r, OpSchemaBuilder("OptionalHasElement", 15)
                      .Doc("Whether the optional holds a value (false for an absent input).")
                      .OptionalInput("input", "O")
                      .Output("output", "bool")
                      .TypeConstraint(AnyValue("O"))
                      .Infer(InferOptionalHasElement));
  MustRegister(r, OpSchemaBuilder("OptionalGetElement", 15)
                      .Doc("The value an optional holds; an error for an empty one.")
                      .Input("input", "O")
                      .Output("output", "V")
                      .TypeConstraint(AnyValue("O"))
                      .TypeConstraint(AnyValue("V"))
                      .ValueDependentOutputShape()
                      .Infer(InferOptionalGetElement));
}

}  // namespace

void RegisterSequenceOps(OpRegistry& registry) {
  RegisterSequences(registry);
  RegisterSequenceTensorOps(registry);
  RegisterOptionals(registry);
}

}  // namespace ge::ops
