// StaticExecutor: kernels bound once at load, one device block for the
// arena, an address table refreshed per run, and a flat walk over tasks.
#include "runtime/executor/static_executor.h"

#include <cstring>

#include "absl/container/flat_hash_map.h"
#include "base/ir/op_types.h"
#include "base/status.h"

namespace ge::runtime {
namespace {

int64_t AlignUp(int64_t bytes) { return (bytes + kStaticAlignment - 1) / kStaticAlignment * kStaticAlignment; }

bool IsAligned(const void* p) { return reinterpret_cast<uintptr_t>(p) % kStaticAlignment == 0; }

absl::StatusOr<size_t> BytesOf(const ir::ValueType& type) {
  GE_ASSIGN_OR_RETURN(int64_t count, type.shape().NumElements());
  return ByteSizeOf(type.dtype(), count);
}

absl::Status CheckTensor(const Value& v, const StaticIo& io, std::string_view what, size_t index) {
  if (!v.is_tensor()) return InvalidArgument(what, " ", index, " '", io.name, "': expected a tensor ", io.type.ToString());
  const Tensor& t = v.tensor();
  if (t.dtype() != io.type.dtype() || t.shape() != io.type.shape()) {
    return InvalidArgument(what, " ", index, " '", io.name, "': expected ", io.type.ToString(), ", got ",
                           DataTypeName(t.dtype()), t.shape().ToString());
  }
  return absl::OkStatus();
}

}  // namespace

// One task: its kernel, the values it reads and writes (tensors pointing
// into the address table's entries), and the ExecuteContext it computes in.
class StaticExecutor::TaskContext final : public engine::ExecuteContext {
 public:
  TaskContext(StaticTask task, ThreadPool* pool, engine::VariableStore* variables)
      : op_(std::move(task.op)), def_(std::move(task.def)), input_refs_(std::move(task.inputs)),
        output_refs_(std::move(task.outputs)), pool_(pool), variables_(variables) {
    inputs_.resize(input_refs_.size());
    outputs_.resize(output_refs_.size());
  }

  int num_inputs() const override { return static_cast<int>(inputs_.size()); }
  int num_outputs() const override { return static_cast<int>(outputs_.size()); }
  const Value& input_value(int i) const override { return inputs_[i]; }
  const ir::ValueType& output_type(int i) const override { return output_refs_[i].type; }
  absl::StatusOr<Tensor> Output(int i, const Shape& shape) override {
    const ir::ValueType& planned = output_refs_[i].type;
    if (&shape != &planned.shape() && shape != planned.shape()) {
      return Internal("output ", i, " asked for shape ", shape.ToString(), " but the static plan has ",
                      planned.shape().ToString());
    }
    return outputs_[i].tensor();
  }
  // Forwarded values are copied into the planned buffer (a no-op for views,
  // whose planned buffer is the input's).
  absl::Status SetOutputValue(int i, Value value) override {
    const Tensor& planned = outputs_[i].tensor();
    if (!value.is_tensor() || value.tensor().dtype() != planned.dtype() ||
        value.tensor().SizeInBytes() != planned.SizeInBytes()) {
      return Internal("output ", i, " was set to a value that does not match the static plan ",
                      output_refs_[i].type.ToString());
    }
    if (value.tensor().raw_data() != planned.raw_data()) {
      std::memmove(planned.raw_data(), value.tensor().raw_data(), planned.SizeInBytes());
    }
    return absl::OkStatus();
  }
  void* workspace() override { return workspace_; }
  ThreadPool* thread_pool() override { return pool_ ? pool_ : SerialPool(); }
  int num_threads() const override { return pool_ ? pool_->num_threads() + 1 : 1; }
  engine::VariableStore* variables() override { return variables_; }
  Tensor* planned_output(int i) override { return &outputs_[i].mutable_tensor(); }

  static ThreadPool* SerialPool() {
    static ThreadPool* pool = new ThreadPool(0, "serial");
    return pool;
  }

