// The daemon's C++ client: channel setup with message limits, per-call
// deadlines and token metadata, and retries with exponential backoff on
// UNAVAILABLE.
#include "client/cpp/client.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <map>
#include <mutex>
#include <optional>
#include <sstream>
#include <thread>

#include "base/sha256.h"
#include "base/thread_pool.h"

namespace ge::client {

std::string DefaultAddress() {
  const char* env = std::getenv("GED_ADDRESS");
  return env != nullptr && *env != '\0' ? std::string(env) : std::string("127.0.0.1:50051");
}

Client::Client(ClientOptions options) : options_(std::move(options)) {
  if (options_.address.empty()) options_.address = DefaultAddress();
  if (options_.token.empty()) {
    const char* env = std::getenv("GED_TOKEN");
    if (env != nullptr) options_.token = env;
  }
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(options_.max_message_bytes);
  args.SetMaxSendMessageSize(options_.max_message_bytes);
  std::shared_ptr<grpc::ChannelCredentials> credentials = grpc::InsecureChannelCredentials();
  const bool tls = !options_.tls_ca_file.empty() || !options_.tls_cert_file.empty() ||
                   !options_.tls_key_file.empty() || !options_.tls_server_name.empty();
  if (tls) {
    grpc::SslCredentialsOptions ssl;
    std::string error;
    const auto read = [&error](const std::string& path, const char* what, std::string* out) {
      if (path.empty() || !error.empty()) return;
      std::ifstream in(path, std::ios::binary);
      std::ostringstream bytes;
      bytes << in.rdbuf();
      if (!in || bytes.str().empty()) error = std::string("cannot read the TLS ") + what + " file " + path;
      *out = bytes.str();
    };
    read(options_.tls_ca_file, "CA", &ssl.pem_root_certs);
    read(options_.tls_cert_file, "certificate", &ssl.pem_cert_chain);
    read(options_.tls_key_file, "key", &ssl.pem_private_key);
    if (error.empty() && options_.tls_cert_file.empty() != options_.tls_key_file.empty()) {
      error = "a TLS client certificate needs its key, and a key its certificate (tls_cert_file, tls_key_file)";
    }
    if (!error.empty()) setup_ = grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, error);
    if (!options_.tls_server_name.empty()) args.SetSslTargetNameOverride(options_.tls_server_name);
    credentials = grpc::SslCredentials(ssl);
  }
  channel_ = grpc::CreateCustomChannel(options_.address, credentials, args);
  stub_ = v1::GraphEngine::NewStub(channel_);
  health_ = grpc::health::v1::Health::NewStub(channel_);
}

std::unique_ptr<grpc::ClientContext> Client::NewContext(double timeout_seconds) const {
  auto ctx = std::make_unique<grpc::ClientContext>();
  const double seconds = timeout_seconds > 0 ? timeout_seconds : options_.timeout_seconds;
  ctx->set_deadline(std::chrono::system_clock::now() +
                    std::chrono::microseconds(static_cast<int64_t>(seconds * 1e6)));
  if (!options_.token.empty()) ctx->AddMetadata("authorization", "Bearer " + options_.token);
  return ctx;
}

grpc::Status Client::WithRetries(const std::function<grpc::Status(grpc::ClientContext*)>& attempt,
                                 double timeout_seconds) const {
  if (!setup_.ok()) return setup_;
  double backoff = options_.initial_backoff_seconds;
  for (int i = 0;; ++i) {
    std::unique_ptr<grpc::ClientContext> ctx = NewContext(timeout_seconds);
    grpc::Status status = attempt(ctx.get());
    if (status.error_code() != grpc::StatusCode::UNAVAILABLE || i >= options_.max_retries) return status;
    std::this_thread::sleep_for(std::chrono::microseconds(static_cast<int64_t>(backoff * 1e6)));
    backoff = std::min(backoff * 2, options_.max_backoff_seconds);
  }
}

