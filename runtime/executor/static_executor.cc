// StaticExecutor: kernels bound once at load, one device block for the
// arena, an address table refreshed per run, and a flat walk over tasks.
#include "runtime/executor/static_executor.h"

#include <algorithm>
#include <cstring>

#include "absl/container/flat_hash_map.h"
#include "base/compute_budget.h"
#include "base/ir/op_types.h"
#include "base/status.h"
#include "runtime/executor/alloc_guard.h"
#include "runtime/executor/static_program_check.h"

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

// What a run never reads on the hot path: the task's node, its TaskDef and
// the references its values were bound from.
struct StaticExecutor::TaskCold {
  ir::OpDesc op;
  engine::TaskDef def;
  std::vector<ValueRef> input_refs;
  std::vector<ValueRef> output_refs;
};

// One task's hot record (48 bytes with the base's dense-input array): its
// kernel, its slice of the value pool (inputs then outputs) and the
// executor's shared state. Kernels compute in it as their ExecuteContext
// and read inputs without a virtual call (set_dense_inputs).
class StaticExecutor::TaskContext final : public engine::ExecuteContext {
 public:
  TaskContext(engine::Kernel* kernel, const TaskCold* cold, Value* values, const Shared* shared)
      : kernel_(kernel), cold_(cold), shared_(shared), num_outputs_(static_cast<int32_t>(cold->output_refs.size())) {
    set_dense_inputs(values, static_cast<int>(cold->input_refs.size()));
  }

  int num_inputs() const override { return num_dense_inputs(); }
  int num_outputs() const override { return num_outputs_; }
  const Value& input_value(int i) const override { return dense_inputs()[i]; }
  const ir::ValueType& output_type(int i) const override { return cold_->output_refs[i].type; }
  absl::StatusOr<Tensor> Output(int i, const Shape& shape) override {
    const ir::ValueType& planned = cold_->output_refs[i].type;
    if (&shape != &planned.shape() && shape != planned.shape()) {
      return Internal("output ", i, " asked for shape ", shape.ToString(), " but the static plan has ",
                      planned.shape().ToString());
    }
    return out_value(i).tensor();
  }
  // Forwarded values are copied into the planned buffer (a no-op for views,
  // whose planned buffer is the input's).
  absl::Status SetOutputValue(int i, Value value) override {
    const Tensor& planned = out_value(i).tensor();
    if (!value.is_tensor() || value.tensor().dtype() != planned.dtype() ||
        value.tensor().SizeInBytes() != planned.SizeInBytes()) {
      return Internal("output ", i, " was set to a value that does not match the static plan ",
                      cold_->output_refs[i].type.ToString());
    }
    if (value.tensor().raw_data() != planned.raw_data()) {
      std::memmove(planned.raw_data(), value.tensor().raw_data(), planned.SizeInBytes());
    }
    return absl::OkStatus();
  }
  void* workspace() override { return shared_->workspace; }
  // Kernels thread on OpenMP (runtime/engines/sdk/parallel.h); the pool
  // stays for the interface and has no workers.
  ThreadPool* thread_pool() override { return SerialPool(); }
  int num_threads() const override { return shared_->threads; }
  engine::VariableStore* variables() override { return shared_->variables; }
  Tensor* planned_output(int i) override { return &out_value(i).mutable_tensor(); }

  static ThreadPool* SerialPool() {
    static ThreadPool* pool = new ThreadPool(0, "serial");
    return pool;
  }

  // The pool is the executor's (mutable); the base keeps it as inputs.
  Value& in_value(int i) const { return const_cast<Value&>(dense_inputs()[i]); }
  Value& out_value(int i) const { return in_value(num_dense_inputs() + i); }
  const TaskCold& cold() const { return *cold_; }
  engine::Kernel* kernel() const { return kernel_; }

 private:
  engine::Kernel* kernel_;
  const TaskCold* cold_;
  const Shared* shared_;
  int32_t num_outputs_;  // after the inputs in the value pool
};

