// Runtime: engines, cache and devices, the ingestion path, and sessions.
#include "session/runtime.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "base/ir/proto_convert.h"
#include "base/ir/verifier.h"
#include "base/logging.h"
#include "base/ops/op_registry.h"
#include "base/status.h"
#include "compiler/frontend/onnx_importer.h"
#include "runtime/cache/redis_tier.h"

namespace ge::session {
namespace {

namespace fs = std::filesystem;

absl::StatusOr<std::string> ReadKeyFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream bytes;
  bytes << in.rdbuf();
  if (!in) return InvalidArgument("cache_remote_key_file: cannot read ", path);
  std::string key = bytes.str();
  while (!key.empty() && (key.back() == '\n' || key.back() == '\r')) key.pop_back();
  if (key.size() < 16) {
    return InvalidArgument("cache_remote_key_file: ", path, " holds ", key.size(),
                           " bytes; the remote tier's key needs at least 16");
  }
  return key;
}

absl::StatusOr<std::unique_ptr<cache::ModelCache>> OpenCache(const CacheConfig& config) {
  cache::ModelCacheOptions options;
  options.dir = config.dir.empty() ? cache::DefaultCacheDir() : config.dir;
  options.max_bytes = config.max_bytes;
  if (!config.remote.empty()) {
    GE_RETURN_IF_ERROR(CheckRemoteCacheSettings(config.remote, config.remote_key_file));
    GE_ASSIGN_OR_RETURN(options.remote_mac_key, ReadKeyFile(config.remote_key_file));
    GE_ASSIGN_OR_RETURN(std::unique_ptr<cache::RedisTier> tier, cache::RedisTier::Create(config.remote));
    options.remote = std::shared_ptr<cache::RemoteTier>(std::move(tier));
  }
  return cache::ModelCache::Open(std::move(options));
}

// A model file mapped read-only (the operator's: a file truncated while it
// is read ends the process with SIGBUS, as for any mapped input).
class MappedFile {
 public:
  MappedFile(void* data, size_t size) : data_(data), size_(size) {}
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  ~MappedFile() {
    if (size_ > 0) munmap(data_, size_);
  }
  std::string_view bytes() const { return {static_cast<const char*>(data_), size_}; }
  // Takes the whole pages before byte `end` out of the process's resident
  // set (they stay in the page cache; a later read faults them back in).
  // Read-only and private: nothing is lost.
  void DropPages(size_t end) const {
    const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    const size_t bytes = std::min(end, size_) / page * page;
    if (bytes > 0) madvise(data_, bytes, MADV_DONTNEED);
  }

 private:
  void* data_;
  size_t size_;
};

absl::StatusOr<std::shared_ptr<const MappedFile>> MapModelFile(const std::string& path) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return NotFound("ONNX model '", path, "' cannot be opened: ", std::strerror(errno));
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    close(fd);
    return InvalidArgument("ONNX model '", path, "' is not a regular file");
  }
  const size_t size = static_cast<size_t>(st.st_size);
  if (size > static_cast<size_t>(INT_MAX)) {
    close(fd);
    return InvalidArgument("ONNX model '", path, "' is ", size,
                           " bytes, over protobuf's 2 GiB limit; store its weights as external data");
  }
  void* data = size == 0 ? nullptr : mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
  const int error = errno;
  close(fd);
  if (data == MAP_FAILED) return InvalidArgument("cannot map ONNX model '", path, "': ", std::strerror(error));
  return std::make_shared<const MappedFile>(data, size);
}

// A GraphDef from a client is checked as the ONNX importer checks its
// models before anything is kept: the verifier's invariants (a broken
// structure is the sender's error here, so InvalidArgument) and every op
// type known to the registry.
absl::Status CheckGraphDef(const ir::Graph& graph) {
  if (absl::Status s = ir::VerifyGraph(graph); !s.ok()) return InvalidArgument("bad GraphDef: ", s.message());
  std::vector<const ir::Graph*> graphs = {&graph};
  for (const ir::Graph* sub : graph.subgraphs()) graphs.push_back(sub);
  for (const ir::Graph* g : graphs) {
    for (const ir::Node* node : g->nodes()) {
      const std::string domain = node->op_desc().GetAttrOr<std::string>(std::string(ir::kAttrOpDomain), "");
      if (ops::OpRegistry::Global().Find(node->type(), domain) == nullptr) {
        return InvalidArgument("bad GraphDef: node '", node->name(), "' has op type '", node->type(), "'",
                               domain.empty() ? "" : StrCat(" of domain '", domain, "'"),
                               ", which no registered operator or engine plugin provides");
      }
    }
  }
  return absl::OkStatus();
}

