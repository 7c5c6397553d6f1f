// The KServe v2 HTTP/REST front end (kserve_http.h): routing, admission,
// JSON rendering of the core's messages, and inference.
#include "server/kserve_http.h"

#include <chrono>
#include <future>

#include "base/status.h"
#include "base/strings.h"
#include "google/protobuf/util/json_util.h"

namespace ge::server {
namespace {

using nlohmann::json;

enum class Kind {
  kServerMetadata,
  kLive,
  kReady,
  kModelMetadata,
  kModelReady,
  kModelConfig,
  kModelStats,
  kAllStats,
  kInfer,
  kIndex,
  kLoad,
  kUnload
};

struct Route {
  Kind kind;
  const char* rpc;
  const char* method;
  std::string model, version;
};

std::vector<std::string> SplitPath(std::string_view path) {
  std::vector<std::string> parts;
  size_t at = 0;
  while (at <= path.size()) {
    size_t slash = path.find('/', at);
    if (slash == std::string_view::npos) slash = path.size();
    if (slash > at) parts.emplace_back(path.substr(at, slash - at));
    at = slash + 1;
  }
  return parts;
}

// The route of `p` (the path's segments), or NOT_FOUND.
absl::StatusOr<Route> Resolve(const std::vector<std::string>& p) {
  const size_t n = p.size();
  if (n == 0 || p[0] != "v2") return NotFound("no such path");
  if (n == 1) return Route{Kind::kServerMetadata, "ServerMetadata", "GET", "", ""};
  if (p[1] == "health" && n == 3 && p[2] == "live") return Route{Kind::kLive, "ServerLive", "GET", "", ""};
  if (p[1] == "health" && n == 3 && p[2] == "ready") return Route{Kind::kReady, "ServerReady", "GET", "", ""};
  if (p[1] == "repository") {
    if (n == 3 && p[2] == "index") return Route{Kind::kIndex, "RepositoryIndex", "POST", "", ""};
    if (n == 5 && p[2] == "models" && p[4] == "load") {
      return Route{Kind::kLoad, "RepositoryModelLoad", "POST", p[3], ""};
    }
    if (n == 5 && p[2] == "models" && p[4] == "unload") {
      return Route{Kind::kUnload, "RepositoryModelUnload", "POST", p[3], ""};
    }
    return NotFound("no such path");
  }
  if (p[1] != "models" || n < 3) return NotFound("no such path");
  if (n == 3 && p[2] == "stats") return Route{Kind::kAllStats, "ModelStatistics", "GET", "", ""};
  Route r{Kind::kModelMetadata, "ModelMetadata", "GET", p[2], ""};
  size_t at = 3;
  if (n >= 5 && p[3] == "versions") {
    r.version = p[4];
    at = 5;
  }
  if (at == n) return r;
  if (at + 1 != n) return NotFound("no such path");
  const std::string& last = p[at];
  if (last == "ready") return Route{Kind::kModelReady, "ModelReady", "GET", r.model, r.version};
  if (last == "config") return Route{Kind::kModelConfig, "ModelConfig", "GET", r.model, r.version};
  if (last == "stats") return Route{Kind::kModelStats, "ModelStatistics", "GET", r.model, r.version};
  if (last == "infer") return Route{Kind::kInfer, "ModelInfer", "POST", r.model, r.version};
  return NotFound("no such path");
}

HttpReply JsonReply(int status, const json& body) {
  return HttpReply{status, "application/json", body.dump(-1, ' ', false, json::error_handler_t::replace), {}};
}

HttpReply ErrorReply(const absl::Status& status) {
  return HttpReply{HttpStatusOf(status.code()), "application/json", JsonError(std::string(status.message())), {}};
}

// A protobuf message as JSON with its proto field names (Triton's form for
// the config and the statistics).
HttpReply ProtoReply(const google::protobuf::Message& message) {
  std::string text;
  google::protobuf::util::JsonPrintOptions options;
  options.preserve_proto_field_names = true;
  (void)google::protobuf::util::MessageToJsonString(message, &text, options);
  return HttpReply{200, "application/json", std::move(text), {}};
}

template <typename Tensors>
json TensorsJson(const Tensors& tensors) {
  json out = json::array();
  for (const auto& t : tensors) {
    json shape = json::array();
    for (int64_t d : t.shape()) shape.push_back(d);
    out.push_back({{"name", t.name()}, {"datatype", t.datatype()}, {"shape", std::move(shape)}});
  }
  return out;
}

// The body of a POST that may be empty: {} then.
absl::StatusOr<json> BodyObject(const HttpRequest& request, const JsonLimits& limits) {
  if (request.body.empty()) return json::object();
  GE_ASSIGN_OR_RETURN(json body, ParseJsonBounded(request.body, limits));
  if (!body.is_object()) return InvalidArgument("the request's JSON must be an object");
  return body;
}

}  // namespace

HttpReply KServeHttp::Handle(const HttpRequest& request) {
  const std::vector<std::string> path = SplitPath(request.path);
  absl::StatusOr<Route> route = Resolve(path);
  if (!route.ok()) return ErrorReply(NotFound("no KServe v2 endpoint at '", request.path.substr(0, 128), "'"));
  const bool head = request.method == "HEAD" && std::string_view(route->method) == "GET";
  if (request.method != route->method && !head) {
    HttpReply reply = JsonReply(405, {{"error", StrCat(request.method.substr(0, 16), " is not served at ",
                                                       request.path.substr(0, 128), "; use ", route->method)}});
    reply.headers.emplace_back("Allow", route->method);
    return reply;
  }
  ServiceContext& ctx = core_.context();
  const CallStart begun = BeginCall(ctx, request.Header("authorization"));
  const std::string rpc = StrCat("http:", route->rpc);
  absl::Status status = begun.tenant.status();
  HttpReply reply;
  // A body above max_message_bytes was not read: 413 Payload Too Large
  // rather than 429, which invites a retry of the same body.
  const bool body_refused = status.ok() && !request.body_status.ok();
  if (body_refused) status = request.body_status;
  if (status.ok()) {
    Tenant& tenant = **begun.tenant;
    switch (route->kind) {
      case Kind::kInfer: reply = Infer(request, tenant, route->model, route->version, &status); break;
      default: reply = Serve(request, tenant, path, &status); break;
    }
  }
  FinishCall(ctx, rpc.c_str(), begun.start_ns, status, begun.caller());
  if (!status.ok()) {
    reply = ErrorReply(status);
    if (body_refused && status.code() == absl::StatusCode::kResourceExhausted) reply.status = 413;
    if (status.code() == absl::StatusCode::kUnauthenticated) reply.headers.emplace_back("WWW-Authenticate", "Bearer");
  }
  return reply;
}

HttpReply KServeHttp::Serve(const HttpRequest& request, Tenant& tenant, const std::vector<std::string>& path,
                            absl::Status* status) {
  const Route route = *Resolve(path);
  switch (route.kind) {
    case Kind::kServerMetadata: {
      inference::ServerMetadataResponse m;
      core_.ServerMetadata(&m);
      return JsonReply(200, {{"name", m.name()},
                             {"version", m.version()},
                             {"extensions", std::vector<std::string>(m.extensions().begin(), m.extensions().end())}});
    }
    case Kind::kLive: return JsonReply(200, {{"live", true}});
    case Kind::kReady: {
      const bool ready = core_.ServerReady();
      return JsonReply(ready ? 200 : 503, {{"ready", ready}});
    }
    case Kind::kModelReady: {
      absl::StatusOr<bool> ready = core_.ModelReady(tenant, route.model, route.version);
      if (!ready.ok()) return *status = ready.status(), HttpReply{};
      return JsonReply(*ready ? 200 : 503, {{"name", route.model}, {"ready", *ready}});
    }
    case Kind::kModelMetadata: {
      inference::ModelMetadataResponse m;
      *status = core_.ModelMetadata(tenant, route.model, route.version, &m);
      if (!status->ok()) return {};
      return JsonReply(200, {{"name", m.name()},
                             {"versions", std::vector<std::string>(m.versions().begin(), m.versions().end())},
                             {"platform", m.platform()},
                             {"inputs", TensorsJson(m.inputs())},
                             {"outputs", TensorsJson(m.outputs())}});
    }
    case Kind::kModelConfig: {
      inference::ModelConfigResponse m;
      *status = core_.ModelConfig(tenant, route.model, route.version, &m);
      if (!status->ok()) return {};
      return ProtoReply(m.config());
    }
    case Kind::kModelStats:
    case Kind::kAllStats: {
      inference::ModelStatisticsResponse m;
      *status = core_.ModelStatistics(tenant, route.model, route.version, &m);
      if (!status->ok()) return {};
      return ProtoReply(m);
    }
    case Kind::kIndex: {
      absl::StatusOr<json> body = BodyObject(request, limits_);
      if (!body.ok()) return *status = body.status(), HttpReply{};
      bool ready = false;
      if (auto it = body->find("ready"); it != body->end()) {
        if (!it->is_boolean()) return *status = InvalidArgument("'ready' must be true or false"), HttpReply{};
        ready = it->get<bool>();
      }
      inference::RepositoryIndexResponse m;
      core_.RepositoryIndex(tenant, ready, &m);
      json out = json::array();
      for (const auto& e : m.models()) {
        json entry = {{"name", e.name()}, {"state", e.state()}};
        if (!e.version().empty()) entry["version"] = e.version();
        if (!e.reason().empty()) entry["reason"] = e.reason();
        out.push_back(std::move(entry));
      }
      return JsonReply(200, out);
    }
    case Kind::kLoad:
    case Kind::kUnload: {
      absl::StatusOr<json> body = BodyObject(request, limits_);
      if (!body.ok()) return *status = body.status(), HttpReply{};
      std::vector<std::string> keys;
      if (auto it = body->find("parameters"); it != body->end()) {
        if (!it->is_object()) return *status = InvalidArgument("'parameters' must be an object"), HttpReply{};
        for (const auto& item : it->items()) keys.push_back(item.key());
      }
      std::promise<absl::Status> done;
      std::future<absl::Status> outcome = done.get_future();
      core_.Control(tenant, route.rpc, route.model, keys, route.kind == Kind::kLoad,
                    [&done](absl::Status s) { done.set_value(std::move(s)); });
      *status = outcome.get();
      if (!status->ok()) return {};
      return JsonReply(200, json::object());
    }
    case Kind::kInfer: break;
  }
  *status = absl::InternalError("unrouted request");
  return {};
}

HttpReply KServeHttp::Infer(const HttpRequest& request, Tenant& tenant, const std::string& model,
                            const std::string& version, absl::Status* status) {
  *status = core_.CheckInferTarget(tenant, model, version);
  if (!status->ok()) return {};
  absl::StatusOr<std::optional<size_t>> header_length =
      ParseHeaderLength(request.Header("inference-header-content-length"), request.body.size());
  if (!header_length.ok()) return *status = header_length.status(), HttpReply{};
  HttpInferRequest decoded;
  *status = DecodeHttpInferRequest(request.body, *header_length, limits_, &decoded);
  if (!status->ok()) return {};
  decoded.request.model = model;
  decoded.request.version = version;
  if (decoded.timeout_us && *decoded.timeout_us < int64_t{365} * 24 * 3600 * 1000000) {
    decoded.request.deadline = serving::Clock::now() + std::chrono::microseconds(*decoded.timeout_us);
  }
  std::promise<absl::StatusOr<serving::InferResult>> done;
  std::future<absl::StatusOr<serving::InferResult>> outcome = done.get_future();
  core_.Infer(tenant, std::move(decoded.request),
              [&done](absl::StatusOr<serving::InferResult> r) { done.set_value(std::move(r)); });
  absl::StatusOr<serving::InferResult> result = outcome.get();
  if (!result.ok()) return *status = result.status(), HttpReply{};
  HttpBody body = EncodeHttpInferResult(*result, decoded.forms);
  HttpReply reply{200, "application/json", std::move(body.body), {}};
  if (body.header_length) {
    reply.content_type = "application/octet-stream";
    reply.headers.emplace_back(kInferenceHeaderContentLength, std::to_string(*body.header_length));
  }
  return reply;
}

}  // namespace ge::server
