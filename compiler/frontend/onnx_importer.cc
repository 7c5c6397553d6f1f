// The ONNX import pipeline: parse, check, infer, convert, validate. libonnx
// throws (ValidationError, InferenceError, and whatever its protobuf code
// throws); every call into it is wrapped here so that no exception leaves
// the frontend.
#include "compiler/frontend/onnx_importer.h"

#include <fcntl.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <future>
#include <system_error>
#include <unordered_map>

#include "base/ir/op_types.h"
#include "base/logging.h"
#include "base/ops/op_registry.h"
#include "base/status.h"
#include "compiler/frontend/onnx_contrib_ops.h"
#include "compiler/frontend/onnx_control_flow.h"
#include "compiler/frontend/onnx_graph_builder.h"
#include "compiler/frontend/onnx_model_check.h"
#include "compiler/frontend/onnx_op_support.h"
#include "compiler/frontend/onnx_opset_adapter.h"
#include "google/protobuf/arena.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"
#include "onnx/checker.h"
#include "onnx/shape_inference/implementation.h"

namespace ge::frontend {
namespace fs = std::filesystem;
namespace {

// onnx::checker::check_model(ModelProto) checks external data files
// relative to the process's working directory; the checker needs the model's
// directory instead. libonnx 1.12 declares no overload taking a context, so
// this does what check_model does (ged checks ir_version and opset imports
// itself) with a context that carries the directory. ged has already
// checked the external files inside that directory.
absl::Status RunOnnxChecker(const onnx::ModelProto& model, const std::string& model_dir) {
  if (model.ir_version() > onnx::IR_VERSION) {
    return InvalidArgument("the model's IR version ", model.ir_version(),
                           " is newer than this libonnx supports (", onnx::IR_VERSION, ")");
  }
  try {
    onnx::checker::CheckerContext ctx;
    ctx.set_ir_version(static_cast<int>(model.ir_version()));
    std::unordered_map<std::string, int> opsets;
    for (const auto& imp : model.opset_import()) {
      opsets[imp.domain()] = static_cast<int>(imp.version());
    }
    ctx.set_opset_imports(std::move(opsets));
    ctx.set_model_dir(model_dir);
    onnx::checker::LexicalScopeContext lex;
    onnx::checker::check_graph(model.graph(), ctx, lex);
    if (model.ir_version() >= 8) onnx::checker::check_model_local_functions(model, ctx, lex);
  } catch (const onnx::checker::ValidationError& e) {
    return InvalidArgument("the ONNX checker rejected the model: ", e.what());
  } catch (const std::exception& e) {
    return InvalidArgument("the ONNX checker failed: ", e.what());
  }
  return absl::OkStatus();
}

// libonnx's inference functions trust the checker's work: with the checker
// off, a node missing a required attribute can crash them. When only
// inference is asked for, each node is at least verified against its
// schema (counts, required attributes, attribute types).
void VerifyNodes(const onnx::GraphProto& graph,
                 const std::unordered_map<std::string, int>& opsets) {
  for (const auto& node : graph.node()) {
    auto it = opsets.find(std::string(NormalizeDomain(node.domain())));
    if (it == opsets.end()) continue;
    const onnx::OpSchema* schema =
        onnx::OpSchemaRegistry::Schema(node.op_type(), it->second, node.domain());
    if (schema != nullptr) schema->Verify(node);
    for (const auto& attr : node.attribute()) {
      if (attr.has_g()) VerifyNodes(attr.g(), opsets);
      for (const auto& g : attr.graphs()) VerifyNodes(g, opsets);
    }
  }
}

absl::Status VerifyNodesForInference(const onnx::ModelProto& model) {
  std::unordered_map<std::string, int> opsets;
  for (const auto& imp : model.opset_import()) {
    opsets[std::string(NormalizeDomain(imp.domain()))] = static_cast<int>(imp.version());
  }
  try {
    VerifyNodes(model.graph(), opsets);
  } catch (const std::exception& e) {
    return InvalidArgument("a node does not match its ONNX schema: ", e.what());
  }
  return absl::OkStatus();
}

absl::Status RunOnnxShapeInference(onnx::ModelProto& model) {
  try {
    onnx::ShapeInferenceOptions options(/*check_type_val=*/false, /*strict_mode_val=*/1,
                                        /*data_prop_val=*/false);
    onnx::shape_inference::InferShapes(model, onnx::OpSchemaRegistry::Instance(), options);
  } catch (const onnx::InferenceError& e) {
    return InvalidArgument("ONNX shape inference failed: ", e.what());
  } catch (const std::exception& e) {
    return InvalidArgument("ONNX shape inference failed: ", e.what());
  }
  return absl::OkStatus();
}

absl::Status ValidateAllNodes(const ir::Graph& root, const ops::OpRegistry& registry) {
  std::vector<const ir::Graph*> graphs = {&root};
  for (const ir::Graph* sub : root.subgraphs()) graphs.push_back(sub);
  for (const ir::Graph* graph : graphs) {
    for (const ir::Node* node : graph->nodes()) {
      absl::Status status = ops::ValidateOp(node->op_desc(), registry);
      if (status.ok()) continue;
      std::string where = StrCat("graph '", graph->name(), "'");
      if (auto opset = node->op_desc().GetAttr<int64_t>(ir::kAttrOpset)) {
        StrAppend(&where, ", imported from ONNX opset ", *opset);
      }
      return Annotate(status, where);
    }
  }
  return absl::OkStatus();
}

std::string AbsoluteDir(const std::string& dir) {
  if (dir.empty()) return dir;
  std::error_code ec;
  fs::path abs = fs::weakly_canonical(fs::absolute(dir, ec), ec);
  return ec ? dir : abs.string();
}

// Logs (at debug level) how long each import step took.
class StepTimer {
 public:
  void Lap(std::string_view step) {
    const auto now = std::chrono::steady_clock::now();
    const double cpu = CpuMs();
    GE_LOG_DEBUG("frontend", "import: {}: {:.1f} ms ({:.1f} ms CPU)", step,
                 std::chrono::duration<double, std::milli>(now - last_).count(), cpu - last_cpu_);
    last_ = now;
    last_cpu_ = cpu;
  }

