// Request bounds against a real daemon (docs/security.md, "Bounds"): each
// refusal is RESOURCE_EXHAUSTED naming its configuration key, and the daemon
// serves the next call. Also the compile deadline, stream back-pressure (a
// client that does not read its replies is held, not failed), ExecuteOp's
// stateful-op refusal, GetStatus counting only the caller's sessions, and
// the unix socket in open mode.
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <condition_variable>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <thread>

#include "base/ir/proto_convert.h"
#include "base/ir/text_format.h"
#include "client/cpp/client.h"
#include "proto/value_convert.h"
#include "gtest/gtest.h"
#include "server/tenants.h"
#include "tests/integration/daemon_process.h"
#include "tests/integration/process.h"

namespace ge {
namespace {

using testing::DaemonProcess;

client::Client MakeClient(const std::string& address, const std::string& token = "") {
  client::ClientOptions options;
  options.address = address;
  options.token = token;
  options.max_retries = 1;
  return client::Client(options);
}

v1::GraphDef Def(const std::string& text) {
  auto g = ir::ParseGraph(text);
  EXPECT_TRUE(g.ok()) << g.status();
  v1::GraphDef def;
  EXPECT_TRUE(ir::GraphToProto(**g, &def).ok());
  return def;
}

v1::GraphDef Relu() {
  return Def(
      "graph relu {\n x = Data() {index = 0} -> (f32[1,3])\n y = Relu(x:0) -> (f32[1,3])\n"
      " out = NetOutput(y:0)\n}\n");
}

grpc::Status Add(client::Client& c, const std::string& session, uint32_t id, const v1::GraphDef& def,
                 const std::map<std::string, std::string>& options = {}) {
  v1::AddGraphRequest add;
  add.set_session_id(session);
  add.set_graph_id(id);
  *add.mutable_graph_def() = def;
  for (const auto& [k, v] : options) (*add.mutable_options()->mutable_entries())[k] = v;
  v1::AddGraphResponse added;
  return c.AddGraph(add, &added);
}

void ExpectBound(const grpc::Status& s, const std::string& key) {
  EXPECT_EQ(s.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED) << key << ": " << s.error_message();
  EXPECT_NE(s.error_message().find(key), std::string::npos) << s.error_message();
}

class DaemonBoundsTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = testing::MakeTempDir("ged-bounds"); }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string Config(const std::string& yaml) {
    const std::string path = dir_ + "/ged.yaml";
    std::ofstream(path) << yaml;
    return path;
  }
  std::string dir_;
};

