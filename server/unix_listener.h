// UnixListener: ged's unix socket (`unix_socket: PATH`), accepted by ged
// itself so that every peer's credentials are checked before gRPC sees a
// byte of the connection.
//
// grpc++ gives a service no way to learn a unix-socket peer's uid. So ged
// binds and listens on the socket itself (mode 0600 from the start: it is
// created under umask 0177), accepts each connection on its own thread,
// reads the peer's credentials with SO_PEERCRED, and hands the connection to
// the gRPC server (its local credentials and the token check of the auth
// processor apply as on any listener) only when the peer runs as ged's own
// effective uid. Any other peer — possible only if the socket's mode was
// widened after start, or for root — is closed at once and reported to
// `on_refused` (an audit line). Every RPC over the socket therefore comes
// from ged's uid, and shared-memory objects, which ged maps only when ged's
// uid owns them, are owned by the peer that registers them
// (docs/security.md, "Transport").
#pragma once

#include <sys/types.h>

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "absl/status/statusor.h"
#include "grpcpp/server_builder.h"

namespace ge::server {

class UnixListener {
 public:
  // Called with the refused peer's uid and pid, on the accept thread.
  using RefusedFn = std::function<void(uid_t uid, pid_t pid)>;

  // Binds and listens on `path` (a stale socket there is the caller's to
  // remove). UNAVAILABLE when the socket cannot be made.
  static absl::StatusOr<std::unique_ptr<UnixListener>> Bind(const std::string& path);
  ~UnixListener();
  UnixListener(const UnixListener&) = delete;
  UnixListener& operator=(const UnixListener&) = delete;

  // Starts accepting; each admitted connection goes to `acceptor` (the
  // server must be started). `allowed_uid` is the only peer uid admitted.
  void Start(std::unique_ptr<grpc::experimental::ExternalConnectionAcceptor> acceptor, uid_t allowed_uid,
             RefusedFn on_refused);
  // Stops accepting and closes the listening socket (connections already
  // handed to gRPC are gRPC's). Idempotent; the destructor calls it.
  void Stop();

  int64_t admitted() const { return admitted_.load(); }
  int64_t refused() const { return refused_.load(); }

 private:
  UnixListener(int fd, int wake_fd) : fd_(fd), wake_fd_(wake_fd) {}
  void AcceptLoop();

  int fd_;
  int wake_fd_;  // an eventfd that ends AcceptLoop
  uid_t allowed_uid_ = 0;
  RefusedFn on_refused_;
  std::unique_ptr<grpc::experimental::ExternalConnectionAcceptor> acceptor_;
  std::thread thread_;
  std::atomic<int64_t> admitted_{0};
  std::atomic<int64_t> refused_{0};
};

}  // namespace ge::server
