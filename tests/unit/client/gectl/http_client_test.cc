// gectl's HTTP/1.1 client (client/gectl/http_client.h) against a scripted
// server on 127.0.0.1: keep-alive reuse, Content-Length and chunked bodies,
// 1xx answers skipped, reconnection after Connection: close and after an
// idle connection the server dropped, truncated answers, the status-code
// mapping and bad addresses.
#include "client/gectl/http_client.h"

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>
#include <deque>
#include <string>
#include <thread>

#include "absl/strings/numbers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ge::gectl {
namespace {

using ::testing::HasSubstr;

struct Scripted {
  std::string bytes;         // the answer, written as is
  bool close_after = false;  // then the server closes the connection
};

// Serves `script` in order, one connection at a time; records each
// request's method line and body, and how many connections it accepted.
class ScriptedServer {
 public:
  explicit ScriptedServer(std::deque<Scripted> script) : script_(std::move(script)) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
    socklen_t len = sizeof(addr);
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
    EXPECT_EQ(::listen(fd_, 4), 0);
    thread_ = std::thread([this] { Serve(); });
  }
  ~ScriptedServer() {
    thread_.join();
    ::close(fd_);
  }
  std::string address() const { return "127.0.0.1:" + std::to_string(port_); }
  int accepted() const { return accepted_; }
  const std::vector<std::string>& request_lines() const { return lines_; }
  const std::vector<std::string>& bodies() const { return bodies_; }

 private:
  void Serve() {
    while (!script_.empty()) {
      const int c = ::accept(fd_, nullptr, nullptr);
      if (c < 0) return;
      ++accepted_;
      std::string buffer;
      while (!script_.empty()) {
        size_t end;
        bool open = true;
        while ((end = buffer.find("\r\n\r\n")) == std::string::npos && (open = Read(c, buffer))) {
        }
        if (!open) break;  // the client closed this connection
        const std::string head = buffer.substr(0, end);
        buffer.erase(0, end + 4);
        size_t length = 0;
        const size_t at = head.find("Content-Length: ");
        if (at != std::string::npos) {
          absl::SimpleAtoi(head.substr(at + 16, head.find("\r\n", at) - at - 16), &length);
        }
        while (buffer.size() < length && Read(c, buffer)) {
        }
        lines_.push_back(head.substr(0, head.find("\r\n")));
        bodies_.push_back(buffer.substr(0, length));
        buffer.erase(0, length);
        Scripted next = std::move(script_.front());
        script_.pop_front();
        ::send(c, next.bytes.data(), next.bytes.size(), MSG_NOSIGNAL);
        if (next.close_after) break;
      }
      ::close(c);
    }
  }
  static bool Read(int c, std::string& buffer) {
    char chunk[4096];
    const ssize_t n = ::recv(c, chunk, sizeof(chunk), 0);
    if (n <= 0) return false;
    buffer.append(chunk, static_cast<size_t>(n));
    return true;
  }

  std::deque<Scripted> script_;
  int fd_ = -1;
  int port_ = 0;
  int accepted_ = 0;
  std::vector<std::string> lines_;
  std::vector<std::string> bodies_;
  std::thread thread_;
};

std::string Ok(const std::string& body, const std::string& extra = "") {
  return "HTTP/1.1 200 OK\r\nContent-Length: " + std::to_string(body.size()) + "\r\n" + extra + "\r\n" + body;
}

TEST(HttpConnectionTest, KeepsOneConnectionAcrossRequests) {
  auto server = std::make_unique<ScriptedServer>(std::deque<Scripted>{{Ok("first")}, {Ok("second")}});
  auto http = HttpConnection::Create(server->address(), 10);
  ASSERT_TRUE(http.ok()) << http.status();
  auto a = http->Request("POST", "/v2/models/m/infer", {{"Authorization", "Bearer t"}}, "payload");
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(a->status, 200);
  EXPECT_EQ(a->body, "first");
  auto b = http->Request("GET", "/v2", {}, "");
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(b->body, "second");
  server.reset();  // joins: every request was served
}