// A place a value of some task lives in an entry.
struct StaticExecutor::Site {
  Value* value;  // in the value pool
  const ValueRef* ref;
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
int StaticExecutor::num_tasks() const { return static_cast<int>(tasks_.size()); }

StaticExecutor::~StaticExecutor() {
  tasks_.clear();
  kernels_.clear();
  values_.clear();
  entries_.clear();
  block_buffer_.reset();  // frees the device block
}

absl::StatusOr<std::unique_ptr<StaticExecutor>> StaticExecutor::Load(StaticProgram program,
                                                                     const engine::EngineRegistry& engines,
                                                                     device::Device& device,
                                                                     ExecutorOptions options) {
  // Nothing is bound before every reference is known to fit what it names.
  GE_RETURN_IF_ERROR(Annotate(CheckStaticProgram(program), StrCat("loading static graph '", program.graph_name, "'")));
  std::unique_ptr<StaticExecutor> exec(new StaticExecutor());
  exec->device_ = &device;
  exec->options_ = options;
  exec->graph_name_ = program.graph_name;
  exec->arena_bytes_ = program.arena_bytes;
  for (StaticWeight& w : program.weights) exec->weights_.push_back(std::move(w.value));
  GE_RETURN_IF_ERROR(exec->PackWeights(program));
  GE_RETURN_IF_ERROR(exec->ResolveVariables(program));
  GE_RETURN_IF_ERROR(exec->BindTasks(program, engines));
  GE_RETURN_IF_ERROR(exec->AllocateMemory(program));
  return exec;
}

absl::Status StaticExecutor::PackWeights(const StaticProgram& program) {
  std::vector<int> order;  // weights to pack, in the order tasks first read them
  std::vector<int64_t> offset(weights_.size(), -1);
  int64_t total = 0;
  for (const StaticTask& task : program.tasks) {
    for (const ValueRef& ref : task.inputs) {
      if (ref.kind != ValueRef::Kind::kWeight || offset[ref.index] >= 0) continue;
      const Tensor& w = weights_[ref.index];
      if (!w.defined() || w.dtype() == DataType::kString || w.SizeInBytes() > kPackedWeightBytes) continue;
      total = (total + kPackedWeightAlignment - 1) / kPackedWeightAlignment * kPackedWeightAlignment;
      offset[ref.index] = total;
      total += static_cast<int64_t>(w.SizeInBytes());
      order.push_back(ref.index);
    }
  }
  if (order.empty()) return absl::OkStatus();
  GE_ASSIGN_OR_RETURN(std::shared_ptr<Buffer> block, Buffer::Allocate(static_cast<size_t>(total)));
  std::memset(block->data(), 0, static_cast<size_t>(total));
  for (int w : order) {
    Tensor& t = weights_[w];
    std::memcpy(static_cast<char*>(block->data()) + offset[w], t.raw_data(), t.SizeInBytes());
    t = Tensor(t.dtype(), t.shape(), block, static_cast<size_t>(offset[w]));
  }
  packed_weights_ = static_cast<int>(order.size());
  packed_weight_bytes_ = total;
  return absl::OkStatus();
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
    // The program's references were checked against the declared type; the
    // memory behind them must be of that type too.
    const ir::ValueType& declared = v.op.output(0).type;
    if (!t->defined() || t->dtype() != declared.dtype() || t->shape() != declared.shape()) {
      return InvalidArgument("loading static graph '", graph_name_, "': variable '", v.node, "' is declared ",
                             declared.ToString(), " but the session holds ",
                             t->defined() ? StrCat(DataTypeName(t->dtype()), t->shape().ToString()) : "no tensor");
    }
    variables_.push_back(*std::move(t));
    variable_is_constant_.push_back(is_file);
  }
  return absl::OkStatus();
}

