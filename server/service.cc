// GraphEngineService: admission, the run-queue hand-off, and each unary RPC.
#include "server/service.h"

#include <chrono>
#include <cstring>
#include <map>
#include <optional>

#include "absl/cleanup/cleanup.h"

#include "base/ir/op_types.h"
#include "base/ir/proto_convert.h"
#include "base/logging.h"
#include "base/sha256.h"
#include "base/status.h"
#include "base/version.h"
#include "proto/value_convert.h"
#include "server/grpc_status.h"
#include "server/models.h"

namespace ge::server {
namespace {

constexpr char kSharedMemoryOff[] =
    "shared-memory I/O is off on this daemon (start ged with --shared-memory, or shared_memory: true)";

OptionMap ToOptionMap(const v1::Options& options) {
  OptionMap out;
  for (const auto& [key, value] : options.entries()) out[key] = value;
  return out;
}

std::string GraphLabel(const std::string& session_id, uint32_t graph_id) {
  return StrCat("session ", session_id, " graph ", graph_id);
}

void FillIo(const session::GraphInfo& info, google::protobuf::RepeatedPtrField<v1::GraphIoInfo>* inputs,
            google::protobuf::RepeatedPtrField<v1::GraphIoInfo>* outputs) {
  for (const auto& io : info.inputs) {
    v1::GraphIoInfo* p = inputs->Add();
    p->set_name(io.name);
    ir::ValueTypeToProto(io.type, p->mutable_type());
  }
  for (const auto& io : info.outputs) {
    v1::GraphIoInfo* p = outputs->Add();
    p->set_name(io.name);
    ir::ValueTypeToProto(io.type, p->mutable_type());
  }
}

// DEADLINE_EXCEEDED or CANCELLED once the client has given up on `call`.
absl::Status CheckStillWanted(const grpc::CallbackServerContext& call, std::string_view what) {
  if (call.deadline() <= std::chrono::system_clock::now()) {
    return DeadlineExceeded(what, ": the deadline passed while the call waited in the run queue");
  }
  if (const_cast<grpc::CallbackServerContext&>(call).IsCancelled()) {
    return absl::CancelledError(StrCat(what, ": the client cancelled the call"));
  }
  return absl::OkStatus();
}

// Answers a call on the calling gRPC thread.
template <typename Body>
grpc::ServerUnaryReactor* Inline(ServiceContext& ctx, grpc::CallbackServerContext* call, const char* rpc, Body body) {
  grpc::ServerUnaryReactor* reactor = call->DefaultReactor();
  const CallStart begun = BeginCall(ctx, *call);
  const absl::Status status = begun.tenant.ok() ? body(*begun.tenant) : begun.tenant.status();
  FinishCall(ctx, rpc, begun.start_ns, status, begun.caller());
  reactor->Finish(ToGrpcStatus(status));
  return reactor;
}

// Runs `body(tenant, session)` on the session's device run queue.
// `is_run` calls count against the tenant's concurrent-run quota.
template <typename Body>
grpc::ServerUnaryReactor* Queued(ServiceContext& ctx, grpc::CallbackServerContext* call, const char* rpc,
                                 const std::string& session_id, bool is_run, Body body) {
  grpc::ServerUnaryReactor* reactor = call->DefaultReactor();
  const CallStart begun = BeginCall(ctx, *call);
  const int64_t start = begun.start_ns;
  const Tenant* caller = begun.caller();
  auto finish = [&ctx, reactor, rpc, start, caller](const absl::Status& s) {
    FinishCall(ctx, rpc, start, s, caller);
    reactor->Finish(ToGrpcStatus(s));
  };
  if (!begun.tenant.ok()) return finish(begun.tenant.status()), reactor;
  Tenant* t = *begun.tenant;
  absl::StatusOr<std::shared_ptr<ManagedSession>> session = ctx.sessions->Get(t, session_id);
  if (!session.ok()) return finish(session.status()), reactor;
  if (is_run) {
    if (absl::Status slot = TakeRunSlot(*t); !slot.ok()) return finish(slot), reactor;
  }
  std::shared_ptr<ManagedSession> s = *session;
  s->active_calls.fetch_add(1);
  auto release = [t, s, is_run] {
    if (is_run) ReleaseRunSlot(*t);
    s->active_calls.fetch_sub(1);
  };
  Device& device = (*ctx.devices)[s->device];
  const int64_t queued_at = SteadyNowNs();
  absl::Status submitted = SubmitForTenant(
      *t, *device.queue, [&ctx, call, &device, s, t, queued_at, body, finish, release, rpc, session_id]() {
        ctx.metrics->queue_duration.WithLabels({device.name}).Observe((SteadyNowNs() - queued_at) * 1e-9);
        absl::Status status = CheckStillWanted(*call, StrCat(rpc, " in session ", session_id));
        if (status.ok()) status = body(t, *s);
        release();
        finish(status);
      });
  if (!submitted.ok()) {
    release();
    finish(submitted);
  }
  return reactor;
}

// Takes the inter-op threads a graph added with `options` will start from
// the daemon's max_inter_op_threads budget; returns how many.
absl::StatusOr<int64_t> ReserveInterOpThreads(ServiceContext& ctx, const ManagedSession& s, const OptionMap& options,
                                              const std::string& where) {
  const int64_t threads = InterOpThreads(s.options, options);
  if (ctx.thread_budget == nullptr) return int64_t{0};
  GE_RETURN_IF_ERROR(ctx.thread_budget->Reserve(threads, where));
  return threads;
}

}  // namespace

// Takes one of the session's max_graphs_per_session slots (graphs, loaded
// models, and additions in progress).
absl::Status ReserveGraphSlot(const ServerConfig& config, ManagedSession& s, const std::string& where) {
  std::lock_guard<std::mutex> lock(s.mu);
  const int64_t held = static_cast<int64_t>(s.graphs.size() + s.models.size()) + s.pending_graphs;
  if (held >= config.max_graphs_per_session) {
    return ResourceExhausted(where, ": session ", s.id, " already holds ", held,
                             " graphs and models, max_graphs_per_session (", config.max_graphs_per_session,
                             "); remove one first");
  }
  ++s.pending_graphs;
  return absl::OkStatus();
}

// Gives the slot back (the graph is in s.graphs now, or the call failed).
void ReleaseGraphSlot(ManagedSession& s) {
  std::lock_guard<std::mutex> lock(s.mu);
  --s.pending_graphs;
}

absl::StatusOr<Tenant*> AdmitCaller(ServiceContext& ctx, const std::vector<std::string_view>& authorization) {
  if (ctx.draining.load()) return Unavailable("ged is shutting down and accepts no new calls");
  // Two tokens name no one tenant: which one counts would be a guess.
  if (!ctx.tenants->open() && authorization.size() > 1) {
    return absl::UnauthenticatedError("the call carries more than one authorization entry; send one bearer token");
  }
  return ctx.tenants->Authenticate(authorization.empty() ? std::string_view() : authorization.front());
}

absl::StatusOr<Tenant*> AdmitCall(ServiceContext& ctx, const grpc::CallbackServerContext& call) {
  std::vector<std::string_view> authorization;
  const auto [first, last] = call.client_metadata().equal_range("authorization");
  for (auto it = first; it != last; ++it) authorization.emplace_back(it->second.data(), it->second.size());
  return AdmitCaller(ctx, authorization);
}

CallStart BeginCall(ServiceContext& ctx, const grpc::CallbackServerContext& call) {
  CallStart start{SteadyNowNs(), absl::UnknownError("")};
  ctx.inflight.fetch_add(1);
  ctx.calls_total.fetch_add(1);
  start.tenant = AdmitCall(ctx, call);
  return start;
}

CallStart BeginCall(ServiceContext& ctx, const std::vector<std::string_view>& authorization) {
  CallStart start{SteadyNowNs(), absl::UnknownError("")};
  ctx.inflight.fetch_add(1);
  ctx.calls_total.fetch_add(1);
  start.tenant = AdmitCaller(ctx, authorization);
  return start;
}

absl::Status TakeRunSlot(Tenant& t) {
  if (t.running.fetch_add(1) < t.max_concurrent_runs) return absl::OkStatus();
  t.running.fetch_sub(1);
  return ResourceExhausted("tenant ", t.name, " already has ", t.max_concurrent_runs,
                           " runs in flight (its quota, max_concurrent_runs); retry when one finishes");
}

void FinishCall(ServiceContext& ctx, const char* rpc, int64_t start_ns, const absl::Status& status,
                const Tenant* tenant) {
  const std::string code = absl::StatusCodeToString(status.code());
  if (!status.ok()) AuditRefusal(tenant != nullptr ? std::string_view(tenant->name) : std::string_view(), rpc, status);
  ctx.metrics->requests_total.WithLabels({rpc, code}).Increment();
  ctx.metrics->request_duration.WithLabels({rpc}).Observe((SteadyNowNs() - start_ns) * 1e-9);
  if (!status.ok()) Logger("server").debug("{} failed: {}", rpc, status.message());
  ctx.inflight.fetch_sub(1);
}

grpc::ServerUnaryReactor* GraphEngineService::CreateSession(grpc::CallbackServerContext* call,
                                                            const v1::CreateSessionRequest* request,
                                                            v1::CreateSessionResponse* response) {
  return Inline(ctx_, call, "CreateSession", [&](Tenant* tenant) -> absl::Status {
    const OptionMap options = ToOptionMap(request->options());
    GE_RETURN_IF_ERROR(ValidateOptions(options));
    GE_RETURN_IF_ERROR(session::CheckClientOptions(options, "CreateSession"));
    GE_ASSIGN_OR_RETURN(std::shared_ptr<ManagedSession> s, ctx_.sessions->Create(tenant, options));
    response->set_session_id(s->id);
    return absl::OkStatus();
  });
}

grpc::ServerUnaryReactor* GraphEngineService::DestroySession(grpc::CallbackServerContext* call,
                                                             const v1::DestroySessionRequest* request,
                                                             v1::DestroySessionResponse*) {
  return Inline(ctx_, call, "DestroySession",
                [&](Tenant* tenant) { return ctx_.sessions->Destroy(tenant, request->session_id()); });
}

grpc::ServerUnaryReactor* GraphEngineService::AddGraph(grpc::CallbackServerContext* call,
                                                       const v1::AddGraphRequest* request,
                                                       v1::AddGraphResponse* response) {
  ServiceContext& ctx = ctx_;
  return Queued(
      ctx_, call, "AddGraph", request->session_id(), /*is_run=*/false,
      [&ctx, request, response](Tenant*, ManagedSession& s) -> absl::Status {
        const std::string where = GraphLabel(s.id, request->graph_id());
        GE_RETURN_IF_ERROR(CheckGraphId(s.id, request->graph_id()));
        // A graph slot, held until the graph is in s.graphs or the call failed,
        // so concurrent AddGraphs cannot pass max_graphs_per_session together.
        GE_RETURN_IF_ERROR(ReserveGraphSlot(*ctx.config, s, where));
        absl::Cleanup release_slot = [&s] { ReleaseGraphSlot(s); };
        // The one ingestion path, as client input (session/runtime.h).
        session::IngestOptions ingest;
        ingest.provenance = session::Provenance::kClient;
        ingest.options = ToOptionMap(request->options());
        ingest.label = where;
        {
          std::lock_guard<std::mutex> lock(s.mu);
          if (s.graphs.count(request->graph_id()) != 0) return AlreadyExists(where, " already exists");
        }
        std::unique_ptr<ir::Graph> graph;
        std::optional<session::GraphSource> source;
        absl::Status import_error;  // the ingestion's own (labelled) refusal
        bool bytes_needed = false;  // a digest without a cached model
        if (request->has_graph_def()) {
          GE_RETURN_IF_ERROR(CheckGraphDefNodes(request->graph_def(), ctx.config->max_graph_nodes, where));
          GE_ASSIGN_OR_RETURN(session::IngestedModel ingested,
                              ctx.runtime->AddModel(session::ModelSource::GraphDef(request->graph_def()), ingest));
          graph = std::move(ingested.graph);
          GE_RETURN_IF_ERROR(CheckGraphNodes(*graph, ctx.config->max_graph_nodes, where));
        } else if (request->model_case() == v1::AddGraphRequest::kOnnxModel) {
          // Direct mode: the session looks the bytes up in the cache
          // and imports them (with every check above) only on a miss.
          // The node bound is one of the checks the entry was made
          // under, so it is part of its key.
          const int64_t max_nodes = ctx.config->max_graph_nodes;
          GE_ASSIGN_OR_RETURN(source, ctx.runtime->DirectSource(session::ModelSource::OnnxBytes(request->onnx_model()),
                                                                ingest, StrCat("max_graph_nodes=", max_nodes),
                                                                [max_nodes, where](const ir::Graph& g) {
                                                                  return CheckGraphNodes(g, max_nodes, where);
                                                                }));
          source->import = [inner = std::move(source->import), &import_error]() {
            absl::StatusOr<session::ImportedGraph> imported = inner();
            if (!imported.ok()) import_error = imported.status();
            return imported;
          };
        } else if (request->model_case() == v1::AddGraphRequest::kOnnxModelDigest) {
          // The model by its digest (the same one direct mode keys the bytes
          // by): added from the cache when the caller's namespace holds it,
          // else nothing is added and the client sends the bytes.
          const std::string& sent = request->onnx_model_digest();
          Sha256Digest digest{};
          if (sent.size() != digest.size()) {
            return InvalidArgument(where, ": onnx_model_digest must be the ", digest.size(),
                                   " bytes of a SHA-256 digest (docs/api.md), not ", sent.size());
          }
          std::memcpy(digest.data(), sent.data(), digest.size());
          GE_ASSIGN_OR_RETURN(source,
                              ctx.runtime->DirectSource(session::ModelSource::OnnxBytes(std::string_view()), ingest,
                                                        StrCat("max_graph_nodes=", ctx.config->max_graph_nodes)));
          source->digest = digest;
          source->import = [&bytes_needed]() -> absl::StatusOr<session::ImportedGraph> {
            bytes_needed = true;
            return FailedPrecondition("no compiled model of this digest is cached");
          };
        } else {
          return InvalidArgument(where,
                                 ": the request carries no model (set graph_def, onnx_model or onnx_model_digest)");
        }
        GE_ASSIGN_OR_RETURN(const int64_t threads,
                            ReserveInterOpThreads(ctx, s, ToOptionMap(request->options()), where));
        absl::Status added =
            source ? s.session->AddGraph(request->graph_id(), *source, ToOptionMap(request->options()))
                   : s.session->AddGraph(request->graph_id(), std::move(graph), ToOptionMap(request->options()));
        if (!added.ok()) {
          if (threads > 0) ctx.thread_budget->Release(threads);
          if (bytes_needed) {
            response->set_bytes_needed(true);
            return absl::OkStatus();
          }
          return import_error.ok() ? Annotate(added, where) : added;
        }
        GE_ASSIGN_OR_RETURN(session::GraphInfo info, s.session->GetGraphInfo(request->graph_id()));
        {
          std::lock_guard<std::mutex> lock(s.mu);
          const std::string& name = info.graph_name;
          s.graphs[request->graph_id()] = name.empty() ? StrCat("graph", request->graph_id()) : name;
          if (threads > 0) {
            s.thread_budget = ctx.thread_budget;
            s.inter_op_threads[request->graph_id()] = threads;
          }
        }
        FillIo(info, response->mutable_inputs(), response->mutable_outputs());
        return absl::OkStatus();
      });
}

grpc::ServerUnaryReactor* GraphEngineService::RemoveGraph(grpc::CallbackServerContext* call,
                                                          const v1::RemoveGraphRequest* request,
                                                          v1::RemoveGraphResponse*) {
  return Inline(ctx_, call, "RemoveGraph", [&](Tenant* tenant) -> absl::Status {
    GE_ASSIGN_OR_RETURN(std::shared_ptr<ManagedSession> s, ctx_.sessions->Get(tenant, request->session_id()));
    GE_RETURN_IF_ERROR(CheckGraphId(s->id, request->graph_id()));
    GE_RETURN_IF_ERROR(Annotate(s->session->RemoveGraph(request->graph_id()),
                                GraphLabel(s->id, request->graph_id())));
    std::lock_guard<std::mutex> lock(s->mu);
    s->graphs.erase(request->graph_id());
    if (auto it = s->inter_op_threads.find(request->graph_id()); it != s->inter_op_threads.end()) {
      if (s->thread_budget != nullptr) s->thread_budget->Release(it->second);
      s->inter_op_threads.erase(it);
    }
    return absl::OkStatus();
  });
}

grpc::ServerUnaryReactor* GraphEngineService::CompileGraph(grpc::CallbackServerContext* call,
                                                           const v1::CompileGraphRequest* request,
                                                           v1::CompileGraphResponse* response) {
  ServiceContext& ctx = ctx_;
  return Queued(ctx_, call, "CompileGraph", request->session_id(), /*is_run=*/false,
                [&ctx, request, response](Tenant*, ManagedSession& s) -> absl::Status {
    const std::string where = GraphLabel(s.id, request->graph_id());
    GE_RETURN_IF_ERROR(CheckGraphId(s.id, request->graph_id()));
    const int64_t start = SteadyNowNs();
    GE_RETURN_IF_ERROR(Annotate(
        s.session->CompileGraph(request->graph_id(), ctx.config->compile_timeout_seconds, "compile_timeout_seconds"),
        where));
    const double seconds = (SteadyNowNs() - start) * 1e-9;
    ctx.metrics->compile_duration.Get().Observe(seconds);
    response->set_compile_seconds(seconds);
    GE_ASSIGN_OR_RETURN(session::CacheUse cache_use, s.session->GetCacheUse(request->graph_id()));
    response->set_cache_key(cache_use.key);
    response->set_cache_hit(cache_use.hit);
    GE_ASSIGN_OR_RETURN(const compiler::CompiledGraph* compiled, s.session->GetCompiledGraph(request->graph_id()));
    v1::PartitionSummary* summary = response->mutable_summary();
    for (const ir::Node* node : compiled->graph->nodes()) {
      const std::string engine = node->op_desc().GetAttrOr<std::string>(ir::kAttrEngineName, "unplaced");
      (*summary->mutable_nodes_per_engine())[engine] += 1;
      summary->set_node_count(summary->node_count() + 1);
    }
    GE_ASSIGN_OR_RETURN(session::GraphInfo info, s.session->GetGraphInfo(request->graph_id()));
    FillIo(info, response->mutable_inputs(), response->mutable_outputs());
    if (request->return_model()) {
      absl::StatusOr<std::string> exported = s.session->ExportCompiledModel(request->graph_id());
      if (!exported.ok()) return Annotate(exported.status(), where);
      std::string gem = *std::move(exported);
      if (gem.size() > static_cast<size_t>(ctx.config->max_message_bytes)) {
        return ResourceExhausted(where, ": the compiled model takes ", gem.size(),
                                 " bytes, more than max_message_bytes (", ctx.config->max_message_bytes, ")");
      }
      response->set_model(std::move(gem));
    }
    return absl::OkStatus();
  });
}

grpc::ServerUnaryReactor* GraphEngineService::RunGraph(grpc::CallbackServerContext* call,
                                                       const v1::RunGraphRequest* request,
                                                       v1::RunGraphResponse* response) {
  ServiceContext& ctx = ctx_;
  return Queued(ctx_, call, "RunGraph", request->session_id(), /*is_run=*/true,
                [&ctx, call, request, response](Tenant*, ManagedSession& s) {
                  return ExecuteRun(ctx, s, *request, response, call);
                });
}

grpc::ServerUnaryReactor* GraphEngineService::ListSessions(grpc::CallbackServerContext* call,
                                                           const v1::ListSessionsRequest*,
                                                           v1::ListSessionsResponse* response) {
  return Inline(ctx_, call, "ListSessions", [&](Tenant* tenant) {
    const int64_t now = SteadyNowNs();
    for (const auto& s : ctx_.sessions->List(tenant)) {
      v1::SessionInfo* info = response->add_sessions();
      info->set_session_id(s->id);
      info->set_tenant(s->tenant->name);
      info->set_idle_seconds((now - s->last_used_ns.load()) * 1e-9);
      std::lock_guard<std::mutex> lock(s->mu);
      for (const auto& [id, name] : s->graphs) info->add_graph_ids(id);
    }
    return absl::OkStatus();
  });
}

grpc::ServerUnaryReactor* GraphEngineService::GetStatus(grpc::CallbackServerContext* call,
                                                        const v1::GetStatusRequest*, v1::GetStatusResponse* response) {
  return Inline(ctx_, call, "GetStatus", [&](Tenant* tenant) {
    response->set_version(GED_VERSION_STRING);
    response->set_uptime_seconds((SteadyNowNs() - ctx_.start_ns) * 1e-9);
    response->set_sessions(static_cast<int64_t>(ctx_.sessions->List(tenant).size()));  // the caller's only
    response->set_draining(ctx_.draining.load());
    response->set_shared_memory(ctx_.shared_memory != nullptr);
    for (const Device& d : *ctx_.devices) {
      v1::DeviceStatus* status = response->add_devices();
      status->set_name(d.name);
      status->set_threads(d.threads);
      status->set_queue_capacity(d.queue->capacity());
      status->set_queued(d.queue->queued());
      status->set_running(d.queue->running());
    }
    for (const std::string& name : ctx_.runtime->engines().Names()) response->add_engines(name);
    return absl::OkStatus();
  });
}

grpc::ServerUnaryReactor* GraphEngineService::LoadModel(grpc::CallbackServerContext* call,
                                                        const v1::LoadModelRequest* request,
                                                        v1::LoadModelResponse* response) {
  ServiceContext& ctx = ctx_;
  return Queued(ctx_, call, "LoadModel", request->session_id(), /*is_run=*/false,
                [&ctx, request, response](Tenant*, ManagedSession& s) {
                  return LoadModelIntoSession(ctx, s, *request, response);
                });
}

grpc::ServerUnaryReactor* GraphEngineService::UnloadModel(grpc::CallbackServerContext* call,
                                                          const v1::UnloadModelRequest* request,
                                                          v1::UnloadModelResponse*) {
  return Inline(ctx_, call, "UnloadModel", [&](Tenant* tenant) -> absl::Status {
    GE_ASSIGN_OR_RETURN(std::shared_ptr<ManagedSession> s, ctx_.sessions->Get(tenant, request->session_id()));
    return UnloadModelFromSession(*s, request->model_id());
  });
}

grpc::ServerUnaryReactor* GraphEngineService::ExecuteModel(grpc::CallbackServerContext* call,
                                                           const v1::ExecuteModelRequest* request,
                                                           v1::ExecuteModelResponse* response) {
  ServiceContext& ctx = ctx_;
  return Queued(ctx_, call, "ExecuteModel", request->session_id(), /*is_run=*/true,
                [&ctx, call, request, response](Tenant*, ManagedSession& s) {
                  return ExecuteLoadedModel(ctx, s, *request, response, call);
                });
}

grpc::ServerUnaryReactor* GraphEngineService::RegisterSharedMemory(grpc::CallbackServerContext* call,
                                                                   const v1::RegisterSharedMemoryRequest* request,
                                                                   v1::RegisterSharedMemoryResponse*) {
  return Inline(ctx_, call, "RegisterSharedMemory", [&](Tenant* tenant) -> absl::Status {
    if (ctx_.shared_memory == nullptr) return FailedPrecondition("RegisterSharedMemory: ", kSharedMemoryOff);
    // Only a peer on the unix socket (mode 0600: ged's own uid) may have
    // ged map its memory; a TCP peer could be any user or host.
    if (call->peer().rfind("unix:", 0) != 0) {
      return PermissionDenied(
          "RegisterSharedMemory: shared memory is for clients on ged's unix socket "
          "(unix_socket; connect to unix:PATH), not ",
          call->peer());
    }
    SharedMemoryRegionInfo info;
    info.name = request->name();
    info.key = request->key();
    info.offset = request->offset();
    info.byte_size = request->byte_size();
    return ctx_.shared_memory->Register(tenant->name, info);
  });
}

grpc::ServerUnaryReactor* GraphEngineService::UnregisterSharedMemory(grpc::CallbackServerContext* call,
                                                                     const v1::UnregisterSharedMemoryRequest* request,
                                                                     v1::UnregisterSharedMemoryResponse*) {
  return Inline(ctx_, call, "UnregisterSharedMemory", [&](Tenant* tenant) -> absl::Status {
    if (ctx_.shared_memory == nullptr) return FailedPrecondition("UnregisterSharedMemory: ", kSharedMemoryOff);
    return ctx_.shared_memory->Unregister(tenant->name, request->name());
  });
}

grpc::ServerUnaryReactor* GraphEngineService::SharedMemoryStatus(grpc::CallbackServerContext* call,
                                                                 const v1::SharedMemoryStatusRequest* request,
                                                                 v1::SharedMemoryStatusResponse* response) {
  return Inline(ctx_, call, "SharedMemoryStatus", [&](Tenant* tenant) -> absl::Status {
    if (ctx_.shared_memory == nullptr) return FailedPrecondition("SharedMemoryStatus: ", kSharedMemoryOff);
    GE_ASSIGN_OR_RETURN(std::vector<SharedMemoryRegionInfo> regions,
                        ctx_.shared_memory->Status(tenant->name, request->name()));
    for (const SharedMemoryRegionInfo& r : regions) {
      v1::SharedMemoryRegion* out = response->add_regions();
      out->set_name(r.name);
      out->set_key(r.key);
      out->set_offset(r.offset);
      out->set_byte_size(r.byte_size);
    }
    return absl::OkStatus();
  });
}

// Variables are read and written through the session API (Session::
// GetVariable / SetVariable), answered inline: a copy of one tensor.
grpc::ServerUnaryReactor* GraphEngineService::GetVariable(grpc::CallbackServerContext* call,
                                                          const v1::GetVariableRequest* request,
                                                          v1::GetVariableResponse* response) {
  return Inline(ctx_, call, "GetVariable", [&](Tenant* tenant) -> absl::Status {
    GE_ASSIGN_OR_RETURN(std::shared_ptr<ManagedSession> s, ctx_.sessions->Get(tenant, request->session_id()));
    absl::StatusOr<Tensor> value = s->session->GetVariable(request->name());
    if (!value.ok()) return Annotate(value.status(), StrCat("session ", s->id));
    return rpc::ValueToProto(Value(*std::move(value)), response->mutable_value());
  });
}
grpc::ServerUnaryReactor* GraphEngineService::SetVariable(grpc::CallbackServerContext* call,
                                                          const v1::SetVariableRequest* request,
                                                          v1::SetVariableResponse*) {
  return Inline(ctx_, call, "SetVariable", [&](Tenant* tenant) -> absl::Status {
    GE_ASSIGN_OR_RETURN(std::shared_ptr<ManagedSession> s, ctx_.sessions->Get(tenant, request->session_id()));
    GE_ASSIGN_OR_RETURN(Value value, rpc::ValueFromProto(request->value(), StrCat("variable '", request->name(), "'")));
    if (!value.is_tensor()) return InvalidArgument("variable '", request->name(), "' takes a tensor");
    return Annotate(s->session->SetVariable(request->name(), value.tensor()), StrCat("session ", s->id));
  });
}

}  // namespace ge::server
