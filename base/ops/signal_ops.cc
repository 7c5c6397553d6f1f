// Schemas and shape inference of the signal ops of opset 17: DFT, STFT and
// MelWeightMatrix.
//
// Their output sizes come from input values (dft_length, frame_step,
// frame_length, num_mel_bins): they are value inputs, the dims stay unknown
// until the values are (the graph region goes dynamic), and every size a
// model names passes CheckGeneratedSize before anything allocates.
#include "base/ops/infer_util.h"
#include "base/ops/op_families.h"
#include "base/ops/shape_utils.h"
#include "base/ops/size_limits.h"
#include "base/status.h"

namespace ge::ops {
namespace {

using Kind = ir::AttrValue::Kind;
using DT = DataType;

// The scalar value of input `i`, when known.
std::optional<int64_t> ScalarValue(const InferenceContext& ctx, int i) {
  if (!ctx.has_input(i)) return std::nullopt;
  auto v = IntsValue(ctx, i);
  if (!v || v->size() != 1) return std::nullopt;
  return (*v)[0];
}

absl::Status InferDft(InferenceContext& ctx) {
  const Shape& x = ctx.input_tensor(0).shape;
  const bool onesided = ctx.AttrOr<int64_t>("onesided", 0) != 0;
  const bool inverse = ctx.AttrOr<int64_t>("inverse", 0) != 0;
  if (onesided && inverse)
    return InvalidArgument("onesided and inverse together (a complex-to-real DFT) are not supported");
  if (x.unknown_rank()) {
    SetOutput(ctx, 0, ctx.input_tensor(0).dtype, x);
    return absl::OkStatus();
  }
  if (x.rank() < 3) return InvalidArgument("input must be [batch, signal dims..., 1 or 2], got ", x.ToString());
  const int64_t last = x.dim(x.rank() - 1);
  if (last >= 0 && last != 1 && last != 2)
    return InvalidArgument("the last dim must be 1 (real) or 2 (complex), got ", last);
  if (onesided && last == 2) return InvalidArgument("onesided needs a real input (last dim 1)");
  GE_ASSIGN_OR_RETURN(const int64_t axis, NormalizeAxis(ctx.AttrOr<int64_t>("axis", 1), x.rank()));
  if (axis == 0 || axis == x.rank() - 1) {
    return InvalidArgument("axis ", axis, " must name a signal dim (1 to ", x.rank() - 2, ")");
  }
  int64_t n = x.dim(axis);
  if (ctx.has_input(1)) {
    const std::optional<int64_t> length = ScalarValue(ctx, 1);
    if (length && *length < 1) return InvalidArgument("dft_length must be positive, got ", *length);
    n = length ? *length : kUnknownDim;
  }
  Shape out = x;
  out.set_dim(axis, n < 0 ? kUnknownDim : onesided ? n / 2 + 1 : n);
  out.set_dim(x.rank() - 1, 2);
  GE_RETURN_IF_ERROR(CheckGeneratedSize("DFT output", out.span(), /*allow_unknown=*/true));
  SetOutput(ctx, 0, ctx.input_tensor(0).dtype, std::move(out));
  return absl::OkStatus();
}

absl::Status InferStft(InferenceContext& ctx) {
  const Shape& x = ctx.input_tensor(0).shape;
  if (!x.unknown_rank() && (x.rank() != 3 || (x.dim(2) >= 0 && x.dim(2) != 1 && x.dim(2) != 2))) {
    return InvalidArgument("signal must be [batch, length, 1 or 2], got ", x.ToString());
  }
  const bool onesided = ctx.AttrOr<int64_t>("onesided", 1) != 0;
  const std::optional<int64_t> step = ScalarValue(ctx, 1);
  if (step && *step < 1) return InvalidArgument("frame_step must be positive, got ", *step);
  int64_t frame = kUnknownDim;
  if (ctx.has_input(2)) {
    const Shape& w = ctx.input_tensor(2).shape;
    if (!w.unknown_rank() && w.rank() != 1) return InvalidArgument("window must be 1-D, got ", w.ToString());
    if (!w.unknown_rank()) frame = w.dim(0);
  }
  if (ctx.has_input(3)) {
    const std::optional<int64_t> length = ScalarValue(ctx, 3);
    if (length && *length < 1) return InvalidArgument("frame_length must be positive, got ", *length);
    if (length && frame >= 0 && *length != frame) {
      return InvalidArgument("frame_length ", *length, " differs from the window's length ", frame);
    }
    frame = length ? *length : frame;
  }
  if (!ctx.has_input(2) && !ctx.has_input(3)) return InvalidArgument("either window or frame_length is required");
  int64_t frames = kUnknownDim;
  const int64_t length = x.unknown_rank() ? kUnknownDim : x.dim(1);
  if (step && frame >= 0 && length >= 0) {
    if (length < frame) return InvalidArgument("the signal (", length, ") is shorter than a frame (", frame, ")");
    frames = (length - frame) / *step + 1;
  }
  const int64_t bins = frame < 0 ? kUnknownDim : onesided ? frame / 2 + 1 : frame;
  const Shape out{x.unknown_rank() ? kUnknownDim : x.dim(0), frames, bins, 2};
  GE_RETURN_IF_ERROR(CheckGeneratedSize("STFT output", out.span(), /*allow_unknown=*/true));
  SetOutput(ctx, 0, ctx.input_tensor(0).dtype, out);
  return absl::OkStatus();
}

absl::Status InferMelWeightMatrix(InferenceContext& ctx) {
  const int64_t dtype = ctx.AttrOr<int64_t>("output_datatype", 1);
  if (dtype < 1 || dtype > kMaxDataTypeValue || dtype == static_cast<int64_t>(DT::kString) ||
      dtype == static_cast<int64_t>(DT::kBool) || dtype == static_cast<int64_t>(DT::kComplex64) ||
      dtype == static_cast<int64_t>(DT::kComplex128)) {
    return InvalidArgument("output_datatype ", dtype, " is not a numeric type");
  }
  for (int i = 0; i < 5; ++i) {
    const Shape& s = ctx.input_tensor(i).shape;
    if (s.IsFullyKnown() && s.NumElementsUnchecked() != 1) return InvalidArgument("input ", i, " must be a scalar");
  }
  const std::optional<int64_t> mel = ScalarValue(ctx, 0), dft = ScalarValue(ctx, 1);
  if (mel && *mel < 1) return InvalidArgument("num_mel_bins must be positive, got ", *mel);
  if (dft && *dft < 1) return InvalidArgument("dft_length must be positive, got ", *dft);
  const Shape out{dft ? *dft / 2 + 1 : kUnknownDim, mel ? *mel : kUnknownDim};
  GE_RETURN_IF_ERROR(CheckGeneratedSize("MelWeightMatrix output", out.span(), /*allow_unknown=*/true));
  SetOutput(ctx, 0, static_cast<DataType>(dtype), out);
  return absl::OkStatus();
}

}  // namespace

void RegisterSignalOps(OpRegistry& r) {
  MustRegister(r, OpSchemaBuilder("DFT", 17)
                      .Doc("Discrete Fourier transform along one signal axis (real or complex input, "
                           "complex output as a trailing dim of 2).")
                      .Input("input", "T1")
                      .OptionalInput("dft_length", "T2")
                      .Output("output", "T1")
                      .TypeConstraint("T1", FloatTypes())
                      .TypeConstraint("T2", IndexTypes())
                      .Attr("axis", Kind::kInt, int64_t{1})
                      .Attr("inverse", Kind::kInt, int64_t{0})
                      .Attr("onesided", Kind::kInt, int64_t{0})
                      .ValueInputs({1})
                      .Infer(InferDft));
  MustRegister(r, OpSchemaBuilder("STFT", 17)
                      .Doc("Short-time Fourier transform: the DFT of each (windowed) frame.")
                      .Input("signal", "T1")
                      .Input("frame_step", "T2")
                      .OptionalInput("window", "T1")
                      .OptionalInput("frame_length", "T2")
                      .Output("output", "T1")
                      .TypeConstraint("T1", FloatTypes())
                      .TypeConstraint("T2", IndexTypes())
                      .Attr("onesided", Kind::kInt, int64_t{1})
                      .ValueInputs({1, 3})
                      .Infer(InferStft));
  MustRegister(r, OpSchemaBuilder("MelWeightMatrix", 17)
                      .Doc("The [dft_length / 2 + 1, num_mel_bins] matrix of triangular mel-scale filters.")
                      .Input("num_mel_bins", "T1")
                      .Input("dft_length", "T1")
                      .Input("sample_rate", "T1")
                      .Input("lower_edge_hertz", "T2")
                      .Input("upper_edge_hertz", "T2")
                      .Output("output", "T3")
                      .TypeConstraint("T1", IndexTypes())
                      .TypeConstraint("T2", FloatTypes())
                      .TypeConstraint("T3", NumericTypes())
                      .Attr("output_datatype", Kind::kInt, int64_t{1})
                      .ValueInputs({0, 1, 2, 3, 4})
                      .Infer(InferMelWeightMatrix));
}

}  // namespace ge::ops
