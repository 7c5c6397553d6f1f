// Control-flow ops beyond ged's If / Case / While / PartitionedCall (those
// are in ge_ops.cc): ONNX Loop and Scan in the form the ONNX importer builds
// them, and the three accumulator ops their lowering to While uses for scan
// outputs (docs/design/control_flow.md):
//   LoopAccumulatorInit            -> an empty sequence of `dtype`
//   LoopAccumulatorAppend(seq, x)  -> seq with x appended
//   LoopAccumulatorStack(seq)      -> the elements stacked along a new axis
//   LoopAccumulatorConcat(seq)     -> the elements joined along an existing axis
// Loop and Scan exist so that models using them import; the importer lowers
// them to While before anything else sees the graph, so no engine runs them
// and their inference keeps the declared types.
#include "base/ops/op_families.h"

#include "base/ops/infer_util.h"
#include "base/ops/shape_utils.h"
#include "base/status.h"

namespace ge::ops {
namespace {

using Kind = ir::AttrValue::Kind;

bool Unknown(const ir::ValueType& t) {
  return t.dtype() == DataType::kUndefined || t.shape().unknown_rank();
}

absl::Status KeepDeclared(InferenceContext&) { return absl::OkStatus(); }

absl::Status InferAccumulatorInit(InferenceContext& ctx) {
  const int64_t dtype = ctx.AttrOr<int64_t>("dtype", 0);
  if (dtype < 1 || dtype > kMaxDataTypeValue) {
    return ctx.Error("attribute 'dtype' is ", dtype, ", not a data type");
  }
  ctx.set_output(0, ir::ValueType::Sequence(
                        ir::ValueType::Tensor(static_cast<DataType>(dtype), Shape::UnknownRank())));
  return absl::OkStatus();
}

// The sequence's element type becomes the generalization of what it held
// and the appended value; an element type with unknown rank (an empty
// accumulator) is replaced by the value's type.
absl::Status InferAccumulatorAppend(InferenceContext& ctx) {
  const ir::ValueType& seq = ctx.input_type(0);
  const ir::ValueType& value = ctx.input_type(1);
  if (seq.kind() != ir::ValueType::Kind::kSequence || !value.is_tensor()) {
    return ctx.Error("expects a sequence and a tensor, got ", seq.ToString(), " and ", value.ToString());
  }
  const ir::ValueType& element = *seq.element();
  if (element.dtype() != DataType::kUndefined && value.dtype() != DataType::kUndefined &&
      element.dtype() != value.dtype()) {
    return ctx.Error("appends ", value.ToString(), " to a sequence of ", element.ToString());
  }
  if (Unknown(element)) {
    ctx.set_output(0, ir::ValueType::Sequence(value));
    return absl::OkStatus();
  }
  auto general = GeneralizeValueTypes(element, value);
  if (!general.ok()) return ctx.Error(general.status().message());
  ctx.set_output(0, ir::ValueType::Sequence(*std::move(general)));
  return absl::OkStatus();
}

// The element shape comes from the sequence type, else from the
// `element_shape` attribute (the body's declared output); the stacked axis
// has unknown length.
absl::Status InferAccumulatorStack(InferenceContext& ctx) {
  const ir::ValueType& seq = ctx.input_type(0);
  if (seq.kind() != ir::ValueType::Kind::kSequence) {
    return ctx.Error("expects a sequence, got ", seq.ToString());
  }
  const ir::ValueType& element = *seq.element();
  Shape shape = element.shape();
  if (shape.unknown_rank()) shape = ctx.AttrOr<Shape>("element_shape", Shape::UnknownRank());
  if (shape.unknown_rank()) {
    ctx.set_output(0, element.dtype(), Shape::UnknownRank());
    return absl::OkStatus();
  }
  const int64_t rank = shape.rank();
  int64_t axis = ctx.AttrOr<int64_t>("axis", 0);
  if (axis < -(rank + 1) || axis > rank) {
    return ctx.Error("axis ", axis, " is outside [", -(rank + 1), ", ", rank, "] for elements of shape ",
                     shape.ToString());
  }
  if (axis < 0) axis += rank + 1;
  Shape out;
  for (int64_t d = 0; d <= rank; ++d) {
    if (d == axis) out.push_back(-1);
    if (d < rank) out.push_back(shape.dim(d));
  }
  ctx.set_output(0, element.dtype(), std::move(out));
  return absl::OkStatus();
}

// The elements' rank and dims from the sequence type; the joined axis has
// unknown length.
absl::Status InferAccumulatorConcat(InferenceContext& ctx) {
  const ir::ValueType& seq = ctx.input_type(0);
  if (seq.kind() != ir::ValueType::Kind::kSequence) {
    return ctx.Error("expects a sequence, got ", seq.ToString());
  }
  const ir::ValueType& element = *seq.element();
  Shape shape = element.shape();
  if (shape.unknown_rank()) {
    ctx.set_output(0, element.dtype(), Shape::UnknownRank());
    return absl::OkStatus();
  }
  const int64_t rank = shape.rank();
  int64_t axis = ctx.AttrOr<int64_t>("axis", 0);
  if (axis < -rank || axis >= rank) {
    return ctx.Error("axis ", axis, " is outside [", -rank, ", ", rank - 1, "] for elements of shape ",
                     shape.ToString());
  }
  if (axis < 0) axis += rank;
  shape.set_dim(axis, -1);
  ctx.set_output(0, element.dtype(), std::move(shape));
  return absl::OkStatus();
}

TypeConstraint AnySequence() { return TypeConstraint{"S", AllTensorTypes(), false, true, false}; }

void RegisterOnnxControlFlow(OpRegistry& r) {
  // Loop-carried values, scan inputs and outputs each have their own type
  // (ONNX's heterogeneous variadic V): no constraint binds them together.
  MustRegister(r, OpSchemaBuilder("Loop", 16)
                      .Doc("ONNX Loop as imported (inputs M, cond, loop-carried values, then "
                           "captures); the importer lowers it to While.")
                      .OptionalInput("M", "I")
                      .OptionalInput("cond", "B")
                      .VariadicInput("v_initial", "", 0)
                      .VariadicOutput("v_final_and_scan_outputs", "", 1)
                      .TypeConstraint("I", Types({DataType::kInt64}))
                      .TypeConstraint("B", Types({DataType::kBool}))
                      .RequiredAttr("body", Kind::kGraph)
                      .Infer(KeepDeclared));
  MustRegister(r, OpSchemaBuilder("Scan", 16)
                      .Doc("ONNX Scan as imported (states, scan inputs, then captures); the "
                           "importer lowers it to While.")
                      .VariadicInput("initial_state_and_scan_inputs", "", 1)
                      .VariadicOutput("final_state_and_scan_outputs", "", 1)
                      .RequiredAttr("body", Kind::kGraph)
                      .RequiredAttr("num_scan_inputs", Kind::kInt)
                      .OptionalAttr("scan_input_axes", Kind::kInts)
                      .OptionalAttr("scan_input_directions", Kind::kInts)
                      .OptionalAttr("scan_output_axes", Kind::kInts)
                      .OptionalAttr("scan_output_directions", Kind::kInts)
                      .Infer(KeepDeclared));
}

void RegisterAccumulators(OpRegistry& r) {
  MustRegister(r, OpSchemaBuilder("LoopAccumulatorInit", 1)
                      .Doc("An empty sequence of `dtype` (a ged DataType value) that a loop's "
                           "scan output accumulates into.")
                      .Output("sequence", "S")
                      .TypeConstraint(AnySequence())
                      .RequiredAttr("dtype", Kind::kInt)
                      .ValueDependentOutputShape()  // element shapes come at run time
                      .Infer(InferAccumulatorInit));
  MustRegister(r, OpSchemaBuilder("LoopAccumulatorAppend", 1)
                      .Doc("`sequence` with `value` appended (one loop iteration's scan output). "
                           "With `merge_axis` (a value grown by Concat, joined by "
                           "LoopAccumulatorConcat) a small value may instead be joined to the last "
                           "element along that axis (before it when `merge_reverse` is 1).")
                      .Input("sequence", "S")
                      .Input("value", "T")
                      .Output("appended", "S")
                      .TypeConstraint(AnySequence())
                      .TypeConstraint("T", AllTensorTypes())
                      .OptionalAttr("merge_axis", Kind::kInt)
                      .Attr("merge_reverse", Kind::kInt, int64_t{0})
                      .ValueDependentOutputShape()  // elements of several shapes have none
                      .Infer(InferAccumulatorAppend));
  MustRegister(r, OpSchemaBuilder("LoopAccumulatorStack", 1)
                      .Doc("Stacks the sequence's equally shaped elements along a new axis `axis` "
                           "(in [-r-1, r] for elements of rank r), last element first when "
                           "`reverse` is 1. An empty sequence gives a tensor of length 0 on that "
                           "axis with the other dims from `element_shape` (shape [0] without it).")
                      .Input("sequence", "S")
                      .Output("stacked", "T")
                      .TypeConstraint(AnySequence())
                      .TypeConstraint("T", AllTensorTypes())
                      .Attr("axis", Kind::kInt, int64_t{0})
                      .Attr("reverse", Kind::kInt, int64_t{0})
                      .OptionalAttr("element_shape", Kind::kShape)
                      .ValueDependentOutputShape()  // the length is the sequence's
                      .Infer(InferAccumulatorStack));
  MustRegister(r, OpSchemaBuilder("LoopAccumulatorConcat", 1)
                      .Doc("Joins the sequence's elements along their existing axis `axis` (in "
                           "[-r, r - 1] for elements of rank r; every other dim equal), last "
                           "element first when `reverse` is 1: a loop-carried value the loop grew "
                           "by Concat, kept as its pieces while the loop ran.")
                      .Input("sequence", "S")
                      .Output("joined", "T")
                      .TypeConstraint(AnySequence())
                      .TypeConstraint("T", AllTensorTypes())
                      .Attr("axis", Kind::kInt, int64_t{0})
                      .Attr("reverse", Kind::kInt, int64_t{0})
                      .ValueDependentOutputShape()  // the length is the pieces' sum
                      .Infer(InferAccumulatorConcat));
}

}  // namespace

void RegisterLoopOps(OpRegistry& registry) {
  RegisterOnnxControlFlow(registry);
  RegisterAccumulators(registry);
}

}  // namespace ge::ops
