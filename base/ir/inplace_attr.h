// The node attribute through which an engine lets the static memory planner
// give an op's output the buffer of one of its inputs, for that node only.
//
// An op schema's `Inplace` pairs hold for every node of the op type. Some
// in-place opportunities depend on the kernel a node gets: cpu_dense's
// `_DenseFused` is a Conv, MatMul or Gemm with post-ops, and only the
// convolution accumulates its residual operand in the destination itself
// (oneDNN's sum post-op), so only a fused convolution's output may take over
// its addend's buffer. The engine that builds such a node marks it with
// `_inplace_inputs` = [input index, ...]: output 0 may reuse the buffer of any
// listed input, under the same rules as a schema's pairs (the input's buffer
// dies at the node, equal byte sizes, no other input reads it). A kernel of
// a node so marked must give the same result whether or not the planner took
// the offer.
#pragma once

#include <string_view>

namespace ge::ir {

inline constexpr std::string_view kAttrInplaceInputs = "_inplace_inputs";  // ints: inputs output 0 may reuse

}  // namespace ge::ir
