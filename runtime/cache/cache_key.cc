// Cache keys: a canonical, node-order-independent digest of the graph
// (straight from the IR: weights are hashed in place, small fields through
// their proto form) plus the options, engines and host the compiled form
// depends on.
#include "runtime/cache/cache_key.h"

#include <algorithm>
#include <set>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/ir/proto_convert.h"
#include "base/status.h"
#include "base/version.h"
#include "ge/v1/graph.pb.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream.h"
#include "runtime/cache/build_identity.h"
#include "runtime/model/gem.h"

namespace ge::cache {
namespace {

// v3: direct mode (the cache format version, model_cache.h).
constexpr std::string_view kKeyVersion = "ged compiled model v3";

// A protobuf output stream that feeds a hasher instead of memory.
class HashingStream final : public google::protobuf::io::ZeroCopyOutputStream {
 public:
  explicit HashingStream(Sha256Hasher& hasher) : hasher_(hasher) {}
  ~HashingStream() override { Flush(); }

  bool Next(void** data, int* size) override {
    Flush();
    *data = buffer_;
    *size = sizeof(buffer_);
    pending_ = sizeof(buffer_);
    return true;
  }
  void BackUp(int count) override { pending_ -= count; }
  int64_t ByteCount() const override { return total_ + pending_; }
  void Flush() {
    if (pending_ > 0) hasher_.Update(buffer_, static_cast<size_t>(pending_));
    total_ += pending_;
    pending_ = 0;
  }

