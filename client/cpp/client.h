// ge::client::Client: the C++ client of the ged daemon. It needs only the
// generated service stubs and grpc++ (no ged runtime), so applications link
// it without the compiler or engines.
//
// Every call is synchronous with a deadline (ClientOptions::timeout_seconds
// unless the call gives its own), sends the tenant token as
// `authorization: Bearer <token>`, and is retried with exponential backoff
// while the daemon answers UNAVAILABLE (not yet listening, restarting,
// draining). Other codes return at once. RunGraphAsync is the asynchronous
// form of RunGraph. A Client is safe to use from several threads.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>

#include "ge/v1/service.grpc.pb.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "grpcpp/grpcpp.h"

namespace ge::client {

struct ClientOptions {
  std::string address;  // HOST:PORT; empty: DefaultAddress()
  std::string token;    // empty: $GED_TOKEN (may be empty too)
  double timeout_seconds = 300;
  int max_retries = 4;  // extra attempts after UNAVAILABLE
  double initial_backoff_seconds = 0.05;
  double max_backoff_seconds = 2.0;
  // TLS (docs/api.md, "Transport security"). Any of these set: the channel
  // uses TLS, verifying the daemon against tls_ca_file (PEM; empty: the
  // system's roots). tls_cert_file + tls_key_file: this client's
  // certificate, for a daemon that requires mutual TLS. tls_server_name:
  // the name the daemon's certificate must carry when it differs from the
  // address's host.
  std::string tls_ca_file;
  std::string tls_cert_file;
  std::string tls_key_file;
  std::string tls_server_name;
  // Send and receive limit; the default is protobuf's 2 GiB ceiling.
  int max_message_bytes = 2147483647;
  // AddOnnxFile sends models of at least this many bytes by digest first
  // (AddGraphRequest.onnx_model_digest) and their bytes only when the
  // daemon has no compiled model of them for this caller; 0: always bytes.
  int64_t digest_first_bytes = int64_t{4} << 20;
};

// $GED_ADDRESS, else 127.0.0.1:50051.
std::string DefaultAddress();

class Client {
 public:
  explicit Client(ClientOptions options);
  const std::string& address() const { return options_.address; }

  grpc::Status CreateSession(const std::map<std::string, std::string>& options, std::string* session_id);
  grpc::Status DestroySession(const std::string& session_id);
  grpc::Status AddGraph(const v1::AddGraphRequest& request, v1::AddGraphResponse* response);
  // Reads an .onnx file's bytes into an AddGraph for `graph_id`: by digest
  // first when the file is large (ClientOptions::digest_first_bytes), then
  // by bytes if the daemon asks for them. `response->bytes_needed()` is
  // false on return.
  grpc::Status AddOnnxFile(const std::string& session_id, uint32_t graph_id, const std::string& path,
                           const std::map<std::string, std::string>& options, v1::AddGraphResponse* response);
  grpc::Status RemoveGraph(const std::string& session_id, uint32_t graph_id);
  grpc::Status CompileGraph(const std::string& session_id, uint32_t graph_id, v1::CompileGraphResponse* response);
  // With request.return_model, the response also carries the .gem bytes.
  grpc::Status CompileGraph(const v1::CompileGraphRequest& request, v1::CompileGraphResponse* response);
  // `timeout_seconds` > 0 overrides the default deadline for this call.
  grpc::Status RunGraph(const v1::RunGraphRequest& request, v1::RunGraphResponse* response,
                        double timeout_seconds = 0);
  // Starts a RunGraph and calls `done` on a gRPC thread when it ends;
  // `request` and `response` must live until then. No retries.
  void RunGraphAsync(const v1::RunGraphRequest& request, v1::RunGraphResponse* response,
                     std::function<void(grpc::Status)> done, double timeout_seconds = 0);
  grpc::Status ListSessions(v1::ListSessionsResponse* response);
  grpc::Status GetStatus(v1::GetStatusResponse* response);
  grpc::Status ExecuteOp(const v1::ExecuteOpRequest& request, v1::ExecuteOpResponse* response);
  // Compiled models (.gem) loaded into a session.
  grpc::Status LoadModel(const v1::LoadModelRequest& request, v1::LoadModelResponse* response);
  grpc::Status UnloadModel(const std::string& session_id, uint32_t model_id);
  // A session's variable by name (what its graphs' Variable nodes hold).
  grpc::Status GetVariable(const std::string& session_id, const std::string& name, v1::Value* value);
  grpc::Status SetVariable(const std::string& session_id, const std::string& name, const v1::Value& value);
  grpc::Status ExecuteModel(const v1::ExecuteModelRequest& request, v1::ExecuteModelResponse* response,
                            double timeout_seconds = 0);
  // Shared-memory I/O (docs/api.md, "Shared memory"), for a daemon on this
  // host that has it enabled: `byte_size` bytes at `offset` of the POSIX
  // shared-memory object `key` ("/NAME") become region `name`, which
  // tensors then reference (v1::Tensor::shared_memory,
  // RunGraphRequest::output_shared_memory). An empty name in Unregister
  // and SharedMemoryStatus means every region of the caller's tenant.
  grpc::Status RegisterSharedMemory(const std::string& name, const std::string& key, uint64_t offset,
                                    uint64_t byte_size);
  grpc::Status UnregisterSharedMemory(const std::string& name);
  grpc::Status SharedMemoryStatus(const std::string& name, v1::SharedMemoryStatusResponse* response);
  // The grpc.health.v1 status of `service` ("" for the whole server).
  grpc::Status CheckHealth(const std::string& service, grpc::health::v1::HealthCheckResponse* response);

  v1::GraphEngine::Stub& stub() { return *stub_; }
  // The callback (async) interface of stub(); use it rather than
  // stub().async(). The first channel that makes a callback call is kept
  // for the life of the process: grpc 1.51 tears down its shared callback
  // completion queue when the last channel that used it goes away and,
  // when a new one is made soon after, frees that queue twice (ASan: double
  // free in grpc_cq_internal_unref on one of its threads). Keeping one user
  // means the queue is built once and never torn down.
  v1::GraphEngine::StubInterface::async_interface* async();
  // A context with the token and a deadline, for calls made on stub().
  std::unique_ptr<grpc::ClientContext> NewContext(double timeout_seconds = 0) const;
  // The channel, for stubs of the daemon's other services (the KServe v2
  // protocol of its model repository) with this client's address, TLS and
  // limits; their calls take contexts from NewContext.
  std::shared_ptr<grpc::Channel> channel() const { return channel_; }
  // Not OK when the options could not be applied (an unreadable TLS file).
  const grpc::Status& setup() const { return setup_; }

 private:
  // Runs `attempt` with a fresh context until it returns something other
  // than UNAVAILABLE or the retries are spent.
  grpc::Status WithRetries(const std::function<grpc::Status(grpc::ClientContext*)>& attempt,
                           double timeout_seconds = 0) const;

  ClientOptions options_;
  // Not OK when the options could not be applied (an unreadable TLS file):
  // every call then fails with it, naming the file.
  grpc::Status setup_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1::GraphEngine::Stub> stub_;
  std::unique_ptr<grpc::health::v1::Health::Stub> health_;
};

}  // namespace ge::client
