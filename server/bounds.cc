// Request bounds: size and count checks on request messages, the inter-op
// thread budget, per-tenant run-queue admission and refusal audit lines.
#include "server/bounds.h"

#include "absl/strings/numbers.h"
#include "base/logging.h"
#include "base/status.h"
#include "base/tensor.h"

namespace ge::server {
namespace {

// Bytes of one tensor message's contents as the daemon would hold them.
absl::StatusOr<uint64_t> TensorBytes(const v1::Tensor& t) {
  if (t.dtype() == v1::DT_STRING) {
    uint64_t bytes = 0;
    for (const std::string& s : t.string_data()) bytes += s.size() + sizeof(std::string);
    return bytes;
  }
  if (t.has_shared_memory()) return t.shared_memory().byte_size();
  Shape shape;
  for (int64_t d : t.dims()) {
    if (d < 0) return uint64_t{0};  // refused by the decoder with its own message
    shape.push_back(d);
  }
  absl::StatusOr<int64_t> count = shape.NumElements();
  if (!count.ok()) return InvalidArgument("shape ", shape.ToString(), " overflows int64");
  if (!IsValidDataType(t.dtype()) || t.dtype() == v1::DT_UNDEFINED) return uint64_t{0};  // the decoder's error
  absl::StatusOr<size_t> bytes = ByteSizeOf(static_cast<DataType>(t.dtype()), *count);
  if (!bytes.ok()) return InvalidArgument("shape ", shape.ToString(), ": ", bytes.status().message());
  return static_cast<uint64_t>(*bytes);
}

absl::Status CheckTensor(const v1::Tensor& t, int64_t max_tensor_bytes, std::string_view what) {
  absl::StatusOr<uint64_t> bytes = TensorBytes(t);
  if (!bytes.ok()) {
    // A shape whose element count or byte size overflows is malformed: the
    // decoder refuses it (INVALID_ARGUMENT naming the input) before it
    // allocates anything.
    if (bytes.status().code() == absl::StatusCode::kInvalidArgument) return absl::OkStatus();
    return ResourceExhausted(what, ": ", bytes.status().message(), ", beyond max_tensor_bytes (", max_tensor_bytes,
                             ")");
  }
  if (*bytes > static_cast<uint64_t>(max_tensor_bytes)) {
    return ResourceExhausted(what, ": a tensor of ", *bytes, " bytes, more than max_tensor_bytes (", max_tensor_bytes,
                             ")");
  }
  return absl::OkStatus();
}

int64_t CountGraphDefNodes(const v1::GraphDef& graph) {
  int64_t n = graph.nodes_size();
  for (const v1::GraphDef& sub : graph.subgraphs()) n += CountGraphDefNodes(sub);
  return n;
}

int64_t ParseParallelism(const OptionMap& options) {
  auto it = options.find("ge.exec.inter_op_parallelism");
  int64_t n = 0;
  if (it == options.end() || !absl::SimpleAtoi(it->second, &n)) return -1;
  return n;
}

}  // namespace

absl::Status CheckValueBounds(const google::protobuf::RepeatedPtrField<v1::Value>& values, int64_t max_tensor_bytes,
                              std::string_view where) {
  for (int i = 0; i < values.size(); ++i) {
    const v1::Value& v = values.Get(i);
    if (v.has_tensor()) {
      GE_RETURN_IF_ERROR(CheckTensor(v.tensor(), max_tensor_bytes, StrCat(where, ": input ", i)));
    } else if (v.has_sequence()) {
      uint64_t total = 0;
      for (int j = 0; j < v.sequence().tensors_size(); ++j) {
        const std::string what = StrCat(where, ": input ", i, " element ", j);
        GE_RETURN_IF_ERROR(CheckTensor(v.sequence().tensors(j), max_tensor_bytes, what));
        total += *TensorBytes(v.sequence().tensors(j));
        if (total > static_cast<uint64_t>(max_tensor_bytes)) {
          return ResourceExhausted(where, ": input ", i, ": a sequence of more than ", max_tensor_bytes,
                                   " bytes, beyond max_tensor_bytes");
        }
      }
    }
  }
  return absl::OkStatus();
}

absl::Status CheckOutputTypeBound(const ir::ValueType& type, int64_t max_tensor_bytes, std::string_view what) {
  if (!type.is_tensor() || type.dtype() == DataType::kString || !type.shape().IsFullyKnown()) {
    return absl::OkStatus();
  }
  absl::StatusOr<int64_t> count = type.shape().NumElements();
  absl::StatusOr<size_t> bytes = count.ok() ? ByteSizeOf(type.dtype(), *count) : absl::StatusOr<size_t>(count.status());
  if (!bytes.ok() || *bytes > static_cast<uint64_t>(max_tensor_bytes)) {
    return ResourceExhausted(what, ": an output of type ", type.ToString(), " is larger than max_tensor_bytes (",
                             max_tensor_bytes, ")");
  }
  return absl::OkStatus();
}

absl::Status CheckOutputCount(int64_t count, int64_t max_outputs, std::string_view where) {
  if (count > max_outputs) {
    return ResourceExhausted(where, ": asks for ", count, " outputs, more than max_outputs (", max_outputs, ")");
  }
  return absl::OkStatus();
}

absl::Status CheckGraphDefNodes(const v1::GraphDef& graph, int64_t max_graph_nodes, std::string_view where) {
  const int64_t n = CountGraphDefNodes(graph);
  if (n > max_graph_nodes) {
    return ResourceExhausted(where, ": the graph has ", n, " nodes, more than max_graph_nodes (", max_graph_nodes, ")");
  }
  return absl::OkStatus();
}

absl::Status CheckGraphNodes(const ir::Graph& graph, int64_t max_graph_nodes, std::string_view where) {
  int64_t n = static_cast<int64_t>(graph.num_nodes());
  for (const ir::Graph* sub : graph.subgraphs()) n += static_cast<int64_t>(sub->num_nodes());
  if (n > max_graph_nodes) {
    return ResourceExhausted(where, ": the graph has ", n, " nodes, more than max_graph_nodes (", max_graph_nodes, ")");
  }
  return absl::OkStatus();
}

int64_t InterOpThreads(const OptionMap& session_options, const OptionMap& graph_options) {
  int64_t n = ParseParallelism(graph_options);
  if (n < 0) n = ParseParallelism(session_options);
  return n > 1 ? n - 1 : 0;
}

absl::Status ThreadBudget::Reserve(int64_t threads, std::string_view where) {
  if (threads <= 0) return absl::OkStatus();
  const int64_t before = used_.fetch_add(threads);
  if (before + threads > limit_) {
    used_.fetch_sub(threads);
    return ResourceExhausted(where, ": ge.exec.inter_op_parallelism needs ", threads,
                             " more inter-op threads; the daemon runs ", before, " of max_inter_op_threads (", limit_,
                             ")");
  }
  return absl::OkStatus();
}

absl::Status SubmitForTenant(Tenant& tenant, RunQueue& queue, std::function<void()> task) {
  if (tenant.queued.fetch_add(1) >= tenant.max_queued_calls) {
    tenant.queued.fetch_sub(1);
    return ResourceExhausted("tenant ", tenant.name, " already has ", tenant.max_queued_calls,
                             " calls waiting in run queues (max_queued_calls); retry when they start");
  }
  absl::Status submitted = queue.Submit([&tenant, task = std::move(task)] {
    tenant.queued.fetch_sub(1);
    task();
  });
  if (!submitted.ok()) tenant.queued.fetch_sub(1);
  return submitted;
}

std::string_view RefusalClass(absl::StatusCode code) {
  switch (code) {
    case absl::StatusCode::kUnauthenticated: return "authentication";
    case absl::StatusCode::kPermissionDenied: return "cross-tenant";
    case absl::StatusCode::kResourceExhausted: return "bounds";
    case absl::StatusCode::kInvalidArgument: return "invalid-request";
    case absl::StatusCode::kOutOfRange: return "out-of-range";
    case absl::StatusCode::kDataLoss: return "hostile-model";
    default: return "";
  }
}

void AuditRefusal(std::string_view tenant, std::string_view rpc, const absl::Status& status) {
  const std::string_view cls = RefusalClass(status.code());
  if (cls.empty()) return;
  Logger("audit").warn("refused tenant={} rpc={} class={} code={}", tenant.empty() ? "-" : tenant, rpc, cls,
                       absl::StatusCodeToString(status.code()));
}

}  // namespace ge::server
