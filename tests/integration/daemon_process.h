// A ged daemon started for a test: build/bin/ged on 127.0.0.1 with port 0
// for gRPC and metrics (and KServe HTTP when it serves a repository or is
// asked to) and a ready file, whose real addresses are read back once it
// serves. Its stdout and stderr go to a log file (log() reads it).
// The destructor kills a daemon the test left running.
#pragma once

#include <sys/types.h>

#include <memory>
#include <string>
#include <vector>

namespace ge::testing {

class DaemonProcess {
 public:
  // Starts ged with `args` added; nullptr (and a gtest failure) when it
  // does not write its ready file within `timeout_seconds`.
  static std::unique_ptr<DaemonProcess> Start(const std::vector<std::string>& args, double timeout_seconds = 60);
  ~DaemonProcess();

  const std::string& grpc_address() const { return grpc_; }
  const std::string& metrics_address() const { return metrics_; }
  const std::string& http_address() const { return http_; }  // "" when not served
  pid_t pid() const { return pid_; }
  void Signal(int sig) const;
  // The exit code once it exits (-1 after a timeout, 128+N for signal N).
  int Wait(double timeout_seconds);
  std::string log() const;

 private:
  DaemonProcess() = default;
  pid_t pid_ = -1;
  bool exited_ = false;
  std::string dir_;
  std::string grpc_;
  std::string metrics_;
  std::string http_;
};

// GET http://<address><path>: the status code and body ("" and -1 when the
// connection fails).
struct HttpResult {
  int status = -1;
  std::string headers;  // the header lines as received
  std::string body;
  // A response header's value ("" when absent; the name case-insensitive).
  std::string Header(const std::string& name) const;
};
HttpResult HttpGet(const std::string& address, const std::string& path);
// Sends `request` (a whole HTTP/1.1 request, as bytes) to `address` on a
// new connection and reads the response until the server closes it.
HttpResult HttpSend(const std::string& address, const std::string& request);

}  // namespace ge::testing
