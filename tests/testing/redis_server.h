// A throwaway redis-server for tests of the cache's remote tier: listens
// on a unix socket in a fresh directory only (no TCP port, so parallel
// tests never collide), no persistence; stopped and removed on destruction.
#pragma once

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <thread>

namespace ge::testing {

class RedisServer {
 public:
  static constexpr const char* kBinary = "/usr/bin/redis-server";

  static bool Available() { return access(kBinary, X_OK) == 0; }

  // Starts the server and waits up to 10 s for its socket.
  RedisServer() {
    dir_ = std::filesystem::temp_directory_path() / ("ged_redis_" + std::to_string(getpid()) + "_" +
                                                    std::to_string(counter_++));
    std::filesystem::create_directories(dir_);
    socket_ = (dir_ / "redis.sock").string();
    pid_ = fork();
    if (pid_ == 0) {
      const std::string dir = dir_.string();
      execl(kBinary, kBinary, "--port", "0", "--unixsocket", socket_.c_str(), "--unixsocketperm", "700", "--dir",
            dir.c_str(), "--save", "", "--appendonly", "no", "--logfile", "", "--loglevel", "warning",
            static_cast<char*>(nullptr));
      _exit(127);
    }
    for (int i = 0; i < 1000 && !std::filesystem::exists(socket_); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }
  ~RedisServer() {
    if (pid_ > 0) {
      kill(pid_, SIGTERM);
      int status = 0;
      waitpid(pid_, &status, 0);
    }
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  RedisServer(const RedisServer&) = delete;
  RedisServer& operator=(const RedisServer&) = delete;

  bool ready() const { return pid_ > 0 && std::filesystem::exists(socket_); }
  // The address RedisTier takes.
  std::string address() const { return "unix:" + socket_; }

 private:
  static inline int counter_ = 0;
  std::filesystem::path dir_;
  std::string socket_;
  pid_t pid_ = -1;
};

}  // namespace ge::testing
