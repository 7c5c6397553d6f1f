// HttpEndpoint: the daemon's small HTTP servers on civetweb — the one for
// /metrics, /healthz and /readyz, and the KServe v2 HTTP/REST one
// (server/kserve_http.h). Routes are fixed at start; a route also takes
// the paths below it ("/v2" takes "/v2/models/m"). Each handler gets the request (method,
// raw path, query, headers, body) and returns the status, headers and
// body. The body is read before the handler runs, up to max_body_bytes:
// beyond it (by Content-Length, or while reading a chunked body) the
// handler gets body_status RESOURCE_EXHAUSTED naming the limit and an empty
// body, and the connection closes after the reply. Port 0 binds a free
// port; port() reports the real one. Stopping waits for the workers (up to
// the keep-alive and request timeouts).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

struct mg_context;
struct mg_connection;

namespace ge::server {

struct HttpRequest {
  std::string method;                                        // "GET", "POST", ...
  std::string path;                                          // as sent (percent-escapes decoded, nothing else cleaned)
  std::string query;                                         // after '?', or empty
  std::vector<std::pair<std::string, std::string>> headers;  // names lowercase, in order
  std::string body;
  absl::Status body_status;  // not OK: the body was not read (see above)
  // Every value of header `name` (lowercase).
  std::vector<std::string_view> Header(std::string_view name) const;
};

struct HttpReply {
  int status = 200;
  std::string content_type = "text/plain; charset=utf-8";
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers = {};  // besides Content-Type and Content-Length
};

struct HttpOptions {
  std::string what = "metrics";  // named in errors and logs
  int threads = 2;
  int64_t max_body_bytes = 0;  // 0: requests carry no body (any is refused)
  bool keep_alive = false;
};

class HttpEndpoint {
 public:
  using Handler = std::function<HttpReply(const HttpRequest&)>;
  static absl::StatusOr<std::unique_ptr<HttpEndpoint>> Start(const std::string& address,
                                                             std::map<std::string, Handler> routes,
                                                             const HttpOptions& options = {});
  ~HttpEndpoint();
  int port() const { return port_; }

 private:
  struct Route {
    HttpEndpoint* endpoint;
    Handler handler;
  };
  HttpEndpoint() = default;
  static int Dispatch(::mg_connection* conn, void* route);

  HttpOptions options_;
  std::map<std::string, Route> routes_;
  mg_context* context_ = nullptr;
  int port_ = 0;
};

}  // namespace ge::server
