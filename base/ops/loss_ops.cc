// Schemas and shape inference of the loss ops NegativeLogLikelihoodLoss-13
// and SoftmaxCrossEntropyLoss-13: scores [N, C, d1..dk] with class targets
// [N, d1..dk]; the loss has the targets' shape with reduction "none", else
// it is a scalar.
#include "base/ops/infer_util.h"
#include "base/ops/op_families.h"
#include "base/ops/shape_utils.h"
#include "base/status.h"

namespace ge::ops {
namespace {

using DT = DataType;
using Kind = ir::AttrValue::Kind;

absl::Status InferLoss(InferenceContext& ctx) {
  const ir::TensorDesc& scores = ctx.input_tensor(0);
  const Shape& target = ctx.input_tensor(1).shape;
  if (!scores.shape.unknown_rank() && scores.shape.rank() < 2) {
    return InvalidArgument("input 0 must be [N, C, ...], got ", scores.shape.ToString());
  }
  if (!scores.shape.unknown_rank() && !target.unknown_rank() && target.rank() != scores.shape.rank() - 1) {
    return InvalidArgument("target ", target.ToString(), " must have one dim less than input ",
                           scores.shape.ToString());
  }
  const std::string reduction = ctx.AttrOr<std::string>("reduction", "mean");
  if (reduction != "none" && reduction != "sum" && reduction != "mean") {
    return InvalidArgument("reduction '", reduction, "' is not none, sum or mean");
  }
  SetOutput(ctx, 0, scores.dtype, reduction == "none" ? target : Shape{});
  SetOutput(ctx, 1, scores.dtype, scores.shape);  // SoftmaxCrossEntropyLoss's log_prob
  return absl::OkStatus();
}

}  // namespace

void RegisterLossOps(OpRegistry& r) {
  const std::vector<DataType> floats = Types({DT::kFloat16, DT::kFloat, DT::kDouble, DT::kBFloat16});
  MustRegister(r, OpSchemaBuilder("NegativeLogLikelihoodLoss", 13)
                      .Input("input", "T")
                      .Input("target", "Tind")
                      .OptionalInput("weight", "T")
                      .Output("loss", "T")
                      .TypeConstraint("T", floats)
                      .TypeConstraint("Tind", IndexTypes())
                      .Attr("reduction", Kind::kString, "mean")
                      .OptionalAttr("ignore_index", Kind::kInt)
                      .Infer(InferLoss));
  MustRegister(r, OpSchemaBuilder("SoftmaxCrossEntropyLoss", 13)
                      .Input("scores", "T")
                      .Input("labels", "Tind")
                      .OptionalInput("weights", "T")
                      .Output("output", "T")
                      .OptionalOutput("log_prob", "T")
                      .TypeConstraint("T", floats)
                      .TypeConstraint("Tind", IndexTypes())
                      .Attr("reduction", Kind::kString, "mean")
                      .OptionalAttr("ignore_index", Kind::kInt)
                      .Infer(InferLoss));
}

}  // namespace ge::ops