  ir::OpDesc op_;
  engine::TaskDef def_;
  std::vector<ValueRef> input_refs_;
  std::vector<ValueRef> output_refs_;
  std::unique_ptr<engine::Kernel> kernel_;
  std::vector<Value> inputs_;
  std::vector<Value> outputs_;
  void* workspace_ = nullptr;
  ThreadPool* pool_;
  engine::VariableStore* variables_;
};

// A place a value of some task lives in an entry.
struct StaticExecutor::Site {
  TaskContext* task;
  bool is_output;
  int index;
  int64_t offset;
};

// A row of the address table.
struct StaticExecutor::Entry {
  std::shared_ptr<Buffer> buffer;
  size_t offset = 0;
  const void* address = nullptr;
  std::vector<Site> sites;
};

struct StaticExecutor::InputState {
  StaticIo io;
  int entry = 0;
  size_t bytes = 0;
  int64_t staging_offset = 0;  // in the device block
  bool frozen = false;
  bool bound = false;
};

int StaticExecutor::num_inputs() const { return static_cast<int>(inputs_.size()); }

StaticExecutor::~StaticExecutor() {
  tasks_.clear();
  entries_.clear();
  block_buffer_.reset();  // frees the device block
}

absl::StatusOr<std::unique_ptr<StaticExecutor>> StaticExecutor::Load(StaticProgram program,
                                                                     const engine::EngineRegistry& engines,
                                                                     device::Device& device,
                                                                     ExecutorOptions options) {
  std::unique_ptr<StaticExecutor> exec(new StaticExecutor());
  exec->device_ = &device;
  exec->options_ = options;
  exec->graph_name_ = program.graph_name;
  exec->arena_bytes_ = program.arena_bytes;
  for (StaticWeight& w : program.weights) exec->weights_.push_back(std::move(w.value));
  GE_RETURN_IF_ERROR(exec->ResolveVariables(program));
  GE_RETURN_IF_ERROR(exec->BindTasks(program, engines));
  GE_RETURN_IF_ERROR(exec->AllocateMemory(program));
  return exec;
}

absl::Status StaticExecutor::ResolveVariables(const StaticProgram& program) {
  if (!program.variables.empty() && options_.variables == nullptr) {
    return FailedPrecondition("static graph '", graph_name_, "' uses variable '", program.variables[0].node,
                              "' but runs without a session's variables");
  }
  for (const StaticVariable& v : program.variables) {
    const bool is_file = v.op.type() == ir::kFileConstant;
    absl::StatusOr<Tensor> t = is_file ? options_.variables->GetFileConstant(v.op) : options_.variables->GetVariable(v.op);
    if (!t.ok()) return Annotate(t.status(), StrCat("loading static graph '", graph_name_, "'"));
    variables_.push_back(*std::move(t));
    variable_is_constant_.push_back(is_file);
  }
  return absl::OkStatus();
}

absl::Status StaticExecutor::BindTasks(StaticProgram& program, const engine::EngineRegistry& engines) {
  const int threads = options_.intra_op_pool ? options_.intra_op_pool->num_threads() + 1 : 1;
  for (StaticTask& task : program.tasks) {
    auto ctx = std::make_unique<TaskContext>(std::move(task), options_.intra_op_pool, options_.variables);
    const std::string prefix = StrCat("node '", ctx->op_.name(), "' (", ctx->op_.type(), ")");
    engine::Engine* engine = engines.Find(ctx->def_.engine);
    if (engine == nullptr) {
      return FailedPrecondition(prefix, " runs on engine '", ctx->def_.engine, "', which is not loaded");
    }
    engine::PrepareContext prepare;
    prepare.op = &ctx->op_;
    prepare.num_threads = threads;
    for (const ValueRef& ref : ctx->input_refs_) {
      prepare.input_types.push_back(ref.type);
      const Tensor* known = nullptr;
      if (ref.kind == ValueRef::Kind::kWeight) known = &weights_[ref.index];
      // A FileConstant never changes; a Variable does, so it is never folded in.
      if (ref.kind == ValueRef::Kind::kVariable && variable_is_constant_[ref.index]) known = &variables_[ref.index];
      prepare.const_inputs.push_back(known);
    }
    for (const ValueRef& ref : ctx->output_refs_) prepare.output_types.push_back(ref.type);
    auto kernel = engine->kernel_builder().LoadKernel(engine->kernel_factory(), ctx->def_, prepare);
    if (!kernel.ok()) return Annotate(kernel.status(), prefix);
    ctx->kernel_ = *std::move(kernel);
    ctx->def_.workspace_bytes = std::max(ctx->def_.workspace_bytes, prepare.workspace_bytes);
    tasks_.push_back(std::move(ctx));
  }
  return absl::OkStatus();
}

std::pair<int, int64_t> StaticExecutor::EntryOf(const ValueRef& ref) const {
  const int num_weights = static_cast<int>(weights_.size());
  switch (ref.kind) {
    case ValueRef::Kind::kWeight: return {1 + ref.index, 0};
    case ValueRef::Kind::kInput: return {1 + num_weights + ref.index, 0};
    case ValueRef::Kind::kVariable: return {variable_entry_[ref.index], 0};
    case ValueRef::Kind::kArena:
      if (ref.output >= 0 && ref.output < static_cast<int>(output_entry_.size()) && output_entry_[ref.output] >= 0) {
        return {output_entry_[ref.output], 0};
      }
      return {0, ref.offset};
    case ValueRef::Kind::kNone: break;
  }
  return {-1, 0};
}

absl::Status StaticExecutor::AllocateMemory(const StaticProgram& program) {
  // Block layout: arena | workspace (the largest task's) | input staging.
  int64_t workspace = 0;
  for (const auto& t : tasks_) workspace = std::max<int64_t>(workspace, static_cast<int64_t>(t->def_.workspace_bytes));
  int64_t total = AlignUp(program.arena_bytes) + AlignUp(workspace);
  for (size_t i = 0; i < program.inputs.size(); ++i) {
    InputState in;
    in.io = program.inputs[i];
    GE_ASSIGN_OR_RETURN(in.bytes, BytesOf(in.io.type));
    in.entry = 1 + static_cast<int>(weights_.size()) + static_cast<int>(i);
    in.staging_offset = total;
    total += AlignUp(static_cast<int64_t>(in.bytes));
    inputs_.push_back(std::move(in));
  }
  total = std::max<int64_t>(total, kStaticAlignment);
  absl::StatusOr<void*> block = device_->Malloc(static_cast<size_t>(total));
  if (!block.ok()) return Annotate(block.status(), StrCat("loading static graph '", graph_name_, "'"));
  block_ = *block;
  device::Device* device = device_;
  void* raw = block_;
  block_buffer_ = Buffer::Wrap(raw, static_cast<size_t>(total), [device, raw] { (void)device->FreeMemory(raw); });
  workspace_ = static_cast<char*>(block_) + AlignUp(program.arena_bytes);
  for (auto& t : tasks_) t->workspace_ = workspace_;

  outputs_ = program.outputs;
  output_values_ = program.output_values;
  entries_.resize(1 + weights_.size() + inputs_.size());
  output_entry_.assign(outputs_.size(), -1);
  for (size_t o = 0; o < outputs_.size(); ++o) {
    if (o < program.output_dedicated.size() && program.output_dedicated[o] &&
        output_values_[o].kind == ValueRef::Kind::kArena) {
      output_entry_[o] = static_cast<int>(entries_.size());
      entries_.emplace_back();
    }
  }
  for (size_t v = 0; v < variables_.size(); ++v) {
    variable_entry_.push_back(static_cast<int>(entries_.size()));
    entries_.emplace_back();
  }
  for (auto& t : tasks_) {
    for (size_t i = 0; i < t->input_refs_.size(); ++i) {
      auto [e, off] = EntryOf(t->input_refs_[i]);
      if (e >= 0) entries_[e].sites.push_back({t.get(), false, static_cast<int>(i), off});
    }
    for (size_t i = 0; i < t->output_refs_.size(); ++i) {
      auto [e, off] = EntryOf(t->output_refs_[i]);
      if (e >= 0) entries_[e].sites.push_back({t.get(), true, static_cast<int>(i), off});
    }
  }
  Refresh(0, block_buffer_, 0);
  for (size_t w = 0; w < weights_.size(); ++w) Refresh(1 + w, weights_[w].buffer(), weights_[w].byte_offset());
  for (size_t v = 0; v < variables_.size(); ++v) {
    Refresh(variable_entry_[v], variables_[v].buffer(), variables_[v].byte_offset());
  }
  for (size_t o = 0; o < outputs_.size(); ++o) {
    if (output_entry_[o] >= 0) Refresh(output_entry_[o], block_buffer_, output_values_[o].offset);
  }
  return absl::OkStatus();
}

void StaticExecutor::Refresh(int entry, std::shared_ptr<Buffer> buffer, size_t offset) {
  Entry& e = entries_[entry];
  e.address = static_cast<const char*>(buffer->data()) + offset;
  for (const Site& s : e.sites) {
    const ValueRef& ref = s.is_output ? s.task->output_refs_[s.index] : s.task->input_refs_[s.index];
    Value v(Tensor(ref.type.dtype(), ref.type.shape(), buffer, offset + s.offset));
    (s.is_output ? s.task->outputs_ : s.task->inputs_)[s.index] = std::move(v);
  }
  e.buffer = std::move(buffer);
  e.offset = offset;
}

absl::Status StaticExecutor::FreezeInputs(const std::vector<int>& indices) {
  std::lock_guard<std::mutex> lock(run_mu_);
  for (int i : indices) {
    if (i < 0 || i >= num_inputs()) return InvalidArgument("cannot freeze input ", i, ": the graph has ", num_inputs());
    inputs_[i].frozen = true;
  }
  return absl::OkStatus();
}

absl::Status StaticExecutor::BindInputs(const std::vector<Value>& inputs) {
  if (inputs.size() != inputs_.size()) {
    return InvalidArgument("graph '", graph_name_, "' takes ", inputs_.size(), " inputs, got ", inputs.size());
  }
  for (size_t i = 0; i < inputs.size(); ++i) {
    InputState& in = inputs_[i];
    if (in.frozen && in.bound) {
      ++stats_.frozen_inputs_skipped;
      continue;
    }
    GE_RETURN_IF_ERROR(CheckTensor(inputs[i], in.io, "input", i));
    const Tensor& t = inputs[i].tensor();
    if (IsAligned(t.raw_data())) {
      ++stats_.zero_copy_inputs;
      if (entries_[in.entry].address != t.raw_data()) {
        Refresh(in.entry, t.buffer(), t.byte_offset());
        ++stats_.refreshed_entries;
      }
    } else {
      ++stats_.copied_inputs;
      char* staging = static_cast<char*>(block_) + in.staging_offset;
      std::memcpy(staging, t.raw_data(), in.bytes);
      if (entries_[in.entry].address != staging) {
        Refresh(in.entry, block_buffer_, static_cast<size_t>(in.staging_offset));
        ++stats_.refreshed_entries;
      }
    }
    in.bound = true;
  }
  return absl::OkStatus();
}

absl::Status StaticExecutor::BindOutputs(std::vector<Tensor>& outputs) {
  if (outputs.size() != outputs_.size()) {
    return InvalidArgument("graph '", graph_name_, "' has ", outputs_.size(), " outputs, got ", outputs.size(),
                           " output buffers");
  }
  for (size_t o = 0; o < outputs.size(); ++o) {
    if (!outputs[o].defined()) {
      GE_ASSIGN_OR_RETURN(outputs[o], Tensor::Allocate(outputs_[o].type.dtype(), outputs_[o].type.shape()));
    }
    GE_RETURN_IF_ERROR(CheckTensor(Value(outputs[o]), outputs_[o], "output", o));
    const int e = output_entry_[o];
    if (e < 0) continue;
    if (IsAligned(outputs[o].raw_data())) {
      if (entries_[e].address != outputs[o].raw_data()) {
        Refresh(e, outputs[o].buffer(), outputs[o].byte_offset());
        ++stats_.refreshed_entries;
      }
    } else if (entries_[e].address != static_cast<char*>(block_) + output_values_[o].offset) {
      Refresh(e, block_buffer_, static_cast<size_t>(output_values_[o].offset));
      ++stats_.refreshed_entries;
    }
  }
  return absl::OkStatus();
}

Tensor StaticExecutor::TensorAt(const ValueRef& ref) const {
  auto [e, off] = EntryOf(ref);
  const Entry& entry = entries_[e];
  return Tensor(ref.type.dtype(), ref.type.shape(), entry.buffer, entry.offset + off);
}

absl::Status StaticExecutor::CopyOutputs(std::vector<Tensor>& outputs) {
  for (size_t o = 0; o < outputs.size(); ++o) {
    const int e = output_entry_[o];
    if (e >= 0 && entries_[e].address == outputs[o].raw_data()) {
      ++stats_.zero_copy_outputs;
      continue;
    }
    ++stats_.copied_outputs;
    Tensor src = TensorAt(output_values_[o]);
    std::memcpy(outputs[o].raw_data(), src.raw_data(), outputs[o].SizeInBytes());
  }
  return absl::OkStatus();
}

absl::Status StaticExecutor::RunWithOutputs(const std::vector<Value>& inputs, std::vector<Tensor>& outputs,
                                            const RunControl* control) {
  std::lock_guard<std::mutex> lock(run_mu_);
  stats_ = StaticRunStats();
  GE_RETURN_IF_ERROR(BindInputs(inputs));
  GE_RETURN_IF_ERROR(BindOutputs(outputs));
  for (const auto& task : tasks_) {
    if (control != nullptr) GE_RETURN_IF_ERROR(control->Check(task->op_.name()));
    absl::Status s = task->kernel_->Compute(*task);
    if (!s.ok()) {
      return absl::Status(s.code(), StrCat("node '", task->op_.name(), "' (", task->op_.type(), "): ",
                                           StdView(s.message())));
    }
  }
  return CopyOutputs(outputs);
}

absl::StatusOr<std::vector<Value>> StaticExecutor::Run(std::vector<Value> inputs, const RunControl* control) {
  std::vector<Tensor> outputs(outputs_.size());
  GE_RETURN_IF_ERROR(RunWithOutputs(inputs, outputs, control));
  std::vector<Value> values;
  values.reserve(outputs.size());
  for (Tensor& t : outputs) values.emplace_back(std::move(t));
  return values;
}

}  // namespace ge::runtime
