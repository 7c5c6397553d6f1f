// Fuzz target for the daemon's gRPC service as a whole: the input is a
// sequence of requests, each sent to an in-process ged (server::Daemon on
// 127.0.0.1, port 0, started once) with two tenants, alice and bob, over a
// real gRPC channel, so that admission, authentication, the run queue and
// every RPC's handler see it as a client would send it.
//
// Input format (fuzz/corpus/service/ has seeds; fuzz/make_service_seeds.cc
// writes them): records of
//   byte 0   the RPC (ServiceOp below, modulo their count)
//   byte 1   flags: bit 0 as bob (else alice), bit 1 without a token,
//            bit 2 replace the request's session_id with the session in
//            slot (bits 4-6) of those this input created
//   byte 2-3 payload length, little-endian
//   payload  the RPC's request message, serialized
// At most 24 records per input; each call has a 20 s deadline.
//
// Properties, checked after every input: no reply or error message holds
// any 8-byte window of the canary file's secret (its path,
// /tmp/ged-service-fuzzer/canary.txt, is fixed so that seeds can name it)
// or of bob's weights; the daemon answers GetStatus; bob's graph, set up at
// start, still returns its known answer. Sessions an input created are
// destroyed after it. The working directory is a fresh temp dir, so paths
// an input makes the daemon write (ge.dump_path) land there.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <unordered_map>
#include <vector>

#include "base/ir/proto_convert.h"
#include "base/ir/text_format.h"
#include "fuzz/fuzz_check.h"
#include "ge/v1/service.grpc.pb.h"
#include "grpcpp/grpcpp.h"
#include "server/config.h"
#include "server/daemon.h"
#include "server/tenants.h"

namespace {

constexpr char kAliceToken[] = "fuzz-alice-token";
constexpr char kBobToken[] = "fuzz-bob-token";
constexpr char kCanaryDir[] = "/tmp/ged-service-fuzzer";
constexpr int kMaxRecords = 24;

enum ServiceOp : uint8_t {
  kCreateSession,
  kDestroySession,
  kAddGraph,
  kRemoveGraph,
  kCompileGraph,
  kRunGraph,
  kListSessions,
  kGetStatus,
  kExecuteOp,
  kLoadModel,
  kUnloadModel,
  kExecuteModel,
  kGetVariable,
  kSetVariable,
  kRunGraphStream,
  kOpCount
};

struct State {
  std::unique_ptr<ge::server::Daemon> daemon;
  std::unique_ptr<ge::v1::GraphEngine::Stub> stub;
  std::string bob_session;
  std::string bob_input;
  std::string bob_expected;
  std::vector<std::string> secrets;  // the canary's secret, bob's weights
};

State* g_state = nullptr;

std::string Bytes(const std::vector<float>& v) {
  return std::string(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(float));
}

// The canary's secret: read when another fuzzer process made the file, else
// written (O_EXCL, so two processes agree on one).
std::string CanarySecret() {
  std::filesystem::create_directories(kCanaryDir);
  const std::string path = std::string(kCanaryDir) + "/canary.txt";
  const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0600);
  if (fd >= 0) {
    std::random_device rd;
    std::string secret;
    for (int i = 0; i < 64; ++i) secret += "0123456789abcdef"[rd() % 16];
    const std::string text = "canary " + secret + "\n";
    if (write(fd, text.data(), text.size()) != static_cast<ssize_t>(text.size())) ge::fuzz::FuzzFail("canary write");
    close(fd);
  }
  std::ifstream in(path);
  std::string word, secret;
  in >> word >> secret;
  if (secret.size() != 64) ge::fuzz::FuzzFail("canary file", path);
  return secret;
}

std::unique_ptr<grpc::ClientContext> Context(bool bob, bool no_token) {
  auto ctx = std::make_unique<grpc::ClientContext>();
  ctx->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(20));
  if (!no_token) ctx->AddMetadata("authorization", std::string("Bearer ") + (bob ? kBobToken : kAliceToken));
  return ctx;
}

// A window of a secret in a reply is a leak unless the request itself
// carried it: a reply may echo the caller's own bytes (an unknown cache key
// named in the error), and libFuzzer, which sees the comparisons below,
// puts the secrets' bytes into requests on purpose.
void CheckNoLeak(const std::string& bytes, const char* what, std::string_view sent) {
  if (bytes.size() < 8) return;
  for (const std::string& secret : g_state->secrets) {
    for (size_t i = 0; i + 8 <= secret.size(); ++i) {
      const std::string_view window = std::string_view(secret).substr(i, 8);
      if (bytes.find(window) != std::string::npos && sent.find(window) == std::string_view::npos) {
        ge::fuzz::FuzzFail("no reply holds a secret's bytes", what);
      }
    }
  }
}

void CheckReply(const grpc::Status& s, const google::protobuf::Message& reply, const char* what,
                std::string_view sent) {
  CheckNoLeak(s.error_message(), what, sent);
  CheckNoLeak(reply.SerializeAsString(), what, sent);
}

