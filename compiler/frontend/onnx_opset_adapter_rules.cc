// Rewrites of older ONNX op versions into ged's canonical forms. Each
// function emits the helper Constants first and the rewritten node after
// them, so that the emitted list is in topological order; each keeps the
// original node's output tensor names so that consumers need no rewiring.
#include "compiler/frontend/onnx_opset_adapter_rules.h"

#include <algorithm>
#include <vector>

namespace ge::frontend {
namespace {

std::vector<int64_t> Ints(const onnx::AttributeProto& attr) {
  return std::vector<int64_t>(attr.ints().begin(), attr.ints().end());
}

Tensor Int64Vector(const std::vector<int64_t>& values) {
  return Tensor::FromVector<int64_t>(values, Shape{static_cast<int64_t>(values.size())});
}

// A scalar of `dtype` holding `value`; nullopt for dtypes a float attribute
// cannot be converted to.
std::optional<Tensor> ScalarOf(DataType dtype, double value) {
  switch (dtype) {
    case DataType::kFloat:
      return Tensor::Scalar<float>(static_cast<float>(value));
    case DataType::kDouble:
      return Tensor::Scalar<double>(value);
    case DataType::kFloat16:
      return Tensor::Scalar<Float16>(Float16(static_cast<float>(value)));
    case DataType::kBFloat16:
      return Tensor::Scalar<BFloat16>(BFloat16(static_cast<float>(value)));
    case DataType::kInt8:
      return Tensor::Scalar<int8_t>(static_cast<int8_t>(value));
    case DataType::kInt16:
      return Tensor::Scalar<int16_t>(static_cast<int16_t>(value));
    case DataType::kInt32:
      return Tensor::Scalar<int32_t>(static_cast<int32_t>(value));
    case DataType::kInt64:
      return Tensor::Scalar<int64_t>(static_cast<int64_t>(value));
    case DataType::kUint8:
      return Tensor::Scalar<uint8_t>(static_cast<uint8_t>(value));
    case DataType::kUint16:
      return Tensor::Scalar<uint16_t>(static_cast<uint16_t>(value));
    case DataType::kUint32:
      return Tensor::Scalar<uint32_t>(static_cast<uint32_t>(value));
    case DataType::kUint64:
      return Tensor::Scalar<uint64_t>(static_cast<uint64_t>(value));
    default:
      return std::nullopt;
  }
}

// A Constant holding `value` as a scalar of input 0's dtype.
absl::StatusOr<std::string> EmitScalarLikeInput(OpsetAdapterContext& ctx, std::string_view role,
                                                std::string_view attr_name, double value) {
  std::optional<DataType> dtype = ctx.InputDtype(0);
  if (!dtype) {
    return ctx.Error("attribute '", attr_name, "' becomes an input of the data's type, but the ",
                     "type of input '", ctx.node().input(0),
                     "' is unknown (run ONNX shape inference or declare it in value_info)");
  }
  std::optional<Tensor> scalar = ScalarOf(*dtype, value);
  if (!scalar) {
    return ctx.Error("attribute '", attr_name, "' cannot be converted to ", DataTypeName(*dtype));
  }
  return ctx.EmitConstant(role, *scalar);
}

absl::Status MoveIntsAttributeToInput(OpsetAdapterContext& ctx, std::string_view attr_name,
                                      int input_index, bool required, onnx::NodeProto*& out) {
  const onnx::AttributeProto* attr = FindAttribute(ctx.node(), attr_name);
  if (attr == nullptr && required) return ctx.Error("missing attribute '", attr_name, "'");
  std::string tensor;
  if (attr != nullptr) tensor = ctx.EmitConstant(attr_name, Int64Vector(Ints(*attr)));
  out = &ctx.EmitCopy();
  RemoveAttribute(*out, attr_name);
  if (!tensor.empty()) SetInput(*out, input_index, tensor);
  return absl::OkStatus();
}

void SetResizeAsymmetric(onnx::NodeProto& node, const std::string& mode) {
  SetStringAttribute(node, "mode", mode);
  SetStringAttribute(node, "coordinate_transformation_mode", "asymmetric");
  if (mode == "nearest") SetStringAttribute(node, "nearest_mode", "floor");
}

}  // namespace

absl::Status AdaptAxesAttributeToInput(OpsetAdapterContext& ctx) {
  const bool required = ctx.node().op_type() == "Unsqueeze";
  const onnx::AttributeProto* axes = FindAttribute(ctx.node(), "axes");
  // Squeeze / ReduceSum with an empty axes list mean "all", as an absent
  // input does at opset 13; an empty input would not.
  if (!required && axes != nullptr && axes->ints_size() == 0) {
    RemoveAttribute(ctx.EmitCopy(), "axes");
    return absl::OkStatus();
  }
  onnx::NodeProto* out = nullptr;
  return MoveIntsAttributeToInput(ctx, "axes", 1, required, out);
}

absl::Status AdaptSplit(OpsetAdapterContext& ctx) {
  onnx::NodeProto* out = nullptr;
  return MoveIntsAttributeToInput(ctx, "split", 1, /*required=*/false, out);
}

absl::Status AdaptSlice1(OpsetAdapterContext& ctx) {
  std::string names[3];
  const char* attrs[3] = {"starts", "ends", "axes"};
  for (int k = 0; k < 3; ++k) {
    const onnx::AttributeProto* attr = FindAttribute(ctx.node(), attrs[k]);
    if (attr == nullptr) {
      if (k < 2) return ctx.Error("missing attribute '", attrs[k], "'");
      continue;
    }
    names[k] = ctx.EmitConstant(attrs[k], Int64Vector(Ints(*attr)));
  }
  onnx::NodeProto& out = ctx.EmitCopy();
  for (int k = 0; k < 3; ++k) {
    RemoveAttribute(out, attrs[k]);
    if (!names[k].empty()) SetInput(out, k + 1, names[k]);
  }
  return absl::OkStatus();
}

absl::Status AdaptClip6(OpsetAdapterContext& ctx) {
  std::string names[2];
  const char* attrs[2] = {"min", "max"};
  for (int k = 0; k < 2; ++k) {
    const onnx::AttributeProto* attr = FindAttribute(ctx.node(), attrs[k]);
    if (attr == nullptr) continue;
    GE_ASSIGN_OR_RETURN(names[k], EmitScalarLikeInput(ctx, attrs[k], attrs[k], attr->f()));
  }
  onnx::NodeProto& out = ctx.EmitCopy();
  for (int k = 0; k < 2; ++k) {
    RemoveAttribute(out, attrs[k]);
    if (!names[k].empty()) SetInput(out, k + 1, names[k]);
  }
  return absl::OkStatus();
}

absl::Status AdaptPad2(OpsetAdapterContext& ctx) {
  const onnx::AttributeProto* pads = FindAttribute(ctx.node(), "pads");
  if (pads == nullptr) return ctx.Error("missing attribute 'pads'");
  const std::string pads_name = ctx.EmitConstant("pads", Int64Vector(Ints(*pads)));
  std::string value_name;
  const onnx::AttributeProto* value = FindAttribute(ctx.node(), "value");
  const onnx::AttributeProto* mode = FindAttribute(ctx.node(), "mode");
  const bool constant_mode = mode == nullptr || mode->s() == "constant";
  // A zero fill is Pad-13's default: no input needed, and no dtype either.
  if (value != nullptr && constant_mode && value->f() != 0.0f) {
    GE_ASSIGN_OR_RETURN(value_name,
                        EmitScalarLikeInput(ctx, "constant_value", "value", value->f()));
  }
  onnx::NodeProto& out = ctx.EmitCopy();
  RemoveAttribute(out, "pads");
  RemoveAttribute(out, "value");
  SetInput(out, 1, pads_name);
  if (!value_name.empty()) SetInput(out, 2, value_name);
  return absl::OkStatus();
}

absl::Status AdaptTopK1(OpsetAdapterContext& ctx) {
  const onnx::AttributeProto* k = FindAttribute(ctx.node(), "k");
  if (k == nullptr) return ctx.Error("missing attribute 'k'");
  const std::string k_name = ctx.EmitConstant("k", Int64Vector({k->i()}));
  onnx::NodeProto& out = ctx.EmitCopy();
  RemoveAttribute(out, "k");
  SetInput(out, 1, k_name);
  return absl::OkStatus();
}

absl::Status AdaptDropout7(OpsetAdapterContext& ctx) {
  std::string ratio_name;
  if (const onnx::AttributeProto* ratio = FindAttribute(ctx.node(), "ratio")) {
    ratio_name = ctx.EmitConstant("ratio", Tensor::Scalar<float>(ratio->f()));
  }
  const bool has_mask = ctx.node().output_size() > 1 && !ctx.node().output(1).empty();
  const bool cast_mask = has_mask && ctx.op_version() < 10 && ctx.IsConsumed(ctx.node().output(1));
  std::optional<DataType> dtype = ctx.InputDtype(0);
  if (cast_mask && !dtype) {
    return ctx.Error("its mask output is used and has the data's type, which is unknown");
  }
  const std::string bool_mask = cast_mask ? ctx.FreshTensorName("bool_mask") : "";
  onnx::NodeProto& out = ctx.EmitCopy();
  RemoveAttribute(out, "ratio");
  if (!ratio_name.empty()) SetInput(out, 1, ratio_name);
  if (cast_mask) {
    out.set_output(1, bool_mask);
  } else if (has_mask && ctx.op_version() < 10) {
    out.mutable_output()->RemoveLast();  // an unread mask of the old dtype: drop it
  }
  if (cast_mask) {
    onnx::NodeProto& cast = ctx.EmitHelper("Cast", "mask_cast");
    cast.add_input(bool_mask);
    cast.add_output(ctx.node().output(1));
    SetIntAttribute(cast, "to", static_cast<int64_t>(*dtype));
  }
  return absl::OkStatus();
}

absl::Status AdaptSoftmaxFamily(OpsetAdapterContext& ctx) {
  const onnx::AttributeProto* axis_attr = FindAttribute(ctx.node(), "axis");
  int64_t axis = axis_attr != nullptr ? axis_attr->i() : 1;
  std::optional<int64_t> rank = ctx.InputRank(0);
  if (rank && axis < 0) axis += *rank;
  if (rank && *rank > 0 && (axis < 0 || axis >= *rank)) {
    return ctx.Error("axis ", axis_attr ? axis_attr->i() : 1, " is out of range for rank ", *rank);
  }
  if (rank && axis == *rank - 1) {
    // The 2-D coercion keeps the last axis alone: the same as op-13 on it.
    SetIntAttribute(ctx.EmitCopy(), "axis", -1);
    return absl::OkStatus();
  }
  const std::string& input = ctx.node().input(0);
  // The shape to restore: a constant when every dim is known (so that shape
  // inference keeps it static), else Shape(input).
  std::optional<std::vector<int64_t>> dims = ctx.InputDims(0);
  const bool static_shape =
      dims && std::none_of(dims->begin(), dims->end(), [](int64_t d) { return d < 0; });
  std::string shape;
  if (static_shape) {
    shape = ctx.EmitConstant(
        "shape", Tensor::FromVector<int64_t>(*dims, Shape{static_cast<int64_t>(dims->size())}));
  }
  const std::string flat = ctx.FreshTensorName("flat");
  const std::string result_2d = ctx.FreshTensorName("2d");
  onnx::NodeProto& flatten = ctx.EmitHelper("Flatten", "flatten");
  flatten.add_input(input);
  flatten.add_output(flat);
  SetIntAttribute(flatten, "axis", axis);
  if (!static_shape) {
    shape = ctx.FreshTensorName("shape");
    onnx::NodeProto& shape_of = ctx.EmitHelper("Shape", "shape");
    shape_of.add_input(input);
    shape_of.add_output(shape);
  }
  onnx::NodeProto& op = ctx.EmitCopy();
  op.set_input(0, flat);
  op.set_output(0, result_2d);
  SetIntAttribute(op, "axis", 1);
  onnx::NodeProto& reshape = ctx.EmitHelper("Reshape", "reshape");
  reshape.add_input(result_2d);
  reshape.add_input(shape);
  reshape.add_output(ctx.node().output(0));
  return absl::OkStatus();
}

absl::Status AdaptBatchNormalization(OpsetAdapterContext& ctx) {
  if (const onnx::AttributeProto* spatial = FindAttribute(ctx.node(), "spatial")) {
    if (spatial->i() == 0) {
      return ctx.Error("spatial=0 (per-activation statistics) is not supported; ",
                       "re-export the model with opset 9 or later");
    }
  }
  for (int k = 1; k < ctx.node().output_size(); ++k) {
    if (ctx.IsConsumed(ctx.node().output(k))) {
      return ctx.Error("output ", k, " ('", ctx.node().output(k),
                       "') is a training-mode statistic; ged imports inference graphs only");
    }
  }
  onnx::NodeProto& out = ctx.EmitCopy();
  RemoveAttribute(out, "spatial");
  RemoveAttribute(out, "is_test");
  while (out.output_size() > 1) out.mutable_output()->RemoveLast();
  return absl::OkStatus();
}

absl::Status AdaptUpsample(OpsetAdapterContext& ctx) {
  const onnx::AttributeProto* mode_attr = FindAttribute(ctx.node(), "mode");
  std::string mode = mode_attr != nullptr ? mode_attr->s() : "nearest";
  if (mode == "bilinear") mode = "linear";
  if (mode != "nearest" && mode != "linear") {
    return ctx.Error("mode '", mode, "' has no Resize equivalent (nearest and linear do)");
  }
  std::string scales;
  if (ctx.op_version() < 9) {
    const onnx::AttributeProto* attr = FindAttribute(ctx.node(), "scales");
    if (attr == nullptr) return ctx.Error("missing attribute 'scales'");
    std::vector<float> values(attr->floats().begin(), attr->floats().end());
    scales = ctx.EmitConstant(
        "scales", Tensor::FromVector<float>(values, Shape{static_cast<int64_t>(values.size())}));
  } else {
    if (ctx.node().input_size() < 2 || ctx.node().input(1).empty()) {
      return ctx.Error("missing input 'scales'");
    }
    scales = ctx.node().input(1);
  }
  onnx::NodeProto& out = ctx.EmitCopy("Resize");
  RemoveAttribute(out, "scales");
  while (out.input_size() > 1) out.mutable_input()->RemoveLast();
  SetInput(out, 2, scales);
  SetResizeAsymmetric(out, mode);
  return absl::OkStatus();
}

absl::Status AdaptResize10(OpsetAdapterContext& ctx) {
  const onnx::AttributeProto* mode_attr = FindAttribute(ctx.node(), "mode");
  const std::string mode = mode_attr != nullptr ? mode_attr->s() : "nearest";
  if (ctx.node().input_size() < 2 || ctx.node().input(1).empty()) {
    return ctx.Error("missing input 'scales'");
  }
  const std::string scales = ctx.node().input(1);
  onnx::NodeProto& out = ctx.EmitCopy();
  while (out.input_size() > 1) out.mutable_input()->RemoveLast();
  SetInput(out, 2, scales);
  SetResizeAsymmetric(out, mode);
  return absl::OkStatus();
}

absl::Status AdaptResize11(OpsetAdapterContext& ctx) {
  const onnx::AttributeProto* ctm = FindAttribute(ctx.node(), "coordinate_transformation_mode");
  if (ctm != nullptr && ctm->s() == "tf_half_pixel_for_nn") {
    return ctx.Error("coordinate_transformation_mode 'tf_half_pixel_for_nn' was removed in ",
                     "Resize-13 and is not supported; use 'half_pixel' with nearest_mode 'floor'");
  }
  onnx::NodeProto& out = ctx.EmitCopy();
  const bool has_sizes = out.input_size() > 3 && !out.input(3).empty();
  for (int k : {1, 2}) {
    const onnx::TensorProto* value = ctx.ConstantInput(k);
    const bool empty_constant =
        value != nullptr && !value->dims().empty() &&
        std::find(value->dims().begin(), value->dims().end(), 0) != value->dims().end();
    if (empty_constant && (k == 1 || has_sizes)) out.set_input(k, "");
  }
  return absl::OkStatus();
}

absl::Status AdaptScatter(OpsetAdapterContext& ctx) {
  ctx.EmitCopy("ScatterElements");
  return absl::OkStatus();
}

absl::Status AdaptRoiAlign10(OpsetAdapterContext& ctx) {
  onnx::NodeProto& out = ctx.EmitCopy();
  if (FindAttribute(out, "coordinate_transformation_mode") == nullptr) {
    SetStringAttribute(out, "coordinate_transformation_mode", "output_half_pixel");
  }
  return absl::OkStatus();
}

absl::Status RejectScan8(OpsetAdapterContext& ctx) {
  return ctx.Error("Scan-8 iterates over a batch axis, which Scan-9 and later dropped; ",
                   "re-export the model with opset 9 or later");
}

}  // namespace ge::frontend
