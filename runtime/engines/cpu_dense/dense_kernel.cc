// DenseKernel: plans cached by input shapes, the reference fallback, and
// weights packed once.
#include "runtime/engines/cpu_dense/dense_kernel.h"

#include <omp.h>

#include <algorithm>
#include <atomic>
#include <string>

#include "base/compute_budget.h"
#include "base/logging.h"
#include "absl/strings/str_cat.h"
#include "runtime/engines/cpu_dense/prepared_weights.h"
#include "runtime/engines/cpu_dense/shared_packings.h"

namespace ge::engine::cpu_dense {

// ---- PackedWeights ----

std::atomic<int64_t>& WeightPacks() {
  static std::atomic<int64_t> packs{0};
  return packs;
}

void PackedWeights::Init(const dnnl::engine& eng, const dnnl::memory::desc& plain,
                         const dnnl::memory::desc& packed, bool constant) {
  plain_ = plain;
  packed_ = packed;
  constant_ = constant;
  reorder_.reset();
  if (needs_reorder()) reorder_ = MakeReorder(eng, plain_, packed_);
  source_.reset();
  adopted_.reset();
  shared_.reset();
  packed_memory_ = dnnl::memory();
}

size_t PackedWeights::scratch_bytes() const {
  return needs_reorder() && !constant_ ? Scratch::Padded(packed_.get_size()) : 0;
}

absl::Status PackedWeights::Preload(const dnnl::engine& eng, const Tensor& value) {
  if (!needs_reorder() || !constant_) return absl::OkStatus();
  // A task's prepared state (prepared_weights.h): adopted when it was
  // packed exactly so, recorded when the builder asks.
  PreparedWeights* prepared = PreparedWeights::Current();
  adopted_ = prepared != nullptr && !prepared->recording() ? prepared->Take(packed_) : nullptr;
  if (adopted_ != nullptr) {
    packed_memory_ = dnnl::memory(packed_, eng, adopted_->data());
  } else {
    dnnl::stream stream(eng);
    PackConstant(eng, stream, value);
    if (prepared != nullptr) prepared->Record(packed_, packed_memory_, shared_);
  }
  source_ = value.buffer();
  source_offset_ = value.byte_offset();
  return absl::OkStatus();
}

void PackedWeights::PackConstant(const dnnl::engine& eng, dnnl::stream& stream, const Tensor& value) {
  auto reorder = [&](dnnl::memory& dst) {
    dnnl::memory src = WrapTensor(plain_, eng, value);
    reorder_->execute(stream, src, dst);
    stream.wait();
    WeightPacks().fetch_add(1, std::memory_order_relaxed);
  };
  // Shared with every kernel that packs this storage into this layout (the
  // per-shape plans of one graph), when both layouts have a text form.
  const std::string plain_layout = LayoutKey(plain_);
  const std::string packed_layout = LayoutKey(packed_);
  if (plain_layout.empty() || packed_layout.empty()) {
    shared_.reset();
    packed_memory_ = dnnl::memory(packed_, eng);
    reorder(packed_memory_);
    return;
  }
  shared_ = SharedPackings::Get<Buffer>(value, absl::StrCat("dnnl:", plain_layout, "->", packed_layout), [&] {
    dnnl::memory owned(packed_, eng);
    reorder(owned);
    return Buffer::Wrap(owned.get_data_handle(), packed_.get_size(), [owned] {});
  });
  packed_memory_ = dnnl::memory(packed_, eng, shared_->data());
}

absl::StatusOr<dnnl::memory> PackedWeights::Get(const dnnl::engine& eng, dnnl::stream& stream,
                                                const Tensor& t, Scratch& scratch) {
  if (!needs_reorder()) return WrapTensor(plain_, eng, t);
  dnnl::memory src = WrapTensor(plain_, eng, t);
  if (constant_) {
    // The same storage as last time holds the same (constant) values.
    if (source_ != nullptr && source_ == t.buffer() && source_offset_ == t.byte_offset()) {
      return packed_memory_;
    }
    adopted_.reset();
    PackConstant(eng, stream, t);
    source_ = t.buffer();
    source_offset_ = t.byte_offset();
    return packed_memory_;
  }
  dnnl::memory dst(packed_, eng, scratch.Take(packed_.get_size()));
  reorder_->execute(stream, src, dst);
  return dst;
}

// ---- DenseKernel ----

namespace {

constexpr size_t kMaxCachedPlans = 32;

// Whether an empty tensor at `input` of `op` means the input is absent, so
// the kernel computes the node: Resize's roi, scales and sizes (exporters
// pass f32[0] for "not given"; the kernel reads the non-empty one of scales
// and sizes, and ignores roi). Any other empty input runs the reference
// kernel, which computes what such shapes leave behind (a bias, say).
bool EmptyMeansAbsent(const ir::OpDesc& op, int input) { return op.type() == "Resize" && input >= 1; }

bool AnyEmptyInput(const ir::OpDesc& op, const PlanRequest& r) {
  for (size_t i = 0; i < r.input_types.size(); ++i) {
    const int input = static_cast<int>(i);
    if (r.has_input(input) && r.input_types[i].shape().NumElementsUnchecked() == 0 && !EmptyMeansAbsent(op, input)) {
      return true;
    }
  }
  return false;
}

ir::ValueType TypeOfInput(const ExecuteContext& ctx, int i) {
  if (!ctx.has_input(i) || !ctx.input_value(i).is_tensor()) return ir::ValueType();
  const Tensor& t = ctx.input(i);
  return ir::ValueType::Tensor(t.dtype(), t.shape());
}

bool AllOutputsEmpty(const PlanRequest& r) {
  for (const ir::ValueType& t : r.output_types) {
    if (!t.is_tensor() || !t.shape().IsFullyKnown() || t.shape().NumElementsUnchecked() != 0) {
      return false;
    }
  }
  return !r.output_types.empty();
}

}  // namespace

absl::Status ProduceEmptyOutputs(ExecuteContext& ctx) {
  for (int i = 0; i < ctx.num_outputs(); ++i) {
    GE_ASSIGN_OR_RETURN(Tensor t, ctx.Output(i));
    (void)t;
  }
  return absl::OkStatus();
}

DenseKernel::DenseKernel(const ir::OpDesc& op, const DenseContext& context)
    : op_(op), context_(context) {
  for (int64_t i : op.GetAttrOr<std::vector<int64_t>>(kAttrConstInputs, {})) {
    const_inputs_attr_.push_back(static_cast<int>(i));
  }
}

DenseKernel::~DenseKernel() = default;

bool DenseKernel::IsConstInput(int i, const PlanRequest& request) const {
  return request.const_input(i) != nullptr ||
         std::find(const_inputs_attr_.begin(), const_inputs_attr_.end(), i) !=
             const_inputs_attr_.end();
}

std::vector<int64_t> DenseKernel::KeyOf(const std::vector<ir::ValueType>& inputs) {
  std::vector<int64_t> key;
  for (const ir::ValueType& t : inputs) {
    key.push_back(static_cast<int64_t>(t.dtype()));
    key.push_back(t.shape().rank());
    key.insert(key.end(), t.shape().dims().begin(), t.shape().dims().end());
  }
  return key;
}

absl::StatusOr<DenseKernel::Entry*> DenseKernel::FindOrBuild(const PlanRequest& request) {
  std::vector<int64_t> key = KeyOf(request.input_types);
  auto it = plans_.find(key);
  if (it != plans_.end()) return &it->second;
  if (plans_.size() >= kMaxCachedPlans) plans_.clear();
  const int64_t elements = MemoryBoundElements(request);
  const bool serial = elements >= 0 && elements < kSerialElements;
  absl::StatusOr<std::unique_ptr<Plan>> plan = DnnlTry(op_, kCreation, [&] {
    const SerialScope scope(serial);  // oneDNN may fix a primitive's team when it creates it
    return Build(request);
  });
  Entry entry;
  if (plan.ok()) {
    entry.plan = *std::move(plan);
    entry.plan->one_thread = serial;
  } else if (absl::IsUnimplemented(plan.status())) {
    GE_LOG_DEBUG("cpu_dense", "{}: using the reference kernel: {}", op_.name(),
                 plan.status().message());
  } else {
    return plan.status();
  }
  return &plans_.emplace(std::move(key), std::move(entry)).first->second;
}

absl::Status DenseKernel::Prepare(PrepareContext& ctx) {
  ctx.workspace_bytes = 0;
  prepared_workspace_bytes_ = 0;
  PlanRequest request;
  for (const ir::ValueType& t : ctx.input_types) {
    if (t.is_tensor() && t.dtype() != DataType::kUndefined && !t.shape().IsFullyKnown()) {
      return absl::OkStatus();  // shapes come at run time; plans are built then
    }
    request.input_types.push_back(t.is_tensor() ? t : ir::ValueType());
  }
  request.output_types = ctx.output_types;
  request.const_inputs = ctx.const_inputs;
  if (AllOutputsEmpty(request) || AnyEmptyInput(op_, request)) return absl::OkStatus();
  // Packing weights runs oneDNN reorders: the team's tokens first (a
  // dynamic run prepares inside the executor's ComputeScope).
  const ComputeTeam team(omp_in_parallel() != 0 ? 1 : ctx.num_threads, ComputeTeam::Mode::kWhole);
  SetDnnlThreads(ctx.num_threads);
  GE_ASSIGN_OR_RETURN(Entry * entry, FindOrBuild(request));
  if (entry->plan != nullptr) ctx.workspace_bytes = entry->plan->workspace_bytes;
  prepared_workspace_bytes_ = ctx.workspace_bytes;
  return absl::OkStatus();
}

std::atomic<int64_t>& ReferenceRuns() {
  static std::atomic<int64_t> runs{0};
  return runs;
}

std::atomic<int64_t>& SerialRuns() {
  static std::atomic<int64_t> runs{0};
  return runs;
}

int64_t DenseKernel::MemoryBoundElements(const PlanRequest&) const { return -1; }

void ExecuteReorder(const dnnl::reorder& reorder, dnnl::stream& stream, dnnl::memory& src, dnnl::memory& dst) {
  int64_t elements = 1;
  for (int64_t d : dst.get_desc().dims()) elements *= d;
  const SerialScope serial(elements < kSerialElements);
  reorder.execute(stream, src, dst);
}

absl::Status DenseKernel::RunReference(ExecuteContext& ctx, const PlanRequest& request) {
  ReferenceRuns().fetch_add(1, std::memory_order_relaxed);
  // The reference reads plain tensors only; a node in the engine's own
  // layout must never get here (the layout pass assigns layouts only where
  // plans exist).
  for (const std::vector<ir::IoDesc>* ports : {&op_.inputs(), &op_.outputs()}) {
    for (const ir::IoDesc& io : *ports) {
      const ir::Format f = io.type.tensor().format;
      if (f != ir::Format::kND && f != ir::Format::kNCHW && f != ir::Format::kNCDHW) {
        return Internal("node '", op_.name(), "' (", op_.type(), "): cannot run the reference kernel on layout ",
                        ir::FormatName(f));
      }
    }
  }
  if (reference_ == nullptr) {
    if (context_.reference == nullptr) {
      return Internal("node '", op_.name(), "' (", op_.type(),
                      "): cpu_dense cannot run these shapes and no reference engine is loaded");
    }
    auto created = context_.reference->CreateKernel(op_);
    if (!created.ok()) {
      return Internal(
          "node '", op_.name(), "' (", op_.type(),
          "): cpu_dense cannot run these shapes and the reference engine has no kernel: ", created.status().message());
    }
    reference_ = *std::move(created);
  }
  std::vector<int64_t> key = KeyOf(request.input_types);
  if (key != reference_key_) {
    PrepareContext pctx;
    pctx.op = &op_;
    pctx.input_types = request.input_types;
    pctx.output_types = request.output_types;
    pctx.const_inputs.assign(request.input_types.size(), nullptr);
    pctx.num_threads = ctx.num_threads();
    GE_RETURN_IF_ERROR(reference_->Prepare(pctx));
    if (pctx.workspace_bytes > 0 &&
        (!reference_workspace_ || reference_workspace_->size() < pctx.workspace_bytes)) {
      GE_ASSIGN_OR_RETURN(reference_workspace_, Buffer::Allocate(pctx.workspace_bytes));
    }
    reference_key_ = std::move(key);
  }
  // The reference kernel sees the executor's context; its workspace (none
  // for host_cpu today) would come from reference_workspace_.
  return reference_->Compute(ctx);
}

absl::Status DenseKernel::Compute(ExecuteContext& ctx) {
  PlanRequest request;
  for (int i = 0; i < ctx.num_inputs(); ++i) request.input_types.push_back(TypeOfInput(ctx, i));
  for (int i = 0; i < ctx.num_outputs(); ++i) request.output_types.push_back(ctx.output_type(i));
  if (AllOutputsEmpty(request)) return ProduceEmptyOutputs(ctx);
  if (AnyEmptyInput(op_, request)) return RunReference(ctx, request);
  // oneDNN fixes a primitive's team size when it creates it (for
  // `threads`), so the kernel waits for the whole team from the device's
  // budget (sdk/parallel.h, rule 3). Inside another kernel's OpenMP region
  // oneDNN runs on the calling thread by itself.
  const bool nested = omp_in_parallel() != 0;
  const ComputeTeam team(nested ? 1 : ctx.num_threads(), ComputeTeam::Mode::kWhole);
  if (!nested) SetDnnlThreads(team.size());
  GE_ASSIGN_OR_RETURN(Entry * entry, FindOrBuild(request));
  if (entry->plan == nullptr) return RunReference(ctx, request);
  Plan& plan = *entry->plan;
  // The executor's workspace holds what the last Prepare asked for; a plan
  // built here at run time (shapes unknown at prepare) brings its own.
  std::shared_ptr<Buffer> own;
  void* base = ctx.workspace();
  if (plan.workspace_bytes > 0 && (base == nullptr || plan.workspace_bytes > prepared_workspace_bytes_)) {
    GE_ASSIGN_OR_RETURN(own, Buffer::Allocate(plan.workspace_bytes));
    base = own->data();
  }
  Scratch scratch(base, plan.workspace_bytes);
  if (plan.one_thread) SerialRuns().fetch_add(1, std::memory_order_relaxed);
  const SerialScope serial(plan.one_thread);
  return DnnlTry(op_, "execution", [&] { return Run(plan, ctx, scratch); });
}

}  // namespace ge::engine::cpu_dense
