// A small blocking HTTP/1.1 client for gectl's KServe v2 REST paths
// (`gectl perf -i http`): one keep-alive connection to HOST:PORT over plain
// TCP, requests with a body of bytes, answers read by Content-Length or
// chunked transfer coding. A connection the server closed while idle is
// reopened once before the request is sent again. Not thread-safe: one
// connection per sending thread.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace ge::gectl {

struct HttpResponse {
  int status = 0;
  std::map<std::string, std::string> headers;  // names lower-cased
  std::string body;
};

class HttpConnection {
 public:
  // `address` is HOST:PORT or http://HOST:PORT[/]; `timeout_seconds`
  // bounds each send and each wait for the answer's bytes.
  static absl::StatusOr<HttpConnection> Create(const std::string& address, double timeout_seconds);
  HttpConnection(HttpConnection&& other) noexcept;
  HttpConnection& operator=(HttpConnection&& other) noexcept;
  HttpConnection(const HttpConnection&) = delete;
  HttpConnection& operator=(const HttpConnection&) = delete;
  ~HttpConnection();

  // `headers` are "Name: value" pairs beside Host, Content-Length and
  // Connection, which are set here.
  absl::StatusOr<HttpResponse> Request(std::string_view method, std::string_view path,
                                       const std::vector<std::pair<std::string, std::string>>& headers,
                                       std::string_view body);

  const std::string& host() const { return host_; }

 private:
  HttpConnection() = default;
  absl::Status Connect();
  void Close();
  absl::Status SendAll(std::string_view bytes);
  absl::StatusOr<HttpResponse> ReadResponse(bool* nothing_read);
  // Reads more bytes into buffer_; false at end of stream.
  absl::StatusOr<bool> Fill();

  std::string host_;
  std::string port_;
  double timeout_seconds_ = 60;
  int fd_ = -1;
  std::string buffer_;  // read but not yet consumed
};

// The absl code of an HTTP status, as KServe's REST mapping gives it
// (400 INVALID_ARGUMENT, 401 UNAUTHENTICATED, 403 PERMISSION_DENIED, 404
// NOT_FOUND, 409 ALREADY_EXISTS, 429 RESOURCE_EXHAUSTED, 499 CANCELLED,
// 501 UNIMPLEMENTED, 503 UNAVAILABLE, 504 DEADLINE_EXCEEDED, other 4xx
// FAILED_PRECONDITION, other 5xx INTERNAL).
absl::StatusCode StatusCodeFromHttp(int status);

}  // namespace ge::gectl
