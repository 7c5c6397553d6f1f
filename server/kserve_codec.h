// KServe v2 tensors over gRPC (proto/ge/kserve/grpc_service.proto) to and
// from the serving core's protocol-free request (server/serving/
// served_model.h): typed contents or raw_input_contents (never both), every
// datatype (BYTES raw as 4-byte little-endian lengths and bytes; FP16 and
// BF16 raw only), sizes checked on the message before anything is
// allocated. Replies are always raw_output_contents.
#pragma once

#include <cstdint>

#include "absl/status/status.h"
#include "ge/kserve/grpc_service.pb.h"
#include "server/serving/served_model.h"

namespace ge::server {

// Fills `out` (model, version, id, inputs, outputs wanted) from `request`.
// INVALID_ARGUMENT naming the input for bad datatypes, shapes, sizes or a
// mix of typed and raw contents; RESOURCE_EXHAUSTED naming max_tensor_bytes
// for a tensor above it.
absl::Status DecodeInferRequest(const inference::ModelInferRequest& request, int64_t max_tensor_bytes,
                                serving::InferRequest* out);
void EncodeInferResult(const serving::InferResult& result, inference::ModelInferResponse* response);

}  // namespace ge::server
