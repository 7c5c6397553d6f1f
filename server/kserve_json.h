// KServe v2 tensors over HTTP/REST (the Open Inference Protocol's JSON form
// and Triton's binary-data extension) to and from the serving core's
// protocol-free request and result (server/serving/served_model.h). Both
// sides are here, so a client (gectl perf, tests) encodes requests and
// decodes replies with the code the server decodes and encodes them with.
//
// A body is a JSON object, optionally followed by binary tensor data: then
// the header Inference-Header-Content-Length gives the JSON's length, and
// each binary tensor says its byte size in parameters.binary_data_size, in
// order. JSON `data` is flat (row-major) or nested to exactly the shape;
// BOOL takes true/false, integers JSON integers in range, FP16/BF16/FP32/
// FP64 any number, BYTES strings. Everything is bounded before it is
// allocated: the JSON's depth and element count (JsonLimits), each tensor's
// bytes (max_tensor_bytes), and the binary sizes against the body.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"
#include "server/serving/served_model.h"

namespace ge::server {

// The header that carries the JSON part's length when binary data follows.
inline constexpr char kInferenceHeaderContentLength[] = "Inference-Header-Content-Length";

struct JsonLimits {
  int max_depth = 64;
  int64_t max_elements = 4194304;               // max_json_elements
  int64_t max_tensor_bytes = int64_t{1} << 30;  // max_tensor_bytes
};

// Parses `text` as JSON within `limits`: INVALID_ARGUMENT for text that is
// not JSON (with where it failed) or nested deeper than max_depth,
// RESOURCE_EXHAUSTED naming max_json_elements for more elements.
absl::StatusOr<nlohmann::json> ParseJsonBounded(std::string_view text, const JsonLimits& limits);

// The JSON part's length from the Inference-Header-Content-Length values
// of a request (none: the whole body is JSON): INVALID_ARGUMENT when there
// are several, it is not a decimal number, or it exceeds the body.
absl::StatusOr<std::optional<size_t>> ParseHeaderLength(const std::vector<std::string_view>& values, size_t body_size);

// How the reply should carry the outputs: binary_data_output (request
// parameter) for all, overridden per output by its binary_data parameter.
struct OutputForms {
  bool binary_default = false;
  std::map<std::string, bool> binary;
  bool Binary(const std::string& name) const;
};

struct HttpInferRequest {
  serving::InferRequest request;  // model and version come from the URL
  OutputForms forms;
  std::optional<int64_t> timeout_us;  // the `timeout` request parameter
};

// Decodes an infer request body (`header_length`: the JSON part's length,
// binary data after it; nullopt: all JSON).
absl::Status DecodeHttpInferRequest(std::string_view body, std::optional<size_t> header_length,
                                    const JsonLimits& limits, HttpInferRequest* out);

struct HttpBody {
  std::string body;
  std::optional<size_t> header_length;  // set when binary data follows the JSON
};

// The reply to an infer request: JSON outputs with typed `data`, or binary
// ones after the JSON. BYTES that are not UTF-8 cannot be JSON strings: in
// JSON form their bad sequences become U+FFFD (ask for binary_data).
HttpBody EncodeHttpInferResult(const serving::InferResult& result, const OutputForms& forms);

// Client side: the body of an infer request for `request`'s inputs (binary
// or JSON data), asking for its outputs (all when empty) in `forms`.
HttpBody EncodeHttpInferRequest(const serving::InferRequest& request, bool binary_inputs, const OutputForms& forms);
// Client side: a reply body into `out` (model, version, id, outputs).
absl::Status DecodeHttpInferResult(std::string_view body, std::optional<size_t> header_length, const JsonLimits& limits,
                                   serving::InferResult* out);

// {"error": "<message>"}.
std::string JsonError(std::string_view message);
// The HTTP status of a status code: 400 INVALID_ARGUMENT, FAILED_PRECONDITION
// and OUT_OF_RANGE; 401 UNAUTHENTICATED; 403 PERMISSION_DENIED; 404
// NOT_FOUND; 409 ALREADY_EXISTS and ABORTED; 429 RESOURCE_EXHAUSTED; 499
// CANCELLED; 501 UNIMPLEMENTED; 503 UNAVAILABLE; 504 DEADLINE_EXCEEDED; 500
// the rest.
int HttpStatusOf(absl::StatusCode code);

}  // namespace ge::server
