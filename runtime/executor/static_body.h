// Static plans of control-flow subgraphs: a While's body or cond, an If /
// Case branch (any owner's subgraph but a PartitionedCall's, which mixed
// execution loads by the partitioner's verdict).
//
// A body that a loop runs many times with inputs of one signature (dtype
// and shape of every input) is planned once for it: its types are inferred
// from those inputs (a specialized copy; the compiled graph when its types
// already are those), and the static program (one arena, kernels bound and
// prepared once) runs every later call with that signature: no shape
// inference, no allocation of intermediates, no per-node dispatch of the
// dynamic path. A dynamic batch dim (compiled as unknown) thus gets one plan
// per batch size it is run with. Signatures the body cannot be planned for
// (a value whose shape depends on data, an unknown dim left) are remembered
// too, so a loop does not retry them per iteration; at most kMaxSignatures
// are kept per subgraph, after which new signatures run dynamically.
//
// A lowered Scan's scan outputs are appended to sequences (accumulators)
// in the body: those appends are made outside the program, which computes
// the appended tensors (OutsideAppends).
//
// What never plans (Plannable): a node owning subgraphs, a sequence or
// optional value (but an outside append's accumulator), a node on the reference engine or flagged
// `_force_unknown_shape` / `_is_support_addr_refresh = false` (the dynamic-
// shape partitioner's rules), a node whose inference reads a value (the
// schema's value_inputs) that is not a Const's, or an op whose output shape
// depends on data.
//
// Outputs that are the subgraph's inputs passed through unchanged (a Loop's
// captured weights, a trip count) or its constants are handed on without a
// copy: the same tensors, never written by the program
// (StaticExecutor::RunWithOutputs' caller_filled). Computed outputs are new
// tensors from the executor's output cache, so iteration k + 1 reads the
// loop-carried value of iteration k in place while it writes a fresh one.
#pragma once

#include <functional>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "base/ir/graph.h"
#include "base/value.h"
#include "runtime/engines/engine_registry.h"
#include "runtime/executor/run_control.h"

namespace ge::runtime {

class StaticExecutor;

// One plan: a program for one signature.
class StaticBody {
 public:
  using Loader = std::function<absl::StatusOr<std::unique_ptr<StaticExecutor>>(const ir::Graph&)>;
  ~StaticBody();

  // The plan of `sub` as typed (every value a tensor of known shape), whose
  // input node of index i takes parent input i + `parent_offset` (or its
  // `_parent_index`); null when the loader declines it (Unimplemented).
  // Other loader errors are returned.
  // `appends[o]` >= 0: output o is appended to that parent input (a
  // sequence: a scan output's accumulator) and the sequence is the output.
  static absl::StatusOr<std::unique_ptr<StaticBody>> Load(const ir::Graph& sub, int64_t parent_offset,
                                                          const Loader& loader,
                                                          const std::vector<int64_t>& appends = {});

  // Whether the parent inputs are what the program was planned for: every
  // input it reads present, a tensor of the planned dtype and shape.
  bool Accepts(const std::vector<Value>& parent_inputs) const;
  // Runs the program on `parent_inputs` (Accepts must hold); returns the
  // subgraph's outputs in NetOutput order. Inputs passed through are moved
  // out of `parent_inputs`.
  absl::StatusOr<std::vector<Value>> Run(std::vector<Value>& parent_inputs, const RunControl* control);

 private:
  StaticBody() = default;
  // How output o is made: by the program, or passed through.
  struct Output {
    int64_t parent_input = -1;  // >= 0: this parent input unchanged
    Tensor constant;            // defined: this Const's value
    int64_t append_to = -1;     // >= 0: appended to this parent input (a sequence)
    DataType append_dtype = DataType::kUndefined;
  };

  std::unique_ptr<StaticExecutor> exec_;
  std::vector<int64_t> parent_index_;  // program input k <- parent input parent_index_[k]
  std::vector<ir::ValueType> input_types_;
  std::vector<Output> outputs_;
  std::vector<bool> caller_filled_;  // per output: passed through
  int64_t max_parent_index_ = -1;
  // Scratch kept between runs (runs of one subgraph are serialized by its
  // executor's run lock).
  std::vector<Value> inputs_;
  std::vector<Tensor> tensors_;
};

// The plans of one subgraph, by signature.
class StaticBodies {
 public:
  static constexpr size_t kMaxSignatures = 8;
  ~StaticBodies();

  // Whether `sub` can be planned for some signature (the rules above, from
  // its structure and placement; its types may still be unknown).
  static bool Plannable(const ir::Graph& sub, const engine::EngineRegistry& engines);
  // `sub`'s types inferred from its input nodes taking `input_types` (by
  // input node, in `InputNodes` order): a copy whose every value is typed
  // as far as those inputs tell. Errors of the inference are returned.
  static absl::StatusOr<std::unique_ptr<ir::Graph>> Specialize(const ir::Graph& sub,
                                                               const std::vector<ir::ValueType>& input_types);
  // Whether every value of `graph` is a tensor of known shape and fixed-size dtype.
  static bool FullyTyped(const ir::Graph& graph);
  // The LoopAccumulatorAppends of `sub` (a lowered Scan's or Loop's scan
  // outputs, without `merge_axis`) that append to an input node read by
  // nothing else and feed the NetOutput only: the plan computes the piece
  // and the append is made outside it.
  static std::vector<const ir::Node*> OutsideAppends(const ir::Graph& sub);

  // The plans of `sub` (which must outlive them), or null when it is not
  // Plannable or there is no loader.
  static std::unique_ptr<StaticBodies> Create(const ir::Graph& sub, int64_t parent_offset,
                                              const engine::EngineRegistry& engines, StaticBody::Loader loader);

  // The plan for `parent_inputs`' signature, planned now when it is new;
  // null when that signature has no plan (it runs dynamically). Errors are
  // the loader's (a planning failure is only a missing plan).
  absl::StatusOr<StaticBody*> Find(const std::vector<Value>& parent_inputs);
  // Signatures with a plan.
  int num_plans() const;

 private:
  StaticBodies() = default;
  struct Plan {
    std::vector<ir::ValueType> signature;
    std::unique_ptr<ir::Graph> graph;  // the specialized copy, when not the compiled subgraph
    std::unique_ptr<StaticBody> body;  // null: no plan for this signature
  };

  // A copy of the subgraph without its outside appends (and their
  // accumulators' input nodes), whose NetOutput takes the pieces; and per
  // NetOutput input, the parent input it appends to, or -1.
  struct Stripped {
    std::unique_ptr<ir::Graph> graph;
    std::vector<int64_t> appends;
  };
  absl::StatusOr<Stripped> StripAppends(const ir::Graph& sub);

  const ir::Graph* sub_ = nullptr;
  std::unique_ptr<ir::Graph> stripped_;
  const ir::Graph* planned_sub_ = nullptr;  // sub_, or stripped_ when it has outside appends
  std::vector<int64_t> appends_;
  int64_t parent_offset_ = 0;
  StaticBody::Loader loader_;
  std::vector<const ir::Node*> input_nodes_;  // by program input order
  std::vector<int64_t> parent_index_;         // of each input node
  std::vector<Plan> plans_;
  StaticBody* last_ = nullptr;  // the plan the previous call used
};

}  // namespace ge::runtime