TEST_F(DaemonBoundsTest, EveryBoundRefusesNamingItsKeyAndTheDaemonGoesOn) {
  auto d = DaemonProcess::Start({"--config", Config("max_graphs_per_session: 2\nmax_graph_nodes: 5\n"
                                                    "max_tensor_bytes: 1024\nmax_inter_op_threads: 3\n")});
  ASSERT_NE(d, nullptr);
  client::Client c = MakeClient(d->grpc_address());
  std::string session;
  ASSERT_TRUE(c.CreateSession({}, &session).ok());

  // ExecuteOp asking for 2,000,000,000 outputs: refused before anything is built.
  v1::ExecuteOpRequest op;
  op.set_op_type("Relu");
  op.set_num_outputs(2000000000);
  ASSERT_TRUE(rpc::ValueToProto(Value(Tensor::FromVector<float>({1}, {1})), op.add_inputs()).ok());
  v1::ExecuteOpResponse op_out;
  ExpectBound(c.ExecuteOp(op, &op_out), "max_outputs");
  // A tensor larger than max_tensor_bytes.
  op.set_num_outputs(0);
  op.clear_inputs();
  ASSERT_TRUE(
      rpc::ValueToProto(Value(Tensor::FromVector<float>(std::vector<float>(512, 1), {512})), op.add_inputs()).ok());
  ExpectBound(c.ExecuteOp(op, &op_out), "max_tensor_bytes");

  // Graph nodes, counted on the message.
  std::string big = "graph big {\n x = Data() {index = 0} -> (f32[1,3])\n";
  std::string prev = "x";
  for (int i = 0; i < 6; ++i) {
    big += " r" + std::to_string(i) + " = Relu(" + prev + ":0) -> (f32[1,3])\n";
    prev = "r" + std::to_string(i);
  }
  big += " out = NetOutput(" + prev + ":0)\n}\n";
  ExpectBound(Add(c, session, 9, Def(big)), "max_graph_nodes");
  // Inter-op threads: 3 in all (parallelism 3 takes 2; another 3 would pass it).
  ASSERT_TRUE(Add(c, session, 1, Relu(), {{"ge.exec.inter_op_parallelism", "3"}}).ok());
  ExpectBound(Add(c, session, 2, Relu(), {{"ge.exec.inter_op_parallelism", "3"}}), "max_inter_op_threads");
  ASSERT_TRUE(c.RemoveGraph(session, 1).ok());  // returns its threads
  ASSERT_TRUE(Add(c, session, 2, Relu(), {{"ge.exec.inter_op_parallelism", "3"}}).ok());
  // Graphs per session.
  ASSERT_TRUE(Add(c, session, 3, Relu()).ok());
  ExpectBound(Add(c, session, 4, Relu()), "max_graphs_per_session");

  // A request's tensor past max_tensor_bytes in RunGraph.
  v1::RunGraphRequest run;
  run.set_session_id(session);
  run.set_graph_id(3);
  ASSERT_TRUE(
      rpc::ValueToProto(Value(Tensor::FromVector<float>(std::vector<float>(300, 1), {1, 300})), run.add_inputs()).ok());
  v1::RunGraphResponse out;
  ExpectBound(c.RunGraph(run, &out), "max_tensor_bytes");
  run.clear_inputs();
  ASSERT_TRUE(rpc::ValueToProto(Value(Tensor::FromVector<float>({-1, 0, 2}, {1, 3})), run.add_inputs()).ok());
  grpc::Status s = c.RunGraph(run, &out);
  EXPECT_TRUE(s.ok()) << s.error_message();

  // Stateful ops are not ExecuteOp's.
  for (const char* type : {"RandomNormal", "Bernoulli", "Assign", "Variable", "FileConstant"}) {
    v1::ExecuteOpRequest stateful;
    stateful.set_op_type(type);
    s = c.ExecuteOp(stateful, &op_out);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << type << ": " << s.error_message();
    EXPECT_NE(s.error_message().find("stateful"), std::string::npos) << s.error_message();
  }
  // One audit line per refusal.
  EXPECT_NE(d->log().find("refused tenant=default rpc=ExecuteOp class=bounds"), std::string::npos) << d->log();
  d->Signal(SIGTERM);
  EXPECT_EQ(d->Wait(60), 0) << d->log();
}

TEST_F(DaemonBoundsTest, CompileDeadlineStopsALongCompileAndTheDaemonGoesOn) {
  // A millisecond: no chain of thousands of nodes compiles within it.
  auto d = DaemonProcess::Start({"--config", Config("compile_timeout_seconds: 0.001\n")});
  ASSERT_NE(d, nullptr);
  client::Client c = MakeClient(d->grpc_address());
  std::string session;
  ASSERT_TRUE(c.CreateSession({}, &session).ok());
  auto chain = [](const std::string& rows) {
    std::string text = "graph chain {\n x = Data() {index = 0} -> (f32[" + rows + ",3])\n";
    std::string prev = "x";
    for (int i = 0; i < 4000; ++i) {
      text +=
          " r" + std::to_string(i) + " = " + (i % 2 ? "Relu" : "Neg") + "(" + prev + ":0) -> (f32[" + rows + ",3])\n";
      prev = "r" + std::to_string(i);
    }
    return text + " out = NetOutput(" + prev + ":0)\n}\n";
  };
  ASSERT_TRUE(Add(c, session, 1, Def(chain("1"))).ok());
  v1::CompileGraphResponse compiled;
  ExpectBound(c.CompileGraph(session, 1, &compiled), "compile_timeout_seconds");
  // The compiles a run makes are bounded as well: a graph run without
  // CompileGraph first, and a dynamic-dim graph, whose per-shape plan (and
  // the dynamic form it falls back to) compile at its first run.
  ASSERT_TRUE(Add(c, session, 2, Def(chain("1"))).ok());
  ASSERT_TRUE(Add(c, session, 3, Def(chain("-1"))).ok());
  for (int graph : {2, 3}) {
    v1::RunGraphRequest run;
    run.set_session_id(session);
    run.set_graph_id(graph);
    ASSERT_TRUE(rpc::ValueToProto(Value(Tensor::FromVector<float>({-1, 0, 2}, {1, 3})), run.add_inputs()).ok());
    v1::RunGraphResponse out;
    ExpectBound(c.RunGraph(run, &out), "compile_timeout_seconds");
  }
  ExpectBound(c.CompileGraph(session, 3, &compiled), "compile_timeout_seconds");
  // The worker is free again and other calls go on (not ExecuteOp: its
  // one-op compile is bounded too, and a millisecond is tight for it).
  std::string other;
  EXPECT_TRUE(c.CreateSession({}, &other).ok());
  EXPECT_TRUE(c.RemoveGraph(session, 3).ok());
  v1::GetStatusResponse status;
  EXPECT_TRUE(c.GetStatus(&status).ok());
  d->Signal(SIGTERM);
  EXPECT_EQ(d->Wait(60), 0) << d->log();
}

