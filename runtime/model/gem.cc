// .gem writing and loading: the CompiledModelDef message, external weight
// files, and the checks that refuse a model built for another host.
#include "runtime/model/gem.h"

#include <cpuid.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <set>
#include <sstream>

#include "absl/container/flat_hash_map.h"
#include "base/io/external_data.h"
#include "base/ir/op_types.h"
#include "base/ir/proto_convert.h"
#include "base/ir/verifier.h"
#include "base/status.h"
#include "base/version.h"
#include "ge/v1/model.pb.h"
#include "runtime/model/gem_verify.h"
#include "runtime/model/gem_weights.h"
#include "runtime/variables/var_manager_serial.h"

namespace ge::runtime {
namespace {

// Features a kernel library may dispatch on; only those this host has are
// recorded, and a loading host must have all of them.
#define GE_CPU_FEATURE(name) {name, [] { return __builtin_cpu_supports(name) != 0; }}
struct CpuFeature {
  const char* name;
  bool (*present)();
};
// F16C from CPUID leaf 1 (ECX bit 29): clang's __builtin_cpu_supports does
// not know the name, GCC's does; the fuzz tree builds with clang.
bool HasF16c() {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  return __get_cpuid(1, &eax, &ebx, &ecx, &edx) != 0 && (ecx & (1u << 29)) != 0;
}
const CpuFeature kCpuFeatures[] = {
    GE_CPU_FEATURE("sse4.2"),   GE_CPU_FEATURE("avx"),      GE_CPU_FEATURE("avx2"),
    GE_CPU_FEATURE("fma"),      {"f16c", HasF16c},          GE_CPU_FEATURE("avx512f"),
    GE_CPU_FEATURE("avx512bw"), GE_CPU_FEATURE("avx512vl"), GE_CPU_FEATURE("avx512dq"),
    GE_CPU_FEATURE("avx512vnni"), GE_CPU_FEATURE("avx512bf16"),
};
#undef GE_CPU_FEATURE

void RefToProto(const ValueRef& ref, v1::ValueRefDef* out) {
  out->set_kind(static_cast<v1::ValueRefDef::Kind>(ref.kind));
  out->set_offset(ref.offset);
  out->set_index(ref.index);
  out->set_output(ref.output);
  if (ref.kind != ValueRef::Kind::kNone) ir::ValueTypeToProto(ref.type, out->mutable_type());
}

absl::StatusOr<ValueRef> RefFromProto(const v1::ValueRefDef& in) {
  ValueRef ref;
  if (in.kind() < v1::ValueRefDef::KIND_NONE || in.kind() > v1::ValueRefDef::KIND_VARIABLE) {
    return InvalidArgument("bad value kind ", static_cast<int>(in.kind()));
  }
  ref.kind = static_cast<ValueRef::Kind>(in.kind());
  ref.offset = in.offset();
  ref.index = in.index();
  ref.output = in.output();
  if (ref.kind == ValueRef::Kind::kNone) return ref;
  GE_ASSIGN_OR_RETURN(ref.type, ir::ValueTypeFromProto(in.type()));
  if (!ref.type.is_tensor() || !ref.type.shape().IsFullyKnown() || ref.type.dtype() == DataType::kString) {
    return InvalidArgument("value of type ", ref.type.ToString(), " on the static path");
  }
  return ref;
}

void IoToProto(const StaticIo& io, v1::IoDef* out) {
  out->set_name(io.name);
  ir::ValueTypeToProto(io.type, out->mutable_type());
}

absl::StatusOr<StaticIo> IoFromProto(const v1::IoDef& in) {
  StaticIo io;
  io.name = in.name();
  GE_ASSIGN_OR_RETURN(io.type, ir::ValueTypeFromProto(in.type()));
  return io;
}

void ProgramToProto(const StaticProgram& p, v1::StaticProgramDef* out) {
  for (const StaticTask& t : p.tasks) {
    v1::TaskDefProto* task = out->add_tasks();
    task->set_node(t.op.name());
    task->set_engine(t.def.engine);
    task->set_kernel(t.def.kernel);
    task->set_param_version(t.def.param_version);
    task->set_params(t.def.params);
    task->set_workspace_bytes(t.def.workspace_bytes);
    for (const ValueRef& r : t.inputs) RefToProto(r, task->add_inputs());
    for (const ValueRef& r : t.outputs) RefToProto(r, task->add_outputs());
  }
  for (const StaticWeight& w : p.weights) out->add_weight_nodes(w.node);
  for (const StaticVariable& v : p.variables) out->add_variable_nodes(v.node);
  for (const StaticIo& io : p.inputs) IoToProto(io, out->add_inputs());
  for (const StaticIo& io : p.outputs) IoToProto(io, out->add_outputs());
  for (const ValueRef& r : p.output_values) RefToProto(r, out->add_output_values());
  for (bool d : p.output_dedicated) out->add_output_dedicated(d);
  out->set_arena_bytes(p.arena_bytes);
  out->set_lower_bound_bytes(p.lower_bound_bytes);
  out->set_no_reuse_bytes(p.no_reuse_bytes);
}

// Checks a reference against the program's tables.
absl::Status CheckRef(const ValueRef& ref, const StaticProgram& p) {
  switch (ref.kind) {
    case ValueRef::Kind::kNone: return absl::OkStatus();
    case ValueRef::Kind::kWeight:
      if (ref.index < 0 || ref.index >= static_cast<int>(p.weights.size())) break;
      return absl::OkStatus();
    case ValueRef::Kind::kInput:
      if (ref.index < 0 || ref.index >= static_cast<int>(p.inputs.size())) break;
      return absl::OkStatus();
    case ValueRef::Kind::kVariable:
      if (ref.index < 0 || ref.index >= static_cast<int>(p.variables.size())) break;
      return absl::OkStatus();
    case ValueRef::Kind::kArena: {
      auto count = ref.type.shape().NumElements();
      if (!count.ok()) return count.status();
      auto bytes = ByteSizeOf(ref.type.dtype(), *count);
      if (!bytes.ok()) return bytes.status();
      if (ref.offset < 0 || ref.offset > p.arena_bytes || static_cast<int64_t>(*bytes) > p.arena_bytes - ref.offset) break;
      if (ref.output >= static_cast<int>(p.outputs.size())) break;
      return absl::OkStatus();
    }
  }
  return InvalidArgument("a value reference (kind ", static_cast<int>(ref.kind), ", index ", ref.index, ", offset ",
                         ref.offset, ") points outside the program");
}

// Resolves a task's prepared-state reference to its bytes.
using BlobResolver = std::function<absl::StatusOr<std::shared_ptr<Buffer>>(const v1::PreparedBlobDef& blob)>;
// At most this many prepared buffers per task (cpu_dense keeps one per
// weights input).
constexpr int kMaxPreparedPerTask = 16;

absl::StatusOr<StaticTask> TaskFromProto(const v1::TaskDefProto& in, const ir::Graph& graph, const StaticProgram& p,
                                         const BlobResolver& blobs) {
  const ir::Node* node = graph.FindNode(in.node());
  if (node == nullptr) return InvalidArgument("task names node '", in.node(), "', which is not in the graph");
  StaticTask task;
  task.op = node->op_desc();
  task.def.engine = in.engine();
  task.def.kernel = in.kernel();
  task.def.param_version = in.param_version();
  task.def.params = in.params();
  task.def.workspace_bytes = in.workspace_bytes();
  if (in.prepared_size() > kMaxPreparedPerTask) {
    return InvalidArgument("task of node '", in.node(), "' has ", in.prepared_size(), " prepared buffers (at most ",
                           kMaxPreparedPerTask, ")");
  }
  for (const v1::PreparedBlobDef& blob : in.prepared()) {
    absl::StatusOr<std::shared_ptr<Buffer>> bytes = blobs(blob);
    if (!bytes.ok()) return Annotate(bytes.status(), StrCat("task of node '", in.node(), "'"));
    task.def.prepared.push_back(*std::move(bytes));
  }
  if (in.inputs_size() != node->num_inputs() || in.outputs_size() != node->num_outputs()) {
    return InvalidArgument("task of node '", in.node(), "' has ", in.inputs_size(), " inputs and ", in.outputs_size(),
                           " outputs; the node has ", node->num_inputs(), " and ", node->num_outputs());
  }
  for (const auto& r : in.inputs()) {
    GE_ASSIGN_OR_RETURN(ValueRef ref, RefFromProto(r));
    GE_RETURN_IF_ERROR(Annotate(CheckRef(ref, p), StrCat("task of node '", in.node(), "'")));
    task.inputs.push_back(std::move(ref));
  }
  for (const auto& r : in.outputs()) {
    GE_ASSIGN_OR_RETURN(ValueRef ref, RefFromProto(r));
    if (ref.kind != ValueRef::Kind::kArena) return InvalidArgument("task of node '", in.node(), "' writes outside the arena");
    GE_RETURN_IF_ERROR(Annotate(CheckRef(ref, p), StrCat("task of node '", in.node(), "'")));
    task.outputs.push_back(std::move(ref));
  }
  return task;
}

absl::StatusOr<StaticProgram> ProgramFromProto(const v1::StaticProgramDef& in, const ir::Graph& graph,
                                               const BlobResolver& blobs) {
  StaticProgram p;
  p.graph_name = graph.name();
  p.arena_bytes = in.arena_bytes();
  p.lower_bound_bytes = in.lower_bound_bytes();
  p.no_reuse_bytes = in.no_reuse_bytes();
  if (p.arena_bytes < 0) return InvalidArgument("negative arena size");
  for (const std::string& name : in.weight_nodes()) {
    const ir::Node* node = graph.FindNode(name);
    auto value = node != nullptr && node->type() == ir::kConst ? node->op_desc().GetAttr<Tensor>(ir::kAttrValue)
                                                                : std::nullopt;
    if (!value) return InvalidArgument("weight '", name, "' is not a Const node with a value");
    p.weights.push_back({name, *value});
  }
  for (const std::string& name : in.variable_nodes()) {
    const ir::Node* node = graph.FindNode(name);
    if (node == nullptr || (node->type() != ir::kVariable && node->type() != ir::kFileConstant)) {
      return InvalidArgument("variable '", name, "' is not a Variable or FileConstant node of the graph");
    }
    p.variables.push_back({name, node->op_desc()});
  }
  for (const auto& io : in.inputs()) {
    GE_ASSIGN_OR_RETURN(StaticIo x, IoFromProto(io));
    p.inputs.push_back(std::move(x));
  }
  for (const auto& io : in.outputs()) {
    GE_ASSIGN_OR_RETURN(StaticIo x, IoFromProto(io));
    p.outputs.push_back(std::move(x));
  }
  if (in.output_values_size() != in.outputs_size() || in.output_dedicated_size() != in.outputs_size()) {
    return InvalidArgument("output tables of different lengths");
  }
  for (const auto& r : in.output_values()) {
    GE_ASSIGN_OR_RETURN(ValueRef ref, RefFromProto(r));
    GE_RETURN_IF_ERROR(CheckRef(ref, p));
    p.output_values.push_back(std::move(ref));
  }
  p.output_dedicated.assign(in.output_dedicated().begin(), in.output_dedicated().end());
  for (const auto& t : in.tasks()) {
    GE_ASSIGN_OR_RETURN(StaticTask task, TaskFromProto(t, graph, p, blobs));
    p.tasks.push_back(std::move(task));
  }
  return p;
}

std::vector<std::pair<std::string, std::string>> EnginesOf(const ir::Graph& graph,
                                                           const engine::EngineRegistry& engines) {
  std::map<std::string, std::string> found;
  for (const ir::Node* node : graph.nodes()) {
    auto name = node->op_desc().GetAttr<std::string>(ir::kAttrEngineName);
    if (!name || found.contains(*name)) continue;
    const engine::EngineAttributes* attrs = engines.FindAttributes(*name);
    found[*name] = attrs ? attrs->version : "";
  }
  return {found.begin(), found.end()};
}

// The end of `weights` rounded up to kStaticAlignment: where the next value goes.
uint64_t AlignedEnd(const std::string& weights) {
  return (weights.size() + kStaticAlignment - 1) / kStaticAlignment * kStaticAlignment;
}

// Moves every Const's raw bytes from `def`'s graph to `weights` (offsets
// aligned), recording them under the file name `file`.
void MoveWeightsOut(v1::CompiledModelDef& def, const std::string& file, std::string* weights) {
  for (v1::NodeDef& node : *def.mutable_graph()->mutable_nodes()) {
    if (node.type() != ir::kConst) continue;
    auto it = node.mutable_attrs()->find(std::string(ir::kAttrValue));
    if (it == node.mutable_attrs()->end() || !it->second.has_t() || it->second.t().raw_data().empty()) continue;
    const v1::TensorDef& t = it->second.t();
    const uint64_t aligned = AlignedEnd(*weights);
    weights->resize(aligned, '\0');
    weights->append(t.raw_data());
    v1::ExternalWeight* w = def.add_external_weights();
    w->set_node(node.name());
    w->set_file(file);
    w->set_offset(aligned);
    w->set_size(t.raw_data().size());
    w->set_dtype(t.dtype());
    for (int64_t d : t.dims()) w->mutable_shape()->add_dims(d);
    node.mutable_attrs()->erase(it);
  }
}

// Reads `size` bytes at `offset` of the weights file `file`.
using WeightReader = std::function<absl::StatusOr<std::string>(const std::string& file, uint64_t offset,
                                                               uint64_t size, const std::string& node)>;

// Puts every external weight back into its Const node.
absl::Status ReadExternalWeights(v1::CompiledModelDef& def, const WeightReader& read) {
  absl::flat_hash_map<std::string, v1::NodeDef*> nodes;
  for (v1::NodeDef& node : *def.mutable_graph()->mutable_nodes()) nodes[node.name()] = &node;
  for (const v1::ExternalWeight& w : def.external_weights()) {
    auto it = nodes.find(w.node());
    if (it == nodes.end()) return InvalidArgument("external weight names node '", w.node(), "', which is not in the graph");
    if (w.file().find('/') != std::string::npos || w.file() == "..") {
      return InvalidArgument("external weight file '", w.file(), "' must be a plain file name");
    }
    GE_ASSIGN_OR_RETURN(std::string bytes, read(w.file(), w.offset(), w.size(), w.node()));
    v1::AttrValueDef value;
    value.mutable_t()->set_dtype(w.dtype());
    for (int64_t d : w.shape().dims()) value.mutable_t()->add_dims(d);
    value.mutable_t()->set_raw_data(std::move(bytes));
    (*it->second->mutable_attrs())[std::string(ir::kAttrValue)] = std::move(value);
  }
  return absl::OkStatus();
}

// Reads weights from files beside the .gem at `path`.
WeightReader FileWeightReader(const std::string& path) {
  const std::filesystem::path dir = std::filesystem::path(path).parent_path();
  return [dir, path](const std::string& name, uint64_t offset, uint64_t size,
                     const std::string& node) -> absl::StatusOr<std::string> {
    const std::string file = (dir / name).string();
    std::ifstream in(file, std::ios::binary);
    if (!in) return NotFound("weights file ", file, " of ", path, " cannot be opened");
    in.seekg(0, std::ios::end);
    const uint64_t file_size = static_cast<uint64_t>(in.tellg());
    if (offset > file_size || size > file_size - offset) {
      return InvalidArgument("weight of node '", node, "' lies past the end of ", file);
    }
    std::string bytes(size, '\0');
    in.seekg(static_cast<std::streamoff>(offset));
    in.read(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    if (!in) return Internal("reading ", file, " failed");
    return bytes;
  };
}

absl::Status CheckBuiltForThisHost(const v1::CompiledModelDef& def, const std::string& path,
                                   const engine::EngineRegistry& engines) {
  if (def.format_version() == 0 || !def.has_graph()) {
    return InvalidArgument(path, " is not a .gem compiled model (no format version or no graph)");
  }
  if (def.format_version() < kGemOldestReadableVersion || def.format_version() > kGemFormatVersion) {
    return FailedPrecondition(path, " is a .gem of format version ", def.format_version(), "; this ged (",
                              GED_VERSION_STRING, ") reads versions ", kGemOldestReadableVersion, " to ",
                              kGemFormatVersion, ": recompile the model");
  }
  for (const v1::EngineVersion& e : def.engines()) {
    const engine::EngineAttributes* attrs = engines.FindAttributes(e.name());
    if (attrs == nullptr) {
      return FailedPrecondition(path, " was built for engine '", e.name(), "' (version ", e.version(),
                                "), which is not loaded here: recompile the model");
    }
    if (attrs->version != e.version()) {
      return FailedPrecondition(path, " was built for engine '", e.name(), "' version ", e.version(),
                                ", but the loaded engine is version ", attrs->version, ": recompile the model");
    }
  }
  const std::vector<std::string> host = HostCpuFeatures();
  std::string missing;
  for (const std::string& f : def.cpu_features()) {
    if (std::find(host.begin(), host.end(), f) == host.end()) StrAppend(&missing, missing.empty() ? "" : ", ", f);
  }
  if (!missing.empty()) {
    return FailedPrecondition(path, " was built for a CPU with ", missing,
                              ", which this CPU lacks: recompile the model on this host");
  }
  return absl::OkStatus();
}

}  // namespace

std::vector<std::string> HostCpuFeatures() {
  std::vector<std::string> features;
  for (const CpuFeature& f : kCpuFeatures) {
    if (f.present()) features.push_back(f.name);
  }
  return features;
}

bool IsGemPath(std::string_view path) { return path.size() > 4 && path.substr(path.size() - 4) == ".gem"; }

namespace {

using EngineList = std::vector<std::pair<std::string, std::string>>;

// The Const named `name` in the root of `graph`, else in its first subgraph
// that has one.
const ir::Node* FindConst(const ir::Graph& graph, const std::string& name) {
  const ir::Node* found = graph.FindNode(name);
  for (const ir::Graph* sub : graph.subgraphs()) {
    if (found != nullptr && found->type() == ir::kConst) break;
    found = sub->FindNode(name);
  }
  return found != nullptr && found->type() == ir::kConst ? found : nullptr;
}

// Gives the subgraph Consts a format-3 file stored without a value
// (`subgraph_shared_weights`) their values.
absl::Status RestoreSubgraphWeights(const v1::CompiledModelDef& def, ir::Graph& graph) {
  for (const v1::SubgraphWeight& w : def.subgraph_shared_weights()) {
    ir::Graph* sub = graph.FindSubgraph(w.graph());
    ir::Node* node = sub != nullptr ? sub->FindNode(w.node()) : nullptr;
    const ir::Node* source = FindConst(graph, w.node());
    auto value = source != nullptr ? source->op_desc().GetAttr<Tensor>(ir::kAttrValue) : std::nullopt;
    if (node == nullptr || node->type() != ir::kConst || !value || source == node) {
      return InvalidArgument("shared subgraph weight '", w.node(), "' of subgraph '", w.graph(),
                             "' has no Const to take its value from");
    }
    node->mutable_op_desc().SetAttr(ir::kAttrValue, *value);
  }
  return absl::OkStatus();
}

// Rebuilds the partitioned form, giving its shared Consts their values:
// `graph`'s by name (format 3's `shared_weights`), or their aliases'.
absl::StatusOr<std::unique_ptr<ir::Graph>> PartitionedFromProto(const v1::CompiledModelDef& def, ir::Graph& graph) {
  GE_ASSIGN_OR_RETURN(std::unique_ptr<ir::Graph> partitioned, ir::GraphFromProto(def.partitioned()));
  GE_RETURN_IF_ERROR(RestoreWeightAliases(def, graph, partitioned.get()));
  const std::set<std::string> shared(def.shared_weights().begin(), def.shared_weights().end());
  auto restore = [&](ir::Graph& g) -> absl::Status {
    for (ir::Node* node : g.nodes()) {
      if (node->type() != ir::kConst || !shared.contains(node->name())) continue;
      const ir::Node* source = FindConst(graph, node->name());
      auto value = source ? source->op_desc().GetAttr<Tensor>(ir::kAttrValue) : std::nullopt;
      if (!value) return InvalidArgument("shared weight '", node->name(), "' has no Const of that name in the graph");
      node->mutable_op_desc().SetAttr(ir::kAttrValue, *value);
    }
    return absl::OkStatus();
  };
  GE_RETURN_IF_ERROR(restore(*partitioned));
  for (ir::Graph* sub : partitioned->subgraphs()) GE_RETURN_IF_ERROR(restore(*sub));
  // Untrusted like the rest of the file: the executor only takes a sound graph.
  GE_RETURN_IF_ERROR(ir::VerifyGraph(*partitioned));
  return partitioned;
}

absl::StatusOr<GemBytes> SerializeDef(const ir::Graph& graph, const StaticProgram* program, const OptionMap& options,
                                      const EngineList& engine_list, const std::vector<std::string>& cpu_features,
                                      bool external_weights, const std::string& weights_file,
                                      const ir::Graph* partitioned, const variables::VarManagerInfo* variables) {
  v1::CompiledModelDef def;
  def.set_format_version(kGemFormatVersion);
  def.set_ged_version(GED_VERSION_STRING);
  for (const auto& [name, version] : engine_list) {
    v1::EngineVersion* e = def.add_engines();
    e->set_name(name);
    e->set_version(version);
  }
  for (const std::string& f : cpu_features) def.add_cpu_features(f);
  for (const auto& [k, v] : options) (*def.mutable_options())[k] = v;
  GE_RETURN_IF_ERROR(ir::GraphToProto(graph, def.mutable_graph()));
  if (program != nullptr) ProgramToProto(*program, def.mutable_program());
  if (partitioned != nullptr) GE_RETURN_IF_ERROR(ir::GraphToProto(*partitioned, def.mutable_partitioned()));
  // Each Const storage once: the partitioned form's Consts, a weight copied
  // into every partition that reads it, gear branches (gem_weights.h).
  ShareConstStorage(graph, partitioned, def);
  if (variables != nullptr) GE_RETURN_IF_ERROR(variables::VarManagerInfoToProto(*variables, def.mutable_var_manager()));
  GemBytes bytes;
  if (external_weights) MoveWeightsOut(def, weights_file, &bytes.weights);
  // Prepared state goes beside the weights, where a load maps it; a .gem
  // with inline weights carries none (its engines prepare again at load).
  if (external_weights && program != nullptr) {
    for (size_t i = 0; i < program->tasks.size(); ++i) {
      for (const std::shared_ptr<Buffer>& blob : program->tasks[i].def.prepared) {
        if (blob == nullptr) continue;
        const uint64_t aligned = AlignedEnd(bytes.weights);
        bytes.weights.resize(aligned, '\0');
        bytes.weights.append(static_cast<const char*>(blob->data()), blob->size());
        v1::PreparedBlobDef* out = def.mutable_program()->mutable_tasks(static_cast<int>(i))->add_prepared();
        out->set_file(weights_file);
        out->set_offset(aligned);
        out->set_size(blob->size());
      }
    }
  }
  if (!def.SerializeToString(&bytes.gem)) return Internal("serializing the compiled model failed");
  return bytes;
}

// Written beside `file` and renamed over it: a reader sees the old file or
// the whole new one, and a file `file` shares an inode with (a hard link
// to a cache export) is replaced, never written through.
absl::Status WriteFile(const std::string& file, const std::string& data) {
  const std::filesystem::path target(file);
  // Unique per process and call: two threads may write the same file.
  static std::atomic<uint64_t> counter{0};
  const std::filesystem::path temp =
      target.parent_path() / StrCat(".", target.filename().string(), ".tmp.", getpid(), ".", counter.fetch_add(1));
  {
    std::ofstream out(temp, std::ios::binary | std::ios::trunc);
    if (!out) return FailedPrecondition("cannot write ", file);
    out.write(data.data(), static_cast<std::streamsize>(data.size()));
    out.close();
    if (!out) {
      std::error_code ec;
      std::filesystem::remove(temp, ec);
      return Internal("writing ", file, " failed");
    }
  }
  std::error_code ec;
  std::filesystem::rename(temp, target, ec);
  if (ec) {
    std::filesystem::remove(temp, ec);
    return FailedPrecondition("cannot write ", file, ": ", ec.message());
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<GemBytes> SerializeGem(const ir::Graph& graph, const StaticProgram* program, const OptionMap& options,
                                      const engine::EngineRegistry& engines, bool external_weights,
                                      const std::string& weights_file, const ir::Graph* partitioned,
                                      const variables::VarManagerInfo* variables) {
  return SerializeDef(graph, program, options, EnginesOf(graph, engines), HostCpuFeatures(), external_weights,
                      weights_file, partitioned, variables);
}

absl::Status SaveGem(const CompiledModel& model, const std::string& path, const engine::EngineRegistry& engines,
                     const GemWriteOptions& options) {
  if (model.graph == nullptr) return InvalidArgument("no graph to write to ", path);
  const std::string weights_path = path + ".weights";
  // A model loaded from a .gem keeps what it was built for.
  absl::StatusOr<GemBytes> bytes = SerializeDef(
      *model.graph, model.program ? &*model.program : nullptr, model.options,
      model.engines.empty() ? EnginesOf(*model.graph, engines) : model.engines,
      model.cpu_features.empty() ? HostCpuFeatures() : model.cpu_features, options.external_weights,
      std::filesystem::path(weights_path).filename().string(), model.partitioned.get(), &model.variables);
  if (!bytes.ok()) return Annotate(bytes.status(), path);
  if (options.external_weights) GE_RETURN_IF_ERROR(WriteFile(weights_path, bytes->weights));
  return WriteFile(path, bytes->gem);
}

namespace {

using NamedTensors = std::vector<std::pair<std::string, Tensor>>;

// FileConstants written by --external-weight name their file by `location`
// relative to the .gem's directory (`model_dir`; empty for bytes).
void SetWeightDirectory(ir::Graph& graph, const std::string& model_dir) {
  if (model_dir.empty()) return;
  auto set = [&](ir::Graph& g) {
    for (ir::Node* node : g.nodes()) {
      ir::OpDesc& op = node->mutable_op_desc();
      if (node->type() == ir::kFileConstant && op.GetAttr<std::string>(io::kAttrLocation) &&
          !op.GetAttr<std::string>(io::kAttrModelDir)) {
        op.SetAttr(io::kAttrModelDir, model_dir);
      }
    }
  };
  set(graph);
  for (ir::Graph* sub : graph.subgraphs()) set(*sub);
}

// The model of a parsed and host-checked `def`; `label` names it in errors.
// `weights` (may be null) are Const values held outside `def`.
absl::StatusOr<CompiledModel> ModelFromDef(const v1::CompiledModelDef& def, const std::string& label,
                                           const std::string& model_dir, const BlobResolver& blobs,
                                           NamedTensors* weights = nullptr) {
  CompiledModel model;
  absl::StatusOr<std::unique_ptr<ir::Graph>> graph = ir::GraphFromProto(def.graph());
  if (!graph.ok()) return Annotate(graph.status(), StrCat("the graph of ", label));
  model.graph = *std::move(graph);
  for (auto& [name, tensor] : weights ? *weights : NamedTensors()) {
    ir::Node* node = model.graph->FindNode(name);
    if (node == nullptr || node->type() != ir::kConst) {
      return InvalidArgument("external weight of ", label, " names node '", name, "', which is not a Const node");
    }
    node->mutable_op_desc().SetAttr(ir::kAttrValue, std::move(tensor));
  }
  // Every value is in place (inline, external) before the Consts that
  // share one take theirs.
  if (absl::Status shared = RestoreWeightAliases(def, *model.graph, nullptr); !shared.ok()) {
    return Annotate(shared, StrCat("the graph of ", label));
  }
  if (absl::Status shared = RestoreSubgraphWeights(def, *model.graph); !shared.ok()) {
    return Annotate(shared, StrCat("the graph of ", label));
  }
  SetWeightDirectory(*model.graph, model_dir);
  absl::StatusOr<variables::VarManagerInfo> vars = variables::VarManagerInfoFromProto(def.var_manager());
  if (!vars.ok()) return Annotate(vars.status(), StrCat("the variables of ", label));
  model.variables = *std::move(vars);
  if (def.has_partitioned()) {
    absl::StatusOr<std::unique_ptr<ir::Graph>> partitioned = PartitionedFromProto(def, *model.graph);
    if (!partitioned.ok()) return Annotate(partitioned.status(), StrCat("the partitioned graph of ", label));
    model.partitioned = *std::move(partitioned);
    SetWeightDirectory(*model.partitioned, model_dir);
  }
  // Untrusted like the rest of the file: verified and typed before the
  // program's tasks copy their nodes.
  if (absl::Status verified = VerifyModelGraphs(model); !verified.ok()) return Annotate(verified, label);
  if (def.has_program()) {
    absl::StatusOr<StaticProgram> program = ProgramFromProto(def.program(), *model.graph, blobs);
    if (!program.ok()) return Annotate(program.status(), StrCat("the static program of ", label));
    model.program = *std::move(program);
    if (absl::Status checked = VerifyModelProgram(model); !checked.ok()) return Annotate(checked, label);
  }
  for (const auto& [k, v] : def.options()) model.options[k] = v;
  for (const auto& e : def.engines()) model.engines.emplace_back(e.name(), e.version());
  model.ged_version = def.ged_version();
  model.cpu_features.assign(def.cpu_features().begin(), def.cpu_features().end());
  return model;
}

// Moves the large inline weights of `def`'s root graph into `tensors`, one
// at a time, freeing each one's bytes in `def` as soon as its tensor holds
// them: a weight-heavy model then peaks at about one copy of its weights
// while it loads, instead of two (the parsed file and the graph).
absl::Status TakeInlineWeights(v1::CompiledModelDef& def, NamedTensors& tensors) {
  constexpr size_t kTakeBytes = size_t{64} << 10;
  const std::string value_key(ir::kAttrValue);
  for (v1::NodeDef& node : *def.mutable_graph()->mutable_nodes()) {
    if (node.type() != ir::kConst) continue;
    auto it = node.mutable_attrs()->find(value_key);
    if (it == node.mutable_attrs()->end() || !it->second.has_t() || it->second.t().raw_data().size() < kTakeBytes) {
      continue;
    }
    absl::StatusOr<Tensor> tensor = ir::TensorFromProto(it->second.t());
    if (!tensor.ok()) return Annotate(tensor.status(), StrCat("the value of node '", node.name(), "'"));
    node.mutable_attrs()->erase(it);
    tensors.emplace_back(node.name(), *std::move(tensor));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<CompiledModel> LoadGem(const std::string& path, const engine::EngineRegistry& engines) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return NotFound("compiled model ", path, " cannot be opened");
  v1::CompiledModelDef def;
  if (!def.ParseFromIstream(&in)) return InvalidArgument(path, " is not a .gem compiled model (unreadable)");
  GE_RETURN_IF_ERROR(CheckBuiltForThisHost(def, path, engines));
  const WeightReader reader = FileWeightReader(path);
  GE_RETURN_IF_ERROR(ReadExternalWeights(def, reader));
  std::error_code ec;
  const std::filesystem::path dir = std::filesystem::canonical(std::filesystem::absolute(path), ec).parent_path();
  auto blobs = [&reader](const v1::PreparedBlobDef& blob) -> absl::StatusOr<std::shared_ptr<Buffer>> {
    if (blob.file().find('/') != std::string::npos || blob.file() == "..") {
      return InvalidArgument("prepared state file '", blob.file(), "' must be a plain file name");
    }
    GE_ASSIGN_OR_RETURN(std::string bytes, reader(blob.file(), blob.offset(), blob.size(), "prepared state"));
    GE_ASSIGN_OR_RETURN(std::shared_ptr<Buffer> buffer, Buffer::Allocate(std::max<size_t>(bytes.size(), 1)));
    std::memcpy(buffer->data(), bytes.data(), bytes.size());
    return Buffer::Wrap(buffer->data(), bytes.size(), [buffer] {});
  };
  NamedTensors tensors;
  if (absl::Status taken = TakeInlineWeights(def, tensors); !taken.ok()) return Annotate(taken, path);
  return ModelFromDef(def, path, ec ? std::string() : dir.string(), blobs, &tensors);
}

absl::StatusOr<CompiledModel> LoadGemFromBytes(std::string_view bytes, const std::string& label,
                                               const engine::EngineRegistry& engines) {
  v1::CompiledModelDef def;
  if (bytes.size() > static_cast<size_t>(std::numeric_limits<int>::max()) ||
      !def.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    return InvalidArgument(label, " is not a .gem compiled model (unreadable)");
  }
  GE_RETURN_IF_ERROR(CheckBuiltForThisHost(def, label, engines));
  if (def.external_weights_size() > 0) {
    return InvalidArgument(label, " keeps its weights in a separate file (", def.external_weights(0).file(),
                           "), which bytes cannot carry: compile it with inline weights");
  }
  auto no_blobs = [&label](const v1::PreparedBlobDef& blob) -> absl::StatusOr<std::shared_ptr<Buffer>> {
    return InvalidArgument(label, " refers to prepared state in a separate file (", blob.file(),
                           "), which bytes cannot carry");
  };
  NamedTensors tensors;
  if (absl::Status taken = TakeInlineWeights(def, tensors); !taken.ok()) return Annotate(taken, label);
  absl::StatusOr<CompiledModel> model = ModelFromDef(def, label, "", no_blobs, &tensors);
  if (!model.ok()) return model.status();
  // A client's .gem cannot widen what the client may do.
  if (absl::Status allowed = CheckClientModel(*model); !allowed.ok()) return Annotate(allowed, label);
  return model;
}

}  // namespace ge::runtime

namespace ge::runtime {

namespace {

// The tensor of external weight `w`, sharing `weights` when it can.
absl::StatusOr<Tensor> WeightTensor(const v1::ExternalWeight& w, const std::shared_ptr<Buffer>& weights) {
  if (w.offset() > weights->size() || w.size() > weights->size() - w.offset()) {
    return InvalidArgument("weight of node '", w.node(), "' lies past the end of the weights");
  }
  v1::TensorDef def;
  def.set_dtype(w.dtype());
  for (int64_t d : w.shape().dims()) def.add_dims(d);
  const bool shareable = w.dtype() != static_cast<int>(DataType::kBool) &&
                         w.dtype() != static_cast<int>(DataType::kString) && w.offset() % kStaticAlignment == 0;
  if (shareable && IsValidDataType(w.dtype()) && w.dtype() != static_cast<int>(DataType::kUndefined)) {
    Shape shape;
    for (int64_t d : w.shape().dims()) {
      if (d < 0) return InvalidArgument("weight of node '", w.node(), "' has a negative dim");
      shape.push_back(d);
    }
    const auto dtype = static_cast<DataType>(w.dtype());
    GE_ASSIGN_OR_RETURN(int64_t count, shape.NumElements());
    GE_ASSIGN_OR_RETURN(size_t bytes, ByteSizeOf(dtype, count));
    if (bytes != w.size()) {
      return InvalidArgument("weight of node '", w.node(), "' has ", w.size(), " bytes; its type takes ", bytes);
    }
    return Tensor(dtype, std::move(shape), weights, w.offset());
  }
  def.set_raw_data(static_cast<const char*>(weights->data()) + w.offset(), w.size());
  return ir::TensorFromProto(def);
}

}  // namespace

absl::StatusOr<CompiledModel> LoadGemWithWeights(std::string_view gem, std::shared_ptr<Buffer> weights,
                                                 const std::string& label, const engine::EngineRegistry& engines) {
  v1::CompiledModelDef def;
  if (gem.size() > static_cast<size_t>(std::numeric_limits<int>::max()) ||
      !def.ParseFromArray(gem.data(), static_cast<int>(gem.size()))) {
    return InvalidArgument(label, " is not a .gem compiled model (unreadable)");
  }
  GE_RETURN_IF_ERROR(CheckBuiltForThisHost(def, label, engines));
  if (weights == nullptr) weights = Buffer::Wrap(nullptr, 0, [] {});
  NamedTensors tensors;
  for (const v1::ExternalWeight& w : def.external_weights()) {
    absl::StatusOr<Tensor> tensor = WeightTensor(w, weights);
    if (!tensor.ok()) return Annotate(tensor.status(), label);
    tensors.emplace_back(w.node(), *std::move(tensor));
  }
  def.clear_external_weights();
  // Prepared state is mapped like the weights: a read-only slice of them.
  auto blobs = [&weights](const v1::PreparedBlobDef& blob) -> absl::StatusOr<std::shared_ptr<Buffer>> {
    if (blob.offset() > weights->size() || blob.size() > weights->size() - blob.offset() ||
        blob.offset() % kStaticAlignment != 0) {
      return InvalidArgument("prepared state at ", blob.offset(), " (", blob.size(),
                             " bytes) is not an aligned range of the weights");
    }
    std::shared_ptr<Buffer> keep = weights;
    return Buffer::Wrap(static_cast<char*>(weights->data()) + blob.offset(), blob.size(), [keep] {});
  };
  return ModelFromDef(def, label, "", blobs, &tensors);
}

absl::StatusOr<CompiledModel> LoadGemFromBuffers(std::string_view gem, std::string_view weights,
                                                 const std::string& label, const engine::EngineRegistry& engines) {
  // One aligned copy, shared by every weight.
  GE_ASSIGN_OR_RETURN(std::shared_ptr<Buffer> buffer, Buffer::Allocate(std::max<size_t>(weights.size(), 1)));
  if (!weights.empty()) std::memcpy(buffer->data(), weights.data(), weights.size());
  return LoadGemWithWeights(gem, std::move(buffer), label, engines);
}

}  // namespace ge::runtime
