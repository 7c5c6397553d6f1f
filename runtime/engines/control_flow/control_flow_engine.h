// control_flow: the engine of ged's functional control flow (GE's RTS
// engine analogue, seeds/05): If, Case, While and PartitionedCall, whose
// kernels run their subgraphs through ExecuteContext::RunSubgraph, and the
// loop accumulators (LoopAccumulatorInit / Append / Stack) that the ONNX
// Loop and Scan lowering uses for scan outputs. COST_2, host runtime; its
// configuration file is control_flow.json.
//
// Semantics (docs/design/control_flow.md):
//   If    input 0 is a bool tensor with one element; then_branch
//         (GraphRef attribute, else subgraph_names()[0]) or else_branch
//         ([1]) runs on the remaining inputs.
//   Case  input 0 is an i32 / i64 tensor with one element; branch i runs
//         (GraphRefs of `branches`, else subgraph_names()); an index out of
//         range (negative or too large) runs the last branch, as GE and
//         TensorFlow do.
//   While cond (subgraph 0) maps the loop-carried values to a bool tensor
//         with one element; while it holds, body (subgraph 1) maps them to
//         their next values (same count, kind and dtype; shapes may change
//         from one iteration to the next).
//   PartitionedCall runs `f` (subgraph 0) on its inputs.
// The number of While iterations may be capped: the engine option
// `ge.exec.max_loop_iterations` (-1, the default, is no cap) is a hard cap
// that the node attribute `_max_loop_iterations` may lower but not lift
// (ged sets the option from its max_loop_iterations key; ONNX Loop's trip
// count and condition inputs run under it too). A loop that exceeds its cap
// fails with ResourceExhausted naming the node and the cap.
#pragma once

#include <memory>

#include "runtime/engines/api/engine.h"
#include "runtime/engines/control_flow/control_flow_kernels.h"

namespace ge::engine {

namespace control_flow {
// control_flow.json, embedded at build time (ged_engine_attributes).
extern const char kAttributesJson[];
}  // namespace control_flow

class ControlFlowEngine final : public Engine {
 public:
  ControlFlowEngine();
  ~ControlFlowEngine() override;

  // Reads ge.exec.max_loop_iterations (an integer, -1 for no cap).
  absl::Status Initialize(const EngineOptions& options) override;
  const OpsKernelInfoStore& info_store() const override;
  const KernelFactory& kernel_factory() const override;

 private:
  class InfoStore;
  class Factory;
  absl::Status attributes_error_;  // the embedded json (control_flow.json) did not parse
  control_flow::KernelOptions kernel_options_;
  std::unique_ptr<InfoStore> info_store_;
  std::unique_ptr<Factory> factory_;
};

}  // namespace ge::engine
