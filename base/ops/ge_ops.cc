// ged's own ops: graph inputs and outputs (Data, NetOutput), constants and
// variables, partitioning markers (PartitionedCall, InnerData,
// InnerNetOutput, PlaceHolder, End), control flow (If, Case, While), NoOp,
// Identity and TransData. Ops whose output type is given rather than
// computed keep their declared type; control-flow ops read their
// subgraphs' results, which InferShapes has inferred for the node's inputs.
#include "base/ops/op_families.h"

#include "base/ir/op_types.h"
#include "base/ops/infer_util.h"
#include "base/ops/shape_utils.h"
#include "base/status.h"

namespace ge::ops {
namespace {

using Kind = ir::AttrValue::Kind;

bool Undefined(const ir::ValueType& t) { return t.is_tensor() && t.dtype() == DataType::kUndefined; }

absl::StatusOr<DataType> DtypeAttr(const InferenceContext& ctx, std::string_view name) {
  const int64_t v = ctx.AttrOr<int64_t>(name, 0);
  if (v < 1 || v > kMaxDataTypeValue) {
    return InvalidArgument("attribute '", name, "' is ", v, ", not a data type");
  }
  return static_cast<DataType>(v);
}

// Data, InnerData: the declared type wins; else the shape/dtype attributes
// (Data), else the optional input's type.
absl::Status InferDeclared(InferenceContext& ctx) {
  if (ctx.num_outputs() == 0 || !Undefined(ctx.output_type(0))) return absl::OkStatus();
  auto shape = ctx.Attr<Shape>("shape");
  if (shape && ctx.Attr<int64_t>("dtype")) {
    GE_ASSIGN_OR_RETURN(DataType dtype, DtypeAttr(ctx, "dtype"));
    ctx.set_output(0, dtype, *shape);
  } else if (ctx.has_input(0)) {
    ctx.set_output(0, ctx.input_type(0));
  }
  return absl::OkStatus();
}

absl::Status InferConst(InferenceContext& ctx) {
  auto value = ctx.Attr<Tensor>(ir::kAttrValue);
  if (!value || !value->defined()) return InvalidArgument("attribute 'value' holds no tensor");
  SetOutput(ctx, 0, value->dtype(), value->shape());
  return absl::OkStatus();
}

// FileConstant, Variable: the type comes from the shape and dtype attributes.
absl::Status InferFromShapeAttrs(InferenceContext& ctx) {
  GE_ASSIGN_OR_RETURN(DataType dtype, DtypeAttr(ctx, "dtype"));
  SetOutput(ctx, 0, dtype, ctx.AttrOr<Shape>("shape", Shape::UnknownRank()));
  return absl::OkStatus();
}

absl::Status InferTransData(InferenceContext& ctx) {
  const std::string src = ctx.AttrOr<std::string>("src_format", "");
  const std::string dst = ctx.AttrOr<std::string>("dst_format", "");
  auto src_format = ir::ParseFormat(src);
  auto dst_format = ir::ParseFormat(dst);
  if (!src_format) return InvalidArgument("src_format '", src, "' is not a format");
  if (!dst_format) return InvalidArgument("dst_format '", dst, "' is not a format");
  const ir::TensorDesc& in = ctx.input_tensor(0);
  if (in.format != ir::Format::kND && in.format != *src_format) {
    return InvalidArgument("input 0 has format ", ir::FormatName(in.format), " but src_format is ", src);
  }
  // Shapes are logical: a layout change keeps them.
  SetOutput(ctx, 0, ir::ValueType(ir::TensorDesc(in.dtype, in.shape, *dst_format)));
  return absl::OkStatus();
}

// Looks up a subgraph for inference: null without a graph to look in (the
// outputs stay as declared), an error when the graph lacks it.
absl::StatusOr<const ir::Graph*> LookUpSubgraph(const InferenceContext& ctx, const std::string& name) {
  if (!ctx.has_graph()) return nullptr;
  if (name.empty()) return InvalidArgument("names no subgraph");
  const ir::Graph* g = ctx.FindSubgraph(name);
  if (g == nullptr) return InvalidArgument("subgraph '", name, "' not found");
  return g;
}

absl::StatusOr<std::vector<ir::ValueType>> BranchResults(const InferenceContext& ctx,
                                                         const ir::Graph& g) {
  GE_ASSIGN_OR_RETURN(std::vector<ir::ValueType> results, SubgraphOutputTypes(g));
  if (static_cast<int>(results.size()) != ctx.num_outputs()) {
    return InvalidArgument("subgraph '", g.name(), "' returns ", results.size(), " values, the node has ",
                           ctx.num_outputs(), " outputs");
  }
  return results;
}

// If, Case: each output is the generalization of what every branch gives.
absl::Status MergeBranches(InferenceContext& ctx, const std::vector<std::string>& names) {
  std::vector<const ir::Graph*> graphs;
  for (const std::string& name : names) {
    GE_ASSIGN_OR_RETURN(const ir::Graph* g, LookUpSubgraph(ctx, name));
    if (g == nullptr) return absl::OkStatus();
    graphs.push_back(g);
  }
  if (graphs.empty()) return ctx.has_graph() ? InvalidArgument("has no branches") : absl::OkStatus();
  GE_ASSIGN_OR_RETURN(std::vector<ir::ValueType> merged, BranchResults(ctx, *graphs[0]));
  for (size_t b = 1; b < graphs.size(); ++b) {
    GE_ASSIGN_OR_RETURN(std::vector<ir::ValueType> results, BranchResults(ctx, *graphs[b]));
    for (size_t i = 0; i < merged.size(); ++i) {
      auto general = GeneralizeValueTypes(merged[i], results[i]);
      if (!general.ok()) {
        return InvalidArgument("output ", i, ": branch '", graphs[0]->name(), "' gives ",
                               merged[i].ToString(), " but branch '", graphs[b]->name(), "' gives ",
                               results[i].ToString());
      }
      merged[i] = *std::move(general);
    }
  }
  ctx.output_types() = std::move(merged);
  return absl::OkStatus();
}

absl::Status CheckScalarLike(const InferenceContext& ctx, int i) {
  const Shape& shape = ctx.input_tensor(i).shape;
  if (shape.IsFullyKnown() && shape.NumElementsUnchecked() != 1) {
    return InvalidArgument("input ", i, " must hold one element, got shape ", shape.ToString());
  }
  return absl::OkStatus();
}

absl::Status InferIf(InferenceContext& ctx) {
  GE_RETURN_IF_ERROR(CheckScalarLike(ctx, 0));
  return MergeBranches(ctx, {SubgraphName(ctx.op(), 0, "then_branch"),
                             SubgraphName(ctx.op(), 1, "else_branch")});
}

absl::Status InferCase(InferenceContext& ctx) {
  GE_RETURN_IF_ERROR(CheckScalarLike(ctx, 0));
  return MergeBranches(ctx, SubgraphNames(ctx.op(), "branches"));
}

// While: loop-carried values keep their input types, generalized where the
// body changes them.
absl::Status InferWhile(InferenceContext& ctx) {
  if (ctx.num_outputs() != ctx.num_inputs()) {
    return InvalidArgument("has ", ctx.num_inputs(), " inputs but ", ctx.num_outputs(),
                           " outputs; loop-carried values need one of each");
  }
  GE_ASSIGN_OR_RETURN(const ir::Graph* body, LookUpSubgraph(ctx, SubgraphName(ctx.op(), 1, "body")));
  if (body == nullptr) return absl::OkStatus();
  GE_ASSIGN_OR_RETURN(std::vector<ir::ValueType> results, BranchResults(ctx, *body));
  for (int i = 0; i < ctx.num_inputs(); ++i) {
    if (!ctx.has_input(i)) return InvalidArgument("loop-carried input ", i, " is missing");
    auto general = GeneralizeValueTypes(ctx.input_type(i), results[i]);
    if (!general.ok()) {
      return InvalidArgument("loop-carried value ", i, " enters as ", ctx.input_type(i).ToString(),
                             " but body '", body->name(), "' returns ", results[i].ToString());
    }
    ctx.set_output(i, *std::move(general));
  }
  return absl::OkStatus();
}

absl::Status InferPartitionedCall(InferenceContext& ctx) {
  const std::string name = SubgraphName(ctx.op(), 0, "f");
  if (name.empty()) return absl::OkStatus();
  GE_ASSIGN_OR_RETURN(const ir::Graph* g, LookUpSubgraph(ctx, name));
  if (g == nullptr) return absl::OkStatus();
  GE_ASSIGN_OR_RETURN(ctx.output_types(), BranchResults(ctx, *g));
  return absl::OkStatus();
}

absl::Status KeepDeclared(InferenceContext&) { return absl::OkStatus(); }

void RegisterStructuralOps(OpRegistry& r) {
  MustRegister(r, OpSchemaBuilder(std::string(ir::kData), 1)
                      .Doc("A graph input. Its type is declared in the OpDesc, or given by the "
                           "shape and dtype attributes.")
                      .OptionalInput("x", "")
                      .Output("y", "")
                      .Attr(std::string(ir::kAttrIndex), Kind::kInt, int64_t{0})
                      .OptionalAttr("shape", Kind::kShape)
                      .OptionalAttr("dtype", Kind::kInt)
                      .Infer(InferDeclared));
  MustRegister(r, OpSchemaBuilder(std::string(ir::kNetOutput), 1)
                      .Doc("The graph's results, in input order.")
                      .VariadicInput("inputs", "", 0)
                      .Infer(KeepDeclared));
  MustRegister(r, OpSchemaBuilder(std::string(ir::kConst), 1)
                      .Doc("A constant tensor (ONNX Constant imports as Const).")
                      .Output("y", "")
                      .RequiredAttr(std::string(ir::kAttrValue), Kind::kTensor)
                      .Infer(InferConst));
  MustRegister(r, OpSchemaBuilder(std::string(ir::kFileConstant), 1)
                      .Doc("A constant read from a file at load time (external data).")
                      .Output("y", "")
                      .RequiredAttr("shape", Kind::kShape)
                      .RequiredAttr("dtype", Kind::kInt)
                      .OptionalAttr("file_path", Kind::kString)
                      .OptionalAttr("file_id", Kind::kString)
                      .OptionalAttr("location", Kind::kString)
                      .Attr("offset", Kind::kInt, int64_t{0})
                      .Attr("length", Kind::kInt, int64_t{-1})
                      .Infer(InferFromShapeAttrs));
  MustRegister(r, OpSchemaBuilder(std::string(ir::kVariable), 1)
                      .Doc("A variable owned by the session's VarManager; `value` is its initial value.")
                      .Output("y", "")
                      .RequiredAttr("shape", Kind::kShape)
                      .RequiredAttr("dtype", Kind::kInt)
                      .OptionalAttr("value", Kind::kTensor)
                      .OptionalAttr("container", Kind::kString)
                      .OptionalAttr("shared_name", Kind::kString)
                      .Stateful()
                      .Infer(InferFromShapeAttrs));
  MustRegister(r, OpSchemaBuilder(std::string(ir::kNoOp), 1)
                      .Doc("Does nothing; orders through control edges.")
                      .Infer(KeepDeclared));
  TypeConstraint any_value{"V", AllTensorTypes(), true, true, true};
  MustRegister(r, OpSchemaBuilder(std::string(ir::kIdentity), 16)
                      .Input("input", "V")
                      .Output("output", "V")
                      .TypeConstraint(any_value)
                      .View(0, 0)
                      .Infer(SameAsInput0));
  MustRegister(r, OpSchemaBuilder(std::string(ir::kTransData), 1)
                      .Doc("Converts the layout between formats; the logical shape is unchanged.")
                      .Input("src", "T")
                      .Output("dst", "T")
                      .TypeConstraint("T", AllTensorTypes())
                      .RequiredAttr("src_format", Kind::kString)
                      .RequiredAttr("dst_format", Kind::kString)
                      .Infer(InferTransData));
}

void RegisterPartitionOps(OpRegistry& r) {
  MustRegister(r, OpSchemaBuilder(std::string(ir::kPartitionedCall), 1)
                      .Doc("Calls subgraph `f` (subgraph_names()[0]) on its inputs.")
                      .VariadicInput("args", "", 0)
                      .VariadicOutput("output", "", 0)
                      .OptionalAttr("f", Kind::kGraph)
                      .Infer(InferPartitionedCall));
  MustRegister(r, OpSchemaBuilder(std::string(ir::kInnerData), 1)
                      .Doc("A subgraph input bound to the parent node's input _parent_index.")
                      .OptionalInput("x", "")
                      .Output("y", "")
                      .RequiredAttr(std::string(ir::kAttrParentIndex), Kind::kInt)
                      .Infer(InferDeclared));
  MustRegister(r, OpSchemaBuilder(std::string(ir::kInnerNetOutput), 1)
                      .Doc("A subgraph's results, returned as the parent node's outputs.")
                      .VariadicInput("inputs", "", 0)
                      .Infer(KeepDeclared));
  MustRegister(r, OpSchemaBuilder(std::string(ir::kPlaceHolder), 1)
                      .Doc("Partitioning: stands for a value produced in another partition.")
                      .Output("y", "")
                      .Infer(KeepDeclared));
  MustRegister(r, OpSchemaBuilder(std::string(ir::kEnd), 1)
                      .Doc("Partitioning: a value consumed in another partition.")
                      .Input("x", "")
                      .Infer(KeepDeclared));
}

void RegisterControlFlowOps(OpRegistry& r) {
  MustRegister(r, OpSchemaBuilder(std::string(ir::kIf), 16)
                      .Doc("Runs then_branch (subgraph 0) or else_branch (subgraph 1); their Data "
                           "nodes take inputs 1.. (index + 1, or _parent_index).")
                      .Input("cond", "B")
                      .VariadicInput("inputs", "", 0)
                      .VariadicOutput("outputs", "", 0)
                      .TypeConstraint("B", Types({DataType::kBool}))
                      .OptionalAttr("then_branch", Kind::kGraph)
                      .OptionalAttr("else_branch", Kind::kGraph)
                      .Infer(InferIf));
  MustRegister(r, OpSchemaBuilder(std::string(ir::kCase), 1)
                      .Doc("Runs branch `branch_index` (out of range: the last); Data nodes take "
                           "inputs 1...")
                      .Input("branch_index", "I")
                      .VariadicInput("inputs", "", 0)
                      .VariadicOutput("outputs", "", 0)
                      .TypeConstraint("I", IndexTypes())
                      .OptionalAttr("branches", Kind::kGraphs)
                      .Infer(InferCase));
  MustRegister(r, OpSchemaBuilder(std::string(ir::kWhile), 1)
                      .Doc("While cond (subgraph 0) holds, body (subgraph 1) maps the loop-carried "
                           "values to their next values.")
                      .VariadicInput("inputs", "", 1)
                      .VariadicOutput("outputs", "", 1)
                      .OptionalAttr("cond", Kind::kGraph)
                      .OptionalAttr("body", Kind::kGraph)
                      .Attr("parallel_iterations", Kind::kInt, int64_t{10})
                      .Infer(InferWhile));
}

}  // namespace

void RegisterGeOps(OpRegistry& registry) {
  RegisterStructuralOps(registry);
  RegisterPartitionOps(registry);
  RegisterControlFlowOps(registry);
}

}  // namespace ge::ops
