// ged's own accept loop for its unix socket (see unix_listener.h).
#include "server/unix_listener.h"

#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "base/status.h"

namespace ge::server {

absl::StatusOr<std::unique_ptr<UnixListener>> UnixListener::Bind(const std::string& path) {
  sockaddr_un addr{};
  if (path.empty() || path.size() >= sizeof(addr.sun_path)) {
    return InvalidArgument("unix_socket ", path, ": a path of 1 to ", sizeof(addr.sun_path) - 1, " bytes is needed");
  }
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, path.data(), path.size());
  const int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) return absl::UnavailableError(StrCat("unix_socket ", path, ": socket: ", std::strerror(errno)));
  // Created 0600: no moment when another user could connect.
  const mode_t old_umask = umask(0177);
  const int bound = bind(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof(addr));
  const int bind_errno = errno;
  umask(old_umask);
  if (bound != 0 || listen(fd, SOMAXCONN) != 0) {
    const int err = bound != 0 ? bind_errno : errno;
    close(fd);
    return absl::UnavailableError(StrCat("cannot serve gRPC on unix socket ", path, ": ", std::strerror(err)));
  }
  const int wake = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (wake < 0) {
    close(fd);
    return absl::UnavailableError(StrCat("unix_socket ", path, ": eventfd: ", std::strerror(errno)));
  }
  return std::unique_ptr<UnixListener>(new UnixListener(fd, wake));
}

UnixListener::~UnixListener() {
  Stop();
  close(wake_fd_);
}

void UnixListener::Start(std::unique_ptr<grpc::experimental::ExternalConnectionAcceptor> acceptor, uid_t allowed_uid,
                         RefusedFn on_refused) {
  acceptor_ = std::move(acceptor);
  allowed_uid_ = allowed_uid;
  on_refused_ = std::move(on_refused);
  thread_ = std::thread([this] { AcceptLoop(); });
}

void UnixListener::Stop() {
  if (thread_.joinable()) {
    const uint64_t one = 1;
    (void)!write(wake_fd_, &one, sizeof(one));
    thread_.join();
  }
  if (fd_ >= 0) {
    close(fd_);
    fd_ = -1;
  }
}

void UnixListener::AcceptLoop() {
  pollfd fds[2] = {{fd_, POLLIN, 0}, {wake_fd_, POLLIN, 0}};
  for (;;) {
    fds[0].revents = fds[1].revents = 0;
    if (poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      return;
    }
    if (fds[1].revents != 0) return;
    if ((fds[0].revents & POLLIN) == 0) continue;
    const int conn = accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (conn < 0) continue;  // EAGAIN (another wake-up took it), ECONNABORTED, EMFILE: try again
    ucred peer{};
    socklen_t len = sizeof(peer);
    if (getsockopt(conn, SOL_SOCKET, SO_PEERCRED, &peer, &len) != 0 || len != sizeof(peer) ||
        peer.uid != allowed_uid_) {
      close(conn);
      refused_.fetch_add(1);
      if (on_refused_) on_refused_(len == sizeof(peer) ? peer.uid : static_cast<uid_t>(-1), peer.pid);
      continue;
    }
    admitted_.fetch_add(1);
    grpc::experimental::ExternalConnectionAcceptor::NewConnectionParameters params;
    params.listener_fd = fd_;
    params.fd = conn;  // gRPC owns it from here (and closes it if the server is down)
    acceptor_->HandleNewConnection(&params);
  }
}

}  // namespace ge::server