// Bob's graph: y = x . W, W f32[4,4] of known values.
void SetUpBob(State& st) {
  std::vector<float> w(16), x = {1, 2, 3, 4, -1, -2, -3, -4}, y(8);
  std::ostringstream list;
  for (int i = 0; i < 16; ++i) {
    w[i] = 500.25f + 0.5f * static_cast<float>(i);
    list << (i ? ", " : "") << w[i];
  }
  for (int r = 0; r < 2; ++r) {
    for (int c = 0; c < 4; ++c) {
      for (int k = 0; k < 4; ++k) y[r * 4 + c] += x[r * 4 + k] * w[k * 4 + c];
    }
  }
  st.secrets.push_back(Bytes(w));
  auto graph = ge::ir::ParseGraph(
      "graph bob {\n  x = Data() {index = 0} -> (f32[2,4])\n"
      "  w = Const() {value = tensor<f32[4,4]>[" +
      list.str() +
      "]} -> (f32[4,4])\n"
      "  y = MatMul(x:0, w:0) -> (f32[2,4])\n  out = NetOutput(y:0)\n}\n");
  if (!graph.ok()) ge::fuzz::FuzzFail("bob's graph parses", std::string(graph.status().message()));
  ge::v1::CreateSessionRequest create;
  ge::v1::CreateSessionResponse created;
  auto ctx = Context(true, false);
  if (!st.stub->CreateSession(ctx.get(), create, &created).ok()) ge::fuzz::FuzzFail("bob's session");
  st.bob_session = created.session_id();
  ge::v1::AddGraphRequest add;
  add.set_session_id(st.bob_session);
  add.set_graph_id(1);
  if (!ge::ir::GraphToProto(**graph, add.mutable_graph_def()).ok()) ge::fuzz::FuzzFail("bob's GraphDef");
  ge::v1::AddGraphResponse added;
  ctx = Context(true, false);
  const grpc::Status s = st.stub->AddGraph(ctx.get(), add, &added);
  if (!s.ok()) ge::fuzz::FuzzFail("bob's AddGraph", s.error_message());
  st.bob_input = Bytes(x);
  st.bob_expected = Bytes(y);
}

bool BobRunIsRight() {
  ge::v1::RunGraphRequest run;
  run.set_session_id(g_state->bob_session);
  run.set_graph_id(1);
  ge::v1::Tensor* t = run.add_inputs()->mutable_tensor();
  t->set_dtype(ge::v1::DT_FLOAT);
  t->add_dims(2);
  t->add_dims(4);
  t->set_raw_data(g_state->bob_input);
  ge::v1::RunGraphResponse out;
  auto ctx = Context(true, false);
  return g_state->stub->RunGraph(ctx.get(), run, &out).ok() && out.outputs_size() == 1 &&
         out.outputs(0).tensor().raw_data() == g_state->bob_expected;
}

// Requests that name a session take the slot's id.
template <typename Request>
void SetSession(Request& request, const std::string& id) {
  if constexpr (requires { request.set_session_id(id); }) request.set_session_id(id);
}