TEST_F(DaemonBoundsTest, StreamOfAClientThatDoesNotReadIsHeldNotFailed) {
  // A window of two runs; each request and reply is 1 MiB.
  auto d = DaemonProcess::Start(
      {"--config", Config("tenants:\n  - {name: t, token_sha256: " + server::ToHex(server::Sha256("tok").data(), 32) +
                          ", max_concurrent_runs: 2}\n")});
  ASSERT_NE(d, nullptr);
  client::Client c = MakeClient(d->grpc_address(), "tok");
  std::string session;
  ASSERT_TRUE(c.CreateSession({}, &session).ok());
  constexpr int64_t kElems = 262144;
  ASSERT_TRUE(Add(c, session, 1,
                  Def("graph neg {\n x = Data() {index = 0} -> (f32[262144])\n y = Neg(x:0) -> (f32[262144])\n"
                      " out = NetOutput(y:0)\n}\n"))
                  .ok());
  v1::CompileGraphResponse compiled;
  ASSERT_TRUE(c.CompileGraph(session, 1, &compiled).ok());

  constexpr int kRequests = 64;  // 64 MiB: more than gRPC's flow-control windows hold
  auto ctx = std::make_unique<grpc::ClientContext>();
  ctx->AddMetadata("authorization", "Bearer tok");
  auto stream = c.stub().RunGraphStream(ctx.get());
  std::mutex mu;
  std::condition_variable cv;
  int written = 0;
  bool writer_done = false;
  std::thread writer([&] {
    for (int i = 0; i < kRequests; ++i) {
      v1::RunGraphRequest r;
      r.set_session_id(session);
      r.set_graph_id(1);
      r.set_request_id(static_cast<uint64_t>(i) + 1);
      std::vector<float> x(kElems, static_cast<float>(i));
      if (!rpc::ValueToProto(Value(Tensor::FromVector<float>(x, {kElems})), r.add_inputs()).ok()) break;
      if (!stream->Write(r)) break;
      std::lock_guard<std::mutex> lock(mu);
      ++written;
      cv.notify_all();
    }
    stream->WritesDone();
    std::lock_guard<std::mutex> lock(mu);
    writer_done = true;
    cv.notify_all();
  });
  {
    // The daemon stops reading at its window: without reading a reply, the
    // writer cannot hand over all 64 MiB. (A slow machine only makes this
    // wait pass more easily; it is never what makes it fail.)
    std::unique_lock<std::mutex> lock(mu);
    ASSERT_TRUE(cv.wait_for(lock, std::chrono::seconds(60), [&] { return written >= 2; }));
    EXPECT_FALSE(cv.wait_for(lock, std::chrono::seconds(3), [&] { return writer_done; }))
        << "the daemon read all " << kRequests << " requests of a client that read no reply";
  }
  // Now the client reads: every reply comes, right, and the stream ends OK.
  int replies = 0;
  v1::RunGraphResponse reply;
  while (stream->Read(&reply)) {
    ASSERT_EQ(reply.outputs_size(), 1);
    const v1::Tensor& t = reply.outputs(0).tensor();
    ASSERT_EQ(t.raw_data().size(), kElems * sizeof(float));
    float first = 0;
    std::memcpy(&first, t.raw_data().data(), sizeof(float));
    EXPECT_EQ(first, -static_cast<float>(reply.request_id() - 1));
    ++replies;
  }
  writer.join();
  grpc::Status s = stream->Finish();
  EXPECT_TRUE(s.ok()) << s.error_message();
  EXPECT_EQ(replies, kRequests);
  d->Signal(SIGTERM);
  EXPECT_EQ(d->Wait(60), 0) << d->log();
}

