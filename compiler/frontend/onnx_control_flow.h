// Lowering of ONNX Loop and Scan to ged's While (the importer's last
// conversion step; docs/architecture.md, "Operators", places it).
//
// The graph builder imports Loop and Scan as ONNX ops with their bodies as
// subgraphs and captures as extra inputs (onnx_importer.h). This step
// rewrites each of them, nested ones included, into a While on the
// control_flow engine whose body IS the ONNX body, edited in place:
//
//   Loop(M, cond, v..., captures...) -> (v_final..., scan_outputs...)
//     While loop-carried values: [iter, cond, M, v..., captures...,
//                                 accumulators...]
//     cond subgraph:  Less(iter, M) And cond
//     body:           the ONNX body with `M` and one accumulator per scan
//                     output as extra Data nodes; it returns
//                     [iter + 1, cond_out, M, v_out..., captures...,
//                      LoopAccumulatorAppend(acc_k, scan_out_k)...]
//     after the loop: LoopAccumulatorStack(acc_k) is scan output k.
//   An absent M is INT64_MAX; an absent cond is true, and the body's
//   cond_out is then ignored (ONNX: "for (i = 0; i < M; ++i)").
//
//   Scan(state..., scan_inputs..., captures...) -> (final_state..., scan_outputs...)
//     While loop-carried values: [i, n, state..., scan_inputs...,
//                                 captures..., accumulators...]
//     with n = the length of scan input 0 along its scan axis;
//     cond subgraph:  Less(i, n)
//     body:           the ONNX body whose element inputs become the whole
//                     scan inputs, each followed by Gather(input, i or
//                     n - 1 - i, axis); returns [i + 1, n, state_out...,
//                     scan_inputs..., captures..., Append(acc_k, out_k)...]
//     after the loop: LoopAccumulatorStack(acc_k, axis, reverse) per the
//                     scan_output_axes / scan_output_directions.
//
// A loop-carried value the Loop body only grows (its one use is a Concat
// taking it first or last, whose one use is the value's body result:
// `torch.cat([acc, x])` in a scripted loop) is kept as its pieces instead,
// so n iterations copy O(n) bytes, not O(n^2):
//     before the loop: LoopAccumulatorAppend(LoopAccumulatorInit, v_initial)
//     body:            LoopAccumulatorAppend of the Concat's other inputs
//                      (in reverse order when v is the last input), with
//                      merge_axis: pieces under 64 KiB are joined as they
//                      come, so tiny pieces do not pile up as handles
//     after the loop:  LoopAccumulatorConcat(v, axis, reverse) is v_final.
//
// Both Whiles carry `_cond_reads` (3 for a Loop, 2 for a Scan): the cond
// reads only those leading values, so an iteration does not copy the
// accumulators into the cond's inputs.
//
// The While takes the Loop's (Scan's) node name; the values the ONNX node
// produced are read from the While (or from the Stack nodes) under their
// ONNX tensor names. Errors name the node and what cannot be lowered.
#pragma once

#include "absl/status/status.h"
#include "base/ir/graph.h"

namespace ge::frontend {

// Lowers every Loop and Scan of `root` and its subgraphs.
absl::Status LowerOnnxControlFlow(ir::Graph& root);

}  // namespace ge::frontend
