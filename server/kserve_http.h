// KServeHttp: the KServe v2 protocol over HTTP/REST (the Open Inference
// Protocol's REST form, with Triton's binary-data, model-repository,
// model-configuration and statistics extensions), served on http_listen by
// an HttpEndpoint (docs/serving.md):
//
//   GET  /v2                                     server metadata
//   GET  /v2/health/live, /v2/health/ready       {"live"|"ready": bool}
//   GET  /v2/models/NAME[/versions/V]            model metadata
//   GET  .../ready, .../config, .../stats        readiness, ModelConfig, statistics
//   POST .../infer                               inference (JSON and binary data)
//   GET  /v2/models/stats                        every model's statistics
//   POST /v2/repository/index                    the repository index
//   POST /v2/repository/models/NAME/load|unload  control (operators only)
//
// Each request is one call as the gRPC service's are: admitted with its
// `Authorization: Bearer` token (BeginCall: same tenants, same refusals),
// counted in ged_requests_total as "http:<RPC>", and handled by the shared
// KServeCore. Errors are {"error": "..."} with HttpStatusOf's status. An
// inference holds its civetweb worker until the batcher answers.
#pragma once

#include "server/http_endpoint.h"
#include "server/kserve_core.h"
#include "server/kserve_json.h"

namespace ge::server {

class KServeHttp {
 public:
  KServeHttp(ServiceContext& context, serving::ModelRepository* repository, const JsonLimits& limits)
      : core_(context, repository), limits_(limits) {}

  HttpReply Handle(const HttpRequest& request);

 private:
  // The reply of one admitted call named `rpc`, or its error.
  HttpReply Serve(const HttpRequest& request, Tenant& tenant, const std::vector<std::string>& path,
                  absl::Status* status);
  HttpReply Infer(const HttpRequest& request, Tenant& tenant, const std::string& model, const std::string& version,
                  absl::Status* status);

  KServeCore core_;
  const JsonLimits limits_;
};

}  // namespace ge::server
