// HttpEndpoint on civetweb's C API: one request handler per route, two
// worker threads (scrapes and probes are rare and cheap).
#include "server/http_endpoint.h"

#include <civetweb.h>

#include <mutex>

#include "base/status.h"
#include "base/strings.h"
#include "server/config.h"

namespace ge::server {

int HttpEndpoint::Dispatch(::mg_connection* conn, void* handler) {
  HttpReply reply;
  try {
    reply = (*static_cast<Handler*>(handler))();
  } catch (const std::exception& e) {
    reply = HttpReply{500, "text/plain; charset=utf-8", std::string("internal error: ") + e.what() + "\n"};
  }
  mg_printf(conn,
            "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\nConnection: close\r\n\r\n",
            reply.status, mg_get_response_code_text(conn, reply.status), reply.content_type.c_str(),
            reply.body.size());
  mg_write(conn, reply.body.data(), reply.body.size());
  return reply.status;
}

absl::StatusOr<std::unique_ptr<HttpEndpoint>> HttpEndpoint::Start(const std::string& address,
                                                                  std::map<std::string, Handler> routes) {
  std::string host;
  int port = 0;
  GE_RETURN_IF_ERROR(SplitHostPort(address, &host, &port));
  static std::once_flag init;
  std::call_once(init, [] { mg_init_library(0); });
  auto endpoint = std::unique_ptr<HttpEndpoint>(new HttpEndpoint());
  endpoint->routes_ = std::move(routes);
  const std::string ports = StrCat(host.find(':') != std::string::npos ? StrCat("[", host, "]") : host, ":", port);
  const char* options[] = {"listening_ports", ports.c_str(), "num_threads", "2", nullptr};
  mg_callbacks callbacks{};
  endpoint->context_ = mg_start(&callbacks, nullptr, options);
  if (endpoint->context_ == nullptr) {
    return absl::UnavailableError(StrCat("cannot serve HTTP (metrics) on ", address, ": address in use or not local"));
  }
  for (auto& [path, handler] : endpoint->routes_) {
    mg_set_request_handler(endpoint->context_, path.c_str(), &HttpEndpoint::Dispatch, &handler);
  }
  mg_server_port bound[4];
  const int n = mg_get_server_ports(endpoint->context_, 4, bound);
  endpoint->port_ = n > 0 ? bound[0].port : port;
  return endpoint;
}

HttpEndpoint::~HttpEndpoint() {
  if (context_ != nullptr) mg_stop(context_);
}

}  // namespace ge::server
