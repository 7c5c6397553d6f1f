// DaemonProcess: posix_spawn of ged, the ready-file handshake, and a tiny
// HTTP/1.1 GET for the metrics endpoint.
#include "tests/integration/daemon_process.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "gtest/gtest.h"
#include "tests/integration/process.h"

extern char** environ;

namespace ge::testing {
namespace {

std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The string value of "key" in a flat JSON object.
std::string JsonString(const std::string& json, const std::string& key) {
  const size_t k = json.find("\"" + key + "\"");
  if (k == std::string::npos) return "";
  const size_t open = json.find('"', json.find(':', k) + 1);
  const size_t close = json.find('"', open + 1);
  return open == std::string::npos || close == std::string::npos ? "" : json.substr(open + 1, close - open - 1);
}

}  // namespace

std::unique_ptr<DaemonProcess> DaemonProcess::Start(const std::vector<std::string>& args, double timeout_seconds) {
  auto d = std::unique_ptr<DaemonProcess>(new DaemonProcess());
  d->dir_ = MakeTempDir("ged-daemon");
  const std::string ready = d->dir_ + "/ready.json";
  // Port 0 for both addresses unless `args` chooses one.
  std::vector<std::string> argv = {BinaryDir() + "/bin/ged", "--ready-file", ready};
  for (const char* flag : {"--listen", "--metrics-listen"}) {
    if (std::find(args.begin(), args.end(), flag) == args.end()) {
      argv.push_back(flag);
      argv.push_back("127.0.0.1:0");
    }
  }
  const bool repository = std::find(args.begin(), args.end(), "--model-repository") != args.end();
  if (repository && std::find(args.begin(), args.end(), "--http-listen") == args.end()) {
    argv.push_back("--http-listen");
    argv.push_back("127.0.0.1:0");
  }
  argv.insert(argv.end(), args.begin(), args.end());
  std::vector<char*> raw;
  for (const std::string& a : argv) raw.push_back(const_cast<char*>(a.c_str()));
  raw.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  const std::string log = d->dir_ + "/ged.log";
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  const int rc = posix_spawn(&d->pid_, argv[0].c_str(), &actions, nullptr, raw.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) {
    ADD_FAILURE() << "cannot spawn " << argv[0];
    return nullptr;
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_seconds);
  while (std::chrono::steady_clock::now() < deadline) {
    if (std::filesystem::exists(ready)) {
      const std::string json = ReadAll(ready);
      d->grpc_ = JsonString(json, "grpc");
      d->metrics_ = JsonString(json, "metrics");
      d->http_ = JsonString(json, "http");
      if (!d->grpc_.empty()) return d;
    }
    int status = 0;
    if (waitpid(d->pid_, &status, WNOHANG) == d->pid_) {
      d->exited_ = true;
      ADD_FAILURE() << "ged exited before serving (status " << status << "):\n" << d->log();
      return nullptr;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ADD_FAILURE() << "ged wrote no ready file within " << timeout_seconds << " s:\n" << d->log();
  return nullptr;
}

DaemonProcess::~DaemonProcess() {
  if (pid_ > 0 && !exited_) {
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }
  if (!dir_.empty()) std::filesystem::remove_all(dir_);
}

void DaemonProcess::Signal(int sig) const { kill(pid_, sig); }

int DaemonProcess::Wait(double timeout_seconds) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_seconds);
  while (std::chrono::steady_clock::now() < deadline) {
    int status = 0;
    if (waitpid(pid_, &status, WNOHANG) == pid_) {
      exited_ = true;
      if (WIFEXITED(status)) return WEXITSTATUS(status);
      return 128 + WTERMSIG(status);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return -1;
}

std::string DaemonProcess::log() const { return ReadAll(dir_ + "/ged.log"); }

std::string HttpResult::Header(const std::string& name) const {
  auto lower = [](std::string v) {
    for (char& c : v) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return v;
  };
  const std::string want = lower(name) + ":";
  size_t at = 0;
  while (at < headers.size()) {
    size_t end = headers.find("\r\n", at);
    if (end == std::string::npos) end = headers.size();
    const std::string line = headers.substr(at, end - at);
    if (lower(line.substr(0, want.size())) == want) {
      const size_t value = line.find_first_not_of(' ', want.size());
      return value == std::string::npos ? "" : line.substr(value);
    }
    at = end + 2;
  }
  return "";
}

HttpResult HttpSend(const std::string& address, const std::string& request) {
  HttpResult result;
  const size_t colon = address.rfind(':');
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(std::stoi(address.substr(colon + 1))));
  inet_pton(AF_INET, address.substr(0, colon).c_str(), &addr.sin_addr);
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return result;
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    close(fd);
    return result;
  }
  // The server may answer (and close) before it read all of a refused body.
  size_t sent = 0;
  while (sent < request.size()) {
    const ssize_t n = send(fd, request.data() + sent, request.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) break;
    sent += static_cast<size_t>(n);
  }
  std::string response;
  char buf[65536];
  for (ssize_t n; (n = read(fd, buf, sizeof(buf))) > 0;) response.append(buf, static_cast<size_t>(n));
  close(fd);
  const size_t space = response.find(' ');
  const size_t body = response.find("\r\n\r\n");
  if (space == std::string::npos || body == std::string::npos) return result;
  result.status = std::stoi(response.substr(space + 1, 3));
  const size_t first = response.find("\r\n");
  result.headers = response.substr(first + 2, body - first);
  result.body = response.substr(body + 4);
  return result;
}

HttpResult HttpGet(const std::string& address, const std::string& path) {
  return HttpSend(address, "GET " + path + " HTTP/1.1\r\nHost: " + address + "\r\nConnection: close\r\n\r\n");
}

}  // namespace ge::testing
