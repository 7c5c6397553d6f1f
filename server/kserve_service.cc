// The KServe v2 gRPC service (kserve_service.h): admission and the
// messages; the protocol's logic is KServeCore's.
#include "server/kserve_service.h"

#include <algorithm>
#include <chrono>
#include <deque>
#include <mutex>

#include "base/status.h"
#include "server/grpc_status.h"
#include "server/kserve_codec.h"

namespace ge::server {
namespace {

// A stream's requests in flight at once; it reads no more until one is
// answered (the stream bound of docs/security.md).
constexpr int kStreamInflight = 64;

// Answers on the calling gRPC thread: admission, body, metrics.
template <typename Body>
grpc::ServerUnaryReactor* Inline(ServiceContext& ctx, grpc::CallbackServerContext* call, const char* rpc, Body body) {
  grpc::ServerUnaryReactor* reactor = call->DefaultReactor();
  const CallStart begun = BeginCall(ctx, *call);
  const absl::Status status = begun.tenant.ok() ? body(**begun.tenant) : begun.tenant.status();
  FinishCall(ctx, rpc, begun.start_ns, status, begun.caller());
  reactor->Finish(ToGrpcStatus(status));
  return reactor;
}

// Fills `out` from `request` for `tenant`: the model checked, the tensors
// decoded, with the call's deadline and cancellation.
absl::Status PrepareInfer(KServeCore& core, const Tenant& tenant, const inference::ModelInferRequest& request,
                          grpc::CallbackServerContext* call, serving::InferRequest* out) {
  GE_RETURN_IF_ERROR(core.CheckInferTarget(tenant, request.model_name(), request.model_version()));
  GE_RETURN_IF_ERROR(DecodeInferRequest(request, core.context().config->max_tensor_bytes, out));
  const auto left = call->deadline() - std::chrono::system_clock::now();
  if (left < std::chrono::hours(24 * 365)) {
    out->deadline = serving::Clock::now() + std::chrono::duration_cast<serving::Clock::duration>(left);
  }
  out->cancelled = [call] { return call->IsCancelled(); };
  return absl::OkStatus();
}

// ModelStreamInfer: requests are read and queued as they come (at most
// the tenant's max_concurrent_runs, and kStreamInflight, at once); each gets one response, in the order they
// finish, with a failure as error_message (the stream goes on).
class InferStream final
    : public grpc::ServerBidiReactor<inference::ModelInferRequest, inference::ModelStreamInferResponse> {
 public:
  InferStream(KServeCore& core, grpc::CallbackServerContext* call)
      : core_(core), call_(call), begun_(BeginCall(core.context(), *call)) {
    if (!begun_.tenant.ok()) {
      status_ = begun_.tenant.status();
      Finish(ToGrpcStatus(status_));
      return;
    }
    tenant_ = *begun_.tenant;
    // Each request in flight holds one of the tenant's run slots.
    window_ = static_cast<int>(std::max<int64_t>(1, std::min<int64_t>(tenant_->max_concurrent_runs, kStreamInflight)));
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
    const absl::Status prepared = PrepareInfer(core_, *tenant_, request_, call_, &request);
    // A stream's requests stay cancellable through the call, not the
    // per-request deadline: a stream has one deadline.
    {
      std::lock_guard<std::mutex> lock(mu_);
      ++inflight_;
    }
    if (!prepared.ok()) {
      Complete(prepared, request_.id());
    } else {
      core_.Infer(*tenant_, std::move(request), [this, id = request_.id()](absl::StatusOr<serving::InferResult> r) {
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
    if (inflight_ < window_) {
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
    FinishCall(core_.context(), "ModelStreamInfer", begun_.start_ns, status_, tenant_);
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
    if (read_paused_ && inflight_ < window_ && !reading_done_) {
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

  KServeCore& core_;
  grpc::CallbackServerContext* call_;
  const CallStart begun_;
  Tenant* tenant_ = nullptr;
  int window_ = 1;  // requests in flight at once: the tenant's run slots, at most kStreamInflight
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
    response->set_ready(core_.ServerReady());
    return absl::OkStatus();
  });
}

grpc::ServerUnaryReactor* KServeService::ModelReady(grpc::CallbackServerContext* call,
                                                    const inference::ModelReadyRequest* request,
                                                    inference::ModelReadyResponse* response) {
  return Inline(ctx_, call, "ModelReady", [&](Tenant& tenant) -> absl::Status {
    GE_ASSIGN_OR_RETURN(const bool ready, core_.ModelReady(tenant, request->name(), request->version()));
    response->set_ready(ready);
    return absl::OkStatus();
  });
}

grpc::ServerUnaryReactor* KServeService::ServerMetadata(grpc::CallbackServerContext* call,
                                                        const inference::ServerMetadataRequest*,
                                                        inference::ServerMetadataResponse* response) {
  return Inline(ctx_, call, "ServerMetadata", [&](Tenant&) {
    core_.ServerMetadata(response);
    return absl::OkStatus();
  });
}

grpc::ServerUnaryReactor* KServeService::ModelMetadata(grpc::CallbackServerContext* call,
                                                       const inference::ModelMetadataRequest* request,
                                                       inference::ModelMetadataResponse* response) {
  return Inline(ctx_, call, "ModelMetadata", [&](Tenant& tenant) {
    return core_.ModelMetadata(tenant, request->name(), request->version(), response);
  });
}

grpc::ServerUnaryReactor* KServeService::ModelConfig(grpc::CallbackServerContext* call,
                                                     const inference::ModelConfigRequest* request,
                                                     inference::ModelConfigResponse* response) {
  return Inline(ctx_, call, "ModelConfig", [&](Tenant& tenant) {
    return core_.ModelConfig(tenant, request->name(), request->version(), response);
  });
}

grpc::ServerUnaryReactor* KServeService::ModelStatistics(grpc::CallbackServerContext* call,
                                                         const inference::ModelStatisticsRequest* request,
                                                         inference::ModelStatisticsResponse* response) {
  return Inline(ctx_, call, "ModelStatistics", [&](Tenant& tenant) {
    return core_.ModelStatistics(tenant, request->name(), request->version(), response);
  });
}

grpc::ServerUnaryReactor* KServeService::RepositoryIndex(grpc::CallbackServerContext* call,
                                                         const inference::RepositoryIndexRequest* request,
                                                         inference::RepositoryIndexResponse* response) {
  return Inline(ctx_, call, "RepositoryIndex", [&](Tenant& tenant) {
    core_.RepositoryIndex(tenant, request->ready(), response);
    return absl::OkStatus();
  });
}

namespace {

// Load and unload: admission here, the rest in the core.
template <typename Request>
grpc::ServerUnaryReactor* Control(KServeCore& core, grpc::CallbackServerContext* call, const char* rpc,
                                  const Request& request, bool load) {
  ServiceContext& ctx = core.context();
  grpc::ServerUnaryReactor* reactor = call->DefaultReactor();
  const CallStart begun = BeginCall(ctx, *call);
  auto finish = [&ctx, reactor, rpc, start = begun.start_ns, caller = begun.caller()](const absl::Status& s) {
    FinishCall(ctx, rpc, start, s, caller);
    reactor->Finish(ToGrpcStatus(s));
  };
  if (!begun.tenant.ok()) return finish(begun.tenant.status()), reactor;
  std::vector<std::string> keys;
  for (const auto& [key, value] : request.parameters()) keys.push_back(key);
  core.Control(**begun.tenant, rpc, request.model_name(), keys, load, finish);
  return reactor;
}

}  // namespace

grpc::ServerUnaryReactor* KServeService::RepositoryModelLoad(grpc::CallbackServerContext* call,
                                                             const inference::RepositoryModelLoadRequest* request,
                                                             inference::RepositoryModelLoadResponse*) {
  return Control(core_, call, "RepositoryModelLoad", *request, true);
}

grpc::ServerUnaryReactor* KServeService::RepositoryModelUnload(grpc::CallbackServerContext* call,
                                                               const inference::RepositoryModelUnloadRequest* request,
                                                               inference::RepositoryModelUnloadResponse*) {
  return Control(core_, call, "RepositoryModelUnload", *request, false);
}

grpc::ServerUnaryReactor* KServeService::ModelInfer(grpc::CallbackServerContext* call,
                                                    const inference::ModelInferRequest* request,
                                                    inference::ModelInferResponse* response) {
  grpc::ServerUnaryReactor* reactor = call->DefaultReactor();
  ServiceContext& ctx = ctx_;
  const CallStart begun = BeginCall(ctx_, *call);
  auto finish = [&ctx, reactor, start = begun.start_ns, caller = begun.caller()](const absl::Status& s) {
    FinishCall(ctx, "ModelInfer", start, s, caller);
    reactor->Finish(ToGrpcStatus(s));
  };
  if (!begun.tenant.ok()) return finish(begun.tenant.status()), reactor;
  serving::InferRequest infer;
  absl::Status prepared = PrepareInfer(core_, **begun.tenant, *request, call, &infer);
  if (!prepared.ok()) return finish(prepared), reactor;
  core_.Infer(**begun.tenant, std::move(infer), [response, finish](absl::StatusOr<serving::InferResult> r) {
    if (r.ok()) EncodeInferResult(*r, response);
    finish(r.status());
  });
  return reactor;
}

grpc::ServerBidiReactor<inference::ModelInferRequest, inference::ModelStreamInferResponse>*
KServeService::ModelStreamInfer(grpc::CallbackServerContext* call) {
  return new InferStream(core_, call);
}

}  // namespace ge::server
