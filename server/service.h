// GraphEngineService: the ge.v1.GraphEngine gRPC service on grpc++'s
// callback API (no thread per request).
//
// Cheap RPCs (sessions, listing, status) are answered on the gRPC thread
// that delivered them. AddGraph, CompileGraph, RunGraph, ExecuteOp and
// stream runs go to the session's device run queue (RESOURCE_EXHAUSTED when
// full); their deadline is checked when they leave the queue, before any
// work. Every call authenticates its tenant first, is refused with
// UNAVAILABLE while the daemon drains, and is counted in the metrics.
// absl::Status turns into grpc::Status only here; messages name the session,
// graph and input.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "ge/v1/service.grpc.pb.h"
#include "server/bounds.h"
#include "server/config.h"
#include "server/metrics.h"
#include "server/run_queue.h"
#include "server/op_cache.h"
#include "server/session_manager.h"
#include "server/shared_memory.h"
#include "server/tenants.h"
#include "session/runtime.h"

namespace ge::server {

// A device of the daemon: the runtime's device `index` (its intra-op pool
// and memory: capacity memory_bytes; sessions allocate through their
// tenant's quota over it) and the daemon's run queue in front of it.
struct Device {
  std::string name;
  int threads = 1;
  int index = 0;
  std::unique_ptr<RunQueue> queue;
};

// What the service works with; owned by the Daemon.
struct ServiceContext {
  const ServerConfig* config = nullptr;
  // Engines, the compiled-model cache, the devices and the ingestion path.
  const session::Runtime* runtime = nullptr;
  TenantRegistry* tenants = nullptr;
  SessionManager* sessions = nullptr;
  std::vector<Device>* devices = nullptr;
  ServerMetrics* metrics = nullptr;
  OpCache* op_cache = nullptr;     // ExecuteOp's compiled ops
  SharedMemoryRegistry* shared_memory = nullptr;  // null: shared-memory I/O is off
  ThreadBudget* thread_budget = nullptr;          // max_inter_op_threads; null: unbounded
  std::atomic<bool> draining{false};
  std::atomic<int64_t> inflight{0};  // calls and streams not yet finished
  std::atomic<int64_t> calls_total{0};  // calls and streams admitted or refused, ever
  int64_t start_ns = 0;
};

class GraphEngineService final : public v1::GraphEngine::CallbackService {
 public:
  explicit GraphEngineService(ServiceContext& context) : ctx_(context) {}

  grpc::ServerUnaryReactor* CreateSession(grpc::CallbackServerContext* call, const v1::CreateSessionRequest* request,
                                          v1::CreateSessionResponse* response) override;
  grpc::ServerUnaryReactor* DestroySession(grpc::CallbackServerContext* call, const v1::DestroySessionRequest* request,
                                           v1::DestroySessionResponse* response) override;
  grpc::ServerUnaryReactor* AddGraph(grpc::CallbackServerContext* call, const v1::AddGraphRequest* request,
                                     v1::AddGraphResponse* response) override;
  grpc::ServerUnaryReactor* RemoveGraph(grpc::CallbackServerContext* call, const v1::RemoveGraphRequest* request,
                                        v1::RemoveGraphResponse* response) override;
  grpc::ServerUnaryReactor* CompileGraph(grpc::CallbackServerContext* call, const v1::CompileGraphRequest* request,
                                         v1::CompileGraphResponse* response) override;
  grpc::ServerUnaryReactor* RunGraph(grpc::CallbackServerContext* call, const v1::RunGraphRequest* request,
                                     v1::RunGraphResponse* response) override;
  grpc::ServerBidiReactor<v1::RunGraphRequest, v1::RunGraphResponse>* RunGraphStream(
      grpc::CallbackServerContext* call) override;
  grpc::ServerUnaryReactor* ListSessions(grpc::CallbackServerContext* call, const v1::ListSessionsRequest* request,
                                         v1::ListSessionsResponse* response) override;
  grpc::ServerUnaryReactor* GetStatus(grpc::CallbackServerContext* call, const v1::GetStatusRequest* request,
                                      v1::GetStatusResponse* response) override;
  grpc::ServerUnaryReactor* ExecuteOp(grpc::CallbackServerContext* call, const v1::ExecuteOpRequest* request,
                                      v1::ExecuteOpResponse* response) override;
  grpc::ServerUnaryReactor* LoadModel(grpc::CallbackServerContext* call, const v1::LoadModelRequest* request,
                                      v1::LoadModelResponse* response) override;
  grpc::ServerUnaryReactor* UnloadModel(grpc::CallbackServerContext* call, const v1::UnloadModelRequest* request,
                                        v1::UnloadModelResponse* response) override;
  grpc::ServerUnaryReactor* ExecuteModel(grpc::CallbackServerContext* call, const v1::ExecuteModelRequest* request,
                                         v1::ExecuteModelResponse* response) override;
  grpc::ServerUnaryReactor* GetVariable(grpc::CallbackServerContext* call, const v1::GetVariableRequest* request,
                                        v1::GetVariableResponse* response) override;
  grpc::ServerUnaryReactor* SetVariable(grpc::CallbackServerContext* call, const v1::SetVariableRequest* request,
                                        v1::SetVariableResponse* response) override;
  grpc::ServerUnaryReactor* RegisterSharedMemory(grpc::CallbackServerContext* call,
                                                 const v1::RegisterSharedMemoryRequest* request,
                                                 v1::RegisterSharedMemoryResponse* response) override;
  grpc::ServerUnaryReactor* UnregisterSharedMemory(grpc::CallbackServerContext* call,
                                                   const v1::UnregisterSharedMemoryRequest* request,
                                                   v1::UnregisterSharedMemoryResponse* response) override;
  grpc::ServerUnaryReactor* SharedMemoryStatus(grpc::CallbackServerContext* call,
                                               const v1::SharedMemoryStatusRequest* request,
                                               v1::SharedMemoryStatusResponse* response) override;

