// HttpEndpoint: the daemon's small HTTP server (civetweb) for /metrics,
// /healthz and /readyz. Routes are fixed at start; each handler returns the
// status code, content type and body of a GET. Port 0 binds a free port;
// port() reports the real one. Stopping takes about 2 s once a request has
// been served (civetweb's worker shutdown), so it is started once per daemon.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>

#include "absl/status/statusor.h"

struct mg_context;
struct mg_connection;

namespace ge::server {

struct HttpReply {
  int status = 200;
  std::string content_type = "text/plain; charset=utf-8";
  std::string body;
};

class HttpEndpoint {
 public:
  using Handler = std::function<HttpReply()>;
  static absl::StatusOr<std::unique_ptr<HttpEndpoint>> Start(const std::string& address,
                                                             std::map<std::string, Handler> routes);
  ~HttpEndpoint();
  int port() const { return port_; }

 private:
  HttpEndpoint() = default;
  static int Dispatch(::mg_connection* conn, void* handler);

  std::map<std::string, Handler> routes_;
  mg_context* context_ = nullptr;
  int port_ = 0;
};

}  // namespace ge::server
