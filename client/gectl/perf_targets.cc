// gectl perf's transports (perf_targets.h): metadata, input building and
// the gRPC and HTTP targets.
#include "client/gectl/perf_targets.h"

#include <cstring>
#include <random>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "base/io/json_writer.h"
#include "base/status.h"
#include "client/cpp/client.h"
#include "client/gectl/http_client.h"
#include "client/gectl/remote_client.h"
#include "ge/kserve/grpc_service.grpc.pb.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"

namespace ge::gectl::perf {
namespace {

// Bytes per element of a KServe datatype; 0 for BYTES; -1 unknown.
int ElementBytes(const std::string& datatype) {
  static const std::pair<const char*, int> kSizes[] = {
      {"BOOL", 1},   {"UINT8", 1}, {"INT8", 1}, {"UINT16", 2}, {"INT16", 2}, {"FP16", 2}, {"BF16", 2},
      {"UINT32", 4}, {"INT32", 4}, {"FP32", 4}, {"UINT64", 8}, {"INT64", 8}, {"FP64", 8}, {"BYTES", 0}};
  for (const auto& [name, size] : kSizes) {
    if (datatype == name) return size;
  }
  return -1;
}

uint16_t HalfOfUnitFloat(float f) {  // f in [0, 1); truncates the mantissa
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof(bits));
  const int exponent = static_cast<int>((bits >> 23) & 0xff) - 127;
  if (exponent < -14) return 0;
  return static_cast<uint16_t>(((exponent + 15) << 10) | ((bits >> 13) & 0x3ff));
}

absl::Status FillInput(PerfTensor& t, uint64_t seed) {
  const int size = ElementBytes(t.datatype);
  if (size < 0)
    return InvalidArgument("input '", t.name, "' has datatype '", t.datatype, "', which gectl perf cannot fill");
  int64_t n = 1;
  for (int64_t d : t.shape) {
    if (d < 0 || (d > 0 && n > (int64_t{1} << 40) / d)) return InvalidArgument("input '", t.name, "' is too large");
    n *= d;
  }
  if (size == 0) {  // BYTES: n empty strings, each a 4-byte zero length
    t.data.assign(static_cast<size_t>(n) * 4, '\0');
    return absl::OkStatus();
  }
  t.data.assign(static_cast<size_t>(n) * size, '\0');
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> unit(0.0f, 1.0f);
  // One encoder per tensor, chosen once: a value in [0, 1) to its bytes.
  void (*encode)(float, char*) = nullptr;
  if (t.datatype == "FP32") {
    encode = [](float v, char* p) { std::memcpy(p, &v, 4); };
  } else if (t.datatype == "FP64") {
    encode = [](float v, char* p) {
      const double d = v;
      std::memcpy(p, &d, 8);
    };
  } else if (t.datatype == "FP16") {
    encode = [](float v, char* p) {
      const uint16_t h = HalfOfUnitFloat(v);
      std::memcpy(p, &h, 2);
    };
  } else if (t.datatype == "BF16") {
    encode = [](float v, char* p) {
      uint32_t bits;
      std::memcpy(&bits, &v, 4);
      const uint16_t h = static_cast<uint16_t>(bits >> 16);
      std::memcpy(p, &h, 2);
    };
  }
  if (encode == nullptr) return absl::OkStatus();  // integers and BOOL stay zero
  char* out = t.data.data();
  for (int64_t i = 0; i < n; ++i) encode(unit(rng), out + i * size);
  return absl::OkStatus();
}

std::string ModelPath(const PerfModel& m) {
  std::string path = StrCat("/v2/models/", m.name);
  if (!m.version.empty()) absl::StrAppend(&path, "/versions/", m.version);
  return path;
}

std::vector<std::pair<std::string, std::string>> AuthHeaders(const PerfConnection& c) {
  std::vector<std::pair<std::string, std::string>> headers;
  if (!c.remote.token.empty()) headers.emplace_back("Authorization", "Bearer " + c.remote.token);
  return headers;
}

// A non-2xx answer as a status: KServe's {"error": "..."} text when there is one.
absl::Status FromHttp(const HttpResponse& r, std::string_view what) {
  std::string message = StrCat("HTTP ", r.status);
  google::protobuf::Struct body;
  google::protobuf::util::JsonParseOptions options;
  options.ignore_unknown_fields = true;
  if (google::protobuf::util::JsonStringToMessage(r.body, &body, options).ok()) {
    auto it = body.fields().find("error");
    if (it != body.fields().end() && it->second.has_string_value()) message = it->second.string_value();
  }
  return absl::Status(StatusCodeFromHttp(r.status), StrCat(what, ": ", message));
}

absl::Status ParseJson(const std::string& json, google::protobuf::Message* message, std::string_view what) {
  google::protobuf::util::JsonParseOptions options;
  options.ignore_unknown_fields = true;
  const auto s = google::protobuf::util::JsonStringToMessage(json, message, options);
  if (!s.ok()) return Internal(what, ": not the JSON KServe v2 defines: ", s.ToString());
  return absl::OkStatus();
}

struct Metadata {
  inference::ModelMetadataResponse metadata;
  int max_batch_size = -1;  // -1: no config available
};

absl::StatusOr<Metadata> FetchGrpc(const PerfConnection& c, const std::string& model, const std::string& version) {
  client::Client client(ClientOptionsFor(c.remote));
  GE_RETURN_IF_ERROR(FromGrpc(client.setup(), c.remote.remote));
  auto stub = inference::GRPCInferenceService::NewStub(client.channel());
  Metadata out;
  inference::ModelMetadataRequest request;
  request.set_name(model);
  request.set_version(version);
  auto ctx = client.NewContext();
  GE_RETURN_IF_ERROR(FromGrpc(stub->ModelMetadata(ctx.get(), request, &out.metadata), c.remote.remote));
  inference::ModelConfigRequest config_request;
  config_request.set_name(model);
  config_request.set_version(version);
  inference::ModelConfigResponse config;
  ctx = client.NewContext();
  const grpc::Status s = stub->ModelConfig(ctx.get(), config_request, &config);
  if (s.ok()) {
    out.max_batch_size = config.config().max_batch_size();
  } else if (s.error_code() != grpc::StatusCode::UNIMPLEMENTED) {
    return FromGrpc(s, c.remote.remote);
  }
  return out;
}

absl::StatusOr<Metadata> FetchHttp(const PerfConnection& c, const std::string& model, const std::string& version) {
  GE_ASSIGN_OR_RETURN(HttpConnection http, HttpConnection::Create(c.remote.remote, c.timeout_seconds()));
  PerfModel m;
  m.name = model;
  m.version = version;
  Metadata out;
  const std::string path = ModelPath(m);
  GE_ASSIGN_OR_RETURN(HttpResponse r, http.Request("GET", path, AuthHeaders(c), ""));
  if (r.status != 200) return FromHttp(r, StrCat("GET ", path));
  GE_RETURN_IF_ERROR(ParseJson(r.body, &out.metadata, StrCat("GET ", path)));
  GE_ASSIGN_OR_RETURN(r, http.Request("GET", path + "/config", AuthHeaders(c), ""));
  if (r.status == 200) {
    // Triton answers with the config itself; accept {"config": {...}} too.
    inference::ModelConfigResponse wrapped;
    GE_RETURN_IF_ERROR(ParseJson(r.body, wrapped.mutable_config(), StrCat("GET ", path, "/config")));
    if (wrapped.config().name().empty())
      GE_RETURN_IF_ERROR(ParseJson(r.body, &wrapped, StrCat("GET ", path, "/config")));
    out.max_batch_size = wrapped.config().max_batch_size();
  } else if (r.status != 404 && r.status != 501) {
    return FromHttp(r, StrCat("GET ", path, "/config"));
  }
  return out;
}

class GrpcTarget final : public PerfTarget {
 public:
  GrpcTarget(std::shared_ptr<client::Client> client, std::shared_ptr<inference::GRPCInferenceService::Stub> stub,
             std::shared_ptr<const inference::ModelInferRequest> request, std::string address)
      : client_(std::move(client)),
        stub_(std::move(stub)),
        request_(std::move(request)),
        address_(std::move(address)) {}

