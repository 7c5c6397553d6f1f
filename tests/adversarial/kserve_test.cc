// Attack class "KServe v2 requests" (docs/security.md): hostile requests to
// the model repository's protocol, over HTTP/REST and gRPC — JSON bombs
// (deep and wide), a header length beyond the body, shape x element size
// overflow, binary_data_size sums that disagree with the body, bodies above
// max_message_bytes (declared and chunked), BYTES lengths that run past
// their data, a model name climbing out of the repository, repository
// control by a tenant that is not admin, a stream flood. Each is refused
// with the status of the contract and a message naming what is wrong; the
// daemon and bob go on, and nothing of bob's reaches alice.
#include <chrono>
#include <string>
#include <thread>

#include "tests/adversarial/adversarial_harness.h"

namespace ge::adversarial {
namespace {

using grpc::StatusCode;
using testing::HttpResult;
using testing::HttpSend;

class KServeTest : public AdversarialTest {
 protected:
  // POSTs `body` to `path` on the KServe HTTP address as alice.
  HttpResult Post(const std::string& path, const std::string& body, const std::string& extra_headers = "",
                  const std::string& token = kAliceToken) {
    std::string request = "POST " + path + " HTTP/1.1\r\nHost: ged\r\nConnection: close\r\n";
    if (!token.empty()) request += "Authorization: Bearer " + token + "\r\n";
    request += "Content-Length: " + std::to_string(body.size()) + "\r\n" + extra_headers + "\r\n" + body;
    return Send(request);
  }
  HttpResult Send(const std::string& request) {
    HttpResult r = HttpSend(h().http_address(), request);
    h().ScanForLeaks(r.headers + r.body, "KServe HTTP reply");
    return r;
  }
  // (a) for HTTP: the status, a JSON error naming every one of `words`.
  ::testing::AssertionResult RefusedHttp(const HttpResult& r, int status, const std::vector<std::string>& words) {
    if (r.status != status) {
      return ::testing::AssertionFailure() << "HTTP " << r.status << " (expected " << status << "): " << r.body;
    }
    if (r.body.rfind("{\"error\":", 0) != 0) return ::testing::AssertionFailure() << "not a JSON error: " << r.body;
    for (const std::string& w : words) {
      if (r.body.find(w) == std::string::npos)
        return ::testing::AssertionFailure() << "'" << w << "' not in " << r.body;
    }
    return ::testing::AssertionSuccess();
  }
  bool NeedsHttp() {
    if (!NeedsContractConfig("model_repository, http_listen, max_json_elements")) return false;
    EXPECT_FALSE(h().http_address().empty()) << "ged wrote no \"http\" address in its ready file";
    return !h().http_address().empty();
  }
  grpc::Status Infer(const inference::ModelInferRequest& request, const std::string& token = kAliceToken) {
    auto stub = h().KServeStub();
    grpc::ClientContext call;
    call.AddMetadata("authorization", "Bearer " + token);
    call.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(60));
    inference::ModelInferResponse response;
    grpc::Status s = stub->ModelInfer(&call, request, &response);
    Scan(s, response, "ModelInfer");
    return s;
  }
  static std::string InferPath() { return std::string("/v2/models/") + kRepositoryModel + "/infer"; }
};

std::string Tensor(const std::string& name, const std::string& shape, const std::string& rest) {
  return "{\"name\":\"" + name + "\",\"datatype\":\"FP32\",\"shape\":" + shape + "," + rest + "}";
}

TEST_F(KServeTest, HttpInferIsServedToAlice) {
  if (!NeedsHttp()) return;
  const std::string body = "{\"inputs\":[" + Tensor("a", "[1,4]", "\"data\":[1,2,3,4]") + "," +
                           Tensor("b", "[1,4]", "\"data\":[[0.5,0.5,0.5,0.5]]") + "]}";
  HttpResult r = Post(InferPath(), body);
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_NE(r.body.find("\"data\":[1.5,2.5,3.5,4.5]"), std::string::npos) << r.body;
}

TEST_F(KServeTest, DeeplyNestedJson) {
  if (!NeedsHttp()) return;
  const std::string deep = std::string(200000, '[') + std::string(200000, ']');
  EXPECT_TRUE(RefusedHttp(Post(InferPath(), "{\"inputs\":[" + Tensor("a", "[1]", "\"data\":" + deep) + "]}"), 400,
                          {"deeper than 64 levels"}));
}

TEST_F(KServeTest, JsonWithMoreElementsThanTheLimit) {
  if (!NeedsHttp()) return;
  std::string data = "[0";
  for (int64_t i = 1; i < kMaxJsonElements + 10; ++i) data += ",0";
  data += "]";
  EXPECT_TRUE(RefusedHttp(Post(InferPath(), "{\"inputs\":[" + Tensor("a", "[1,4]", "\"data\":" + data) + "]}"), 429,
                          {"max_json_elements"}));
}

TEST_F(KServeTest, HeaderLengthBeyondTheBody) {
  if (!NeedsHttp()) return;
  const std::string json = "{\"inputs\":[]}";
  EXPECT_TRUE(RefusedHttp(Post(InferPath(), json, "Inference-Header-Content-Length: 9223372036854775807\r\n"), 400,
                          {"Inference-Header-Content-Length"}));
  EXPECT_TRUE(RefusedHttp(Post(InferPath(), json, "Inference-Header-Content-Length: 99999999999999999999999\r\n"), 400,
                          {"not a byte count"}));
  EXPECT_TRUE(
      RefusedHttp(Post(InferPath(), json, "Inference-Header-Content-Length: 1000\r\n"), 400, {"beyond the body"}));
}

TEST_F(KServeTest, ShapeTimesElementSizeOverflows) {
  if (!NeedsHttp()) return;
  const std::string shape = "[4611686018427387904,4611686018427387904]";
  EXPECT_TRUE(RefusedHttp(Post(InferPath(), "{\"inputs\":[" + Tensor("a", shape, "\"data\":[]") + "]}"), 429,
                          {"max_tensor_bytes"}));
  // The same over binary data, and over gRPC.
  const std::string json = "{\"inputs\":[" + Tensor("a", shape, "\"parameters\":{\"binary_data_size\":16}") + "]}";
  EXPECT_TRUE(RefusedHttp(Post(InferPath(), json + std::string(16, '\0'),
                               "Inference-Header-Content-Length: " + std::to_string(json.size()) + "\r\n"),
                          429, {"max_tensor_bytes"}));
  inference::ModelInferRequest request;
  request.set_model_name(kRepositoryModel);
  auto* in = request.add_inputs();
  in->set_name("a");
  in->set_datatype("FP32");
  in->add_shape(int64_t{1} << 62);
  in->add_shape(int64_t{1} << 62);
  request.add_raw_input_contents(std::string(16, '\0'));
  EXPECT_TRUE(Refused(Infer(request), StatusCode::RESOURCE_EXHAUSTED, {"max_tensor_bytes"}));
}

TEST_F(KServeTest, BinarySizesThatDisagreeWithTheBody) {
  if (!NeedsHttp()) return;
  const std::string json = "{\"inputs\":[" + Tensor("a", "[1,4]", "\"parameters\":{\"binary_data_size\":16}") + "," +
                           Tensor("b", "[1,4]", "\"parameters\":{\"binary_data_size\":18446744073709551615}") + "]}";
  const std::string header = "Inference-Header-Content-Length: " + std::to_string(json.size()) + "\r\n";
  EXPECT_TRUE(RefusedHttp(Post(InferPath(), json + std::string(32, '\0'), header), 400, {"input 'b'", "runs past"}));
  const std::string two = "{\"inputs\":[" + Tensor("a", "[1,4]", "\"parameters\":{\"binary_data_size\":16}") + "]}";
  EXPECT_TRUE(RefusedHttp(Post(InferPath(), two + std::string(4096, '\0'),
                               "Inference-Header-Content-Length: " + std::to_string(two.size()) + "\r\n"),
                          400, {"sum to 16 bytes, the body carries 4096"}));
  const std::string neg = "{\"inputs\":[" + Tensor("a", "[1,4]", "\"parameters\":{\"binary_data_size\":-16}") + "]}";
  EXPECT_TRUE(RefusedHttp(Post(InferPath(), neg + std::string(16, '\0'),
                               "Inference-Header-Content-Length: " + std::to_string(neg.size()) + "\r\n"),
                          400, {"binary_data_size must be a non-negative integer"}));
}

TEST_F(KServeTest, BodiesAboveMaxMessageBytes) {
  if (!NeedsHttp()) return;
  // Declared: refused from the header, before a byte of it is read.
  HttpResult r = Send("POST " + InferPath() + " HTTP/1.1\r\nHost: ged\r\nAuthorization: Bearer " + kAliceToken +
                      "\r\nContent-Length: 1099511627776\r\n\r\n");
  EXPECT_TRUE(RefusedHttp(r, 413, {"max_message_bytes", std::to_string(kMaxMessageBytes)}));
  // Sent: a body one byte over.
  EXPECT_TRUE(RefusedHttp(Post(InferPath(), std::string(kMaxMessageBytes + 1, ' ')), 413, {"max_message_bytes"}));
  // Chunked: counted while it is read.
  std::string chunked = "POST " + InferPath() +
                        " HTTP/1.1\r\nHost: ged\r\nConnection: close\r\nAuthorization: Bearer " + kAliceToken +
                        "\r\nTransfer-Encoding: chunked\r\n\r\n";
  const std::string chunk(1 << 20, ' ');
  for (int64_t sent = 0; sent <= kMaxMessageBytes; sent += chunk.size()) chunked += "100000\r\n" + chunk + "\r\n";
  chunked += "0\r\n\r\n";
  EXPECT_TRUE(RefusedHttp(Send(chunked), 413, {"max_message_bytes"}));
}

TEST_F(KServeTest, BytesLengthsThatRunPastTheirData) {
  if (!NeedsHttp()) return;
  inference::ModelInferRequest request;
  request.set_model_name(kRepositoryModel);
  auto* in = request.add_inputs();
  in->set_name("a");
  in->set_datatype("BYTES");
  in->add_shape(2);
  request.add_raw_input_contents(
      std::string("\xff\xff\xff\x7f"
                  "abcd",
                  8));
  EXPECT_TRUE(Refused(Infer(request), StatusCode::INVALID_ARGUMENT, {"claims"}));
  const std::string json =
      "{\"inputs\":[{\"name\":\"a\",\"datatype\":\"BYTES\",\"shape\":[1],\"parameters\":{\"binary_data_size\":8}}]}";
  EXPECT_TRUE(RefusedHttp(Post(InferPath(),
                               json + std::string("\xff\xff\xff\x7f"
                                                  "abcd",
                                                  8),
                               "Inference-Header-Content-Length: " + std::to_string(json.size()) + "\r\n"),
                          400, {"claims"}));
}

TEST_F(KServeTest, ModelNamesThatClimbOutOfTheRepository) {
  if (!NeedsHttp()) return;
  EXPECT_TRUE(RefusedHttp(Post("/v2/models/../infer", "{\"inputs\":[]}"), 400, {"'..'"}));
  EXPECT_TRUE(RefusedHttp(Post("/v2/models/%2e%2e/infer", "{\"inputs\":[]}"), 400, {"'..'"}));
  HttpResult r = Send(
      "GET /v2/models/..%2fcanary.txt/config HTTP/1.1\r\nHost: ged\r\nConnection: close\r\n"
      "Authorization: Bearer " +
      std::string(kAliceToken) + "\r\n\r\n");
  EXPECT_TRUE(r.status == 400 || r.status == 404) << r.status << " " << r.body;
  inference::ModelInferRequest request;
  request.set_model_name("../" + std::string(kRepositoryModel));
  EXPECT_TRUE(Refused(Infer(request), StatusCode::INVALID_ARGUMENT, {"'/'"}));
}

TEST_F(KServeTest, RepositoryControlNeedsAnAdmin) {
  if (!NeedsHttp()) return;
  const std::string unload = std::string("/v2/repository/models/") + kRepositoryModel + "/unload";
  EXPECT_TRUE(RefusedHttp(Post(unload, ""), 403, {"admin"}));
  EXPECT_TRUE(RefusedHttp(Post(unload, "", "", ""), 401, {"authorization"}));
  EXPECT_TRUE(RefusedHttp(Post(unload, "", "", "not-a-tenant"), 401, {"matches no tenant"}));
  EXPECT_TRUE(RefusedHttp(Post(std::string("/v2/repository/models/") + kRepositoryModel + "/load",
                               "{\"parameters\":{\"file:1/model.onnx\":\"AAAA\"}}"),
                          403, {"admin"}));
  // Two tokens name no one tenant.
  EXPECT_TRUE(
      RefusedHttp(Post(InferPath(), "{\"inputs\":[]}", "Authorization: Bearer " + std::string(kBobToken) + "\r\n"), 401,
                  {"more than one authorization"}));
  auto stub = h().KServeStub();
  grpc::ClientContext call;
  call.AddMetadata("authorization", std::string("Bearer ") + kAliceToken);
  inference::RepositoryModelUnloadRequest request;
  request.set_model_name(kRepositoryModel);
  inference::RepositoryModelUnloadResponse response;
  grpc::Status s = stub->RepositoryModelUnload(&call, request, &response);
  Scan(s, response, "RepositoryModelUnload");
  EXPECT_TRUE(Refused(s, StatusCode::PERMISSION_DENIED, {"admin"}));
  // The model still serves.
  HttpResult ready =
      Send(std::string("GET /v2/models/") + kRepositoryModel +
           "/ready HTTP/1.1\r\nHost: ged\r\nConnection: close\r\nAuthorization: Bearer " + kBobToken + "\r\n\r\n");
  EXPECT_EQ(ready.status, 200) << ready.body;
}

TEST_F(KServeTest, OversizedHeadersAndGarbage) {
  if (!NeedsHttp()) return;
  HttpResult r =
      Send("POST " + InferPath() + " HTTP/1.1\r\nHost: ged\r\nX-Pad: " + std::string(1 << 20, 'x') + "\r\n\r\n");
  EXPECT_GE(r.status, 400) << "a 1 MiB header line was accepted";
  h().ScanForLeaks(r.body, "oversized header reply");
  r = Send(std::string("\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03", 11) + std::string(4096, '\xff'));
  EXPECT_NE(r.status, 200);
}

TEST_F(KServeTest, StreamFloodIsBoundedAndAnswered) {
  if (!NeedsHttp()) return;
  auto stub = h().KServeStub();
  grpc::ClientContext call;
  call.AddMetadata("authorization", std::string("Bearer ") + kAliceToken);
  call.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(120));
  auto stream = stub->ModelStreamInfer(&call);
  constexpr int kRequests = 500;
  inference::ModelInferRequest request;
  request.set_model_name(kRepositoryModel);
  for (const char* name : {"a", "b"}) {
    auto* in = request.add_inputs();
    in->set_name(name);
    in->set_datatype("FP32");
    in->add_shape(1);
    in->add_shape(4);
    request.add_raw_input_contents(std::string(16, '\0'));
  }
  // Writes on a thread: the daemon reads no faster than it answers.
  std::thread writer([&] {
    for (int i = 0; i < kRequests; ++i) {
      request.set_id(std::to_string(i));
      if (!stream->Write(request)) break;
    }
    stream->WritesDone();
  });
  int answered = 0, failed = 0;
  inference::ModelStreamInferResponse response;
  while (stream->Read(&response)) {
    ++answered;
    if (!response.error_message().empty()) ++failed;
    h().ScanForLeaks(response.SerializeAsString(), "ModelStreamInfer reply");
  }
  writer.join();
  grpc::Status s = stream->Finish();
  EXPECT_TRUE(s.ok()) << s.error_message();
  EXPECT_EQ(answered, kRequests);
  EXPECT_EQ(failed, 0);
}

}  // namespace
}  // namespace ge::adversarial
