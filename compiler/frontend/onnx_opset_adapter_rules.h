// The rewrite functions behind ged's opset adapter table (see
// onnx_opset_adapter.h for the contract and RegisterOnnxOpsetAdapters for
// which op versions each one covers).
#pragma once

#include "compiler/frontend/onnx_opset_adapter.h"

namespace ge::frontend {

// Squeeze-1/11, Unsqueeze-1/11, ReduceSum-1/11: `axes` attribute -> input 1.
absl::Status AdaptAxesAttributeToInput(OpsetAdapterContext& ctx);
// Split-2/11: `split` attribute -> input 1.
absl::Status AdaptSplit(OpsetAdapterContext& ctx);
// Slice-1: starts / ends / axes attributes -> inputs 1..3.
absl::Status AdaptSlice1(OpsetAdapterContext& ctx);
// Clip-6: min / max attributes -> inputs 1, 2 in the input's dtype.
absl::Status AdaptClip6(OpsetAdapterContext& ctx);
// Pad-2: pads -> input 1 (i64), value -> input 2 (constant_value, input dtype).
absl::Status AdaptPad2(OpsetAdapterContext& ctx);
// TopK-1: k attribute -> input 1 (i64[1]).
absl::Status AdaptTopK1(OpsetAdapterContext& ctx);
// Dropout-7/10: ratio attribute -> input 1; Dropout-7's mask (of the data's
// dtype) becomes Dropout-13's bool mask followed by a Cast.
absl::Status AdaptDropout7(OpsetAdapterContext& ctx);
// Softmax / LogSoftmax / Hardmax-1/11: the input is coerced to 2-D at `axis`.
// With a known rank and axis = rank - 1 that is the -13 op on the last axis;
// otherwise Flatten(axis) -> op-13(axis=1) -> Reshape to the input's shape
// (a Constant when fully known, else Shape(input)).
absl::Status AdaptSoftmaxFamily(OpsetAdapterContext& ctx);
// BatchNormalization-7/9: drops `spatial` (0 is rejected) and the training
// outputs (rejected when anything reads them).
absl::Status AdaptBatchNormalization(OpsetAdapterContext& ctx);
// Upsample-7/9/10 -> Resize-13 with coordinate_transformation_mode
// "asymmetric" (nearest: nearest_mode "floor"); other modes are rejected.
absl::Status AdaptUpsample(OpsetAdapterContext& ctx);
// Resize-10 -> Resize-13, as Upsample.
absl::Status AdaptResize10(OpsetAdapterContext& ctx);
// Resize-11 -> Resize-13: rejects "tf_half_pixel_for_nn"; an empty constant
// scales next to sizes becomes an absent input.
absl::Status AdaptResize11(OpsetAdapterContext& ctx);
// Scatter-9/11 -> ScatterElements (the same op under its new name).
absl::Status AdaptScatter(OpsetAdapterContext& ctx);
// RoiAlign-10 -> RoiAlign-16 keeping its "output_half_pixel" coordinates.
absl::Status AdaptRoiAlign10(OpsetAdapterContext& ctx);
// Scan-8 has a batch axis Scan-9+ lacks: rejected with a hint.
absl::Status RejectScan8(OpsetAdapterContext& ctx);

}  // namespace ge::frontend
