// Loaded models for the service (GE's ModelManager: LoadModelOffline,
// ExecuteModel, UnloadModel): a compiled .gem sent by the client becomes a
// graph of the caller's session that is already compiled, so it runs on the
// same executors, device and variables as the session's own graphs.
//
// Model ids are the session's own (1, 2, ...); inside the Session each
// model occupies graph id kLoadedModelGraphIdBase + model id, a range that
// AddGraph refuses, so the two never collide.
#include "server/models.h"

#include "absl/cleanup/cleanup.h"
#include "base/ir/proto_convert.h"
#include "base/status.h"

namespace ge::server {
namespace {

std::string ModelLabel(const std::string& session_id, uint32_t model_id) {
  return StrCat("session ", session_id, " model ", model_id);
}

bool IsHexKey(std::string_view key) {
  if (key.size() != 64) return false;
  for (char c : key) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

}  // namespace

absl::Status CheckGraphId(const std::string& session_id, uint32_t graph_id) {
  if (graph_id >= kLoadedModelGraphIdBase) {
    return InvalidArgument("session ", session_id, " graph ", graph_id, ": graph ids at or above ",
                           kLoadedModelGraphIdBase, " are reserved for models loaded with LoadModel");
  }
  return absl::OkStatus();
}

absl::Status LoadModelIntoSession(ServiceContext& ctx, ManagedSession& s, const v1::LoadModelRequest& request,
                                  v1::LoadModelResponse* response) {
  const std::string where = StrCat("LoadModel in session ", s.id);
  GE_RETURN_IF_ERROR(ReserveGraphSlot(*ctx.config, s, where));
  absl::Cleanup release_slot = [&s] { ReleaseGraphSlot(s); };
  absl::StatusOr<runtime::CompiledModel> model;
  switch (request.source_case()) {
    case v1::LoadModelRequest::kGem: {
      if (request.gem().empty()) return InvalidArgument(where, ": the gem field is empty");
      // A client's .gem: checked as client input (session/ingest.h).
      session::IngestOptions ingest;
      ingest.provenance = session::Provenance::kClient;
      ingest.label = where;
      absl::StatusOr<session::IngestedModel> ingested =
          ctx.runtime->AddModel(session::ModelSource::GemBytes(request.gem()), ingest);
      if (!ingested.ok()) return Annotate(ingested.status(), where);
      model = *std::move(ingested->compiled);
      break;
    }
    case v1::LoadModelRequest::kCacheKey:
      // A key names a file under the cache directory: only the exact form
      // the cache writes is accepted, so no key can reach outside it.
      if (!IsHexKey(request.cache_key())) {
        return InvalidArgument(where, ": cache key '", request.cache_key().substr(0, 80),
                               "' is not 64 lowercase hex digits (a SHA-256)");
      }
      if (ctx.runtime->cache() == nullptr) {
        return FailedPrecondition(where, ": this daemon has no compiled-model cache to load key ",
                                  request.cache_key(), " from");
      }
      // The caller's namespace, then the operator's: a key of another tenant
      // is missing with exactly the words of a key nobody stored.
      model = session::LoadCachedModel(s.session->cache_scope(), request.cache_key(), ctx.runtime->engines());
      if (!model.ok() && model.status().code() == absl::StatusCode::kNotFound) {
        return NotFound(where, ": no compiled model with cache key ", request.cache_key(),
                        " (CompileGraph or gectl compile stores one)");
      }
      break;
    default:
      return InvalidArgument(where, ": the request carries no model (set gem or cache_key)");
  }
  if (!model.ok()) return Annotate(model.status(), where);
  const int64_t start = SteadyNowNs();
  uint32_t model_id = 0;
  {
    std::lock_guard<std::mutex> lock(s.mu);
    model_id = s.next_model_id++;
  }
  const std::string name = model->graph->name();
  GE_RETURN_IF_ERROR(Annotate(s.session->AddCompiledModel(kLoadedModelGraphIdBase + model_id, *std::move(model)),
                              ModelLabel(s.id, model_id)));
  {
    std::lock_guard<std::mutex> lock(s.mu);
    s.models[model_id] = name.empty() ? StrCat("model", model_id) : name;
  }
  ctx.metrics->model_load_duration.Get().Observe((SteadyNowNs() - start) * 1e-9);
  response->set_model_id(model_id);
  GE_ASSIGN_OR_RETURN(session::GraphInfo info, s.session->GetGraphInfo(kLoadedModelGraphIdBase + model_id));
  for (const auto& io : info.inputs) {
    v1::GraphIoInfo* p = response->add_inputs();
    p->set_name(io.name);
    ir::ValueTypeToProto(io.type, p->mutable_type());
  }
  for (const auto& io : info.outputs) {
    v1::GraphIoInfo* p = response->add_outputs();
    p->set_name(io.name);
    ir::ValueTypeToProto(io.type, p->mutable_type());
  }
  return absl::OkStatus();
}

absl::Status UnloadModelFromSession(ManagedSession& s, uint32_t model_id) {
  {
    std::lock_guard<std::mutex> lock(s.mu);
    if (s.models.erase(model_id) == 0) {
      return NotFound(ModelLabel(s.id, model_id), " is not loaded (LoadModel it first)");
    }
  }
  return Annotate(s.session->RemoveGraph(kLoadedModelGraphIdBase + model_id), ModelLabel(s.id, model_id));
}

absl::Status ExecuteLoadedModel(ServiceContext& ctx, ManagedSession& s, const v1::ExecuteModelRequest& request,
                                v1::ExecuteModelResponse* response, grpc::CallbackServerContext* call) {
  const std::string where = ModelLabel(s.id, request.model_id());
  std::string name;
  {
    std::lock_guard<std::mutex> lock(s.mu);
    auto it = s.models.find(request.model_id());
    if (it == s.models.end()) return NotFound(where, " is not loaded (LoadModel it first)");
    name = it->second;
  }
  return RunSessionGraph(ctx, s, kLoadedModelGraphIdBase + request.model_id(), where, name, request.inputs(),
                         request.output_shared_memory(), response->mutable_outputs(), call);
}

}  // namespace ge::server
