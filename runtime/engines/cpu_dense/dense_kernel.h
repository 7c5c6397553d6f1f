// The common machinery of cpu_dense kernels.
//
// A DenseKernel turns each set of input shapes into a Plan: the oneDNN
// primitives, their memory descriptors and the scratch layout. Plans are
// built in Prepare (where the executor reports shapes, and the values of
// constant inputs) and cached by shape, so Compute only binds pointers and
// executes. oneDNN's scratchpad and the temporary buffers of layout
// conversions live in the kernel workspace Prepare asks for.
//
// When a plan cannot be built for some shapes (oneDNN has no
// implementation, or a case CheckSupported could not see because shapes
// were unknown at placement), the kernel runs the reference engine's kernel
// for those shapes instead, so a node accepted by CheckSupported always
// computes. Shapes known at placement are checked there, so this path
// serves dynamic shapes only.
//
// Weights (PackedWeights): a constant weights input is reordered once into
// the layout the primitive prefers and kept; an input is constant when
// Prepare receives its value (PrepareContext::const_inputs) or the node's
// `_const_inputs` attribute (set by the cpu_dense graph optimizer for
// inputs fed by Const nodes) lists it. Other weights are reordered into
// scratch on each run. A static task's packings travel from its compile to
// its load (prepared_weights.h): Preload adopts a packed buffer the task
// carries instead of reordering again.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "base/ir/op_desc.h"
#include "runtime/engines/api/kernel.h"
#include "runtime/engines/cpu_dense/dnnl_util.h"

namespace ge::engine::cpu_dense {

// The `_const_inputs` attribute: input indices whose values are constant.
inline constexpr std::string_view kAttrConstInputs = "_const_inputs";

// Memory-bound plans over fewer elements than this run on the calling thread
// alone (DenseKernel::MemoryBoundElements, SerialScope). oneDNN splits a
// reorder, an element-wise, binary, pooling, concatenation or normalization
// primitive over the whole team however small it is; a quiet fork and join
// costs about what 16K elements take on one thread, and on a loaded host
// waking the second thread cost 30-100 us a primitive (a ConvLSTM step's
// 2K-element reorders, a Loop body's 8K-element GELU: 2-3x the 1-thread run
// time at 2 threads).
inline constexpr int64_t kSerialElements = int64_t{1} << 14;

// What every kernel of the engine shares: the oneDNN engine, whether this
// CPU runs bf16 primitives, and the reference engine's kernel factory for
// the fallback (Engine::SetReferenceEngine; null when no reference engine is
// loaded: such shapes then fail with an error naming the node).
struct DenseContext {
  dnnl::engine engine;  // created by the engine (oneDNN may refuse: a status, not a throw)
  bool bf16 = false;
  const KernelFactory* reference = nullptr;
};

// What a plan is built from.
struct PlanRequest {
  std::vector<ir::ValueType> input_types;   // concrete tensor types; undefined when absent
  std::vector<ir::ValueType> output_types;  // as inferred
  std::vector<const Tensor*> const_inputs;  // values known now, else null (may be shorter)
  bool has_input(int i) const {
    return i < static_cast<int>(input_types.size()) &&
           input_types[i].dtype() != DataType::kUndefined;
  }
  const Shape& shape(int i) const { return input_types[i].shape(); }
  DataType dtype(int i) const { return input_types[i].dtype(); }
  const Tensor* const_input(int i) const {
    return i < static_cast<int>(const_inputs.size()) ? const_inputs[i] : nullptr;
  }
};

// A reordered copy of one weights input.
class PackedWeights {
 public:
  PackedWeights() = default;
  // `plain` is how the input is stored, `packed` what the primitive wants.
  void Init(const dnnl::engine& eng, const dnnl::memory::desc& plain,
            const dnnl::memory::desc& packed, bool constant);
  bool needs_reorder() const { return plain_ != packed_; }
  // Scratch bytes a run needs (non-constant weights that need a reorder).
  size_t scratch_bytes() const;
  // Warms the cache from a value known at prepare time.
  absl::Status Preload(const dnnl::engine& eng, const Tensor& value);
  // The memory to hand the primitive for input tensor `t`.
  absl::StatusOr<dnnl::memory> Get(const dnnl::engine& eng, dnnl::stream& stream, const Tensor& t,
                                   Scratch& scratch);

