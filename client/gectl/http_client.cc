// HttpConnection (http_client.h): POSIX sockets, HTTP/1.1 framing.
#include "client/gectl/http_client.h"

#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "base/status.h"

namespace ge::gectl {
namespace {

template <typename... Args>
absl::Status Unavailable(const Args&... args) {
  return absl::UnavailableError(StrCat(args...));
}

constexpr size_t kMaxHeaderBytes = 64 << 10;
constexpr size_t kMaxBodyBytes = size_t{1} << 30;

absl::Status SocketError(std::string_view what, const std::string& host, const std::string& port) {
  const int err = errno;
  const absl::StatusCode code =
      (err == EAGAIN || err == EWOULDBLOCK) ? absl::StatusCode::kDeadlineExceeded : absl::StatusCode::kUnavailable;
  return absl::Status(code, StrCat(what, " ", host, ":", port, ": ", std::strerror(err)));
}

}  // namespace

absl::StatusCode StatusCodeFromHttp(int status) {
  switch (status) {
    case 400: return absl::StatusCode::kInvalidArgument;
    case 401: return absl::StatusCode::kUnauthenticated;
    case 403: return absl::StatusCode::kPermissionDenied;
    case 404: return absl::StatusCode::kNotFound;
    case 409: return absl::StatusCode::kAlreadyExists;
    case 429: return absl::StatusCode::kResourceExhausted;
    case 499: return absl::StatusCode::kCancelled;
    case 501: return absl::StatusCode::kUnimplemented;
    case 503: return absl::StatusCode::kUnavailable;
    case 504: return absl::StatusCode::kDeadlineExceeded;
    default: break;
  }
  if (status >= 200 && status < 300) return absl::StatusCode::kOk;
  if (status >= 400 && status < 500) return absl::StatusCode::kFailedPrecondition;
  return absl::StatusCode::kInternal;
}

absl::StatusOr<HttpConnection> HttpConnection::Create(const std::string& address, double timeout_seconds) {
  std::string_view rest = address;
  if (rest.substr(0, 8) == "https://") {
    return InvalidArgument("'", address, "': gectl's HTTP client speaks plain HTTP only; use -i grpc for TLS");
  }
  if (rest.substr(0, 7) == "http://") rest.remove_prefix(7);
  while (!rest.empty() && rest.back() == '/') rest.remove_suffix(1);
  const size_t colon = rest.rfind(':');
  if (colon == std::string_view::npos || colon == 0 || colon + 1 == rest.size()) {
    return InvalidArgument("'", address, "' is not HOST:PORT");
  }
  HttpConnection c;
  c.host_ = std::string(rest.substr(0, colon));
  if (c.host_.size() > 2 && c.host_.front() == '[' && c.host_.back() == ']')
    c.host_ = c.host_.substr(1, c.host_.size() - 2);
  c.port_ = std::string(rest.substr(colon + 1));
  int port = 0;
  if (!absl::SimpleAtoi(c.port_, &port) || port <= 0 || port > 65535) {
    return InvalidArgument("'", address, "': bad port '", c.port_, "'");
  }
  if (!(timeout_seconds > 0)) return InvalidArgument("the timeout must be positive");
  c.timeout_seconds_ = timeout_seconds;
  return c;
}

HttpConnection::HttpConnection(HttpConnection&& other) noexcept { *this = std::move(other); }

HttpConnection& HttpConnection::operator=(HttpConnection&& other) noexcept {
  if (this != &other) {
    Close();
    host_ = std::move(other.host_);
    port_ = std::move(other.port_);
    timeout_seconds_ = other.timeout_seconds_;
    fd_ = std::exchange(other.fd_, -1);
    buffer_ = std::move(other.buffer_);
  }
  return *this;
}

HttpConnection::~HttpConnection() { Close(); }

void HttpConnection::Close() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  buffer_.clear();
}

absl::Status HttpConnection::Connect() {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  const int rc = ::getaddrinfo(host_.c_str(), port_.c_str(), &hints, &found);
  if (rc != 0) return Unavailable("cannot resolve ", host_, ": ", gai_strerror(rc));
  timeval tv{};
  tv.tv_sec = static_cast<time_t>(timeout_seconds_);
  tv.tv_usec = static_cast<suseconds_t>((timeout_seconds_ - std::floor(timeout_seconds_)) * 1e6);
  absl::Status last = Unavailable("no address for ", host_);
  for (addrinfo* a = found; a != nullptr; a = a->ai_next) {
    const int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) {
      last = SocketError("socket for", host_, port_);
      continue;
    }
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
    const int one = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    if (::connect(fd, a->ai_addr, a->ai_addrlen) == 0) {
      fd_ = fd;
      ::freeaddrinfo(found);
      return absl::OkStatus();
    }
    last = SocketError("cannot connect to", host_, port_);
    ::close(fd);
  }
  ::freeaddrinfo(found);
  return last;
}

absl::Status HttpConnection::SendAll(std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t n = ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EINTR) continue;
      return SocketError("sending to", host_, port_);
    }
    bytes.remove_prefix(static_cast<size_t>(n));
  }
  return absl::OkStatus();
}

absl::StatusOr<bool> HttpConnection::Fill() {
  char chunk[64 << 10];
  for (;;) {
    const ssize_t n = ::recv(fd_, chunk, sizeof(chunk), 0);
    if (n > 0) {
      buffer_.append(chunk, static_cast<size_t>(n));
      return true;
    }
    if (n == 0) return false;
    if (errno == EINTR) continue;
    return SocketError("reading from", host_, port_);
  }
}

