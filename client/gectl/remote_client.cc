// gectl's connection settings and gRPC statuses (remote_client.h).
#include "client/gectl/remote_client.h"

#include <string>

#include "base/strings.h"

namespace ge::gectl {

client::ClientOptions ClientOptionsFor(const RemoteFlags& remote) {
  client::ClientOptions options;
  options.address = remote.remote;
  options.token = remote.token;
  if (remote.timeout_seconds > 0) options.timeout_seconds = remote.timeout_seconds;
  options.tls_ca_file = remote.tls_ca;
  options.tls_cert_file = remote.tls_cert;
  options.tls_key_file = remote.tls_key;
  options.tls_server_name = remote.tls_server_name;
  return options;
}

absl::Status FromGrpc(const grpc::Status& status, std::string_view address) {
  if (status.ok()) return absl::OkStatus();
  std::string message = status.error_message();
  if (status.error_code() == grpc::StatusCode::UNAVAILABLE) message = StrCat("server at ", address, ": ", message);
  return absl::Status(static_cast<absl::StatusCode>(status.error_code()), message);
}

}  // namespace ge::gectl
