// Schemas and shape inference of the random ops: RandomNormal-1,
// RandomUniform-1, RandomNormalLike-1, RandomUniformLike-1, Bernoulli-15
// and Multinomial-7.
//
// Every one is stateful (OpSchema::stateful): its output changes from run
// to run, so constant folding never evaluates it, no pass may merge two of
// them, and ExecuteOp's shared op cache refuses it. The `seed` attribute
// fixes a node's stream; without it the compiler stamps the session option
// ge.exec.seed (RandomSeedPass), and without both each loaded graph draws
// its own (see runtime/engines/host_cpu/random_kernels.cc for the
// generator). Sizes come from attributes (`shape`, `sample_size`), so
// inference bounds them with CheckGeneratedSize before anything allocates.
#include <algorithm>

#include "base/ops/infer_util.h"
#include "base/ops/op_families.h"
#include "base/ops/shape_utils.h"
#include "base/ops/size_limits.h"
#include "base/status.h"

namespace ge::ops {
namespace {

using Kind = ir::AttrValue::Kind;
using DT = DataType;

// The `dtype` attribute as a DataType when present (checked against
// `allowed`), else `fallback`.
absl::StatusOr<DataType> DtypeAttr(const InferenceContext& ctx, DataType fallback,
                                   const std::vector<DataType>& allowed) {
  DataType dtype = fallback;
  if (auto d = ctx.Attr<int64_t>("dtype")) {
    if (*d < 1 || *d > kMaxDataTypeValue) return InvalidArgument("dtype ", *d, " is not a tensor element type");
    dtype = static_cast<DataType>(*d);
  }
  if (dtype == DT::kUndefined) return dtype;  // input type unknown yet
  if (std::find(allowed.begin(), allowed.end(), dtype) == allowed.end()) {
    return InvalidArgument("dtype ", DataTypeName(dtype), " is not allowed for ", ctx.op().type());
  }
  return dtype;
}

const std::vector<DataType>& RandomFloatTypes() {
  static const auto* types = new std::vector<DataType>{DT::kFloat16, DT::kFloat, DT::kDouble};
  return *types;
}

// RandomNormal, RandomUniform: `shape` and `dtype` from attributes.
absl::Status InferRandomFromShape(InferenceContext& ctx) {
  GE_ASSIGN_OR_RETURN(DataType dtype, DtypeAttr(ctx, DT::kFloat, RandomFloatTypes()));
  const auto shape = ctx.Attr<std::vector<int64_t>>("shape");
  if (!shape) return InvalidArgument("attribute shape is required");
  GE_RETURN_IF_ERROR(CheckGeneratedSize(StrCat(ctx.op().type(), " shape"), *shape));
  SetOutput(ctx, 0, dtype, Shape(*shape));
  return absl::OkStatus();
}

// RandomNormalLike, RandomUniformLike, Bernoulli: input 0's shape; the
// dtype attribute, else input 0's dtype.
absl::Status InferRandomLike(InferenceContext& ctx, const std::vector<DataType>& allowed) {
  GE_ASSIGN_OR_RETURN(DataType dtype, DtypeAttr(ctx, ctx.input_tensor(0).dtype, allowed));
  SetOutput(ctx, 0, dtype, ctx.input_tensor(0).shape);
  return absl::OkStatus();
}

const std::vector<DataType>& BernoulliOutputTypes() {
  static const auto* types = new std::vector<DataType>(Union(NumericTypes(), Types({DT::kBool})));
  return *types;
}

// Multinomial: [batch, class_size] -> [batch, sample_size].
absl::Status InferMultinomial(InferenceContext& ctx) {
  GE_ASSIGN_OR_RETURN(DataType dtype, DtypeAttr(ctx, DT::kInt32, Types({DT::kInt32, DT::kInt64})));
  const int64_t samples = ctx.AttrOr<int64_t>("sample_size", 1);
  if (samples < 1) return InvalidArgument("sample_size must be positive, got ", samples);
  const Shape& x = ctx.input_tensor(0).shape;
  if (!x.unknown_rank() && x.rank() != 2)
    return InvalidArgument("input must be [batch, class_size], got ", x.ToString());
  const int64_t batch = x.unknown_rank() ? kUnknownDim : x.dim(0);
  const Shape out{batch, samples};
  GE_RETURN_IF_ERROR(CheckGeneratedSize("Multinomial [batch, sample_size]", out.span(), /*allow_unknown=*/true));
  SetOutput(ctx, 0, dtype, out);
  return absl::OkStatus();
}

}  // namespace

void RegisterRandomOps(OpRegistry& r) {
  MustRegister(r, OpSchemaBuilder("RandomNormal", 1)
                      .Doc("Samples of the normal distribution N(mean, scale^2) of the given shape.")
                      .Output("output", "T")
                      .TypeConstraint("T", RandomFloatTypes())
                      .Attr("dtype", Kind::kInt, int64_t{1})
                      .Attr("mean", Kind::kFloat, 0.0f)
                      .Attr("scale", Kind::kFloat, 1.0f)
                      .OptionalAttr("seed", Kind::kFloat)
                      .RequiredAttr("shape", Kind::kInts)
                      .Stateful()
                      .Infer(InferRandomFromShape));
  MustRegister(r, OpSchemaBuilder("RandomUniform", 1)
                      .Doc("Samples of the uniform distribution on [low, high) of the given shape.")
                      .Output("output", "T")
                      .TypeConstraint("T", RandomFloatTypes())
                      .Attr("dtype", Kind::kInt, int64_t{1})
                      .Attr("high", Kind::kFloat, 1.0f)
                      .Attr("low", Kind::kFloat, 0.0f)
                      .OptionalAttr("seed", Kind::kFloat)
                      .RequiredAttr("shape", Kind::kInts)
                      .Stateful()
                      .Infer(InferRandomFromShape));
  MustRegister(r, OpSchemaBuilder("RandomNormalLike", 1)
                      .Doc("RandomNormal with the shape (and, without dtype, the dtype) of the input.")
                      .Input("input", "T1")
                      .Output("output", "T2")
                      .TypeConstraint("T1", AllTensorTypes())
                      .TypeConstraint("T2", RandomFloatTypes())
                      .OptionalAttr("dtype", Kind::kInt)
                      .Attr("mean", Kind::kFloat, 0.0f)
                      .Attr("scale", Kind::kFloat, 1.0f)
                      .OptionalAttr("seed", Kind::kFloat)
                      .Stateful()
                      .Infer([](InferenceContext& ctx) { return InferRandomLike(ctx, RandomFloatTypes()); }));
  MustRegister(r, OpSchemaBuilder("RandomUniformLike", 1)
                      .Doc("RandomUniform with the shape (and, without dtype, the dtype) of the input.")
                      .Input("input", "T1")
                      .Output("output", "T2")
                      .TypeConstraint("T1", AllTensorTypes())
                      .TypeConstraint("T2", RandomFloatTypes())
                      .OptionalAttr("dtype", Kind::kInt)
                      .Attr("high", Kind::kFloat, 1.0f)
                      .Attr("low", Kind::kFloat, 0.0f)
                      .OptionalAttr("seed", Kind::kFloat)
                      .Stateful()
                      .Infer([](InferenceContext& ctx) { return InferRandomLike(ctx, RandomFloatTypes()); }));
  MustRegister(r, OpSchemaBuilder("Bernoulli", 15)
                      .Doc("1 with probability input[i], else 0, element by element.")
                      .Input("input", "T1")
                      .Output("output", "T2")
                      .TypeConstraint("T1", RandomFloatTypes())
                      .TypeConstraint("T2", BernoulliOutputTypes())
                      .OptionalAttr("dtype", Kind::kInt)
                      .OptionalAttr("seed", Kind::kFloat)
                      .Stateful()
                      .Infer([](InferenceContext& ctx) { return InferRandomLike(ctx, BernoulliOutputTypes()); }));
  MustRegister(r, OpSchemaBuilder("Multinomial", 7)
                      .Doc("sample_size class indices per batch row, drawn by the row's unnormalized "
                           "log-probabilities.")
                      .Input("input", "T1")
                      .Output("output", "T2")
                      .TypeConstraint("T1", RandomFloatTypes())
                      .TypeConstraint("T2", Types({DT::kInt32, DT::kInt64}))
                      .Attr("dtype", Kind::kInt, int64_t{6})
                      .Attr("sample_size", Kind::kInt, int64_t{1})
                      .OptionalAttr("seed", Kind::kFloat)
                      .Stateful()
                      .Infer(InferMultinomial));
}

}  // namespace ge::ops