 private:
  static double CpuMs() {
    timespec ts{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) / 1e6;
  }

  std::chrono::steady_clock::time_point last_ = std::chrono::steady_clock::now();
  double last_cpu_ = CpuMs();
};

// Converts a checked model and types and validates the result.
absl::StatusOr<std::unique_ptr<ir::Graph>> ConvertChecked(const OnnxBuildContext& context,
                                                          const OnnxImportOptions& options,
                                                          bool infer_with_ged, StepTimer& timer) {
  GE_ASSIGN_OR_RETURN(std::unique_ptr<ir::Graph> graph, BuildGraphFromOnnx(context));
  timer.Lap("build graph");
  if (options.lower_control_flow.value_or(options.registry == nullptr)) {
    GE_RETURN_IF_ERROR(LowerOnnxControlFlow(*graph));
  }
  timer.Lap("lower control flow");
  if (infer_with_ged) {
    // Before validation, which checks output types against the ops' type
    // constraints (a sequence op's output must be typed by then). Inference
    // checks each node's arity, attributes and input types itself first.
    absl::Status inferred = ops::InferShapes(*graph, *context.registry);
    if (!inferred.ok()) return Annotate(inferred, "shape inference failed");
    timer.Lap("ged shape inference");
  }
  GE_RETURN_IF_ERROR(ValidateAllNodes(*graph, *context.registry));
  timer.Lap("validate nodes");
  return graph;
}

// Above this many bytes of inline initializer data, an import frees each
// initializer's bytes once converted.
constexpr size_t kReleaseInitializerBytes = size_t{64} << 20;

size_t InitializerBytes(const onnx::GraphProto& graph) {
  size_t bytes = 0;
  for (const onnx::TensorProto& init : graph.initializer()) bytes += init.raw_data().size();
  return bytes;
}

// Imports a model this file owns (shape inference writes into it, and the
// conversion may free its initializers' bytes).
absl::StatusOr<std::unique_ptr<ir::Graph>> ImportOwnedModel(onnx::ModelProto& model,
                                                            const std::string& model_dir,
                                                            const OnnxImportOptions& options) {
  StepTimer timer;
  if (options.check_model) GE_RETURN_IF_ERROR(options.check_model(model));
  absl::Status basics = CheckModelBasics(model);
  if (!basics.ok()) return InvalidArgument("not a valid ONNX model: ", StdView(basics.message()));
  GE_ASSIGN_OR_RETURN(OpsetMap opsets, CheckOpsets(model));
  {
    CaptureAnalysis captures;
    GE_RETURN_IF_ERROR(CheckGraphStructure(model.graph(), StringSet(), captures));
  }
  timer.Lap("structure");
  GE_RETURN_IF_ERROR(CheckNoLocalFunctionCalls(model));
  // ONNX Runtime's com.microsoft ops become default-domain nodes before
  // anything reads the ops (onnx_contrib_ops.h).
  GE_RETURN_IF_ERROR(LowerContribOps(model, opsets));
  timer.Lap("contrib ops");
  const ops::OpRegistry& registry =
      options.registry != nullptr ? *options.registry : ops::OpRegistry::Global();
  GE_RETURN_IF_ERROR(CheckOpsSupported(model.graph(), opsets, registry, BuiltinOpsetAdapters()));
  const std::string dir = AbsoluteDir(model_dir);
  GE_RETURN_IF_ERROR(CheckExternalInitializers(model.graph(), dir));
  timer.Lap("ops supported");
  // ged's own inference types the graph after conversion when it covers
  // every node; libonnx's is then skipped (see OnnxImportOptions).
  const bool infer_with_ged =
      options.run_onnx_shape_inference && !options.force_onnx_shape_inference &&
      GedInferenceCoversGraph(model.graph(), opsets, registry, BuiltinOpsetAdapters());
  // libonnx's checker only reads the model. When nothing writes into the
  // model before conversion (libonnx's inference skipped), it runs on a
  // second thread while the graph is built: 0.9 s of a million-node import
  // off the wall time. Its verdict still comes first, as when it ran before
  // the conversion: a model it rejects fails with its message.
  // A weight-heavy model is checked first and then converted consuming its
  // initializers (OnnxBuildContext::release_initializers): its peak memory
  // is then about one copy of the weights, not two.
  const bool release_initializers = InitializerBytes(model.graph()) >= kReleaseInitializerBytes;
  std::future<absl::Status> checker;
  if (options.run_checker && infer_with_ged && !release_initializers) {
    try {
      checker = std::async(std::launch::async, [&] { return RunOnnxChecker(model, dir); });
    } catch (const std::system_error&) {
      // No thread to be had: check here instead.
    }
  }
  if (options.run_checker && !checker.valid()) GE_RETURN_IF_ERROR(RunOnnxChecker(model, dir));
  timer.Lap(checker.valid() ? "onnx checker (started)" : "onnx checker");
  if (options.run_onnx_shape_inference && !infer_with_ged) {
    if (!options.run_checker) GE_RETURN_IF_ERROR(VerifyNodesForInference(model));
    GE_RETURN_IF_ERROR(RunOnnxShapeInference(model));
  }
  timer.Lap(infer_with_ged ? "onnx shape inference (skipped: ged's covers the model)"
                           : "onnx shape inference");
  OnnxBuildContext context;
  context.model = &model;
  context.opsets = std::move(opsets);
  context.model_dir = dir;
  context.registry = &registry;
  context.adapters = &BuiltinOpsetAdapters();
  if (release_initializers) context.release_initializers = &model;
  absl::StatusOr<std::unique_ptr<ir::Graph>> graph =
      ConvertChecked(context, options, infer_with_ged, timer);
  if (checker.valid()) {
    absl::Status checked = checker.get();
    timer.Lap("onnx checker (joined)");
    GE_RETURN_IF_ERROR(checked);
  }
  return graph;
}

}  // namespace

OnnxImportOptions OnnxImportOptionsFromMap(const OptionMap& options) {
  OnnxImportOptions import;
  import.force_onnx_shape_inference =
      OptionOrDefault(options, "ge.onnx_shape_inference") == "always";
  return import;
}

namespace {

// The size of the ONNX file at `path`, or why it cannot be read as one.
absl::StatusOr<uintmax_t> CheckOnnxFile(const std::string& path) {
  std::error_code ec;
  const auto status = fs::status(path, ec);
  if (ec || !fs::exists(status)) return NotFound("ONNX model '", path, "' does not exist");
  if (!fs::is_regular_file(status)) {
    return InvalidArgument("ONNX model '", path, "' is not a regular file");
  }
  const uintmax_t size = fs::file_size(path, ec);
  if (ec) return InvalidArgument("cannot read ONNX model '", path, "': ", ec.message());
  if (size > static_cast<uintmax_t>(INT_MAX)) {
    return InvalidArgument(
        "ONNX model '", path, "' is ", size,
        " bytes, over protobuf's 2 GiB limit; store its weights as external data");
  }
  return size;
}

}  // namespace

absl::StatusOr<std::string> ReadOnnxFile(const std::string& path) {
  GE_ASSIGN_OR_RETURN(const uintmax_t size, CheckOnnxFile(path));
  std::ifstream in(path, std::ios::binary);
  if (!in) return InvalidArgument("cannot open ONNX model '", path, "'");
  std::string bytes(size, '\0');
  in.read(bytes.data(), static_cast<std::streamsize>(size));
  if (static_cast<uintmax_t>(in.gcount()) != size) {
    return InvalidArgument("cannot read ONNX model '", path, "': short read");
  }
  return bytes;
}

namespace {

// A parsed model lives in an arena: a million-node model is millions of
// small messages and strings, allocated and freed one by one otherwise.
// Blocks grow to 1 MiB (protobuf's default stops at 8 KiB).
google::protobuf::ArenaOptions ModelArenaOptions() {
  google::protobuf::ArenaOptions options;
  options.max_block_size = size_t{1} << 20;
  return options;
}

// The bytes of an array, handed to the parser a chunk at a time; bytes two
// chunks behind the parser are reported to `released` (the parser's stream
// keeps at most the tail of the chunk before the current one).
class ReleasingArrayStream : public google::protobuf::io::ZeroCopyInputStream {
 public:
  static constexpr int kChunk = 1 << 20;
  static constexpr size_t kReleaseEvery = size_t{16} << 20;