  absl::Status Infer() override {
    auto ctx = client_->NewContext();
    inference::ModelInferResponse response;
    GE_RETURN_IF_ERROR(FromGrpc(stub_->ModelInfer(ctx.get(), *request_, &response), address_));
    if (response.raw_output_contents_size() != response.outputs_size()) {
      return Internal("the answer has ", response.outputs_size(), " outputs and ", response.raw_output_contents_size(),
                      " raw contents");
    }
    return absl::OkStatus();
  }

 private:
  std::shared_ptr<client::Client> client_;
  std::shared_ptr<inference::GRPCInferenceService::Stub> stub_;
  std::shared_ptr<const inference::ModelInferRequest> request_;
  std::string address_;
};

class HttpTarget final : public PerfTarget {
 public:
  HttpTarget(HttpConnection http, std::string path, std::vector<std::pair<std::string, std::string>> headers,
             std::shared_ptr<const std::string> body)
      : http_(std::move(http)), path_(std::move(path)), headers_(std::move(headers)), body_(std::move(body)) {}

  absl::Status Infer() override {
    GE_ASSIGN_OR_RETURN(HttpResponse r, http_.Request("POST", path_, headers_, *body_));
    if (r.status != 200) return FromHttp(r, StrCat("POST ", path_));
    auto it = r.headers.find("inference-header-content-length");
    uint64_t header_length = r.body.size();
    if (it != r.headers.end() && (!absl::SimpleAtoi(it->second, &header_length) || header_length > r.body.size())) {
      return Internal("POST ", path_, ": Inference-Header-Content-Length '", it->second, "' beyond the body");
    }
    return absl::OkStatus();
  }