TEST(HttpConnectionTest, SendsTheRequestLineHeadersAndBody) {
  ScriptedServer server({{Ok("x")}});
  {
    auto http = HttpConnection::Create("http://" + server.address() + "/", 10);
    ASSERT_TRUE(http.ok()) << http.status();
    ASSERT_TRUE(http->Request("POST", "/v2/models/m/infer", {}, std::string("a\0b", 3)).ok());
  }
  ASSERT_EQ(server.request_lines().size(), 1u);
  EXPECT_EQ(server.request_lines()[0], "POST /v2/models/m/infer HTTP/1.1");
  EXPECT_EQ(server.bodies()[0], std::string("a\0b", 3));
  EXPECT_EQ(server.accepted(), 1);
}

TEST(HttpConnectionTest, ReadsChunkedBodiesAndSkipsInformationalAnswers) {
  ScriptedServer server({{"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n"
                          "Inference-Header-Content-Length: 3\r\n\r\n"
                          "3;ext=1\r\nabc\r\nA\r\n0123456789\r\n0\r\n\r\n"},
                         {Ok("after")}});
  auto http = HttpConnection::Create(server.address(), 10);
  ASSERT_TRUE(http.ok());
  auto r = http->Request("GET", "/", {}, "");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->body, "abc0123456789");
  EXPECT_EQ(r->headers.at("inference-header-content-length"), "3");
  auto next = http->Request("GET", "/", {}, "");  // the chunked body was consumed exactly
  ASSERT_TRUE(next.ok()) << next.status();
  EXPECT_EQ(next->body, "after");
}

TEST(HttpConnectionTest, ReconnectsAfterConnectionCloseAndAfterAnIdleDrop) {
  ScriptedServer server({{Ok("one", "Connection: close\r\n"), /*close_after=*/true},
                         {Ok("two"), /*close_after=*/true},  // dropped without saying so
                         {Ok("three")}});
  auto http = HttpConnection::Create(server.address(), 10);
  ASSERT_TRUE(http.ok());
  for (const char* want : {"one", "two", "three"}) {
    auto r = http->Request("GET", "/", {}, "");
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_EQ(r->body, want);
  }
  EXPECT_EQ(server.accepted(), 3);
}

TEST(HttpConnectionTest, ATruncatedAnswerIsAnError) {
  ScriptedServer server({{"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nshort", /*close_after=*/true}});
  auto http = HttpConnection::Create(server.address(), 10);
  ASSERT_TRUE(http.ok());
  auto r = http->Request("GET", "/", {}, "");
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("shorter than its Content-Length"));
}

TEST(HttpConnectionTest, NotHttpIsAnError) {
  ScriptedServer server({{"SSH-2.0-OpenSSH\r\n\r\n", /*close_after=*/true}});
  auto http = HttpConnection::Create(server.address(), 10);
  ASSERT_TRUE(http.ok());
  auto r = http->Request("GET", "/", {}, "");
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("not an HTTP answer"));
}

TEST(HttpConnectionTest, RefusesBadAddresses) {
  for (const char* bad : {"localhost", "https://127.0.0.1:443", ":80", "127.0.0.1:", "127.0.0.1:99999", "h:x"}) {
    EXPECT_EQ(HttpConnection::Create(bad, 10).status().code(), absl::StatusCode::kInvalidArgument) << bad;
  }
  EXPECT_FALSE(HttpConnection::Create("127.0.0.1:80", 0).ok());
}

TEST(StatusCodeFromHttpTest, KServeMapping) {
  EXPECT_EQ(StatusCodeFromHttp(200), absl::StatusCode::kOk);
  EXPECT_EQ(StatusCodeFromHttp(400), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(StatusCodeFromHttp(401), absl::StatusCode::kUnauthenticated);
  EXPECT_EQ(StatusCodeFromHttp(403), absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(StatusCodeFromHttp(404), absl::StatusCode::kNotFound);
  EXPECT_EQ(StatusCodeFromHttp(429), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(StatusCodeFromHttp(503), absl::StatusCode::kUnavailable);
  EXPECT_EQ(StatusCodeFromHttp(418), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(StatusCodeFromHttp(500), absl::StatusCode::kInternal);
}

}  // namespace
}  // namespace ge::gectl