grpc::Status Client::CreateSession(const std::map<std::string, std::string>& options, std::string* session_id) {
  v1::CreateSessionRequest request;
  for (const auto& [key, value] : options) (*request.mutable_options()->mutable_entries())[key] = value;
  v1::CreateSessionResponse response;
  grpc::Status s = WithRetries([&](grpc::ClientContext* ctx) { return stub_->CreateSession(ctx, request, &response); });
  if (s.ok()) *session_id = response.session_id();
  return s;
}

grpc::Status Client::DestroySession(const std::string& session_id) {
  v1::DestroySessionRequest request;
  request.set_session_id(session_id);
  v1::DestroySessionResponse response;
  return WithRetries([&](grpc::ClientContext* ctx) { return stub_->DestroySession(ctx, request, &response); });
}

grpc::Status Client::AddGraph(const v1::AddGraphRequest& request, v1::AddGraphResponse* response) {
  return WithRetries([&](grpc::ClientContext* ctx) { return stub_->AddGraph(ctx, request, response); });
}

namespace {

// A model file, mapped read-only when its bytes are first needed: hashing
// reads the page cache's pages in place (reading a large model into fresh
// memory costs more than hashing).
class MappedModel {
 public:
  explicit MappedModel(const std::string& path) {
    fd_ = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd_ < 0) return;
    if (fstat(fd_, &st_) == 0 && S_ISREG(st_.st_mode)) {
      size_ = static_cast<size_t>(st_.st_size);
      ok_ = true;
    }
  }
  ~MappedModel() {
    if (data_ != nullptr) munmap(data_, size_);
    if (fd_ >= 0) close(fd_);
  }
  MappedModel(const MappedModel&) = delete;
  MappedModel& operator=(const MappedModel&) = delete;
  bool ok() const { return ok_; }
  size_t size() const { return size_; }
  const struct stat& stat_info() const { return st_; }
  // Empty when the file cannot be mapped (then ok() turns false).
  std::string_view bytes() {
    if (ok_ && data_ == nullptr && size_ > 0) {
      void* data = mmap(nullptr, size_, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd_, 0);
      if (data == MAP_FAILED) {
        ok_ = false;
        return {};
      }
      data_ = data;
    }
    return {static_cast<const char*>(data_), data_ == nullptr ? 0 : size_};
  }

 private:
  int fd_ = -1;
  struct stat st_ = {};
  void* data_ = nullptr;
  size_t size_ = 0;
  bool ok_ = false;
};

// The digests of model files this process hashed, by path and identity (as
// ccache's inode cache): adding an unchanged file again reads none of it.
// A file whose modification or status-change time is less than 2 s old is
// not remembered (a write within the same clock tick could leave its times
// as they are).
class DigestMemory {
 public:
  static DigestMemory& Get() {
    static DigestMemory* memory = new DigestMemory();
    return *memory;
  }
  std::optional<Sha256Digest> Recall(const std::string& path, const struct stat& st) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = entries_.find(path);
    if (it == entries_.end() || it->second.identity != Identity(st)) return std::nullopt;
    return it->second.digest;
  }
  void Remember(const std::string& path, const struct stat& st, const Sha256Digest& digest) {
    timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    const int64_t limit = static_cast<int64_t>(now.tv_sec - 2) * 1000000000 + now.tv_nsec;
    const std::array<int64_t, 5> id = Identity(st);
    if (id[3] >= limit || id[4] >= limit) return;
    std::lock_guard<std::mutex> lock(mu_);
    if (entries_.size() >= 64 && !entries_.contains(path)) entries_.erase(entries_.begin());
    entries_[path] = {id, digest};
  }

 private:
  // Device, inode, size, modification and status-change times (ns).
  static std::array<int64_t, 5> Identity(const struct stat& st) {
    return {static_cast<int64_t>(st.st_dev), static_cast<int64_t>(st.st_ino), static_cast<int64_t>(st.st_size),
            static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec,
            static_cast<int64_t>(st.st_ctim.tv_sec) * 1000000000 + st.st_ctim.tv_nsec};
  }
  struct Entry {
    std::array<int64_t, 5> identity;
    Sha256Digest digest;
  };
  std::mutex mu_;
  std::map<std::string, Entry> entries_;
};

}  // namespace