TEST_F(DaemonBoundsTest, GetStatusCountsTheCallersSessionsOnly) {
  auto hash = [](const char* token) { return server::ToHex(server::Sha256(token).data(), 32); };
  auto d = DaemonProcess::Start({"--config", Config("tenants:\n  - {name: a, token_sha256: " + hash("ta") +
                                                    "}\n  - {name: b, token_sha256: " + hash("tb") + "}\n")});
  ASSERT_NE(d, nullptr);
  client::Client a = MakeClient(d->grpc_address(), "ta");
  client::Client b = MakeClient(d->grpc_address(), "tb");
  std::string id;
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(a.CreateSession({}, &id).ok());
  ASSERT_TRUE(b.CreateSession({}, &id).ok());
  v1::GetStatusResponse status;
  ASSERT_TRUE(b.GetStatus(&status).ok());
  EXPECT_EQ(status.sessions(), 1);
  ASSERT_TRUE(a.GetStatus(&status).ok());
  EXPECT_EQ(status.sessions(), 3);
  client::Client nobody = MakeClient(d->grpc_address(), "wrong");
  EXPECT_EQ(nobody.GetStatus(&status).error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_NE(d->log().find("class=authentication"), std::string::npos) << d->log();
  d->Signal(SIGTERM);
  EXPECT_EQ(d->Wait(60), 0) << d->log();
}

// Open mode keeps loopback TCP and adds the 0600 unix socket; clients
// reach it as unix:PATH.
TEST_F(DaemonBoundsTest, OpenModeServesTheUnixSocketToo) {
  const std::string socket = dir_ + "/ged.sock";
  auto d = DaemonProcess::Start({"--unix-socket", socket});
  ASSERT_NE(d, nullptr);
  struct stat st;
  ASSERT_EQ(stat(socket.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  client::Client local = MakeClient("unix:" + socket);
  client::Client tcp = MakeClient(d->grpc_address());
  v1::GetStatusResponse status;
  EXPECT_TRUE(local.GetStatus(&status).ok());
  EXPECT_TRUE(tcp.GetStatus(&status).ok());
  const auto gectl = testing::RunProcess({testing::BinaryDir() + "/bin/gectl", "status", "--remote", "unix:" + socket});
  EXPECT_EQ(gectl.exit_code, 0) << gectl.err;
  d->Signal(SIGTERM);
  EXPECT_EQ(d->Wait(60), 0) << d->log();
}

// The peer check behind the socket's mode: ged reads each unix-socket
// peer's uid (SO_PEERCRED) and closes connections of any uid but its own
// before gRPC reads a byte. The socket is widened to 0666 here so that
// another user can connect at all; that user's connection is closed at
// once (no HTTP/2 SETTINGS frame), ged's own uid still gets one. Needs root
// to act as another user.
TEST_F(DaemonBoundsTest, UnixSocketAdmitsOnlyPeersOfGedsUid) {
  if (geteuid() != 0) GTEST_SKIP() << "acting as another uid needs root";
  const std::string socket = dir_ + "/ged.sock";
  auto d = DaemonProcess::Start({"--unix-socket", socket});
  ASSERT_NE(d, nullptr);
  ASSERT_EQ(chmod(socket.c_str(), 0666), 0);
  ASSERT_EQ(chmod(dir_.c_str(), 0755), 0);
  // Connects, sends the HTTP/2 client preface, and prints how many bytes
  // the server answered with before closing or within 20 s.
  const std::string probe =
      "import socket, sys\n"
      "s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)\n"
      "s.settimeout(20)\n"
      "s.connect(sys.argv[1])\n"
      "try:\n"
      "    s.sendall(b'PRI * HTTP/2.0\\r\\n\\r\\nSM\\r\\n\\r\\n' + bytes([0, 0, 0, 4, 0, 0, 0, 0, 0]))\n"
      "    print(len(s.recv(4096)))\n"
      "except (ConnectionResetError, BrokenPipeError):\n"
      "    print(0)\n";
  const auto other = testing::RunProcess({"/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
                                          "/usr/bin/python3", "-c", probe, socket});
  ASSERT_EQ(other.exit_code, 0) << other.err;
  EXPECT_EQ(other.out, "0\n") << "a peer of uid 65534 was served";
  const auto own = testing::RunProcess({"/usr/bin/python3", "-c", probe, socket});
  ASSERT_EQ(own.exit_code, 0) << own.err;
  EXPECT_NE(own.out, "0\n") << "ged's own uid was not served";
  client::Client local = MakeClient("unix:" + socket);
  v1::GetStatusResponse status;
  EXPECT_TRUE(local.GetStatus(&status).ok());
  d->Signal(SIGTERM);
  EXPECT_EQ(d->Wait(60), 0) << d->log();
  EXPECT_NE(d->log().find("refused unix-socket peer uid=65534"), std::string::npos) << d->log();
}

}  // namespace
}  // namespace ge
