// Request bounds (issue 19 item 5; docs/security.md, "Bounds"): the checks
// that keep one request from making the daemon allocate without limit.
//
// Each check runs on the request as it arrived (the protobuf message), before
// the daemon decodes, imports or allocates what it describes, and each
// refusal is RESOURCE_EXHAUSTED naming the configuration key that bounds it
// (server/config.h), so an operator knows what to raise. Besides the checks:
// the daemon-wide budget of inter-op threads, per-tenant admission to the
// device run queues, and the audit line every refusal leaves.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "base/ir/graph.h"
#include "base/options.h"
#include "ge/v1/service.pb.h"
#include "server/run_queue.h"
#include "server/tenants.h"

namespace ge::server {

// Every tensor of `values` (sequences' elements too) at most
// `max_tensor_bytes` (element count x element size, overflow-checked;
// string tensors count their bytes).
absl::Status CheckValueBounds(const google::protobuf::RepeatedPtrField<v1::Value>& values, int64_t max_tensor_bytes,
                              std::string_view where);
// A static output type (known dtype and shape) at most max_tensor_bytes.
absl::Status CheckOutputTypeBound(const ir::ValueType& type, int64_t max_tensor_bytes, std::string_view what);
// `count` outputs at most max_outputs.
absl::Status CheckOutputCount(int64_t count, int64_t max_outputs, std::string_view where);
// Nodes of a GraphDef with its subgraphs, counted on the message.
absl::Status CheckGraphDefNodes(const v1::GraphDef& graph, int64_t max_graph_nodes, std::string_view where);
// Nodes of an imported graph with its subgraphs.
absl::Status CheckGraphNodes(const ir::Graph& graph, int64_t max_graph_nodes, std::string_view where);

// ge.exec.inter_op_parallelism of a graph added with `graph_options` to a
// session made with `session_options` (the graph's own wins): the extra
// threads its executor starts (parallelism - 1), 0 when unset or malformed
// (the session refuses malformed values itself).
int64_t InterOpThreads(const OptionMap& session_options, const OptionMap& graph_options);

// The daemon-wide budget of inter-op worker threads (max_inter_op_threads).
class ThreadBudget {
 public:
  explicit ThreadBudget(int64_t limit) : limit_(limit) {}
  // Takes `threads` or refuses with RESOURCE_EXHAUSTED naming the key.
  absl::Status Reserve(int64_t threads, std::string_view where);
  void Release(int64_t threads) { used_.fetch_sub(threads); }
  int64_t used() const { return used_.load(); }

 private:
  const int64_t limit_;
  std::atomic<int64_t> used_{0};
};

// Queues `task` on `queue` for `tenant`: RESOURCE_EXHAUSTED naming
// max_queued_calls when the tenant already has that many calls waiting in
// run queues (the device's own capacity is checked after). The tenant's count
// drops when the task leaves the queue.
absl::Status SubmitForTenant(Tenant& tenant, RunQueue& queue, std::function<void()> task);

// The attack class of a refusal (docs/security.md's table), empty for codes
// that are not refusals (OK, UNAVAILABLE while draining, INTERNAL, ...).
std::string_view RefusalClass(absl::StatusCode code);
// One audit line (logger "audit", warn) per refusal: tenant, RPC, class,
// code; never the request's bytes.
void AuditRefusal(std::string_view tenant, std::string_view rpc, const absl::Status& status);

}  // namespace ge::server