absl::StatusOr<HttpResponse> HttpConnection::ReadResponse(bool* nothing_read) {
  *nothing_read = true;
  HttpResponse response;
  size_t header_end;
  for (;;) {  // 1xx answers are skipped
    while ((header_end = buffer_.find("\r\n\r\n")) == std::string::npos) {
      if (buffer_.size() > kMaxHeaderBytes) return Internal("HTTP answer headers above 64 KiB from ", host_);
      GE_ASSIGN_OR_RETURN(bool more, Fill());
      if (!more) return Unavailable(host_, ":", port_, " closed the connection before answering");
      *nothing_read = false;
    }
    *nothing_read = false;
    const std::string head = buffer_.substr(0, header_end);
    buffer_.erase(0, header_end + 4);
    size_t line_end = head.find("\r\n");
    const std::string status_line = head.substr(0, line_end);
    if (!absl::StartsWith(status_line, "HTTP/1.") || status_line.size() < 12 ||
        !absl::SimpleAtoi(status_line.substr(9, 3), &response.status)) {
      return Internal("not an HTTP answer from ", host_, ": '", status_line.substr(0, 80), "'");
    }
    response.headers.clear();
    while (line_end != std::string::npos) {
      const size_t start = line_end + 2;
      line_end = head.find("\r\n", start);
      const std::string line = head.substr(start, line_end == std::string::npos ? std::string::npos : line_end - start);
      const size_t colon = line.find(':');
      if (colon == std::string::npos) continue;
      response.headers[absl::AsciiStrToLower(absl::StripAsciiWhitespace(line.substr(0, colon)))] =
          std::string(absl::StripAsciiWhitespace(line.substr(colon + 1)));
    }
    if (response.status >= 200) break;
  }
  const auto header = [&response](const char* name) -> const std::string* {
    auto it = response.headers.find(name);
    return it == response.headers.end() ? nullptr : &it->second;
  };
  const std::string* te = header("transfer-encoding");
  const std::string* cl = header("content-length");
  if (te != nullptr && absl::AsciiStrToLower(*te).find("chunked") != std::string::npos) {
    for (;;) {
      size_t eol;
      while ((eol = buffer_.find("\r\n")) == std::string::npos) {
        GE_ASSIGN_OR_RETURN(bool more, Fill());
        if (!more) return Internal("HTTP answer from ", host_, " ended inside a chunk header");
      }
      uint64_t size = 0;
      const std::string size_text = buffer_.substr(0, std::min(eol, buffer_.find(';')));
      if (!absl::SimpleHexAtoi(absl::StripAsciiWhitespace(size_text), &size) ||
          response.body.size() + size > kMaxBodyBytes) {
        return Internal("bad chunk size '", size_text.substr(0, 20), "' from ", host_);
      }
      buffer_.erase(0, eol + 2);
      while (buffer_.size() < size + 2) {
        GE_ASSIGN_OR_RETURN(bool more, Fill());
        if (!more) return Internal("HTTP answer from ", host_, " ended inside a chunk");
      }
      response.body.append(buffer_, 0, size);
      buffer_.erase(0, size + 2);
      if (size == 0) break;  // trailers are not used by KServe; the empty line was consumed
    }
  } else if (cl != nullptr) {
    uint64_t length = 0;
    if (!absl::SimpleAtoi(*cl, &length) || length > kMaxBodyBytes) {
      return Internal("bad Content-Length '", cl->substr(0, 20), "' from ", host_);
    }
    while (buffer_.size() < length) {
      GE_ASSIGN_OR_RETURN(bool more, Fill());
      if (!more) return Internal("HTTP answer from ", host_, " is shorter than its Content-Length");
    }
    response.body = buffer_.substr(0, length);
    buffer_.erase(0, length);
  } else {
    for (;;) {  // no length: the body ends with the connection
      GE_ASSIGN_OR_RETURN(bool more, Fill());
      if (!more) break;
      if (buffer_.size() > kMaxBodyBytes) return Internal("HTTP answer from ", host_, " above 1 GiB");
    }
    response.body = std::move(buffer_);
    Close();
  }
  const std::string* connection = header("connection");
  if (connection != nullptr && absl::AsciiStrToLower(*connection) == "close") Close();
  return response;
}

absl::StatusOr<HttpResponse> HttpConnection::Request(std::string_view method, std::string_view path,
                                                     const std::vector<std::pair<std::string, std::string>>& headers,
                                                     std::string_view body) {
  std::string head = StrCat(method, " ", path, " HTTP/1.1\r\nHost: ", host_, ":", port_,
                            "\r\nContent-Length: ", body.size(), "\r\nConnection: keep-alive\r\n");
  for (const auto& [name, value] : headers) absl::StrAppend(&head, name, ": ", value, "\r\n");
  head += "\r\n";
  // A kept-alive connection may have been closed by the server while idle:
  // one fresh attempt when nothing of the answer arrived.
  for (int attempt = 0;; ++attempt) {
    const bool reused = fd_ >= 0;
    if (!reused) GE_RETURN_IF_ERROR(Connect());
    absl::Status sent = SendAll(head);
    if (sent.ok()) sent = SendAll(body);
    bool nothing_read = true;
    absl::Status failure = sent;
    if (sent.ok()) {
      absl::StatusOr<HttpResponse> response = ReadResponse(&nothing_read);
      if (response.ok()) return response;
      failure = response.status();
    }
    Close();
    if (!reused || attempt > 0 || !nothing_read) return failure;
  }
}

}  // namespace ge::gectl