grpc::Status Client::AddOnnxFile(const std::string& session_id, uint32_t graph_id, const std::string& path,
                                 const std::map<std::string, std::string>& options, v1::AddGraphResponse* response) {
  MappedModel model(path);
  if (!model.ok()) return grpc::Status(grpc::StatusCode::NOT_FOUND, "cannot read model file " + path);
  v1::AddGraphRequest request;
  request.set_session_id(session_id);
  request.set_graph_id(graph_id);
  for (const auto& [key, value] : options) (*request.mutable_options()->mutable_entries())[key] = value;
  if (options_.digest_first_bytes > 0 && static_cast<int64_t>(model.size()) >= options_.digest_first_bytes) {
    // A model the daemon compiled before for this caller needs none of its
    // bytes sent: the digest first (remembered by the file's identity, else
    // hashed on every core), the bytes only when asked.
    std::optional<Sha256Digest> digest = DigestMemory::Get().Recall(path, model.stat_info());
    if (!digest.has_value()) {
      const std::string_view bytes = model.bytes();
      if (!model.ok()) return grpc::Status(grpc::StatusCode::NOT_FOUND, "cannot read model file " + path);
      const int workers = static_cast<int>(std::max(1u, std::thread::hardware_concurrency())) - 1;
      ThreadPool pool(workers, "ge-digest");
      digest = ModelBytesDigest(bytes, &pool);
      DigestMemory::Get().Remember(path, model.stat_info(), *digest);
    }
    request.set_onnx_model_digest(digest->data(), digest->size());
    grpc::Status by_digest = AddGraph(request, response);
    if (!by_digest.ok() || !response->bytes_needed()) return by_digest;
    response->Clear();
  }
  const std::string_view bytes = model.bytes();
  if (!model.ok()) return grpc::Status(grpc::StatusCode::NOT_FOUND, "cannot read model file " + path);
  request.set_onnx_model(bytes.data(), bytes.size());
  return AddGraph(request, response);
}

grpc::Status Client::RemoveGraph(const std::string& session_id, uint32_t graph_id) {
  v1::RemoveGraphRequest request;
  request.set_session_id(session_id);
  request.set_graph_id(graph_id);
  v1::RemoveGraphResponse response;
  return WithRetries([&](grpc::ClientContext* ctx) { return stub_->RemoveGraph(ctx, request, &response); });
}

grpc::Status Client::CompileGraph(const std::string& session_id, uint32_t graph_id,
                                  v1::CompileGraphResponse* response) {
  v1::CompileGraphRequest request;
  request.set_session_id(session_id);
  request.set_graph_id(graph_id);
  return CompileGraph(request, response);
}

grpc::Status Client::CompileGraph(const v1::CompileGraphRequest& request, v1::CompileGraphResponse* response) {
  return WithRetries([&](grpc::ClientContext* ctx) { return stub_->CompileGraph(ctx, request, response); });
}

grpc::Status Client::RunGraph(const v1::RunGraphRequest& request, v1::RunGraphResponse* response,
                              double timeout_seconds) {
  return WithRetries([&](grpc::ClientContext* ctx) { return stub_->RunGraph(ctx, request, response); },
                     timeout_seconds);
}

// The channel kept for the process's life (see Client::async in client.h):
// never destroyed, on purpose. External linkage keeps the compiler from
// dropping the never-read pointer, so it stays reachable (not a leak).
std::shared_ptr<grpc::Channel>* pinned_callback_channel = nullptr;

namespace {
std::once_flag pin_once;
}  // namespace

v1::GraphEngine::StubInterface::async_interface* Client::async() {
  std::call_once(pin_once, [this] { pinned_callback_channel = new std::shared_ptr<grpc::Channel>(channel_); });
  return stub_->async();
}

void Client::RunGraphAsync(const v1::RunGraphRequest& request, v1::RunGraphResponse* response,
                           std::function<void(grpc::Status)> done, double timeout_seconds) {
  // The context must outlive the call: the completion callback owns it.
  if (!setup_.ok()) return done(setup_);
  std::shared_ptr<grpc::ClientContext> ctx = NewContext(timeout_seconds);
  async()->RunGraph(ctx.get(), &request, response, [ctx, done = std::move(done)](grpc::Status s) {
    done(std::move(s));
  });
}