// The weights root of an operator's model: the one given, else the model
// file's directory; empty for bytes without one.
std::string WeightsRootFor(const ModelSource& source, const IngestOptions& options) {
  if (!options.weights_root.empty()) return options.weights_root;
  if (source.path.empty()) return "";
  std::error_code ec;
  fs::path dir = fs::absolute(fs::path(source.path), ec).parent_path();
  return dir.string();
}

}  // namespace

absl::Status CheckRemoteCacheSettings(const std::string& remote, const std::string& key_file) {
  if (remote.empty()) return absl::OkStatus();
  GE_RETURN_IF_ERROR(Annotate(cache::RedisTier::Create(remote).status(), "cache_remote"));
  if (key_file.empty()) {
    return InvalidArgument("cache_remote ", remote,
                           " needs cache_remote_key_file (gectl: --cache-remote-key-file): the remote tier's "
                           "entries are signed with the operator's key and checked before use");
  }
  return ReadKeyFile(key_file).status();
}

RuntimeDevice::RuntimeDevice(const DeviceConfig& config) : name_(config.name) {
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  threads_ = config.threads > 0 ? config.threads : cores;
  // The compiler's parallel passes: the calling thread joins ParallelFor,
  // so one worker fewer. Kernels run on OpenMP under the budget.
  pool_ = std::make_unique<ThreadPool>(threads_ - 1, "compile-" + name_);
  budget_ = std::make_unique<ComputeBudget>(threads_);
  // Memory only: the kernels' threads are the budget's.
  memory_ = std::make_unique<device::CpuDevice>(device::DeviceSpec{name_, config.memory_bytes, /*num_threads=*/1});
}

absl::StatusOr<std::unique_ptr<Runtime>> Runtime::Create(const RuntimeOptions& options) {
  auto rt = std::unique_ptr<Runtime>(new Runtime());
  for (const std::string& dir : options.plugin_dirs) {
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) return NotFound("plugin directory ", dir, " does not exist");
  }
  GE_ASSIGN_OR_RETURN(rt->engines_, engine::CreateEngineRegistry(options.plugin_dirs, options.engine_options));
  if (options.cache) {
    absl::StatusOr<std::unique_ptr<cache::ModelCache>> opened = OpenCache(*options.cache);
    if (opened.ok()) {
      rt->cache_ = *std::move(opened);
    } else if (options.cache_required || opened.status().code() == absl::StatusCode::kInvalidArgument) {
      // Settings that are wrong (a remote tier without its key) are errors.
      return Annotate(opened.status(), "compiled-model cache");
    } else {
      Logger("cache").warn("working without the compiled-model cache: {}", opened.status().message());
    }
  }
  for (const DeviceConfig& d : options.devices) rt->devices_.push_back(std::make_unique<RuntimeDevice>(d));
  rt->compile_timeout_seconds_ = options.compile_timeout_seconds;
  rt->compile_timeout_setting_ = options.compile_timeout_setting;
  return rt;
}

Runtime::~Runtime() = default;

int Runtime::AddDevice(const DeviceConfig& config) {
  devices_.push_back(std::make_unique<RuntimeDevice>(config));
  return static_cast<int>(devices_.size()) - 1;
}

std::unique_ptr<Session> Runtime::NewSession(const OptionMap& options, int device, const CacheScope& scope,
                                             std::shared_ptr<device::MemoryQuota> quota) const {
  RuntimeDevice& d = *devices_.at(device);
  std::unique_ptr<Session> session;
  if (quota != nullptr) {
    session = std::make_unique<Session>(*engines_, options, d.pool(),
                                        std::make_unique<device::QuotaDevice>(*d.memory_, std::move(quota)));
  } else {
    session = std::make_unique<Session>(*engines_, options, d.pool(), d.memory_.get());
  }
  session->set_cache_scope(scope);
  session->set_compute_budget(d.compute_budget());
  session->set_compile_timeout(compile_timeout_seconds_, compile_timeout_setting_);
  return session;
}

ModelSource ModelSource::File(std::string path) {
  return runtime::IsGemPath(path) ? GemPath(std::move(path)) : OnnxPath(std::move(path));
}