 private:
  HttpConnection http_;
  std::string path_;
  std::vector<std::pair<std::string, std::string>> headers_;
  std::shared_ptr<const std::string> body_;
};

ServerStats StatsFromProto(const inference::ModelStatisticsResponse& response) {
  ServerStats out;
  const auto add = [](ServerStats::Duration& d, const inference::StatisticDuration& p) {
    d.count += static_cast<int64_t>(p.count());
    d.ns += static_cast<int64_t>(p.ns());
  };
  for (const auto& m : response.model_stats()) {
    out.inference_count += static_cast<int64_t>(m.inference_count());
    out.execution_count += static_cast<int64_t>(m.execution_count());
    add(out.queue, m.inference_stats().queue());
    add(out.compute_infer, m.inference_stats().compute_infer());
    for (const auto& b : m.batch_stats()) add(out.batches[static_cast<int64_t>(b.batch_size())], b.compute_infer());
  }
  return out;
}

}  // namespace

ServerStats ServerStats::Minus(const ServerStats& earlier) const {
  const auto minus = [](const Duration& a, const Duration& b) { return Duration{a.count - b.count, a.ns - b.ns}; };
  ServerStats out;
  out.inference_count = inference_count - earlier.inference_count;
  out.execution_count = execution_count - earlier.execution_count;
  out.queue = minus(queue, earlier.queue);
  out.compute_infer = minus(compute_infer, earlier.compute_infer);
  for (const auto& [rows, d] : batches) {
    auto it = earlier.batches.find(rows);
    const Duration delta = it == earlier.batches.end() ? d : minus(d, it->second);
    if (delta.count > 0) out.batches[rows] = delta;
  }
  return out;
}

namespace {

class GrpcStatsReader final : public ServerStatsReader {
 public:
  GrpcStatsReader(const PerfConnection& connection, const PerfModel& model)
      : client_(ClientOptionsFor(connection.remote)), remote_(connection.remote.remote) {
    request_.set_name(model.name);
    request_.set_version(model.version);
  }
  absl::Status Setup() {
    GE_RETURN_IF_ERROR(FromGrpc(client_.setup(), remote_));
    stub_ = inference::GRPCInferenceService::NewStub(client_.channel());
    return absl::OkStatus();
  }
  absl::StatusOr<ServerStats> Read() override {
    inference::ModelStatisticsResponse response;
    auto ctx = client_.NewContext();
    GE_RETURN_IF_ERROR(FromGrpc(stub_->ModelStatistics(ctx.get(), request_, &response), remote_));
    return StatsFromProto(response);
  }

