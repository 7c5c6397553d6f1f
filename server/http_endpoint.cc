// HttpEndpoint on civetweb's C API: one request handler per route, the body
// read (bounded) before the handler, the reply through civetweb's response
// header calls (which say keep-alive or close).
#include "server/http_endpoint.h"

#include <civetweb.h>

#include <algorithm>
#include <cctype>
#include <mutex>

#include "base/logging.h"
#include "base/status.h"
#include "base/strings.h"
#include "server/config.h"

namespace ge::server {
namespace {

std::string Lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return std::tolower(c); });
  return out;
}

// Reads the request body into `request`, at most `limit` bytes; false when
// the connection must close afterwards (body refused or cut short).
bool ReadBody(::mg_connection* conn, const ::mg_request_info& info, int64_t limit, const std::string& what,
              HttpRequest& request) {
  bool chunked = false;
  for (std::string_view v : request.Header("transfer-encoding"))
    chunked |= Lower(v).find("chunked") != std::string::npos;
  const long long length = info.content_length;
  if (length <= 0 && !chunked) return true;
  if (length > limit) {
    request.body_status = ResourceExhausted("the request body of ", length, " bytes is above max_message_bytes (",
                                            limit, "), the ", what, " server's body limit");
    return false;
  }
  if (length > 0) request.body.reserve(static_cast<size_t>(length));
  char buffer[65536];
  for (;;) {
    const int n = mg_read(conn, buffer, sizeof(buffer));
    if (n <= 0) break;
    if (static_cast<int64_t>(request.body.size()) + n > limit) {
      request.body.clear();
      request.body_status = ResourceExhausted("the chunked request body is above max_message_bytes (", limit, "), the ",
                                              what, " server's body limit");
      return false;
    }
    request.body.append(buffer, static_cast<size_t>(n));
  }
  if (length > 0 && static_cast<long long>(request.body.size()) != length) {
    request.body_status = InvalidArgument("the request body ended after ", request.body.size(), " of its ", length,
                                          " bytes (Content-Length)");
    return false;
  }
  return true;
}

}  // namespace

std::vector<std::string_view> HttpRequest::Header(std::string_view name) const {
  std::vector<std::string_view> out;
  for (const auto& [key, value] : headers) {
    if (key == name) out.emplace_back(value);
  }
  return out;
}

int HttpEndpoint::Dispatch(::mg_connection* conn, void* route) {
  const Route& r = *static_cast<const Route*>(route);
  const HttpOptions& options = r.endpoint->options_;
  const ::mg_request_info* info = mg_get_request_info(conn);
  HttpRequest request;
  request.method = info->request_method != nullptr ? info->request_method : "";
  const char* path = info->local_uri_raw != nullptr ? info->local_uri_raw : info->local_uri;
  request.path = path != nullptr ? path : "";
  request.query = info->query_string != nullptr ? info->query_string : "";
  for (int i = 0; i < info->num_headers; ++i) {
    request.headers.emplace_back(Lower(info->http_headers[i].name), info->http_headers[i].value);
  }
  const bool body_read = ReadBody(conn, *info, options.max_body_bytes, options.what, request);
  const bool keep = options.keep_alive && body_read;
  HttpReply reply;
  try {
    reply = r.handler(request);
  } catch (const std::exception& e) {
    reply = HttpReply{500, "text/plain; charset=utf-8", std::string("internal error: ") + e.what() + "\n", {}};
  }
  if (!keep) mg_disable_connection_keep_alive(conn);
  mg_response_header_start(conn, reply.status);
  mg_response_header_add(conn, "Content-Type", reply.content_type.c_str(), -1);
  const std::string length = std::to_string(reply.body.size());
  mg_response_header_add(conn, "Content-Length", length.c_str(), -1);
  for (const auto& [name, value] : reply.headers) mg_response_header_add(conn, name.c_str(), value.c_str(), -1);
  mg_response_header_send(conn);
  if (request.method != "HEAD") mg_write(conn, reply.body.data(), reply.body.size());
  return reply.status;
}

absl::StatusOr<std::unique_ptr<HttpEndpoint>> HttpEndpoint::Start(const std::string& address,
                                                                  std::map<std::string, Handler> routes,
                                                                  const HttpOptions& options) {
  std::string host;
  int port = 0;
  GE_RETURN_IF_ERROR(SplitHostPort(address, &host, &port));
  static std::once_flag init;
  std::call_once(init, [] { mg_init_library(0); });
  auto endpoint = std::unique_ptr<HttpEndpoint>(new HttpEndpoint());
  endpoint->options_ = options;
  for (auto& [path, handler] : routes) endpoint->routes_[path] = Route{endpoint.get(), std::move(handler)};
  const std::string ports = StrCat(host.find(':') != std::string::npos ? StrCat("[", host, "]") : host, ":", port);
  const std::string threads = std::to_string(std::max(1, options.threads));
  // Idle keep-alive connections are closed after 2 s; a request's headers
  // and body must arrive within 30 s (slow clients hold a worker no longer).
  const char* settings[] = {"listening_ports",
                            ports.c_str(),
                            "num_threads",
                            threads.c_str(),
                            "enable_keep_alive",
                            options.keep_alive ? "yes" : "no",
                            "keep_alive_timeout_ms",
                            "2000",
                            "request_timeout_ms",
                            "30000",
                            nullptr};
  mg_callbacks callbacks{};
  endpoint->context_ = mg_start(&callbacks, nullptr, settings);
  if (endpoint->context_ == nullptr) {
    return absl::UnavailableError(
        StrCat("cannot serve HTTP (", options.what, ") on ", address, ": address in use or not local"));
  }
  for (auto& [path, route] : endpoint->routes_) {
    mg_set_request_handler(endpoint->context_, path.c_str(), &HttpEndpoint::Dispatch, &route);
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
