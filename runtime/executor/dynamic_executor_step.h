// DynamicExecutor::Step, one node of an executor's graph with its kernel,
// slots and inference cache: shared by dynamic_executor.cc (building and
// running steps) and dynamic_executor_parallel.cc (the inter-op schedule).
// Internal to runtime/executor.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "base/ir/graph.h"
#include "base/ops/op_registry.h"
#include "runtime/executor/dynamic_executor.h"

namespace ge::runtime {

struct DynamicExecutor::Step {
  const ir::Node* node = nullptr;
  const ops::OpSchema* schema = nullptr;
  std::unique_ptr<engine::Kernel> kernel;
  std::vector<int> inputs;  // slot per input, -1 when absent
  int output_base = 0;
  int num_outputs = 0;
  std::vector<int> release;  // slots that die after this step
  bool is_data = false;
  bool is_net_output = false;
  // Whether the compiled types are fully known, so inference can be skipped
  // when the actual inputs match them.
  bool static_types = false;
  std::vector<ir::ValueType> prepared_inputs;
  bool prepared = false;
  int stream = -1;  // the independent engine's stream it runs on, or -1
  int stage = -1;   // its pipeline stage (PipelineStages::stage_of), or -1
  size_t workspace_bytes = 0;
  std::shared_ptr<Buffer> workspace;
  // Per input: the slot dies with this step and no other input of it reads
  // the slot (sequential runs hand it to the kernel: owned_input); whether
  // it is read by this input only and is no graph output (parallel runs,
  // which also check the slot's remaining consumers).
  std::vector<bool> takeable;
  std::vector<bool> takeable_if_last;
  // The inference cache: the output types inferred (or compiled) for the
  // input types `prepared_inputs` and, for the inputs whose values the
  // schema's inference reads (`value_inputs`), those values' bytes. An op's
  // inference is a function of these alone, so equal inputs give equal
  // outputs (errors included: a failed inference is never cached): a loop
  // body whose shapes repeat infers each node once.
  std::vector<int> value_inputs;
  std::vector<std::string> inferred_values;
  bool inferred = false;
  std::vector<ir::ValueType> output_types;
  // The executors of the subgraphs the node owns, by subgraph_names() index
  // (resolved once the tree is built).
  std::vector<DynamicExecutor*> subgraphs;
  // Scratch kept between runs (runs of one executor are serialized, and a
  // run computes each step once).
  std::vector<const Value*> input_values;
  std::vector<ir::ValueType> input_types;
  std::vector<Value> outputs;
};

}  // namespace ge::runtime