 private:
  Sha256Hasher& hasher_;
  char buffer_[1 << 16];
  int pending_ = 0;
  int64_t total_ = 0;
};

// Hashes `message` in protobuf's deterministic form (map entries sorted).
template <typename Message>
void HashMessage(const Message& message, Sha256Hasher& hasher) {
  HashingStream stream(hasher);
  {
    google::protobuf::io::CodedOutputStream coded(&stream);
    coded.SetSerializationDeterministic(true);
    message.SerializeWithCachedSizes(&coded);
  }
}

template <typename Message>
Sha256Digest DigestOf(const Message& message) {
  Sha256Hasher hasher;
  hasher.AddInt(static_cast<int64_t>(message.ByteSizeLong()));
  HashMessage(message, hasher);
  return hasher.Finish();
}

// An attribute: tensors by their bytes in place (the weights: no copy),
// everything else through its proto form.
absl::Status HashAttr(const std::string& name, const ir::AttrValue& value, Sha256Hasher& hasher) {
  hasher.AddString(name);
  const Tensor* tensor = value.get<Tensor>();
  if (tensor != nullptr && tensor->dtype() != DataType::kString && tensor->raw_data() != nullptr) {
    hasher.AddString("tensor");
    hasher.AddInt(static_cast<int64_t>(tensor->dtype()));
    hasher.AddInt(tensor->shape().unknown_rank() ? -1 : static_cast<int64_t>(tensor->shape().dims().size()));
    for (int64_t d : tensor->shape().dims()) hasher.AddInt(d);
    hasher.AddInt(static_cast<int64_t>(tensor->SizeInBytes()));
    hasher.Update(tensor->raw_data(), tensor->SizeInBytes());
    return absl::OkStatus();
  }
  v1::AttrValueDef def;
  GE_RETURN_IF_ERROR(ir::AttrValueToProto(value, &def));
  hasher.AddDigest(DigestOf(def));
  return absl::OkStatus();
}

void HashIo(const ir::IoDesc& io, Sha256Hasher& hasher) {
  hasher.AddString(io.name);
  v1::ValueTypeDef type;
  ir::ValueTypeToProto(io.type, &type);
  hasher.AddDigest(DigestOf(type));
}

// One node: everything GraphToProto keeps, with producers by name (names
// are unique in a graph), so the digest does not depend on node order.
absl::StatusOr<Sha256Digest> DigestOfNode(const ir::Node& node) {
  Sha256Hasher hasher;
  const ir::OpDesc& op = node.op_desc();
  hasher.AddString(node.name());
  hasher.AddString(node.type());
  hasher.AddInt(node.num_inputs());
  for (int i = 0; i < node.num_inputs(); ++i) {
    const ir::OutPort producer = node.input(i);
    hasher.AddString(producer ? producer.node->name() : "");
    hasher.AddInt(producer ? producer.index : -1);
    HashIo(op.input(i), hasher);
  }
  hasher.AddInt(node.num_outputs());
  for (const ir::IoDesc& io : op.outputs()) HashIo(io, hasher);
  std::vector<std::string> control;
  for (const ir::Node* c : node.control_inputs()) control.push_back(c->name());
  std::sort(control.begin(), control.end());  // control edges carry no order
  hasher.AddInt(static_cast<int64_t>(control.size()));
  for (const std::string& c : control) hasher.AddString(c);
  hasher.AddInt(static_cast<int64_t>(op.attrs().size()));
  for (const auto& [name, value] : op.attrs()) {
    GE_RETURN_IF_ERROR(Annotate(HashAttr(name, value, hasher), StrCat("node ", node.name())));
  }
  hasher.AddInt(static_cast<int64_t>(op.subgraph_names().size()));
  for (const std::string& sub : op.subgraph_names()) hasher.AddString(sub);
  return hasher.Finish();
}

// One graph of the tree: its own fields, then its nodes as a sorted set.
absl::StatusOr<Sha256Digest> DigestOfGraph(const ir::Graph& graph, ThreadPool* pool) {
  const std::vector<ir::Node*> order = graph.nodes();
  std::vector<Sha256Digest> nodes(order.size());
  std::vector<absl::Status> errors(order.size());
  auto hash_range = [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      absl::StatusOr<Sha256Digest> d = DigestOfNode(*order[i]);
      if (d.ok()) nodes[i] = *d;
      else errors[i] = d.status();
    }
  };
  if (pool != nullptr && pool->num_threads() > 0) {
    pool->ParallelFor(static_cast<int64_t>(order.size()), 1, hash_range);
  } else {
    hash_range(0, static_cast<int64_t>(order.size()));
  }
  for (const absl::Status& e : errors) GE_RETURN_IF_ERROR(e);
  std::sort(nodes.begin(), nodes.end());
  Sha256Hasher hasher;
  hasher.AddString("graph");
  hasher.AddString(graph.name());
  hasher.AddString(graph.parent_graph() ? graph.parent_graph()->name() : "");
  hasher.AddString(graph.parent_node() ? graph.parent_node()->name() : "");
  hasher.AddInt(static_cast<int64_t>(graph.attrs().size()));
  for (const auto& [name, value] : graph.attrs()) GE_RETURN_IF_ERROR(HashAttr(name, value, hasher));
  hasher.AddInt(static_cast<int64_t>(nodes.size()));
  for (const Sha256Digest& d : nodes) hasher.AddDigest(d);
  return hasher.Finish();
}

// Everything but the graph: options, threads, engines, ged, host.
void HashContext(const OptionMap& options, const KeyContext& context, Sha256Hasher& hasher) {
  std::set<std::string, std::less<>> keys;
  for (const OptionSpec& spec : AllOptionSpecs()) keys.emplace(spec.key);
  for (const auto& [key, value] : options) keys.insert(key);
  hasher.AddString("options");
  for (const std::string& key : keys) {
    if (IsOptionIgnoredByCacheKey(key)) continue;
    hasher.AddString(key);
    hasher.AddString(OptionOrDefault(options, key));
  }
  hasher.AddString("threads");
  hasher.AddInt(context.threads);
  hasher.AddString("engines");
  if (context.engines != nullptr) {
    for (const std::string& name : context.engines->Names()) {
      const engine::EngineAttributes* a = context.engines->FindAttributes(name);
      hasher.AddString(name);
      hasher.AddString(a ? a->version : "");
      hasher.AddInt(a ? a->compute_cost : -1);
      hasher.AddString(a ? a->composite_engine : "");
      // The reference engine folds constants and takes host-execution nodes.
      hasher.AddInt(a ? static_cast<int64_t>(a->reference) : -1);
      // Placement estimates decide where nodes go (compiler/placement).
      hasher.AddString("cost");
      if (a != nullptr) {
        for (const auto& [op, cost] : a->cost.ops) {
          hasher.AddString(op);
          hasher.AddString(absl::StrCat(cost.call_ns, "/", cost.element_ns));
        }
        hasher.AddString(absl::StrCat(a->cost.boundary.call_ns, "/", a->cost.boundary.element_ns));
      }
    }
  }
  hasher.AddString("ged");
  hasher.AddString(GED_VERSION_STRING);
  hasher.AddInt(runtime::kGemFormatVersion);
  hasher.AddString("build");
  for (const auto& [library, id] : CompilerBuildIdentity()) {
    hasher.AddString(library);
    hasher.AddString(id);
  }
  hasher.AddString("cpu");
  for (const std::string& feature : runtime::HostCpuFeatures()) hasher.AddString(feature);
  hasher.AddString("namespace");
  hasher.AddString(context.cache_namespace);
}

}  // namespace

