// Conversion between ge::Value / ge::Tensor and the service's ge.v1.Value /
// ge.v1.Tensor messages, shared by the daemon and clients that link ge_base
// (gectl). Decoding validates everything a remote peer can get wrong: the
// dtype, negative or overflowing dims, and a byte or string count that does
// not match the shape; errors name the value (`what`, e.g. "input 0 (x)").
#pragma once

#include <string_view>

#include "absl/status/statusor.h"
#include "base/value.h"
#include "ge/v1/service.pb.h"

namespace ge::rpc {

absl::Status TensorToProto(const Tensor& tensor, v1::Tensor* proto);
absl::StatusOr<Tensor> TensorFromProto(const v1::Tensor& proto, std::string_view what);

absl::Status ValueToProto(const Value& value, v1::Value* proto);
absl::StatusOr<Value> ValueFromProto(const v1::Value& proto, std::string_view what);

}  // namespace ge::rpc