 private:
  ServiceContext& ctx_;
};

// Decodes `inputs`, runs graph `graph_id` of the session and encodes its
// outputs; `where` prefixes errors (`model`, the graph's name, is no metric
// label: the run-duration metric is labelled by tenant). Inputs may come
// from the tenant's shared-memory regions (copied in under a fault guard);
// outputs named in `output_shared_memory` are written there, except
// one that is not a numeric tensor or does not fit, which comes back in the
// message. `call` (may be null) stops the run between nodes and tasks once
// the client cancels or the call's deadline passes.
absl::Status RunSessionGraph(ServiceContext& ctx, ManagedSession& session, uint32_t graph_id, const std::string& where,
                             const std::string& model, const google::protobuf::RepeatedPtrField<v1::Value>& inputs,
                             const google::protobuf::Map<uint32_t, v1::SharedMemoryRef>& output_shared_memory,
                             google::protobuf::RepeatedPtrField<v1::Value>* outputs,
                             grpc::CallbackServerContext* call);

// Shared by the unary and the stream forms of RunGraph (server/run_graph.cc):
// decodes the inputs, runs, encodes the outputs; errors name the session,
// graph and input.
absl::Status ExecuteRun(ServiceContext& ctx, ManagedSession& session, const v1::RunGraphRequest& request,
                        v1::RunGraphResponse* response, grpc::CallbackServerContext* call);

// Takes one of the session's max_graphs_per_session slots (graphs, loaded
// models, and additions in progress), or RESOURCE_EXHAUSTED naming the key;
// ReleaseGraphSlot gives it back once the graph is in s.graphs / s.models
// or the call failed.
absl::Status ReserveGraphSlot(const ServerConfig& config, ManagedSession& s, const std::string& where);
void ReleaseGraphSlot(ManagedSession& s);

// Admission for one call: not draining, a known tenant. `authorization`
// holds every authorization value the call carries (gRPC metadata entries,
// HTTP headers): more than one names no one tenant.
absl::StatusOr<Tenant*> AdmitCaller(ServiceContext& ctx, const std::vector<std::string_view>& authorization);
absl::StatusOr<Tenant*> AdmitCall(ServiceContext& ctx, const grpc::CallbackServerContext& call);

// The prologue of every call and stream, whatever its transport: the call
// is counted (ctx.calls_total, and ctx.inflight until FinishCall) and
// admitted. Every call that begins this way ends with FinishCall.
struct CallStart {
  int64_t start_ns = 0;
  absl::StatusOr<Tenant*> tenant;
  Tenant* caller() const { return tenant.ok() ? *tenant : nullptr; }
};
CallStart BeginCall(ServiceContext& ctx, const grpc::CallbackServerContext& call);
CallStart BeginCall(ServiceContext& ctx, const std::vector<std::string_view>& authorization);

// One of the tenant's max_concurrent_runs slots, or RESOURCE_EXHAUSTED
// naming the key; ReleaseRunSlot gives it back when the run is over.
absl::Status TakeRunSlot(Tenant& tenant);
inline void ReleaseRunSlot(Tenant& tenant) { tenant.running.fetch_sub(1); }
// Records the call's metrics, an audit line when it was refused (with the
// tenant when known), and leaves ctx.inflight.
void FinishCall(ServiceContext& ctx, const char* rpc, int64_t start_ns, const absl::Status& status,
                const Tenant* tenant = nullptr);

}  // namespace ge::server