absl::Status StaticExecutor::BindTasks(StaticProgram& program, const engine::EngineRegistry& engines) {
  const int threads = std::max(1, options_.intra_op_threads);
  shared_.threads = threads;
  shared_.variables = options_.variables;
  size_t num_values = 0;
  for (const StaticTask& task : program.tasks) num_values += task.inputs.size() + task.outputs.size();
  // Sized once: task contexts and address-table sites point into them.
  values_.resize(num_values);
  cold_.reserve(program.tasks.size());
  tasks_.reserve(program.tasks.size());
  kernels_.reserve(program.tasks.size());
  size_t next_value = 0;
  for (StaticTask& task : program.tasks) {
    cold_.push_back({std::move(task.op), std::move(task.def), std::move(task.inputs), std::move(task.outputs)});
    TaskCold& cold = cold_.back();
    const std::string prefix = StrCat("node '", cold.op.name(), "' (", cold.op.type(), ")");
    engine::Engine* engine = engines.Find(cold.def.engine);
    if (engine == nullptr) {
      return FailedPrecondition(prefix, " runs on engine '", cold.def.engine, "', which is not loaded");
    }
    engine::PrepareContext prepare;
    prepare.op = &cold.op;
    prepare.num_threads = threads;
    for (const ValueRef& ref : cold.input_refs) {
      prepare.input_types.push_back(ref.type);
      const Tensor* known = nullptr;
      if (ref.kind == ValueRef::Kind::kWeight) known = &weights_[ref.index];
      // A FileConstant never changes; a Variable does, so it is never folded in.
      if (ref.kind == ValueRef::Kind::kVariable && variable_is_constant_[ref.index]) known = &variables_[ref.index];
      prepare.const_inputs.push_back(known);
    }
    for (const ValueRef& ref : cold.output_refs) prepare.output_types.push_back(ref.type);
    absl::StatusOr<std::unique_ptr<engine::Kernel>> kernel;
    absl::Status guarded = CallKernel([&] {
      kernel = engine->kernel_builder().LoadKernel(engine->kernel_factory(), cold.def, prepare);
      return kernel.status();
    });
    if (!guarded.ok()) return Annotate(guarded, prefix);
    if (prepare.workspace_bytes > static_cast<size_t>(kMaxStaticBytes)) {
      return ResourceExhausted(prefix, ": a workspace of ", prepare.workspace_bytes, " bytes");
    }
    kernels_.push_back(*std::move(kernel));
    cold.def.workspace_bytes = std::max(cold.def.workspace_bytes, prepare.workspace_bytes);
    tasks_.emplace_back(kernels_.back().get(), &cold, &values_[next_value], &shared_);
    next_value += cold.input_refs.size() + cold.output_refs.size();
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
  for (const TaskCold& t : cold_) workspace = std::max<int64_t>(workspace, static_cast<int64_t>(t.def.workspace_bytes));
  int64_t total = AlignUp(program.arena_bytes) + AlignUp(workspace);
  for (size_t i = 0; i < program.inputs.size(); ++i) {
    InputState in;
    in.io = program.inputs[i];
    GE_ASSIGN_OR_RETURN(in.bytes, BytesOf(in.io.type));
    in.entry = 1 + static_cast<int>(weights_.size()) + static_cast<int>(i);
    in.staging_offset = total;
    // Each part is at most kMaxStaticBytes (CheckStaticProgram): no overflow
    // before the sum passes this bound.
    if (total > 4 * kMaxStaticBytes) {
      return ResourceExhausted("loading static graph '", graph_name_, "': its memory block passes ",
                               4 * kMaxStaticBytes, " bytes");
    }
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
  shared_.workspace = workspace_;

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
  for (size_t t = 0; t < tasks_.size(); ++t) {
    const TaskCold& cold = cold_[t];
    for (size_t i = 0; i < cold.input_refs.size(); ++i) {
      auto [e, off] = EntryOf(cold.input_refs[i]);
      if (e >= 0) entries_[e].sites.push_back({&tasks_[t].in_value(static_cast<int>(i)), &cold.input_refs[i], off});
    }
    for (size_t i = 0; i < cold.output_refs.size(); ++i) {
      auto [e, off] = EntryOf(cold.output_refs[i]);
      if (e >= 0) entries_[e].sites.push_back({&tasks_[t].out_value(static_cast<int>(i)), &cold.output_refs[i], off});
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
    *s.value = Value(Tensor(s.ref->type.dtype(), s.ref->type.shape(), buffer, offset + s.offset));
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

absl::Status StaticExecutor::BindOutputs(std::vector<Tensor>& outputs, const std::vector<bool>* caller_filled) {
  if (outputs.size() != outputs_.size() || (caller_filled != nullptr && caller_filled->size() != outputs_.size())) {
    return InvalidArgument("graph '", graph_name_, "' has ", outputs_.size(), " outputs, got ", outputs.size(),
                           " output buffers");
  }
  for (size_t o = 0; o < outputs.size(); ++o) {
    if (caller_filled != nullptr && (*caller_filled)[o]) continue;
    if (!outputs[o].defined()) {
      // From the session's output cache when it has one (charged to its
      // memory quota, as the dynamic path's outputs are).
      if (options_.output_allocator != nullptr) {
        GE_ASSIGN_OR_RETURN(
            outputs[o], options_.output_allocator->AllocateTensor(outputs_[o].type.dtype(), outputs_[o].type.shape()));
      } else {
        GE_ASSIGN_OR_RETURN(outputs[o], Tensor::Allocate(outputs_[o].type.dtype(), outputs_[o].type.shape()));
      }
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

absl::Status StaticExecutor::CopyOutputs(std::vector<Tensor>& outputs, const std::vector<bool>* caller_filled) {
  for (size_t o = 0; o < outputs.size(); ++o) {
    if (caller_filled != nullptr && (*caller_filled)[o]) continue;
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
                                            const RunControl* control, const std::vector<bool>* caller_filled) {
  std::lock_guard<std::mutex> lock(run_mu_);
  // Every task runs on this thread: one token of the device's budget for
  // the run (none more when a dynamic run on this thread already holds one).
  const ComputeScope compute(options_.compute_budget);
  stats_ = StaticRunStats();
  GE_RETURN_IF_ERROR(BindInputs(inputs));
  GE_RETURN_IF_ERROR(BindOutputs(outputs, caller_filled));
  for (TaskContext& task : tasks_) {
    if (control != nullptr) GE_RETURN_IF_ERROR(control->Check(task.cold().op.name()));
    absl::Status s = CallKernel([&] { return task.kernel()->Compute(task); });
    if (!s.ok()) {
      const ir::OpDesc& op = task.cold().op;
      return WithNodePrefix(s, op.name(), op.type());
    }
  }
  return CopyOutputs(outputs, caller_filled);
}

absl::StatusOr<std::vector<Value>> StaticExecutor::Run(std::vector<Value> inputs, const RunControl* control) {
  std::vector<Tensor> outputs(outputs_.size());
  GE_RETURN_IF_ERROR(RunWithOutputs(inputs, outputs, control));
  std::vector<Value> values;
  values.reserve(outputs.size());
  for (Tensor& t : outputs) values.emplace_back(std::move(t));
  return values;
}

absl::Status WithNodePrefix(const absl::Status& s, std::string_view name, std::string_view type) {
  const std::string prefix = StrCat("node '", name, "'");
  if (StdView(s.message()).substr(0, prefix.size()) == prefix) return s;
  return absl::Status(s.code(), StrCat(prefix, " (", type, "): ", StdView(s.message())));
}

}  // namespace ge::runtime