bool IsOptionIgnoredByCacheKey(std::string_view key) {
  return key == "ge.dump_graph" || key == "ge.dump_path" || key == "ge.graph_compiler_cache_dir" ||
         key == "ge.graph_key" || key == "ge.verify_each_step" || key == "ge.exec.inter_op_parallelism" ||
         key == "ge.exec.output_cache_idle_trim_ms";
}

std::string TenantNamespace(std::string_view tenant) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string ns = "t-";
  for (unsigned char c : tenant) {
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-') {
      ns.push_back(static_cast<char>(c));
    } else {
      ns.push_back('%');
      ns.push_back(kHex[c >> 4]);
      ns.push_back(kHex[c & 15]);
    }
  }
  return ns;
}

bool IsValidNamespace(std::string_view ns) {
  if (ns.empty() || ns.size() > 200) return false;
  return std::all_of(ns.begin(), ns.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-' ||
           c == '%';
  });
}

bool IsCacheKey(std::string_view key) {
  if (key.size() != 64) return false;
  return std::all_of(key.begin(), key.end(), [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

absl::StatusOr<Sha256Digest> GraphDigest(const ir::Graph& graph, ThreadPool* pool) {
  std::vector<Sha256Digest> subgraphs;
  for (const ir::Graph* sub : graph.subgraphs()) {
    GE_ASSIGN_OR_RETURN(Sha256Digest d, DigestOfGraph(*sub, pool));
    subgraphs.push_back(d);
  }
  std::sort(subgraphs.begin(), subgraphs.end());
  GE_ASSIGN_OR_RETURN(Sha256Digest root, DigestOfGraph(graph, pool));
  Sha256Hasher hasher;
  hasher.AddString("root");
  hasher.AddDigest(root);
  hasher.AddInt(static_cast<int64_t>(subgraphs.size()));
  for (const Sha256Digest& d : subgraphs) hasher.AddDigest(d);
  return hasher.Finish();
}

std::string CacheKeyOfDigest(const Sha256Digest& digest, const OptionMap& options, const KeyContext& context) {
  Sha256Hasher hasher;
  hasher.AddString(kKeyVersion);
  hasher.AddDigest(digest);
  HashContext(options, context, hasher);
  return ToHex(hasher.Finish());
}

absl::StatusOr<std::string> ComputeCacheKey(const ir::Graph& graph, const OptionMap& options,
                                            const KeyContext& context) {
  GE_ASSIGN_OR_RETURN(Sha256Digest digest, GraphDigest(graph, context.pool));
  return CacheKeyOfDigest(digest, options, context);
}

std::string UserCacheKey(std::string_view graph_key, const OptionMap& options, const KeyContext& context) {
  Sha256Hasher hasher;
  hasher.AddString(StrCat(kKeyVersion, ", user key"));
  hasher.AddString(graph_key);
  HashContext(options, context, hasher);
  return ToHex(hasher.Finish());
}

std::string DirectCacheKey(const DirectSource& source, const OptionMap& options, const KeyContext& context) {
  Sha256Hasher hasher;
  hasher.AddString(StrCat(kKeyVersion, ", direct"));
  hasher.AddString(source.format);
  hasher.AddString(source.provenance);
  hasher.AddString(source.checks);
  hasher.AddString(source.origin);
  hasher.AddDigest(source.bytes);
  // The importer and the ingestion checks decide what the bytes become.
  hasher.AddString("ingestion build");
  for (const auto& [library, id] : IngestionBuildIdentity()) {
    hasher.AddString(library);
    hasher.AddString(id);
  }
  HashContext(options, context, hasher);
  return ToHex(hasher.Finish());
}

}  // namespace ge::cache
