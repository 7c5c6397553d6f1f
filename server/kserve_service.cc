// The KServe v2 gRPC service (kserve_service.h).
#include "server/kserve_service.h"

#include <deque>
#include <mutex>

#include "base/logging.h"
#include "base/status.h"
#include "base/version.h"
#include "server/grpc_status.h"
#include "server/kserve_codec.h"
#include "server/serving/model_config.h"

namespace ge::server {
namespace {

using serving::ModelRepository;
using serving::ServedModel;

// A stream's requests in flight at once; it reads no more until one is
// answered (the stream bound of docs/security.md).
constexpr int kStreamInflight = 64;

// Answers on the calling gRPC thread: admission, body, metrics.
template <typename Body>
grpc::ServerUnaryReactor* Inline(ServiceContext& ctx, grpc::CallbackServerContext* call, const char* rpc, Body body) {
  const int64_t start = SteadyNowNs();
  ctx.inflight.fetch_add(1);
  ctx.calls_total.fetch_add(1);
  grpc::ServerUnaryReactor* reactor = call->DefaultReactor();
  absl::StatusOr<Tenant*> tenant = AdmitCall(ctx, *call);
  const absl::Status status = tenant.ok() ? body(**tenant) : tenant.status();
  FinishCall(ctx, rpc, start, status, tenant.ok() ? *tenant : nullptr);
  reactor->Finish(ToGrpcStatus(status));
  return reactor;
}

absl::Status CheckAdmin(const Tenant& tenant, std::string_view what) {
  if (tenant.admin) return absl::OkStatus();
  return PermissionDenied(what, " is for operators: tenant ", tenant.name, " is not admin (tenants[].admin)");
}

void FillMetadata(const ServedModel& m, const std::vector<std::shared_ptr<ServedModel>>& versions,
                  inference::ModelMetadataResponse* response) {
  const inference::ModelConfig& c = m.config();
  response->set_name(c.name());
  for (const auto& v : versions) response->add_versions(std::to_string(v->version()));
  response->set_platform(c.platform());
  auto fill = [&](auto* t, const std::string& name, inference::DataType type, const auto& dims) {
    t->set_name(name);
    const std::optional<DataType> dtype = serving::FromConfigType(type);
    t->set_datatype(std::string(dtype ? serving::KServeDatatype(*dtype) : "INVALID"));
    if (c.max_batch_size() > 0) t->add_shape(-1);
    for (int64_t d : dims) t->add_shape(d);
  };
  for (const auto& in : c.input()) fill(response->add_inputs(), in.name(), in.data_type(), in.dims());
  for (const auto& out : c.output()) fill(response->add_outputs(), out.name(), out.data_type(), out.dims());
}

void FillStats(const ServedModel& m, inference::ModelStatistics* s) {
  const serving::ModelStats stats = m.stats();
  s->set_name(m.name());
  s->set_version(std::to_string(m.version()));
  s->set_last_inference(stats.last_inference_ms);
  s->set_inference_count(stats.inference_count);
  s->set_execution_count(stats.execution_count);
  auto put = [](inference::StatisticDuration* d, const serving::ModelStats::Duration& from) {
    d->set_count(from.count);
    d->set_ns(from.ns);
  };
  put(s->mutable_inference_stats()->mutable_success(), stats.success);
  put(s->mutable_inference_stats()->mutable_fail(), stats.fail);
  put(s->mutable_inference_stats()->mutable_queue(), stats.queue);
  put(s->mutable_inference_stats()->mutable_compute_infer(), stats.compute_infer);
  for (const auto& [rows, d] : stats.batches) {
    auto* b = s->add_batch_stats();
    b->set_batch_size(rows);
    put(b->mutable_compute_infer(), d);
  }
}

// Fills `out` from `request` for `tenant`: decoded, with the call's deadline,
// cancellation and the tenant's memory.
absl::Status PrepareInfer(ServiceContext& ctx, const ModelRepository& repository, Tenant& tenant,
                          const inference::ModelInferRequest& request, grpc::CallbackServerContext* call,
                          serving::InferRequest* out) {
  GE_RETURN_IF_ERROR(ModelRepository::CheckModelName(request.model_name()));
  GE_RETURN_IF_ERROR(FindForTenant(repository, tenant, request.model_name(), request.model_version()).status());
  GE_RETURN_IF_ERROR(DecodeInferRequest(request, ctx.config->max_tensor_bytes, out));
  const auto left = call->deadline() - std::chrono::system_clock::now();
  if (left < std::chrono::hours(24 * 365)) {
    out->deadline = serving::Clock::now() + std::chrono::duration_cast<serving::Clock::duration>(left);
  }
  out->cancelled = [call] { return call->IsCancelled(); };
  out->memory = tenant.memory;
  return absl::OkStatus();
}

// ModelStreamInfer: requests are read and queued as they come (at most
// kStreamInflight at once); each gets one response, in the order they
// finish, with a failure as error_message (the stream goes on).
class InferStream final
    : public grpc::ServerBidiReactor<inference::ModelInferRequest, inference::ModelStreamInferResponse> {
 public:
  InferStream(ServiceContext& ctx, ModelRepository& repository, grpc::CallbackServerContext* call)
      : ctx_(ctx), repository_(repository), call_(call), start_(SteadyNowNs()) {
    ctx_.inflight.fetch_add(1);
    ctx_.calls_total.fetch_add(1);
    absl::StatusOr<Tenant*> tenant = AdmitCall(ctx_, *call_);
    if (!tenant.ok()) {
      status_ = tenant.status();
      Finish(ToGrpcStatus(status_));
      return;
    }
    tenant_ = *tenant;
    StartRead(&request_);
  }

  void OnReadDone(bool ok) override {
    if (!ok) {
      std::lock_guard<std::mutex> lock(mu_);
      reading_done_ = true;
      MaybeFinishLocked();
      return;
    }
    serving::InferRequest request;
    const absl::Status prepared = PrepareInfer(ctx_, repository_, *tenant_, request_, call_, &request);
    // A stream's requests stay cancellable through the call, not the
    // per-request deadline: a stream has one deadline.
    {
      std::lock_guard<std::mutex> lock(mu_);
      ++inflight_;
    }
    if (!prepared.ok()) {
      Complete(prepared, request_.id());
    } else {
      repository_.Infer(std::move(request), [this, id = request_.id()](absl::StatusOr<serving::InferResult> r) {
        if (r.ok()) {
          inference::ModelStreamInferResponse response;
          EncodeInferResult(*r, response.mutable_infer_response());
          Push(std::move(response));
        } else {
          Complete(r.status(), id);
        }
      });
    }
    std::lock_guard<std::mutex> lock(mu_);
    if (inflight_ < kStreamInflight) {
      StartRead(&request_);
    } else {
      read_paused_ = true;
    }
  }

  void OnWriteDone(bool ok) override {
    std::lock_guard<std::mutex> lock(mu_);
    writing_ = false;
    outbox_.pop_front();
    if (!ok) broken_ = true;
    WriteNextLocked();
    MaybeFinishLocked();
  }

  void OnDone() override {
    FinishCall(ctx_, "ModelStreamInfer", start_, status_, tenant_);
    delete this;
  }

 private:
  void Complete(const absl::Status& status, const std::string& id) {
    inference::ModelStreamInferResponse response;
    response.set_error_message(std::string(status.message()));
    response.mutable_infer_response()->set_id(id);
    Push(std::move(response));
  }

  void Push(inference::ModelStreamInferResponse response) {
    std::lock_guard<std::mutex> lock(mu_);
    --inflight_;
    if (!broken_) outbox_.push_back(std::move(response));
    WriteNextLocked();
    if (read_paused_ && inflight_ < kStreamInflight && !reading_done_) {
      read_paused_ = false;
      StartRead(&request_);
    }
    MaybeFinishLocked();
  }

  void WriteNextLocked() {
    if (writing_ || outbox_.empty() || broken_) return;
    writing_ = true;
    StartWrite(&outbox_.front());
  }

  void MaybeFinishLocked() {
    if (finished_ || writing_ || inflight_ > 0 || (!reading_done_ && !broken_)) return;
    if (!outbox_.empty() && !broken_) return;
    finished_ = true;
    Finish(grpc::Status::OK);
  }

  ServiceContext& ctx_;
  ModelRepository& repository_;
  grpc::CallbackServerContext* call_;
  const int64_t start_;
  Tenant* tenant_ = nullptr;
  absl::Status status_;
  inference::ModelInferRequest request_;
  std::mutex mu_;
  std::deque<inference::ModelStreamInferResponse> outbox_;
  int inflight_ = 0;
  bool writing_ = false;
  bool reading_done_ = false;
  bool read_paused_ = false;
  bool broken_ = false;
  bool finished_ = false;
};

}  // namespace

absl::StatusOr<std::shared_ptr<ServedModel>> FindForTenant(const ModelRepository& repository, const Tenant& tenant,
                                                           std::string_view name, std::string_view version) {
  GE_RETURN_IF_ERROR(ModelRepository::CheckModelName(name));
  if (!tenant.MayUseModel(name)) return NotFound("unknown model '", name, "'");
  return repository.Find(name, version);
}

grpc::ServerUnaryReactor* KServeService::ServerLive(grpc::CallbackServerContext* call,
                                                    const inference::ServerLiveRequest*,
                                                    inference::ServerLiveResponse* response) {
  return Inline(ctx_, call, "ServerLive", [&](Tenant&) {
    response->set_live(true);
    return absl::OkStatus();
  });
}

grpc::ServerUnaryReactor* KServeService::ServerReady(grpc::CallbackServerContext* call,
                                                     const inference::ServerReadyRequest*,
                                                     inference::ServerReadyResponse* response) {
  return Inline(ctx_, call, "ServerReady", [&](Tenant&) {
    response->set_ready(!ctx_.draining.load() && repository_.Ready());
    return absl::OkStatus();
  });
}

grpc::ServerUnaryReactor* KServeService::ModelReady(grpc::CallbackServerContext* call,
                                                    const inference::ModelReadyRequest* request,
                                                    inference::ModelReadyResponse* response) {
  return Inline(ctx_, call, "ModelReady", [&](Tenant& tenant) -> absl::Status {
    absl::StatusOr<std::shared_ptr<ServedModel>> m =
        FindForTenant(repository_, tenant, request->name(), request->version());
    if (!m.ok() && m.status().code() != absl::StatusCode::kUnavailable) return m.status();
    response->set_ready(m.ok());
    return absl::OkStatus();
  });
}

grpc::ServerUnaryReactor* KServeService::ServerMetadata(grpc::CallbackServerContext* call,
                                                        const inference::ServerMetadataRequest*,
                                                        inference::ServerMetadataResponse* response) {
  return Inline(ctx_, call, "ServerMetadata", [&](Tenant&) {
    response->set_name("ged");
    response->set_version(GED_VERSION_STRING);
    for (const char* e : {"model_repository", "model_configuration", "statistics"}) response->add_extensions(e);
    return absl::OkStatus();
  });
}

grpc::ServerUnaryReactor* KServeService::ModelMetadata(grpc::CallbackServerContext* call,
                                                       const inference::ModelMetadataRequest* request,
                                                       inference::ModelMetadataResponse* response) {
  return Inline(ctx_, call, "ModelMetadata", [&](Tenant& tenant) -> absl::Status {
    GE_ASSIGN_OR_RETURN(std::shared_ptr<ServedModel> m,
                        FindForTenant(repository_, tenant, request->name(), request->version()));
    FillMetadata(*m, repository_.Versions(request->name()), response);
    return absl::OkStatus();
  });
}

grpc::ServerUnaryReactor* KServeService::ModelConfig(grpc::CallbackServerContext* call,
                                                     const inference::ModelConfigRequest* request,
                                                     inference::ModelConfigResponse* response) {
  return Inline(ctx_, call, "ModelConfig", [&](Tenant& tenant) -> absl::Status {
    GE_ASSIGN_OR_RETURN(std::shared_ptr<ServedModel> m,
                        FindForTenant(repository_, tenant, request->name(), request->version()));
    *response->mutable_config() = m->config();
    return absl::OkStatus();
  });
}

grpc::ServerUnaryReactor* KServeService::ModelStatistics(grpc::CallbackServerContext* call,
                                                         const inference::ModelStatisticsRequest* request,
                                                         inference::ModelStatisticsResponse* response) {
  return Inline(ctx_, call, "ModelStatistics", [&](Tenant& tenant) -> absl::Status {
    if (request->name().empty()) {
      for (const auto& m : repository_.All()) {
        if (tenant.MayUseModel(m->name())) FillStats(*m, response->add_model_stats());
      }
      return absl::OkStatus();
    }
    GE_ASSIGN_OR_RETURN(std::shared_ptr<ServedModel> m,
                        FindForTenant(repository_, tenant, request->name(), request->version()));
    if (!request->version().empty()) {
      FillStats(*m, response->add_model_stats());
      return absl::OkStatus();
    }
    for (const auto& v : repository_.Versions(request->name())) FillStats(*v, response->add_model_stats());
    return absl::OkStatus();
  });
}

grpc::ServerUnaryReactor* KServeService::RepositoryIndex(grpc::CallbackServerContext* call,
                                                         const inference::RepositoryIndexRequest* request,
                                                         inference::RepositoryIndexResponse* response) {
  return Inline(ctx_, call, "RepositoryIndex", [&](Tenant& tenant) {
    for (const serving::IndexEntry& e : repository_.Index(request->ready())) {
      if (!tenant.MayUseModel(e.name)) continue;
      auto* m = response->add_models();
      m->set_name(e.name);
      m->set_version(e.version);
      m->set_state(e.state);
      m->set_reason(e.reason);
    }
    return absl::OkStatus();
  });
}

namespace {

// Load and unload: admin only, no config or files from the caller, run on
// the first device's run queue (they compile).
template <typename Request, typename Action>
grpc::ServerUnaryReactor* Control(ServiceContext& ctx, grpc::CallbackServerContext* call, const char* rpc,
                                  const Request& request, Action action) {
  const int64_t start = SteadyNowNs();
  ctx.inflight.fetch_add(1);
  ctx.calls_total.fetch_add(1);
  grpc::ServerUnaryReactor* reactor = call->DefaultReactor();
  absl::StatusOr<Tenant*> tenant = AdmitCall(ctx, *call);
  const Tenant* caller = tenant.ok() ? *tenant : nullptr;
  auto finish = [&ctx, reactor, rpc, start, caller](const absl::Status& s) {
    FinishCall(ctx, rpc, start, s, caller);
    reactor->Finish(ToGrpcStatus(s));
  };
  absl::Status status = tenant.status();
  if (status.ok()) status = CheckAdmin(**tenant, rpc);
  if (status.ok()) status = ModelRepository::CheckModelName(request.model_name());
  if (status.ok()) {
    for (const auto& [key, value] : request.parameters()) {
      if (key == "config" || key.rfind("file:", 0) == 0) {
        status = PermissionDenied(rpc, ": parameter '", key.substr(0, 64),
                                  "' is refused: ged loads models from its repository directory only");
        break;
      }
    }
  }
  if (!status.ok()) return finish(status), reactor;
  const std::string name = request.model_name();
  absl::Status submitted =
      SubmitForTenant(**tenant, *ctx.devices->front().queue, [name, action, finish] { finish(action(name)); });
  if (!submitted.ok()) finish(submitted);
  return reactor;
}

}  // namespace

grpc::ServerUnaryReactor* KServeService::RepositoryModelLoad(grpc::CallbackServerContext* call,
                                                             const inference::RepositoryModelLoadRequest* request,
                                                             inference::RepositoryModelLoadResponse*) {
  serving::ModelRepository* repo = &repository_;
  return Control(ctx_, call, "RepositoryModelLoad", *request,
                 [repo](const std::string& name) { return repo->RequestLoad(name); });
}

grpc::ServerUnaryReactor* KServeService::RepositoryModelUnload(grpc::CallbackServerContext* call,
                                                               const inference::RepositoryModelUnloadRequest* request,
                                                               inference::RepositoryModelUnloadResponse*) {
  serving::ModelRepository* repo = &repository_;
  return Control(ctx_, call, "RepositoryModelUnload", *request,
                 [repo](const std::string& name) { return repo->RequestUnload(name); });
}

grpc::ServerUnaryReactor* KServeService::ModelInfer(grpc::CallbackServerContext* call,
                                                    const inference::ModelInferRequest* request,
                                                    inference::ModelInferResponse* response) {
  const int64_t start = SteadyNowNs();
  ctx_.inflight.fetch_add(1);
  ctx_.calls_total.fetch_add(1);
  grpc::ServerUnaryReactor* reactor = call->DefaultReactor();
  ServiceContext& ctx = ctx_;
  absl::StatusOr<Tenant*> tenant = AdmitCall(ctx_, *call);
  Tenant* t = tenant.ok() ? *tenant : nullptr;
  auto finish = [&ctx, reactor, start, t](const absl::Status& s, bool counted) {
    if (counted) t->running.fetch_sub(1);
    FinishCall(ctx, "ModelInfer", start, s, t);
    reactor->Finish(ToGrpcStatus(s));
  };
  if (!tenant.ok()) return finish(tenant.status(), false), reactor;
  if (t->running.fetch_add(1) >= t->max_concurrent_runs) {
    t->running.fetch_sub(1);
    return finish(ResourceExhausted("tenant ", t->name, " already has ", t->max_concurrent_runs,
                                    " runs in flight (its quota, max_concurrent_runs); retry when one finishes"),
                  false),
           reactor;
  }
  serving::InferRequest infer;
  absl::Status prepared = PrepareInfer(ctx_, repository_, *t, *request, call, &infer);
  if (!prepared.ok()) return finish(prepared, true), reactor;
  repository_.Infer(std::move(infer), [response, finish](absl::StatusOr<serving::InferResult> r) {
    if (r.ok()) EncodeInferResult(*r, response);
    finish(r.status(), true);
  });
  return reactor;
}

grpc::ServerBidiReactor<inference::ModelInferRequest, inference::ModelStreamInferResponse>*
KServeService::ModelStreamInfer(grpc::CallbackServerContext* call) {
  return new InferStream(ctx_, repository_, call);
}

}  // namespace ge::server
