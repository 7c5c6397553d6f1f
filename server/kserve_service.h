// KServeService: the KServe v2 inference protocol over gRPC
// (inference.GRPCInferenceService, proto/ge/kserve/grpc_service.proto) for
// the model repository, on ged's own listen address beside ge.v1.GraphEngine
// (docs/serving.md, docs/api.md).
//
// Every call is admitted as ged's own are (BeginCall: the bearer token names
// the tenant; refused while draining) and counted in ged_requests_total;
// the rest is the protocol's shared logic (server/kserve_core.h: tenants'
// views and quotas, operator-only repository control), which the HTTP
// front end (server/kserve_http.h) uses too. Inference requests are decoded
// (server/kserve_codec.h), queued in their model's batcher and answered from
// a batcher thread.
#pragma once

#include "ge/kserve/grpc_service.grpc.pb.h"
#include "server/kserve_core.h"
#include "server/service.h"
#include "server/serving/repository.h"

namespace ge::server {

class KServeService final : public inference::GRPCInferenceService::CallbackService {
 public:
  KServeService(ServiceContext& context, serving::ModelRepository& repository)
      : ctx_(context), core_(context, &repository) {}

  grpc::ServerUnaryReactor* ServerLive(grpc::CallbackServerContext* call, const inference::ServerLiveRequest* request,
                                       inference::ServerLiveResponse* response) override;
  grpc::ServerUnaryReactor* ServerReady(grpc::CallbackServerContext* call, const inference::ServerReadyRequest* request,
                                        inference::ServerReadyResponse* response) override;
  grpc::ServerUnaryReactor* ModelReady(grpc::CallbackServerContext* call, const inference::ModelReadyRequest* request,
                                       inference::ModelReadyResponse* response) override;
  grpc::ServerUnaryReactor* ServerMetadata(grpc::CallbackServerContext* call,
                                           const inference::ServerMetadataRequest* request,
                                           inference::ServerMetadataResponse* response) override;
  grpc::ServerUnaryReactor* ModelMetadata(grpc::CallbackServerContext* call,
                                          const inference::ModelMetadataRequest* request,
                                          inference::ModelMetadataResponse* response) override;
  grpc::ServerUnaryReactor* ModelInfer(grpc::CallbackServerContext* call, const inference::ModelInferRequest* request,
                                       inference::ModelInferResponse* response) override;
  grpc::ServerBidiReactor<inference::ModelInferRequest, inference::ModelStreamInferResponse>* ModelStreamInfer(
      grpc::CallbackServerContext* call) override;
  grpc::ServerUnaryReactor* ModelConfig(grpc::CallbackServerContext* call, const inference::ModelConfigRequest* request,
                                        inference::ModelConfigResponse* response) override;
  grpc::ServerUnaryReactor* ModelStatistics(grpc::CallbackServerContext* call,
                                            const inference::ModelStatisticsRequest* request,
                                            inference::ModelStatisticsResponse* response) override;
  grpc::ServerUnaryReactor* RepositoryIndex(grpc::CallbackServerContext* call,
                                            const inference::RepositoryIndexRequest* request,
                                            inference::RepositoryIndexResponse* response) override;
  grpc::ServerUnaryReactor* RepositoryModelLoad(grpc::CallbackServerContext* call,
                                                const inference::RepositoryModelLoadRequest* request,
                                                inference::RepositoryModelLoadResponse* response) override;
  grpc::ServerUnaryReactor* RepositoryModelUnload(grpc::CallbackServerContext* call,
                                                  const inference::RepositoryModelUnloadRequest* request,
                                                  inference::RepositoryModelUnloadResponse* response) override;

 private:
  ServiceContext& ctx_;
  KServeCore core_;
};

}  // namespace ge::server
