// Status helpers of the daemon: the codes base/status.h has no helper for,
// and the one conversion from absl::Status to grpc::Status (the edge: no
// grpc::Status is made anywhere else in server/).
#pragma once

#include "absl/status/status.h"
#include "base/strings.h"
#include "grpcpp/support/status.h"

namespace ge::server {

template <typename... Args>
absl::Status Unauthenticated(const Args&... args) {
  return absl::UnauthenticatedError(::ge::StrCat(args...));
}
template <typename... Args>
absl::Status PermissionDenied(const Args&... args) {
  return absl::PermissionDeniedError(::ge::StrCat(args...));
}
template <typename... Args>
absl::Status DeadlineExceeded(const Args&... args) {
  return absl::DeadlineExceededError(::ge::StrCat(args...));
}
template <typename... Args>
absl::Status Unavailable(const Args&... args) {
  return absl::UnavailableError(::ge::StrCat(args...));
}

// Same code (absl and gRPC share the numbering), same message.
inline grpc::Status ToGrpcStatus(const absl::Status& status) {
  if (status.ok()) return grpc::Status::OK;
  return grpc::Status(static_cast<grpc::StatusCode>(status.code()), std::string(status.message()));
}

}  // namespace ge::server