grpc::Status Client::ListSessions(v1::ListSessionsResponse* response) {
  v1::ListSessionsRequest request;
  return WithRetries([&](grpc::ClientContext* ctx) { return stub_->ListSessions(ctx, request, response); });
}

grpc::Status Client::GetStatus(v1::GetStatusResponse* response) {
  v1::GetStatusRequest request;
  return WithRetries([&](grpc::ClientContext* ctx) { return stub_->GetStatus(ctx, request, response); });
}

grpc::Status Client::ExecuteOp(const v1::ExecuteOpRequest& request, v1::ExecuteOpResponse* response) {
  return WithRetries([&](grpc::ClientContext* ctx) { return stub_->ExecuteOp(ctx, request, response); });
}

grpc::Status Client::LoadModel(const v1::LoadModelRequest& request, v1::LoadModelResponse* response) {
  return WithRetries([&](grpc::ClientContext* ctx) { return stub_->LoadModel(ctx, request, response); });
}

grpc::Status Client::UnloadModel(const std::string& session_id, uint32_t model_id) {
  v1::UnloadModelRequest request;
  request.set_session_id(session_id);
  request.set_model_id(model_id);
  v1::UnloadModelResponse response;
  return WithRetries([&](grpc::ClientContext* ctx) { return stub_->UnloadModel(ctx, request, &response); });
}

grpc::Status Client::GetVariable(const std::string& session_id, const std::string& name, v1::Value* value) {
  v1::GetVariableRequest request;
  request.set_session_id(session_id);
  request.set_name(name);
  v1::GetVariableResponse response;
  grpc::Status s =
      WithRetries([&](grpc::ClientContext* ctx) { return stub_->GetVariable(ctx, request, &response); });
  if (s.ok()) *value = std::move(*response.mutable_value());
  return s;
}

grpc::Status Client::SetVariable(const std::string& session_id, const std::string& name, const v1::Value& value) {
  v1::SetVariableRequest request;
  request.set_session_id(session_id);
  request.set_name(name);
  *request.mutable_value() = value;
  v1::SetVariableResponse response;
  return WithRetries([&](grpc::ClientContext* ctx) { return stub_->SetVariable(ctx, request, &response); });
}

grpc::Status Client::ExecuteModel(const v1::ExecuteModelRequest& request, v1::ExecuteModelResponse* response,
                                  double timeout_seconds) {
  return WithRetries([&](grpc::ClientContext* ctx) { return stub_->ExecuteModel(ctx, request, response); },
                     timeout_seconds);
}

grpc::Status Client::RegisterSharedMemory(const std::string& name, const std::string& key, uint64_t offset,
                                          uint64_t byte_size) {
  v1::RegisterSharedMemoryRequest request;
  request.set_name(name);
  request.set_key(key);
  request.set_offset(offset);
  request.set_byte_size(byte_size);
  v1::RegisterSharedMemoryResponse response;
  return WithRetries([&](grpc::ClientContext* ctx) { return stub_->RegisterSharedMemory(ctx, request, &response); });
}

grpc::Status Client::UnregisterSharedMemory(const std::string& name) {
  v1::UnregisterSharedMemoryRequest request;
  request.set_name(name);
  v1::UnregisterSharedMemoryResponse response;
  return WithRetries(
      [&](grpc::ClientContext* ctx) { return stub_->UnregisterSharedMemory(ctx, request, &response); });
}

grpc::Status Client::SharedMemoryStatus(const std::string& name, v1::SharedMemoryStatusResponse* response) {
  v1::SharedMemoryStatusRequest request;
  request.set_name(name);
  return WithRetries([&](grpc::ClientContext* ctx) { return stub_->SharedMemoryStatus(ctx, request, response); });
}

grpc::Status Client::CheckHealth(const std::string& service, grpc::health::v1::HealthCheckResponse* response) {
  grpc::health::v1::HealthCheckRequest request;
  request.set_service(service);
  return WithRetries([&](grpc::ClientContext* ctx) { return health_->Check(ctx, request, response); });
}

}  // namespace ge::client