absl::StatusOr<std::unique_ptr<ir::Graph>> Runtime::ImportOnnx(const ModelSource& source, const IngestOptions& options,
                                                               std::vector<std::string>* files) const {
  frontend::OnnxImportOptions import = frontend::OnnxImportOptionsFromMap(options.options);
  import.parsed_through = options.parsed_through;
  if (options.provenance == Provenance::kClient) {
    // The model as the client sent it, before the importer adds anything.
    import.check_model = [](const onnx::ModelProto& model) { return CheckClientOnnx(model);
  };
  return frontend::ImportOnnxBytes(source.bytes, "", import);
}
const std::string root = WeightsRootFor(source, options);
std::unique_ptr<ir::Graph> graph;
if (source.kind == ModelSource::Kind::kOnnxPath && source.bytes.empty()) {
  GE_ASSIGN_OR_RETURN(graph, frontend::ImportOnnxFile(source.path, import));
} else if (source.kind == ModelSource::Kind::kOnnxPath) {
  // The file's bytes, read by the caller: imported as the file would be.
  std::error_code ec;
  const std::string dir = fs::absolute(fs::path(source.path), ec).parent_path().string();
  absl::StatusOr<std::unique_ptr<ir::Graph>> imported = frontend::ImportOnnxBytes(source.bytes, dir, import);
  if (!imported.ok()) return Annotate(imported.status(), StrCat("ONNX model '", source.path, "'"));
  graph = *std::move(imported);
} else {
  // Bytes from the operator: external data is looked up in the weights root.
  GE_ASSIGN_OR_RETURN(graph, frontend::ImportOnnxBytes(source.bytes, root, import));
}
// External tensors became FileConstant nodes: their files must lie
// beneath the weights root.
if (root.empty()) {
  for (const ir::Node* node : graph->nodes()) {
    if (node->type() == ir::kFileConstant) {
      return InvalidArgument("node '", node->name(),
                             "' (FileConstant) names a file, but the model came as bytes "
                             "without a weights root to resolve it in");
    }
  }
  return graph;
}
GE_RETURN_IF_ERROR(ResolveOperatorFiles(*graph, root, options.options, files));
return graph;
}  // namespace ge::session

absl::StatusOr<GraphSource> Runtime::DirectSource(const ModelSource& source, const IngestOptions& options,
                                                  std::string checks,
                                                  std::function<absl::Status(const ir::Graph&)> after_import) const {
  if (source.kind != ModelSource::Kind::kOnnxPath && source.kind != ModelSource::Kind::kOnnxBytes) {
    return InvalidArgument("direct mode takes ONNX models (a path or bytes)");
  }
  if (options.provenance == Provenance::kClient) {
    // Before any lookup: a hit skips the import, not the client's checks
    // that do not depend on the bytes.
    absl::Status checked = CheckClientOptions(options.options, "");
    if (!checked.ok()) {
      return Annotate(checked, options.label.empty() ? std::string("options") : StrCat(options.label, ": options"));
    }
  }
  GraphSource out;
  out.direct.format = "onnx";
  out.direct.provenance = options.provenance == Provenance::kClient ? "client" : "operator";
  out.direct.checks = std::move(checks);
  ModelSource imported = source;
  std::shared_ptr<const MappedFile> mapped_file;  // the path's bytes, when read here
  if (source.kind == ModelSource::Kind::kOnnxPath) {
    if (options.provenance == Provenance::kClient) {
      return InvalidArgument("a client's model comes as bytes, not as a path on the daemon's host");
    }
    out.file = source.path;
    // Its identity first: a digest remembered under it needs no byte of
    // the file (the importer reads it on a miss); else the digest taken
    // now is remembered under it.
    if (absl::StatusOr<cache::FileIdentity> identity = cache::IdentifyFile(source.path); identity.ok()) {
      if (cache_ != nullptr) out.digest = cache_->RecallDigest(*identity);
      out.file_identity = *std::move(identity);
    }
    if (!out.digest) {
      // Mapped, not read: hashing and (on a miss) importing read the page
      // cache's pages in place.
      GE_ASSIGN_OR_RETURN(mapped_file, MapModelFile(source.path));
      imported.bytes = mapped_file->bytes();
      out.bytes = mapped_file->bytes();
      out.keep_alive = mapped_file;
    }
  } else {
    out.bytes = source.bytes;
  }
  if (options.provenance == Provenance::kOperator) {
    // Where the model's files are looked up and must lie: the model's
    // directory and the weights root, as resolved.
    std::error_code ec;
    const std::string root = WeightsRootFor(source, options);
    const fs::path real_root = root.empty() ? fs::path() : fs::weakly_canonical(root, ec);
    const fs::path dir =
        source.path.empty() ? fs::path() : fs::weakly_canonical(fs::absolute(source.path, ec).parent_path(), ec);
    out.direct.origin = StrCat("model_dir ", dir.string(), "\nweights_root ", real_root.string());
  }
  out.import = [this, imported, options, after_import = std::move(after_import),
                mapped_file]() -> absl::StatusOr<ImportedGraph> {
    IngestOptions ingest = options;
    if (mapped_file != nullptr) {
      // The mapped file's pages need not stay resident once read: those
      // the digest read go now, the parser's as it moves on (a model's
      // weights would otherwise be in memory two or three times at the
      // import's peak: the file, the parsed model, the graph's tensors).
      mapped_file->DropPages(mapped_file->bytes().size());
      ingest.parsed_through = [mapped = mapped_file.get()](size_t end) { mapped->DropPages(end); };
    }
    GE_ASSIGN_OR_RETURN(IngestedModel model, AddModel(imported, ingest));
    if (after_import != nullptr) GE_RETURN_IF_ERROR(after_import(*model.graph));
    return ImportedGraph{std::move(model.graph), std::move(model.files)};
  };
  return out;
}

