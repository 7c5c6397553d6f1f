// What gectl's daemon commands share about their connection: the client
// library's options from the --remote/--token/--timeout/--tls-* flags, and
// a gRPC status as an absl one (UNAVAILABLE names the address).
#pragma once

#include <string_view>

#include "absl/status/status.h"
#include "client/cpp/client.h"
#include "client/gectl/commands.h"

namespace ge::gectl {

client::ClientOptions ClientOptionsFor(const RemoteFlags& remote);
absl::Status FromGrpc(const grpc::Status& status, std::string_view address);

}  // namespace ge::gectl
