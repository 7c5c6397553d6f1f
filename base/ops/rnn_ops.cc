// Schemas and shape inference of the recurrent ops RNN-14, GRU-14 and
// LSTM-14 (their opset 7 forms are the same without `layout`).
//
// X is [seq, batch, input] (layout 0) or [batch, seq, input] (layout 1); W
// is [directions, gates * hidden, input], R [directions, gates * hidden,
// hidden], B [directions, 2 * gates * hidden]; gates are 1 (RNN), 3 (GRU:
// z, r, h) or 4 (LSTM: i, o, f, c). Y is [seq, directions, batch, hidden]
// (layout 1: [batch, seq, directions, hidden]); Y_h and LSTM's Y_c are
// [directions, batch, hidden] (layout 1: [batch, directions, hidden]).
#include "base/ops/infer_util.h"
#include "base/ops/op_families.h"
#include "base/status.h"

namespace ge::ops {
namespace {

using DT = DataType;
using Kind = ir::AttrValue::Kind;

int64_t Directions(const InferenceContext& ctx, absl::Status& status) {
  const std::string direction = ctx.AttrOr<std::string>("direction", "forward");
  if (direction == "forward" || direction == "reverse") return 1;
  if (direction == "bidirectional") return 2;
  status = InvalidArgument("direction '", direction, "' is not forward, reverse or bidirectional");
  return 0;
}

// The dim `d` of input `i` when its rank is known, else unknown.
int64_t DimOf(const InferenceContext& ctx, int i, int64_t d) {
  const Shape shape = InputShape(ctx, i);
  return shape.unknown_rank() || d >= shape.rank() ? kUnknownDim : shape.dim(d);
}

absl::Status CheckRank(const InferenceContext& ctx, int i, const char* name, int64_t rank) {
  const Shape shape = InputShape(ctx, i);
  if (!shape.unknown_rank() && shape.rank() != rank) {
    return InvalidArgument(name, " must have rank ", rank, ", got ", shape.ToString());
  }
  return absl::OkStatus();
}

absl::Status InferRecurrent(InferenceContext& ctx, int64_t gates) {
  absl::Status status;
  const int64_t directions = Directions(ctx, status);
  GE_RETURN_IF_ERROR(status);
  GE_RETURN_IF_ERROR(CheckRank(ctx, 0, "X", 3));
  GE_RETURN_IF_ERROR(CheckRank(ctx, 1, "W", 3));
  GE_RETURN_IF_ERROR(CheckRank(ctx, 2, "R", 3));
  const int64_t layout = ctx.AttrOr<int64_t>("layout", 0);
  if (layout != 0 && layout != 1) return InvalidArgument("layout ", layout, " is not 0 or 1");
  int64_t hidden = ctx.AttrOr<int64_t>("hidden_size", kUnknownDim);
  const int64_t w_rows = DimOf(ctx, 1, 1);
  if (w_rows != kUnknownDim) {
    if (w_rows % gates != 0) return InvalidArgument("W's dim 1 (", w_rows, ") is not a multiple of ", gates);
    if (hidden == kUnknownDim) hidden = w_rows / gates;
    if (hidden != w_rows / gates) {
      return InvalidArgument("hidden_size ", hidden, " does not match W's dim 1 (", w_rows, " = ", gates,
                             " gates x hidden)");
    }
  }
  if (hidden != kUnknownDim && hidden <= 0) return InvalidArgument("hidden_size must be positive, got ", hidden);
  const int64_t w_dirs = DimOf(ctx, 1, 0);
  if (w_dirs != kUnknownDim && w_dirs != directions) {
    return InvalidArgument("W has ", w_dirs, " directions, the direction attribute says ", directions);
  }
  const int64_t input = DimOf(ctx, 0, 2), w_input = DimOf(ctx, 1, 2);
  if (input != kUnknownDim && w_input != kUnknownDim && input != w_input) {
    return InvalidArgument("X's input size ", input, " does not match W's ", w_input);
  }
  const int64_t seq = DimOf(ctx, 0, layout == 0 ? 0 : 1);
  const int64_t batch = DimOf(ctx, 0, layout == 0 ? 1 : 0);
  const DataType dtype = ctx.input_tensor(0).dtype;
  SetOutput(ctx, 0, dtype, layout == 0 ? Shape{seq, directions, batch, hidden} : Shape{batch, seq, directions, hidden});
  const Shape state = layout == 0 ? Shape{directions, batch, hidden} : Shape{batch, directions, hidden};
  SetOutput(ctx, 1, dtype, state);
  SetOutput(ctx, 2, dtype, state);  // LSTM's Y_c
  return absl::OkStatus();
}

OpSchemaBuilder Recurrent(const std::string& type, const std::string& activations_doc) {
  OpSchemaBuilder b(type, 14);
  b.Doc(type + " over a sequence; activations: " + activations_doc)
      .Input("X", "T")
      .Input("W", "T")
      .Input("R", "T")
      .OptionalInput("B", "T")
      .OptionalInput("sequence_lens", "T1")
      .OptionalInput("initial_h", "T");
  return b;
}

void CommonAttrs(OpSchemaBuilder& b) {
  b.OptionalAttr("activation_alpha", Kind::kFloats)
      .OptionalAttr("activation_beta", Kind::kFloats)
      .OptionalAttr("activations", Kind::kStrings)
      .OptionalAttr("clip", Kind::kFloat)
      .Attr("direction", Kind::kString, std::string("forward"))
      .OptionalAttr("hidden_size", Kind::kInt)
      .Attr("layout", Kind::kInt, int64_t{0})
      .TypeConstraint("T", Types({DT::kFloat16, DT::kFloat, DT::kDouble}))
      .TypeConstraint("T1", Types({DT::kInt32}));
}

}  // namespace

void RegisterRnnOps(OpRegistry& r) {
  OpSchemaBuilder rnn = Recurrent("RNN", "f (default Tanh)");
  rnn.OptionalOutput("Y", "T").OptionalOutput("Y_h", "T");
  CommonAttrs(rnn);
  MustRegister(r, rnn.Infer([](InferenceContext& ctx) { return InferRecurrent(ctx, 1); }));

  OpSchemaBuilder gru = Recurrent("GRU", "f, g (default Sigmoid, Tanh)");
  gru.OptionalOutput("Y", "T").OptionalOutput("Y_h", "T").Attr("linear_before_reset", Kind::kInt, int64_t{0});
  CommonAttrs(gru);
  MustRegister(r, gru.Infer([](InferenceContext& ctx) { return InferRecurrent(ctx, 3); }));

  OpSchemaBuilder lstm = Recurrent("LSTM", "f, g, h (default Sigmoid, Tanh, Tanh)");
  lstm.OptionalInput("initial_c", "T")
      .OptionalInput("P", "T")
      .OptionalOutput("Y", "T")
      .OptionalOutput("Y_h", "T")
      .OptionalOutput("Y_c", "T")
      .Attr("input_forget", Kind::kInt, int64_t{0});
  CommonAttrs(lstm);
  MustRegister(r, lstm.Infer([](InferenceContext& ctx) { return InferRecurrent(ctx, 4); }));
}

}  // namespace ge::ops
