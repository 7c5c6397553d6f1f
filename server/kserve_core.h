// KServeCore: the KServe v2 protocol's logic, shared by its transports —
// the gRPC service (server/kserve_service.cc) and HTTP/REST
// (server/kserve_http.cc). A transport admits the call (BeginCall: the
// bearer token names the tenant), decodes its message, calls the core with
// the tenant and encodes what comes back; the core does the rest, the same
// for both: the tenant's view of the repository (a `models` list leaves the
// others unknown), its run slots and memory for inference, the operator-
// only repository control run on the first device's run queue, and the
// responses, built as the gRPC protocol's messages (which HTTP renders as
// JSON).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "ge/kserve/grpc_service.pb.h"
#include "server/service.h"
#include "server/serving/repository.h"

namespace ge::server {

class KServeCore {
 public:
  // `repository` may be null (an HTTP listener without a repository): no
  // model is known then.
  KServeCore(ServiceContext& context, serving::ModelRepository* repository) : ctx_(context), repository_(repository) {}

  ServiceContext& context() { return ctx_; }

  void ServerMetadata(inference::ServerMetadataResponse* response) const;
  bool ServerReady() const;
  // NOT_FOUND for a model the tenant may not see; a known model that is
  // not loaded is not ready (no error).
  absl::StatusOr<bool> ModelReady(const Tenant& tenant, std::string_view name, std::string_view version) const;
  absl::Status ModelMetadata(const Tenant& tenant, std::string_view name, std::string_view version,
                             inference::ModelMetadataResponse* response) const;
  absl::Status ModelConfig(const Tenant& tenant, std::string_view name, std::string_view version,
                           inference::ModelConfigResponse* response) const;
  absl::Status ModelStatistics(const Tenant& tenant, std::string_view name, std::string_view version,
                               inference::ModelStatisticsResponse* response) const;
  void RepositoryIndex(const Tenant& tenant, bool ready_only, inference::RepositoryIndexResponse* response) const;

  // Load or unload (`load` false) of `name`: admin only, no `config` or
  // `file:` parameter among `parameter_keys`; runs on the first device's
  // run queue (it compiles). `done` gets the outcome, maybe on this thread.
  void Control(Tenant& tenant, const char* rpc, const std::string& name, const std::vector<std::string>& parameter_keys,
               bool load, std::function<void(absl::Status)> done);

  // The model an inference request names, as `tenant` may see it: checked
  // before its tensors are decoded (INVALID_ARGUMENT for a bad name,
  // NOT_FOUND, UNAVAILABLE).
  absl::Status CheckInferTarget(const Tenant& tenant, std::string_view name, std::string_view version) const;

  // Inference for `tenant`: takes one of its run slots, checks the model
  // name and the tenant's view of it, charges its memory, and queues the
  // request in the model's batcher; `done` gets the result (on a batcher
  // thread, or on this one when refused) after the slot is given back.
  void Infer(Tenant& tenant, serving::InferRequest request, serving::InferDone done);

 private:
  ServiceContext& ctx_;
  serving::ModelRepository* repository_;
};

// The model `name` as `tenant` may see it (NOT_FOUND, with the words of an
// unknown model, when its `models` list leaves it out).
absl::StatusOr<std::shared_ptr<serving::ServedModel>> FindForTenant(const serving::ModelRepository& repository,
                                                                    const Tenant& tenant, std::string_view name,
                                                                    std::string_view version);

}  // namespace ge::server