 private:
  client::Client client_;
  std::string remote_;
  inference::ModelStatisticsRequest request_;
  std::unique_ptr<inference::GRPCInferenceService::Stub> stub_;
};

class HttpStatsReader final : public ServerStatsReader {
 public:
  HttpStatsReader(HttpConnection http, const PerfConnection& connection, const PerfModel& model)
      : http_(std::move(http)), headers_(AuthHeaders(connection)), path_(ModelPath(model) + "/stats") {}
  absl::StatusOr<ServerStats> Read() override {
    GE_ASSIGN_OR_RETURN(HttpResponse r, http_.Request("GET", path_, headers_, ""));
    if (r.status != 200) return FromHttp(r, StrCat("GET ", path_));
    inference::ModelStatisticsResponse response;
    GE_RETURN_IF_ERROR(ParseJson(r.body, &response, StrCat("GET ", path_)));
    return StatsFromProto(response);
  }

 private:
  HttpConnection http_;
  std::vector<std::pair<std::string, std::string>> headers_;
  std::string path_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<ServerStatsReader>> ServerStatsReader::Open(const PerfConnection& connection,
                                                                           const PerfModel& model) {
  if (connection.protocol == "grpc") {
    auto reader = std::make_unique<GrpcStatsReader>(connection, model);
    GE_RETURN_IF_ERROR(reader->Setup());
    return reader;
  }
  GE_ASSIGN_OR_RETURN(HttpConnection http,
                      HttpConnection::Create(connection.remote.remote, connection.timeout_seconds()));
  return std::make_unique<HttpStatsReader>(std::move(http), connection, model);
}

absl::StatusOr<PerfModel> PrepareModel(const PerfConnection& connection, const std::string& model,
                                       const std::string& version, int batch,
                                       const std::map<std::string, std::vector<int64_t>>& shapes, uint64_t seed) {
  if (model.empty()) return InvalidArgument("a model name is required (-m NAME)");
  if (batch < 1) return InvalidArgument("the batch size (-b) must be at least 1");
  Metadata meta;
  if (connection.protocol == "grpc") {
    GE_ASSIGN_OR_RETURN(meta, FetchGrpc(connection, model, version));
  } else if (connection.protocol == "http") {
    GE_ASSIGN_OR_RETURN(meta, FetchHttp(connection, model, version));
  } else {
    return InvalidArgument("protocol '", connection.protocol, "' is neither grpc nor http");
  }
  PerfModel out;
  out.name = model;
  out.version = version;
  if (meta.max_batch_size >= 0) {
    out.max_batch_size = meta.max_batch_size;
  } else {  // no config: a model batches when every input leads with -1
    bool all = meta.metadata.inputs_size() > 0;
    for (const auto& in : meta.metadata.inputs()) all = all && in.shape_size() > 0 && in.shape(0) == -1;
    out.max_batch_size = all ? batch : 0;
  }
  if (out.max_batch_size == 0 && batch > 1) {
    return InvalidArgument("model '", model, "' does not batch (max_batch_size 0): -b must be 1");
  }
  if (out.max_batch_size > 0 && batch > out.max_batch_size) {
    return InvalidArgument("-b ", batch, " is above model '", model, "''s max_batch_size ", out.max_batch_size);
  }
  for (const auto& [name, dims] : shapes) {
    bool found = false;
    for (const auto& in : meta.metadata.inputs()) found = found || in.name() == name;
    if (!found) return InvalidArgument("--shape names '", name, "', which is not an input of model '", model, "'");
  }
  uint64_t index = 0;
  for (const auto& in : meta.metadata.inputs()) {
    PerfTensor t;
    t.name = in.name();
    t.datatype = in.datatype();
    const bool batched = out.max_batch_size > 0;
    std::vector<int64_t> dims(in.shape().begin() + (batched && in.shape_size() > 0 ? 1 : 0), in.shape().end());
    auto given = shapes.find(t.name);
    if (given != shapes.end()) {
      if (given->second.size() != dims.size()) {
        return InvalidArgument("--shape ", t.name, " has ", given->second.size(), " dims, the input has ", dims.size(),
                               batched ? " besides the batch dim" : "");
      }
      for (size_t i = 0; i < dims.size(); ++i) {
        if (dims[i] >= 0 && dims[i] != given->second[i]) {
          return InvalidArgument("--shape ", t.name, ": dim ", i, " is ", dims[i], " in the model, not ",
                                 given->second[i]);
        }
        dims[i] = given->second[i];
      }
    }
    for (int64_t d : dims) {
      if (d < 0) {
        return InvalidArgument("input '", t.name, "' has a dynamic dim: give its dims with --shape ", t.name,
                               ":D0,D1,...", batched ? " (without the batch dim)" : "");
      }
    }
    if (batched) dims.insert(dims.begin(), batch);
    t.shape = std::move(dims);
    GE_RETURN_IF_ERROR(FillInput(t, seed + index++));
    out.inputs.push_back(std::move(t));
  }
  for (const auto& o : meta.metadata.outputs()) out.outputs.push_back(o.name());
  return out;
}

absl::StatusOr<TargetFactory> MakeTargetFactory(const PerfConnection& connection, const PerfModel& model) {
  if (connection.protocol == "grpc") {
    auto client = std::make_shared<client::Client>(ClientOptionsFor(connection.remote));
    GE_RETURN_IF_ERROR(FromGrpc(client->setup(), connection.remote.remote));
    std::shared_ptr<inference::GRPCInferenceService::Stub> stub =
        inference::GRPCInferenceService::NewStub(client->channel());
    auto request = std::make_shared<inference::ModelInferRequest>();
    request->set_model_name(model.name);
    request->set_model_version(model.version);
    for (const PerfTensor& t : model.inputs) {
      auto* in = request->add_inputs();
      in->set_name(t.name);
      in->set_datatype(t.datatype);
      for (int64_t d : t.shape) in->add_shape(d);
      request->add_raw_input_contents(t.data);
    }
    std::shared_ptr<const inference::ModelInferRequest> shared = request;
    const std::string address = connection.remote.remote;
    return TargetFactory([client, stub, shared, address]() -> absl::StatusOr<std::unique_ptr<PerfTarget>> {
      return std::make_unique<GrpcTarget>(client, stub, shared, address);
    });
  }
  if (connection.protocol != "http") {
    return InvalidArgument("protocol '", connection.protocol, "' is neither grpc nor http");
  }
  if (!connection.remote.tls_ca.empty() || !connection.remote.tls_cert.empty() || !connection.remote.tls_key.empty()) {
    return InvalidArgument("TLS flags apply to -i grpc only: gectl's HTTP client speaks plain HTTP");
  }
  // The binary-data extension: a JSON header, then each input's bytes.
  io::JsonWriter json;
  json.BeginObject().Key("inputs").BeginArray();
  size_t raw_bytes = 0;
  for (const PerfTensor& t : model.inputs) {
    json.BeginObject().Key("name").String(t.name).Key("shape").BeginArray();
    for (int64_t d : t.shape) json.Int(d);
    json.EndArray().Key("datatype").String(t.datatype);
    json.Key("parameters").BeginObject().Key("binary_data_size").Int(static_cast<int64_t>(t.data.size())).EndObject();
    json.EndObject();
    raw_bytes += t.data.size();
  }
  json.EndArray().Key("parameters").BeginObject().Key("binary_data_output").Bool(true).EndObject().EndObject();
  auto body = std::make_shared<std::string>(json.str());
  const size_t header_length = body->size();
  body->reserve(header_length + raw_bytes);
  for (const PerfTensor& t : model.inputs) body->append(t.data);
  auto headers = AuthHeaders(connection);
  headers.emplace_back("Content-Type", "application/octet-stream");
  headers.emplace_back("Inference-Header-Content-Length", std::to_string(header_length));
  const std::string path = ModelPath(model) + "/infer";
  std::shared_ptr<const std::string> shared = body;
  return TargetFactory([connection, path, headers, shared]() -> absl::StatusOr<std::unique_ptr<PerfTarget>> {
    GE_ASSIGN_OR_RETURN(HttpConnection http,
                        HttpConnection::Create(connection.remote.remote, connection.timeout_seconds()));
    return std::make_unique<HttpTarget>(std::move(http), path, headers, shared);
  });
}

}  // namespace ge::gectl::perf
