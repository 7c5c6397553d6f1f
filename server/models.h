// Models loaded into a session from compiled .gem bytes (LoadModel,
// ExecuteModel, UnloadModel); see server/models.cc.
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "server/service.h"

namespace ge::server {

// Graph ids from here up belong to loaded models (model id = graph id - base).
inline constexpr uint32_t kLoadedModelGraphIdBase = 1u << 31;

// InvalidArgument when `graph_id` lies in the loaded models' range.
absl::Status CheckGraphId(const std::string& session_id, uint32_t graph_id);

absl::Status LoadModelIntoSession(ServiceContext& ctx, ManagedSession& s, const v1::LoadModelRequest& request,
                                  v1::LoadModelResponse* response);
absl::Status UnloadModelFromSession(ManagedSession& s, uint32_t model_id);
absl::Status ExecuteLoadedModel(ServiceContext& ctx, ManagedSession& s, const v1::ExecuteModelRequest& request,
                                v1::ExecuteModelResponse* response, grpc::CallbackServerContext* call);

}  // namespace ge::server
