// Schemas and shape inference of cpu_fused's ops.
#include "runtime/engines/cpu_fused/fused_ops.h"

#include <string>
#include <vector>

#include "base/ops/shape_utils.h"
#include "base/status.h"

namespace ge::engine::cpu_fused {
namespace {

using Kind = ir::AttrValue::Kind;

// a and b as one dim: equal, or either unknown (then the known one).
bool MergeDim(int64_t a, int64_t b, int64_t* out) {
  if (a >= 0 && b >= 0 && a != b) return false;
  *out = a >= 0 ? a : b;
  return true;
}

absl::Status InferAttention(ops::InferenceContext& ctx) {
  const Shape& q = ctx.input_tensor(kAttentionQ).shape;
  const Shape& k = ctx.input_tensor(kAttentionK).shape;
  const Shape& v = ctx.input_tensor(kAttentionV).shape;
  const DataType dtype = ctx.input_tensor(kAttentionQ).dtype;
  if (q.unknown_rank() || k.unknown_rank() || v.unknown_rank()) {
    ctx.set_output(0, dtype, Shape::UnknownRank());
    return absl::OkStatus();
  }
  const int64_t rank = q.rank();
  if (rank < 2 || k.rank() != rank || v.rank() != rank) {
    return ctx.Error("Q ", q.ToString(), ", K ", k.ToString(), " and V ", v.ToString(),
                     " must have one rank of at least 2");
  }
  const bool k_transposed = ctx.AttrOr<int64_t>(kAttrKTransposed, 1) != 0;
  std::vector<int64_t> y(q.dims().begin(), q.dims().end());
  for (int64_t i = 0; i + 2 < rank; ++i) {
    if (!MergeDim(y[i], k.dim(i), &y[i]) || !MergeDim(y[i], v.dim(i), &y[i])) {
      return ctx.Error("batch dim ", i, " differs between Q ", q.ToString(), ", K ", k.ToString(), " and V ",
                       v.ToString());
    }
  }
  const int64_t k_depth = k.dim(rank - (k_transposed ? 2 : 1));
  const int64_t k_len = k.dim(rank - (k_transposed ? 1 : 2));
  int64_t depth = 0, len = 0;
  if (!MergeDim(q.dim(rank - 1), k_depth, &depth)) {
    return ctx.Error("Q ", q.ToString(), " and K ", k.ToString(), " disagree on the head size");
  }
  if (!MergeDim(k_len, v.dim(rank - 2), &len)) {
    return ctx.Error("K ", k.ToString(), " and V ", v.ToString(), " disagree on the key length");
  }
  if (ctx.has_input(kAttentionScale)) {
    const Shape& s = ctx.input_tensor(kAttentionScale).shape;
    const int64_t count = s.unknown_rank() ? -1 : ops::DimProduct(s.dims());
    if (count >= 0 && count != 1) return ctx.Error("the scale ", s.ToString(), " must hold one element");
  }
  if (ctx.has_input(kAttentionMask)) {
    std::vector<int64_t> scores(y.begin(), y.end() - 1);
    scores.push_back(len);
    const Shape& m = ctx.input_tensor(kAttentionMask).shape;
    if (!ops::CheckUnidirectionalBroadcast(m, Shape(scores)).ok()) {
      return ctx.Error("the mask ", m.ToString(), " does not broadcast to the scores ", Shape(scores).ToString());
    }
  }
  y[rank - 1] = v.dim(rank - 1);
  ctx.set_output(0, dtype, Shape(y));
  return absl::OkStatus();
}

absl::Status InferAddLayerNorm(ops::InferenceContext& ctx) {
  const ir::TensorDesc& x = ctx.input_tensor(kNormX);
  Shape y = x.shape;
  for (int i : {kNormResidual, kNormPostAddend}) {
    if (!ctx.has_input(i)) continue;
    auto merged = ops::MergeShapes(y, ctx.input_tensor(i).shape);
    if (!merged.ok()) {
      return ctx.Error("input ", i, " ", ctx.input_tensor(i).shape.ToString(), " must have X's shape ",
                       x.shape.ToString());
    }
    y = *std::move(merged);
  }
  if (!y.unknown_rank()) {
    const int64_t axis = ctx.AttrOr<int64_t>("axis", -1);
    if (!ops::NormalizeAxis(axis, y.rank()).ok()) {
      return ctx.Error("axis ", axis, " is out of range for rank ", y.rank());
    }
  }
  ctx.set_output(0, x.dtype, std::move(y));
  return absl::OkStatus();
}

}  // namespace

absl::Status RegisterFusedOps(ops::OpRegistry& registry) {
  const std::vector<DataType> kFloat = {DataType::kFloat};
  if (registry.Find(kFusedAttentionOp) == nullptr) {
    ops::OpSchemaBuilder b{std::string(kFusedAttentionOp), 1};
    b.Doc("cpu_fused: softmax(Q Kt * scale + mask) V in one kernel.")
        .Input("Q", "T")
        .Input("K", "T")
        .Input("V", "T")
        .OptionalInput("S", "T")
        .OptionalInput("M", "T")
        .Output("Y", "T")
        .TypeConstraint("T", kFloat)
        .Attr(std::string(kAttrKTransposed), Kind::kInt, ir::AttrValue(int64_t{1}))
        .Attr(std::string(kAttrScaleDivides), Kind::kInt, ir::AttrValue(int64_t{0}))
        .Infer(InferAttention);
    GE_RETURN_IF_ERROR(registry.Register(std::move(b).Build()));
  }
  if (registry.Find(kFusedAddLayerNormOp) == nullptr) {
    ops::OpSchemaBuilder b{std::string(kFusedAddLayerNormOp), 1};
    b.Doc("cpu_fused: LayerNormalization(X + R) + P in one pass over each row.")
        .Input("X", "T")
        .Input("Scale", "T")
        .OptionalInput("B", "T")
        .OptionalInput("R", "T")
        .OptionalInput("P", "T")
        .Output("Y", "T")
        .TypeConstraint("T", kFloat)
        .Attr("axis", Kind::kInt, ir::AttrValue(int64_t{-1}))
        .Attr("epsilon", Kind::kFloat, ir::AttrValue(1e-5f))
        .Infer(InferAddLayerNorm);
    GE_RETURN_IF_ERROR(registry.Register(std::move(b).Build()));
  }
  return absl::OkStatus();
}

}  // namespace ge::engine::cpu_fused