  ReleasingArrayStream(std::string_view bytes, const std::function<void(size_t)>* released)
      : bytes_(bytes), released_(released) {}

  bool Next(const void** data, int* size) override {
    if (position_ >= bytes_.size()) return false;
    const size_t begin = position_;
    const size_t n = std::min(bytes_.size() - begin, static_cast<size_t>(kChunk));
    *data = bytes_.data() + begin;
    *size = static_cast<int>(n);
    position_ += n;
    if (released_ != nullptr && *released_ && begin >= 2 * static_cast<size_t>(kChunk)) {
      const size_t behind = begin - 2 * static_cast<size_t>(kChunk);
      if (behind >= reported_ + kReleaseEvery) {
        (*released_)(behind);
        reported_ = behind;
      }
    }
    return true;
  }
  void BackUp(int count) override { position_ -= static_cast<size_t>(count); }
  bool Skip(int count) override {
    const size_t left = bytes_.size() - position_;
    if (static_cast<size_t>(count) > left) {
      position_ = bytes_.size();
      return false;
    }
    position_ += static_cast<size_t>(count);
    return true;
  }
  int64_t ByteCount() const override { return static_cast<int64_t>(position_); }

 private:
  std::string_view bytes_;
  const std::function<void(size_t)>* released_;
  size_t position_ = 0;
  size_t reported_ = 0;
};

// Parses a whole model from `stream`; `source` names it in errors.
absl::Status ParseOnnxStream(google::protobuf::io::ZeroCopyInputStream& stream, std::string_view source,
                             onnx::ModelProto& model) {
  google::protobuf::io::CodedInputStream coded(&stream);
  coded.SetTotalBytesLimit(INT_MAX);
  if (!model.ParseFromCodedStream(&coded) || !coded.ConsumedEntireMessage()) {
    return InvalidArgument("not a valid ONNX model: ", source,
                           ": the bytes do not parse as an ONNX ModelProto (truncated, corrupt "
                           "or not an ONNX file)");
  }
  absl::Status basics = CheckModelBasics(model);
  if (!basics.ok()) {
    return InvalidArgument("not a valid ONNX model: ", source, ": ", StdView(basics.message()));
  }
  return absl::OkStatus();
}

absl::Status ParseOnnxModelInto(std::string_view bytes, std::string_view source, onnx::ModelProto& model,
                                const std::function<void(size_t)>* parsed_through = nullptr) {
  if (bytes.size() > static_cast<size_t>(INT_MAX)) {
    return InvalidArgument("not a valid ONNX model: ", source, ": ", bytes.size(),
                           " bytes is over protobuf's 2 GiB limit");
  }
  ReleasingArrayStream stream(bytes, parsed_through);
  GE_RETURN_IF_ERROR(ParseOnnxStream(stream, source, model));
  if (parsed_through != nullptr && *parsed_through) (*parsed_through)(bytes.size());
  return absl::OkStatus();
}

// Parses the file at `path` as it is read (no copy of the whole file
// beside the parsed model).
absl::Status ParseOnnxFileInto(const std::string& path, onnx::ModelProto& model) {
  GE_RETURN_IF_ERROR(CheckOnnxFile(path).status());
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return InvalidArgument("cannot open ONNX model '", path, "': ", std::strerror(errno));
  google::protobuf::io::FileInputStream file(fd, 1 << 20);
  file.SetCloseOnDelete(true);
  absl::Status parsed = ParseOnnxStream(file, path, model);
  if (file.GetErrno() != 0) {
    return InvalidArgument("cannot read ONNX model '", path, "': ", std::strerror(file.GetErrno()));
  }
  return parsed;
}

}  // namespace

absl::StatusOr<onnx::ModelProto> ParseOnnxModel(std::string_view bytes, std::string_view source) {
  onnx::ModelProto model;
  GE_RETURN_IF_ERROR(ParseOnnxModelInto(bytes, source, model));
  return model;
}

absl::StatusOr<std::unique_ptr<ir::Graph>> ImportOnnxFile(const std::string& path,
                                                          const OnnxImportOptions& options) {
  StepTimer timer;
  absl::StatusOr<std::unique_ptr<ir::Graph>> graph;
  {
    google::protobuf::Arena arena(ModelArenaOptions());
    auto* model = google::protobuf::Arena::CreateMessage<onnx::ModelProto>(&arena);
    GE_RETURN_IF_ERROR(ParseOnnxFileInto(path, *model));
    timer.Lap("read and parse");
    std::error_code ec;
    const std::string dir = fs::absolute(fs::path(path), ec).parent_path().string();
    graph = ImportOwnedModel(*model, dir, options);
    timer.Lap("import");
  }
  timer.Lap("free the ModelProto");
  if (!graph.ok()) return Annotate(graph.status(), StrCat("ONNX model '", path, "'"));
  return graph;
}

absl::StatusOr<std::unique_ptr<ir::Graph>> ImportOnnxBytes(std::string_view bytes,
                                                           const std::string& model_dir,
                                                           const OnnxImportOptions& options) {
  google::protobuf::Arena arena(ModelArenaOptions());
  auto* model = google::protobuf::Arena::CreateMessage<onnx::ModelProto>(&arena);
  GE_RETURN_IF_ERROR(ParseOnnxModelInto(bytes, "<bytes>", *model, &options.parsed_through));
  return ImportOwnedModel(*model, model_dir, options);
}

absl::StatusOr<std::unique_ptr<ir::Graph>> ImportOnnxModel(const onnx::ModelProto& model,
                                                           const std::string& model_dir,
                                                           const OnnxImportOptions& options) {
  onnx::ModelProto copy = model;
  return ImportOwnedModel(copy, model_dir, options);
}

}  // namespace ge::frontend