 private:
  dnnl::memory::desc plain_, packed_;
  bool constant_ = false;
  std::optional<dnnl::reorder> reorder_;
  // The storage packed_memory_ was made from (kept alive, so that its
  // address cannot be reused by another tensor while it identifies it).
  std::shared_ptr<Buffer> source_;
  size_t source_offset_ = 0;
  // The task's prepared buffer packed_memory_ points into, when Preload
  // adopted one (prepared_weights.h) instead of packing.
  std::shared_ptr<Buffer> adopted_;
  // The packing packed_memory_ points into when it is shared with other
  // kernels (shared_packings.h).
  std::shared_ptr<Buffer> shared_;
  dnnl::memory packed_memory_;
  // Packs constant `value` into packed_memory_ (shared when it can be).
  void PackConstant(const dnnl::engine& eng, dnnl::stream& stream, const Tensor& value);
};

class DenseKernel : public Kernel {
 public:
  DenseKernel(const ir::OpDesc& op, const DenseContext& context);
  ~DenseKernel() override;

  absl::Status Prepare(PrepareContext& ctx) final;
  absl::Status Compute(ExecuteContext& ctx) final;

 protected:
  struct Plan {
    virtual ~Plan() = default;
    size_t workspace_bytes = 0;
    // Built and run on the calling thread alone (fewer than kSerialElements
    // memory-bound elements): set by the base class, not by Build.
    bool one_thread = false;
  };

  // The elements a plan's parallel loops split, for kernels whose work grows
  // with their tensors alone (layout conversions, element-wise and binary
  // ops, pooling, concatenation, normalizations); plans of fewer than
  // kSerialElements are built and run on one thread. -1 (the default) leaves
  // the team to the kernel (convolutions, products: their work is not their
  // size). Called with every input's shape known.
  virtual int64_t MemoryBoundElements(const PlanRequest& request) const;

  // Builds the plan for these shapes. Unimplemented means "run the
  // reference kernel for these shapes"; other errors fail the node.
  virtual absl::StatusOr<std::unique_ptr<Plan>> Build(const PlanRequest& request) = 0;
  // Computes with `plan`; every output must be produced.
  virtual absl::Status Run(Plan& plan, ExecuteContext& ctx, Scratch& scratch) = 0;

  const ir::OpDesc& op() const { return op_; }
  const DenseContext& context() const { return context_; }
  const dnnl::engine& eng() const { return context_.engine; }
  bool IsConstInput(int i, const PlanRequest& request) const;

 private:
  struct Entry {
    std::unique_ptr<Plan> plan;  // null: the reference kernel runs these shapes
  };
  absl::StatusOr<Entry*> FindOrBuild(const PlanRequest& request);
  absl::Status RunReference(ExecuteContext& ctx, const PlanRequest& request);
  static std::vector<int64_t> KeyOf(const std::vector<ir::ValueType>& inputs);

  ir::OpDesc op_;
  const DenseContext& context_;
  std::vector<int> const_inputs_attr_;
  std::map<std::vector<int64_t>, Entry> plans_;
  size_t prepared_workspace_bytes_ = 0;  // what the last Prepare asked the executor for
  std::unique_ptr<Kernel> reference_;
  std::vector<int64_t> reference_key_;
  std::shared_ptr<Buffer> reference_workspace_;
};

// How many computes in this process ran a reference kernel instead of
// oneDNN (tests check that supported cases never do).
std::atomic<int64_t>& ReferenceRuns();
// How many computes ran a serial plan (tests check which sizes do).
std::atomic<int64_t>& SerialRuns();
// How many times constant weights were packed (tests check: once per
// weights tensor, not per run).
std::atomic<int64_t>& WeightPacks();

// Allocates every output (for kernels whose outputs are all empty).
absl::Status ProduceEmptyOutputs(ExecuteContext& ctx);

// Runs `reorder` from `src` into `dst`: on the calling thread alone when
// `dst` holds fewer than kSerialElements elements (a kernel's own layout
// conversions, e.g. a small convolution's source: the plan's team is for
// the convolution).
void ExecuteReorder(const dnnl::reorder& reorder, dnnl::stream& stream, dnnl::memory& src, dnnl::memory& dst);

}  // namespace ge::engine::cpu_dense
