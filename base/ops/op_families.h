// The registration functions of the op families, called by
// RegisterBuiltinOps in a fixed order. Each lives in its family's file.
#pragma once

#include "base/ops/op_registry.h"

namespace ge::ops {

// ge_ops.cc: ged's own ops (Data, NetOutput, Const, control flow, ...).
void RegisterGeOps(OpRegistry& registry);
// elementwise_ops.cc: unary, binary and variadic element-wise ops.
void RegisterElementwiseOps(OpRegistry& registry);
// nn_ops.cc: convolution, pooling, normalization, matrix products.
void RegisterNnOps(OpRegistry& registry);
// tensor_ops.cc: data movement and shape manipulation.
void RegisterTensorOps(OpRegistry& registry);
// reduction_ops.cc: ReduceX, ArgMax, ArgMin.
void RegisterReductionOps(OpRegistry& registry);
// control_flow_ops.cc: ONNX Loop and Scan (import form), loop accumulators.
void RegisterLoopOps(OpRegistry& registry);
// sequence_ops.cc: Sequence*, SplitToSequence, ConcatFromSequence,
// SequenceMap, Optional, OptionalHasElement, OptionalGetElement.
void RegisterSequenceOps(OpRegistry& registry);
// text_ops.cc: StringNormalizer, TfIdfVectorizer.
void RegisterTextOps(OpRegistry& registry);
// indexing_ops.cc: GatherElements, ScatterElements, Trilu, CumSum, Range,
// EyeLike, CastLike, Tile, OneHot, NonZero.
void RegisterIndexingOps(OpRegistry& registry);
// quantize_window_ops.cc: QuantizeLinear, DequantizeLinear, Hann/Hamming/
// BlackmanWindow.
void RegisterQuantizeWindowOps(OpRegistry& registry);
// loss_ops.cc: NegativeLogLikelihoodLoss, SoftmaxCrossEntropyLoss.
void RegisterLossOps(OpRegistry& registry);
// rnn_ops.cc: RNN, GRU, LSTM.
void RegisterRnnOps(OpRegistry& registry);
// variable_ops.cc: Assign, AssignAdd, AssignSub, VarIsInitializedOp.
void RegisterVariableOps(OpRegistry& registry);
// norm_pool_ops.cc: MeanVarianceNormalization, LpNormalization, LpPool,
// GlobalLpPool, MaxRoiPool.
void RegisterNormPoolOps(OpRegistry& registry);
// random_ops.cc: RandomNormal, RandomUniform, RandomNormalLike,
// RandomUniformLike, Bernoulli, Multinomial (all stateful).
void RegisterRandomOps(OpRegistry& registry);
// quantized_ops.cc: DynamicQuantizeLinear, MatMulInteger, ConvInteger,
// QLinearMatMul, QLinearConv.
void RegisterQuantizedOps(OpRegistry& registry);
// signal_ops.cc: DFT, STFT, MelWeightMatrix.
void RegisterSignalOps(OpRegistry& registry);
// gear_index.cc: GearIndex (the shape-index node of multi-batch graphs).
void RegisterGearOps(OpRegistry& registry);

}  // namespace ge::ops