absl::StatusOr<IngestedModel> Runtime::AddModel(const ModelSource& source, const IngestOptions& options) const {
  const bool client = options.provenance == Provenance::kClient;
  auto where = [&options](const absl::Status& s, std::string_view what) {
    return options.label.empty() ? Annotate(s, what) : Annotate(s, StrCat(options.label, ": ", what));
  };
  if (client) {
    GE_RETURN_IF_ERROR(where(CheckClientOptions(options.options, ""), "options"));
    if (source.kind == ModelSource::Kind::kOnnxPath || source.kind == ModelSource::Kind::kGemPath) {
      return InvalidArgument(options.label, options.label.empty() ? "" : ": ",
                             "a client's model comes as bytes, not as a path on the daemon's host");
    }
  }
  IngestedModel out;
  switch (source.kind) {
    case ModelSource::Kind::kOnnxPath:
    case ModelSource::Kind::kOnnxBytes: {
      imports_.fetch_add(1);
      absl::StatusOr<std::unique_ptr<ir::Graph>> graph = ImportOnnx(source, options, &out.files);
      if (!graph.ok()) return where(graph.status(), "bad ONNX model");
      out.graph = *std::move(graph);
      return out;
    }
    case ModelSource::Kind::kGraphDef: {
      if (source.graph_def == nullptr) return InvalidArgument("no GraphDef given");
      imports_.fetch_add(1);
      absl::StatusOr<std::unique_ptr<ir::Graph>> graph = ir::GraphFromProto(*source.graph_def);
      if (!graph.ok()) return where(graph.status(), "bad GraphDef");
      // The graph as received: GraphFromProto adds no attribute.
      if (client) GE_RETURN_IF_ERROR(where(CheckClientGraph(**graph, AttrPolicy::kUser), "GraphDef"));
      GE_RETURN_IF_ERROR(where(CheckGraphDef(**graph), "GraphDef"));
      if (!client) {
        const std::string root = WeightsRootFor(source, options);
        if (!root.empty()) {
          GE_RETURN_IF_ERROR(where(ResolveOperatorFiles(**graph, root, options.options, &out.files), "GraphDef"));
        }
      }
      out.graph = *std::move(graph);
      return out;
    }
    case ModelSource::Kind::kGemBytes:
    case ModelSource::Kind::kGemPath: {
      absl::StatusOr<runtime::CompiledModel> model =
          source.kind == ModelSource::Kind::kGemPath
              ? runtime::LoadGem(source.path, *engines_)
              : runtime::LoadGemFromBytes(source.bytes, StrCat("the gem field (", source.bytes.size(), " bytes)"),
                                          *engines_);
      if (!model.ok()) return model.status();
      if (client) {
        GE_RETURN_IF_ERROR(where(CheckClientCompiledModel(*model), "compiled model"));
      } else if (const std::string root = WeightsRootFor(source, options); !root.empty()) {
        GE_RETURN_IF_ERROR(where(ResolveOperatorFiles(*model->graph, root, options.options), "compiled model"));
        if (model->partitioned) {
          GE_RETURN_IF_ERROR(where(ResolveOperatorFiles(*model->partitioned, root, options.options), "compiled model"));
        }
      }
      out.compiled = *std::move(model);
      return out;
    }
  }
  return InvalidArgument("unknown model source");
}

}  // namespace ge::session
