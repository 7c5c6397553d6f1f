// Conversion between ge::Value / ge::Tensor and the service's ge.v1.Value /
// ge.v1.Tensor messages, shared by the daemon and clients that link ge_base
// (gectl). Decoding validates everything a remote peer can get wrong: the
// dtype, negative or overflowing dims, and a byte or string count that does
// not match the shape; errors name the value (`what`, e.g. "input 0 (x)").
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "base/value.h"
#include "ge/v1/service.pb.h"

namespace ge::rpc {

// Resolves a tensor's shared-memory reference (the daemon's registered
// regions) to a Buffer of `bytes` bytes, the size its dtype and shape need.
using SharedMemoryResolver = std::function<absl::StatusOr<std::shared_ptr<Buffer>>(
    const v1::SharedMemoryRef& ref, uint64_t bytes, const std::string& what)>;

absl::Status TensorToProto(const Tensor& tensor, v1::Tensor* proto);
// A tensor whose bytes are in shared memory needs `shared_memory` (without
// one it is INVALID_ARGUMENT); the result then points into the region.
absl::StatusOr<Tensor> TensorFromProto(const v1::Tensor& proto, std::string_view what,
                                       const SharedMemoryResolver* shared_memory = nullptr);

absl::Status ValueToProto(const Value& value, v1::Value* proto);
absl::StatusOr<Value> ValueFromProto(const v1::Value& proto, std::string_view what,
                                     const SharedMemoryResolver* shared_memory = nullptr);

}  // namespace ge::rpc