// Sends one request; `sessions` collects what CreateSession made (id, bob?).
void Send(uint8_t op, uint8_t flags, const std::string& payload, std::vector<std::pair<std::string, bool>>& sessions) {
  const bool bob = flags & 1, no_token = flags & 2;
  const bool substitute = (flags & 4) && !sessions.empty();
  const std::string slot = substitute ? sessions[((flags >> 4) & 7) % sessions.size()].first : "";
  auto ctx = Context(bob, no_token);
  ge::v1::GraphEngine::Stub& stub = *g_state->stub;
  // Parses the payload into `req`, substitutes the session, calls `rpc`.
#define GED_FUZZ_CALL(Req, Resp, Rpc)                       \
  {                                                         \
    ge::v1::Req req;                                        \
    if (!req.ParseFromString(payload)) return;              \
    if (substitute) SetSession(req, slot);                  \
    ge::v1::Resp resp;                                      \
    const grpc::Status s = stub.Rpc(ctx.get(), req, &resp); \
    CheckReply(s, resp, #Rpc, payload);                     \
    OnReply(op, s, resp, bob, sessions);                    \
    return;                                                 \
  }
  auto OnReply = [](uint8_t o, const grpc::Status& s, const google::protobuf::Message& resp, bool as_bob,
                    std::vector<std::pair<std::string, bool>>& made) {
    if (o == kCreateSession && s.ok()) {
      made.emplace_back(static_cast<const ge::v1::CreateSessionResponse&>(resp).session_id(), as_bob);
    }
  };
  switch (op % kOpCount) {
    case kCreateSession: GED_FUZZ_CALL(CreateSessionRequest, CreateSessionResponse, CreateSession)
    case kDestroySession: GED_FUZZ_CALL(DestroySessionRequest, DestroySessionResponse, DestroySession)
    case kAddGraph: GED_FUZZ_CALL(AddGraphRequest, AddGraphResponse, AddGraph)
    case kRemoveGraph: GED_FUZZ_CALL(RemoveGraphRequest, RemoveGraphResponse, RemoveGraph)
    case kCompileGraph: GED_FUZZ_CALL(CompileGraphRequest, CompileGraphResponse, CompileGraph)
    case kRunGraph: GED_FUZZ_CALL(RunGraphRequest, RunGraphResponse, RunGraph)
    case kListSessions: GED_FUZZ_CALL(ListSessionsRequest, ListSessionsResponse, ListSessions)
    case kGetStatus: GED_FUZZ_CALL(GetStatusRequest, GetStatusResponse, GetStatus)
    case kExecuteOp: GED_FUZZ_CALL(ExecuteOpRequest, ExecuteOpResponse, ExecuteOp)
    case kLoadModel: GED_FUZZ_CALL(LoadModelRequest, LoadModelResponse, LoadModel)
    case kUnloadModel: GED_FUZZ_CALL(UnloadModelRequest, UnloadModelResponse, UnloadModel)
    case kExecuteModel: GED_FUZZ_CALL(ExecuteModelRequest, ExecuteModelResponse, ExecuteModel)
    case kGetVariable: GED_FUZZ_CALL(GetVariableRequest, GetVariableResponse, GetVariable)
    case kSetVariable: GED_FUZZ_CALL(SetVariableRequest, SetVariableResponse, SetVariable)
    case kRunGraphStream: {
      ge::v1::RunGraphRequest req;
      if (!req.ParseFromString(payload)) return;
      if (substitute) req.set_session_id(slot);
      auto stream = stub.RunGraphStream(ctx.get());
      stream->Write(req);
      stream->WritesDone();
      ge::v1::RunGraphResponse reply;
      while (stream->Read(&reply)) CheckReply(grpc::Status::OK, reply, "RunGraphStream reply", payload);
      const grpc::Status s = stream->Finish();
      CheckNoLeak(s.error_message(), "RunGraphStream status", payload);
      return;
    }
    default: return;
  }
#undef GED_FUZZ_CALL
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int* /*argc*/, char*** /*argv*/) {
  ge::fuzz::QuietLogs();
  g_state = new State();
  g_state->secrets.push_back(CanarySecret());
  // A working directory of its own: what an input makes the daemon write
  // by relative path lands there.
  const std::string work = std::filesystem::temp_directory_path() / ("ged-service-fuzzer-" + std::to_string(getpid()));
  std::filesystem::create_directories(work);
  std::filesystem::current_path(work);
  ge::server::ServerConfig config = ge::server::DefaultConfig();
  config.listen = "127.0.0.1:0";
  config.metrics_listen = "127.0.0.1:0";
  config.cache_dir = work + "/cache";
  config.max_message_bytes = 4 << 20;
  config.session_idle_timeout_seconds = 600;
  config.devices[0].threads = 1;
  for (const auto& [name, token] : {std::pair{"alice", kAliceToken}, std::pair{"bob", kBobToken}}) {
    ge::server::TenantConfig t;
    t.name = name;
    t.token_sha256 = ge::server::ToHex(ge::server::Sha256(token).data(), 32);
    config.tenants.push_back(t);
  }
  absl::StatusOr<std::unique_ptr<ge::server::Daemon>> daemon = ge::server::Daemon::Start(config);
  if (!daemon.ok()) ge::fuzz::FuzzFail("the daemon starts", std::string(daemon.status().message()));
  g_state->daemon = *std::move(daemon);
  grpc::ChannelArguments args;
  args.SetMaxSendMessageSize(-1);
  args.SetMaxReceiveMessageSize(-1);
  g_state->stub = ge::v1::GraphEngine::NewStub(
      grpc::CreateCustomChannel(g_state->daemon->grpc_address(), grpc::InsecureChannelCredentials(), args));
  SetUpBob(*g_state);
  if (!BobRunIsRight()) ge::fuzz::FuzzFail("bob's graph runs at start");
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::vector<std::pair<std::string, bool>> sessions;
  size_t at = 0;
  for (int records = 0; records < kMaxRecords && at + 4 <= size; ++records) {
    const uint8_t op = data[at], flags = data[at + 1];
    const size_t length = data[at + 2] | (static_cast<size_t>(data[at + 3]) << 8);
    at += 4;
    const size_t take = std::min(length, size - at);
    Send(op, flags, std::string(reinterpret_cast<const char*>(data + at), take), sessions);
    at += take;
  }
  for (const auto& [id, bob] : sessions) {
    ge::v1::DestroySessionRequest destroy;
    destroy.set_session_id(id);
    ge::v1::DestroySessionResponse destroyed;
    auto ctx = Context(bob, false);
    g_state->stub->DestroySession(ctx.get(), destroy, &destroyed);
  }
  ge::v1::GetStatusResponse status;
  auto ctx = Context(true, false);
  const grpc::Status s = g_state->stub->GetStatus(ctx.get(), ge::v1::GetStatusRequest(), &status);
  if (!s.ok()) ge::fuzz::FuzzFail("the daemon answers GetStatus after the input", s.error_message());
  if (!BobRunIsRight()) ge::fuzz::FuzzFail("bob's graph returns its answer after the input");
  return 0;
}
