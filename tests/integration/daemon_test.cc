// The ged daemon end to end: started as a process on port 0, driven with
// the C++ client library. Sessions and graphs, errors naming their cause,
// tenants isolated from each other, quotas, deadlines, a full run queue,
// graceful SIGTERM during runs, the health service and every documented
// metric; a dynamic-batch graph past its plan bound (ge.jitMaxPlans).
#include <signal.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>
#include <thread>

#include "base/ir/proto_convert.h"
#include "base/ir/text_format.h"
#include "client/cpp/client.h"
#include "proto/value_convert.h"
#include "gtest/gtest.h"
#include "server/tenants.h"
#include "tests/integration/daemon_process.h"
#include "tests/testing/poll.h"
#include "tests/integration/process.h"

namespace ge {
namespace {

using testing::DaemonProcess;

// y = relu(x) + x, x: f32[-1, 3]
v1::GraphDef ReluAdd() {
  auto g = ir::ParseGraph(R"(graph relu_add {
    x = Data() {index = 0} -> (f32[-1,3])
    r = Relu(x:0) -> (f32[-1,3])
    y = Add(r:0, x:0) -> (f32[-1,3])
    out = NetOutput(y:0)
  })");
  EXPECT_TRUE(g.ok()) << g.status();
  v1::GraphDef def;
  EXPECT_TRUE(ir::GraphToProto(**g, &def).ok());
  return def;
}

// Three chained 768x768 matrix products: slow enough (tens of ms or more)
// to keep a worker busy.
v1::GraphDef SlowGraph() {
  auto g = ir::ParseGraph(R"(graph slow {
    x = Data() {index = 0} -> (f32[768,768])
    a = MatMul(x:0, x:0) -> (f32[768,768])
    b = MatMul(a:0, x:0) -> (f32[768,768])
    c = MatMul(b:0, x:0) -> (f32[768,768])
    d = MatMul(c:0, x:0) -> (f32[768,768])
    out = NetOutput(d:0)
  })");
  EXPECT_TRUE(g.ok()) << g.status();
  v1::GraphDef def;
  EXPECT_TRUE(ir::GraphToProto(**g, &def).ok());
  return def;
}

v1::RunGraphRequest RunRequest(const std::string& session, uint32_t graph, const std::vector<Tensor>& inputs) {
  v1::RunGraphRequest r;
  r.set_session_id(session);
  r.set_graph_id(graph);
  for (const Tensor& t : inputs) EXPECT_TRUE(rpc::ValueToProto(Value(t), r.add_inputs()).ok());
  return r;
}

Tensor Filled(int64_t n, float v) {
  return Tensor::FromVector<float>(std::vector<float>(static_cast<size_t>(n * n), v), Shape{n, n});
}

client::Client MakeClient(const DaemonProcess& d, const std::string& token = "") {
  client::ClientOptions options;
  options.address = d.grpc_address();
  options.token = token;
  options.max_retries = 1;
  return client::Client(options);
}

// Adds `def` as graph `id` to a new session; returns the session id.
std::string SessionWithGraph(client::Client& c, const v1::GraphDef& def, uint32_t id = 1,
                             const std::map<std::string, std::string>& options = {}) {
  std::string session;
  EXPECT_TRUE(c.CreateSession({}, &session).ok());
  v1::AddGraphRequest add;
  add.set_session_id(session);
  add.set_graph_id(id);
  *add.mutable_graph_def() = def;
  for (const auto& [k, v] : options) (*add.mutable_options()->mutable_entries())[k] = v;
  v1::AddGraphResponse added;
  grpc::Status s = c.AddGraph(add, &added);
  EXPECT_TRUE(s.ok()) << s.error_message();
  return session;
}

class DaemonTest : public ::testing::Test {
 protected:
  std::string WriteConfig(const std::string& yaml) {
    dir_ = ge::testing::MakeTempDir("ged-config");
    const std::string path = dir_ + "/ged.yaml";
    std::ofstream(path) << yaml;
    return path;
  }
  void TearDown() override {
    if (!dir_.empty()) std::filesystem::remove_all(dir_);
  }
  std::string dir_;
};

TEST_F(DaemonTest, SessionsGraphsAndRuns) {
  auto d = DaemonProcess::Start({});
  ASSERT_NE(d, nullptr);
  client::Client c = MakeClient(*d);
  grpc::health::v1::HealthCheckResponse health;
  ASSERT_TRUE(c.CheckHealth("", &health).ok());
  EXPECT_EQ(health.status(), grpc::health::v1::HealthCheckResponse::SERVING);

  const std::string session = SessionWithGraph(c, ReluAdd(), 7);
  EXPECT_EQ(session.size(), 32u);
  v1::CompileGraphResponse compiled;
  ASSERT_TRUE(c.CompileGraph(session, 7, &compiled).ok());
  EXPECT_GT(compiled.summary().node_count(), 0);
  EXPECT_FALSE(compiled.summary().nodes_per_engine().empty());

  v1::RunGraphResponse out;
  grpc::Status s = c.RunGraph(RunRequest(session, 7, {Tensor::FromVector<float>({-1, 2, -3, 4, 5, -6}, {2, 3})}), &out);
  ASSERT_TRUE(s.ok()) << s.error_message();
  ASSERT_EQ(out.outputs_size(), 1);
  auto y = rpc::ValueFromProto(out.outputs(0), "y");
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_TRUE(TensorsEqual(y->tensor(), Tensor::FromVector<float>({-1, 4, -3, 8, 10, -6}, {2, 3})));

  v1::ListSessionsResponse listed;
  ASSERT_TRUE(c.ListSessions(&listed).ok());
  ASSERT_EQ(listed.sessions_size(), 1);
  EXPECT_EQ(listed.sessions(0).session_id(), session);
  EXPECT_EQ(listed.sessions(0).graph_ids(0), 7u);

  v1::GetStatusResponse status;
  ASSERT_TRUE(c.GetStatus(&status).ok());
  EXPECT_EQ(status.sessions(), 1);
  ASSERT_EQ(status.devices_size(), 1);
  EXPECT_EQ(status.devices(0).name(), "cpu:0");

  ASSERT_TRUE(c.RemoveGraph(session, 7).ok());
  ASSERT_TRUE(c.DestroySession(session).ok());
  EXPECT_EQ(c.DestroySession(session).error_code(), grpc::StatusCode::NOT_FOUND);
  d->Signal(SIGTERM);
  EXPECT_EQ(d->Wait(30), 0) << d->log();
}

// A dynamic-batch graph through the daemon with a small plan bound
// (ge.jitMaxPlans=2): shapes past the bound run on the dynamic form, a
// frequent one replaces a plan, and every output equals relu(x) + x; an
// invalid bound is refused at AddGraph.
TEST_F(DaemonTest, DynamicShapesPastThePlanBoundStayCorrect) {
  auto d = DaemonProcess::Start({});
  ASSERT_NE(d, nullptr);
  client::Client c = MakeClient(*d);
  const std::string session = SessionWithGraph(c, ReluAdd(), 1, {{"ge.jitMaxPlans", "2"}});
  const std::vector<int64_t> rows = {1, 2, 3, 4, 5, 5, 5, 5, 1, 2, 3, 4, 5, 1};
  for (size_t k = 0; k < rows.size(); ++k) {
    std::vector<float> x(static_cast<size_t>(rows[k] * 3));
    std::vector<float> want(x.size());
    for (size_t i = 0; i < x.size(); ++i) {
      x[i] = static_cast<float>(static_cast<int64_t>(i % 5) - 2) * 0.5f + static_cast<float>(k) * 0.125f;
      want[i] = std::max(x[i], 0.0f) + x[i];
    }
    v1::RunGraphResponse out;
    grpc::Status s = c.RunGraph(RunRequest(session, 1, {Tensor::FromVector<float>(x, Shape{rows[k], 3})}), &out);
    ASSERT_TRUE(s.ok()) << "run " << k << ": " << s.error_message();
    ASSERT_EQ(out.outputs_size(), 1);
    auto y = rpc::ValueFromProto(out.outputs(0), "y");
    ASSERT_TRUE(y.ok()) << y.status();
    EXPECT_TRUE(TensorsEqual(y->tensor(), Tensor::FromVector<float>(want, Shape{rows[k], 3}))) << "run " << k;
  }
  std::string other;
  ASSERT_TRUE(c.CreateSession({}, &other).ok());
  v1::AddGraphRequest add;
  add.set_session_id(other);
  add.set_graph_id(1);
  *add.mutable_graph_def() = ReluAdd();
  (*add.mutable_options()->mutable_entries())["ge.jitMaxPlans"] = "0";
  v1::AddGraphResponse added;
  grpc::Status s = c.AddGraph(add, &added);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << s.error_message();
  EXPECT_NE(s.error_message().find("ge.jitMaxPlans"), std::string::npos) << s.error_message();
  d->Signal(SIGTERM);
  EXPECT_EQ(d->Wait(30), 0) << d->log();
}

TEST_F(DaemonTest, ErrorsNameSessionGraphAndInput) {
  auto d = DaemonProcess::Start({});
  ASSERT_NE(d, nullptr);
  client::Client c = MakeClient(*d);
  const std::string session = SessionWithGraph(c, ReluAdd(), 3);
  v1::RunGraphResponse out;
  grpc::Status s = c.RunGraph(RunRequest(session, 3, {}), &out);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(s.error_message().find("session " + session + " graph 3"), std::string::npos) << s.error_message();
  EXPECT_NE(s.error_message().find("expected 1 inputs (x)"), std::string::npos) << s.error_message();

  v1::RunGraphRequest bad = RunRequest(session, 3, {Tensor::FromVector<float>({1, 2, 3}, {1, 3})});
  bad.mutable_inputs(0)->mutable_tensor()->mutable_raw_data()->resize(5);
  s = c.RunGraph(bad, &out);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(s.error_message().find("input 0 (x)"), std::string::npos) << s.error_message();

  s = c.RunGraph(RunRequest(session, 99, {}), &out);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_NE(s.error_message().find("graph 99"), std::string::npos) << s.error_message();
  s = c.RunGraph(RunRequest("feedfacefeedfacefeedfacefeedface", 3, {}), &out);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::NOT_FOUND);

  std::string other;
  EXPECT_EQ(c.CreateSession({{"ge.no.such.option", "1"}}, &other).error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  v1::AddGraphRequest add;
  add.set_session_id(session);
  add.set_graph_id(4);
  add.set_onnx_model("not a model");
  v1::AddGraphResponse added;
  s = c.AddGraph(add, &added);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(s.error_message().find("graph 4"), std::string::npos) << s.error_message();
}

TEST_F(DaemonTest, TenantsAreIsolatedAndQuotasHold) {
  const std::string config = WriteConfig(
      "tenants:\n"
      "  - {name: alice, token_sha256: " + server::ToHex(server::Sha256("alice-token").data(), 32) +
      ", max_sessions: 2}\n"
      "  - {name: bob, token_sha256: " + server::ToHex(server::Sha256("bob-token").data(), 32) + "}\n");
  auto d = DaemonProcess::Start({"--config", config});
  ASSERT_NE(d, nullptr);
  client::Client alice = MakeClient(*d, "alice-token");
  client::Client bob = MakeClient(*d, "bob-token");
  client::Client stranger = MakeClient(*d, "guess");

  std::string a1, a2, a3, b1;
  ASSERT_TRUE(alice.CreateSession({}, &a1).ok());
  ASSERT_TRUE(bob.CreateSession({}, &b1).ok());
  EXPECT_EQ(stranger.CreateSession({}, &a3).error_code(), grpc::StatusCode::UNAUTHENTICATED);

  v1::ListSessionsResponse listed;
  ASSERT_TRUE(bob.ListSessions(&listed).ok());
  ASSERT_EQ(listed.sessions_size(), 1);
  EXPECT_EQ(listed.sessions(0).session_id(), b1);
  grpc::Status s = bob.DestroySession(a1);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::PERMISSION_DENIED);
  v1::RunGraphResponse out;
  EXPECT_EQ(bob.RunGraph(RunRequest(a1, 1, {}), &out).error_code(), grpc::StatusCode::PERMISSION_DENIED);

  ASSERT_TRUE(alice.CreateSession({}, &a2).ok());
  s = alice.CreateSession({}, &a3);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_NE(s.error_message().find("alice"), std::string::npos) << s.error_message();
  ASSERT_TRUE(alice.DestroySession(a1).ok());
  EXPECT_TRUE(alice.CreateSession({}, &a3).ok());
}

// The value of a metric line that starts with `series` (name and labels), or
// -1 when the page has no such line.
double MetricValue(const std::string& page, const std::string& series) {
  std::istringstream lines(page);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind(series + " ", 0) == 0) return std::stod(line.substr(series.size() + 1));
  }
  return -1;
}

// A tenant past its device-memory quota gets RESOURCE_EXHAUSTED naming it;
// another tenant on the same device keeps compiling and running, and what
// a session held comes back when it is destroyed.
TEST_F(DaemonTest, DeviceMemoryQuotaHoldsPerTenant) {
  const std::string config = WriteConfig(
      "devices:\n  - {name: cpu:0, memory_bytes: 268435456}\n"
      "tenants:\n"
      "  - {name: alice, token_sha256: " + server::ToHex(server::Sha256("alice-token").data(), 32) +
      ", max_device_memory_bytes: 1048576}\n"
      "  - {name: bob, token_sha256: " + server::ToHex(server::Sha256("bob-token").data(), 32) + "}\n");
  auto d = DaemonProcess::Start({"--config", config});
  ASSERT_NE(d, nullptr);
  client::Client alice = MakeClient(*d, "alice-token");
  client::Client bob = MakeClient(*d, "bob-token");

  // SlowGraph's static arena holds 768x768 floats (2.25 MiB) at least.
  const std::string a = SessionWithGraph(alice, SlowGraph());
  v1::CompileGraphResponse compiled;
  grpc::Status s = alice.CompileGraph(a, 1, &compiled);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED) << s.error_message();
  EXPECT_NE(s.error_message().find("tenant alice cannot allocate"), std::string::npos) << s.error_message();
  EXPECT_NE(s.error_message().find("1048576-byte device memory quota"), std::string::npos) << s.error_message();

  const std::string b = SessionWithGraph(bob, SlowGraph());
  ASSERT_TRUE(bob.CompileGraph(b, 1, &compiled).ok());
  v1::RunGraphResponse out;
  s = bob.RunGraph(RunRequest(b, 1, {Filled(768, 0.001f)}), &out);
  EXPECT_TRUE(s.ok()) << s.error_message();
  // Graphs without a static arena still run for alice (ReluAdd's dynamic
  // batch on the dynamic executor: a per-shape plan would hold an arena).
  const std::string small = SessionWithGraph(alice, ReluAdd(), 1, {{"ge.jitCompile", "0"}});
  s = alice.RunGraph(RunRequest(small, 1, {Tensor::FromVector<float>({1, -2, 3}, Shape{1, 3})}), &out);
  EXPECT_TRUE(s.ok()) << s.error_message();

  std::string page = testing::HttpGet(d->metrics_address(), "/metrics").body;
  const double held = MetricValue(page, "ged_tenant_device_memory_used_bytes{tenant=\"bob\"}");
  EXPECT_GE(held, 768.0 * 768 * 4) << page;
  EXPECT_EQ(MetricValue(page, "ged_device_memory_used_bytes{device=\"cpu:0\"}"), held) << page;
  EXPECT_EQ(MetricValue(page, "ged_device_memory_total_bytes{device=\"cpu:0\"}"), 268435456.0) << page;
  ASSERT_TRUE(bob.DestroySession(b).ok());
  page = testing::HttpGet(d->metrics_address(), "/metrics").body;
  EXPECT_EQ(MetricValue(page, "ged_tenant_device_memory_used_bytes{tenant=\"bob\"}"), 0.0) << page;
  EXPECT_EQ(MetricValue(page, "ged_device_memory_used_bytes{device=\"cpu:0\"}"), 0.0) << page;
}

TEST_F(DaemonTest, DeadlinesAndAFullQueue) {
  const std::string config = WriteConfig("devices:\n  - {name: cpu:0, workers: 1, queue_capacity: 1}\n");
  auto d = DaemonProcess::Start({"--config", config});
  ASSERT_NE(d, nullptr);
  client::Client c = MakeClient(*d);
  const std::string session = SessionWithGraph(c, SlowGraph());
  v1::CompileGraphResponse compiled;
  ASSERT_TRUE(c.CompileGraph(session, 1, &compiled).ok());
  const v1::RunGraphRequest request = RunRequest(session, 1, {Filled(768, 0.001f)});

  v1::RunGraphResponse out;
  EXPECT_EQ(c.RunGraph(request, &out, /*timeout_seconds=*/0.001).error_code(), grpc::StatusCode::DEADLINE_EXCEEDED);

  constexpr int kCalls = 8;
  std::vector<v1::RunGraphResponse> responses(kCalls);
  std::mutex mu;
  std::condition_variable cv;
  std::vector<grpc::StatusCode> codes;
  for (int i = 0; i < kCalls; ++i) {
    c.RunGraphAsync(request, &responses[i], [&](grpc::Status s) {
      std::lock_guard<std::mutex> lock(mu);
      codes.push_back(s.error_code());
      cv.notify_all();
    });
  }
  std::unique_lock<std::mutex> lock(mu);
  ASSERT_TRUE(cv.wait_for(lock, std::chrono::seconds(120), [&] { return codes.size() == kCalls; }));
  const auto count = [&](grpc::StatusCode code) { return std::count(codes.begin(), codes.end(), code); };
  EXPECT_GE(count(grpc::StatusCode::OK), 1);
  EXPECT_GE(count(grpc::StatusCode::RESOURCE_EXHAUSTED), 1);
  EXPECT_EQ(count(grpc::StatusCode::OK) + count(grpc::StatusCode::RESOURCE_EXHAUSTED), kCalls);
}

// A .gem compiled by gectl, sent as bytes: LoadModel, ExecuteModel gives
// what RunGraph on the same ONNX model gives, UnloadModel frees the id, and
// bad requests name their problem.
TEST_F(DaemonTest, LoadedModelsRunLikeTheirGraph) {
  dir_ = ge::testing::MakeTempDir("ged-models");
  const std::string onnx = ge::testing::SourceDir() + "/examples/models/sample_cnn.onnx";
  const std::string gem = dir_ + "/cnn.gem";
  const auto compiled = ge::testing::RunProcess({ge::testing::BinaryDir() + "/bin/gectl", "compile", onnx, "-o", gem});
  ASSERT_EQ(compiled.exit_code, 0) << compiled.err;
  std::ifstream in(gem, std::ios::binary);
  const std::string gem_bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_FALSE(gem_bytes.empty());

  auto d = DaemonProcess::Start({});
  ASSERT_NE(d, nullptr);
  client::Client c = MakeClient(*d);
  std::string session;
  ASSERT_TRUE(c.CreateSession({}, &session).ok());
  v1::AddGraphResponse added;
  ASSERT_TRUE(c.AddOnnxFile(session, 1, onnx, {}, &added).ok());
  ASSERT_EQ(added.inputs_size(), 1);
  std::vector<int64_t> dims;
  for (int64_t dim : added.inputs(0).type().tensor().shape().dims()) dims.push_back(dim > 0 ? dim : 1);
  int64_t n = 1;
  for (int64_t dim : dims) n *= dim;
  std::vector<float> data(static_cast<size_t>(n));
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<float>((i * 37) % 101) / 101.0f - 0.5f;
  const Tensor input = Tensor::FromVector<float>(data, Shape(dims));
  v1::RunGraphResponse by_graph;
  ASSERT_TRUE(c.RunGraph(RunRequest(session, 1, {input}), &by_graph).ok());

  v1::LoadModelRequest load;
  load.set_session_id(session);
  load.set_gem(gem_bytes);
  v1::LoadModelResponse loaded;
  grpc::Status s = c.LoadModel(load, &loaded);
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_EQ(loaded.model_id(), 1u);
  v1::ExecuteModelRequest exec;
  exec.set_session_id(session);
  exec.set_model_id(loaded.model_id());
  ASSERT_TRUE(rpc::ValueToProto(Value(input), exec.add_inputs()).ok());
  v1::ExecuteModelResponse by_model;
  s = c.ExecuteModel(exec, &by_model);
  ASSERT_TRUE(s.ok()) << s.error_message();
  ASSERT_EQ(by_model.outputs_size(), by_graph.outputs_size());
  for (int i = 0; i < by_model.outputs_size(); ++i) {
    EXPECT_EQ(by_model.outputs(i).tensor().dims_size(), by_graph.outputs(i).tensor().dims_size());
    EXPECT_EQ(by_model.outputs(i).tensor().raw_data(), by_graph.outputs(i).tensor().raw_data()) << "output " << i;
  }

  // A second load gets the next id; graph ids of the models' range are refused.
  ASSERT_TRUE(c.LoadModel(load, &loaded).ok());
  EXPECT_EQ(loaded.model_id(), 2u);
  v1::AddGraphRequest reserved;
  reserved.set_session_id(session);
  reserved.set_graph_id(1u << 31);
  *reserved.mutable_graph_def() = ReluAdd();
  s = c.AddGraph(reserved, &added);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(s.error_message().find("reserved for models loaded with LoadModel"), std::string::npos)
      << s.error_message();

  // Bad requests.
  v1::LoadModelRequest bad = load;
  bad.set_gem("not a gem");
  s = c.LoadModel(bad, &loaded);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(s.error_message().find("not a .gem compiled model"), std::string::npos) << s.error_message();
  bad.set_cache_key("../../etc/passwd");
  s = c.LoadModel(bad, &loaded);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(s.error_message().find("not 64 lowercase hex digits"), std::string::npos) << s.error_message();
  exec.clear_inputs();
  s = c.ExecuteModel(exec, &by_model);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(s.error_message().find("model 1: expected 1 inputs"), std::string::npos) << s.error_message();

  EXPECT_TRUE(c.UnloadModel(session, 1).ok());
  s = c.UnloadModel(session, 1);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::NOT_FOUND);
  ASSERT_TRUE(rpc::ValueToProto(Value(input), exec.add_inputs()).ok());
  s = c.ExecuteModel(exec, &by_model);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_NE(s.error_message().find("model 1 is not loaded"), std::string::npos) << s.error_message();

  // gectl run --remote takes a .gem through LoadModel / ExecuteModel and
  // prints what the local run prints.
  const std::string gectl = ge::testing::BinaryDir() + "/bin/gectl";
  const auto remote = ge::testing::RunProcess({gectl, "run", "--remote", d->grpc_address(), gem});
  const auto local = ge::testing::RunProcess({gectl, "run", gem});
  EXPECT_EQ(remote.exit_code, 0) << remote.err;
  EXPECT_EQ(remote.out, local.out);
  EXPECT_FALSE(remote.out.empty());

  // Another tenant's session is out of reach (the open default tenant owns it
  // here, so an unknown session id stands in for it).
  exec.set_session_id("00000000000000000000000000000000");
  exec.set_model_id(2);
  EXPECT_EQ(c.ExecuteModel(exec, &by_model).error_code(), grpc::StatusCode::NOT_FOUND);
}

// A model with a dynamic dim, compiled by the daemon (its .gem is the
// dynamic form) and loaded back, by bytes and by cache key: each runs a
// static plan per input shape (logged), with the graph's own results for
// every shape, several shapes in turn as a server sees them.
TEST_F(DaemonTest, LoadedDynamicModelsPlanPerShape) {
  dir_ = ge::testing::MakeTempDir("ged-dyn-models");
  auto d = DaemonProcess::Start({"--cache-dir", dir_ + "/cache"});
  ASSERT_NE(d, nullptr);
  client::Client c = MakeClient(*d);
  const std::string session = SessionWithGraph(c, ReluAdd(), 1);
  v1::CompileGraphRequest compile;
  compile.set_session_id(session);
  compile.set_graph_id(1);
  compile.set_return_model(true);
  v1::CompileGraphResponse compiled;
  grpc::Status s = c.CompileGraph(compile, &compiled);
  ASSERT_TRUE(s.ok()) << s.error_message();
  ASSERT_FALSE(compiled.model().empty());
  ASSERT_FALSE(compiled.cache_key().empty());

  std::vector<uint32_t> models;
  for (bool by_key : {false, true}) {
    v1::LoadModelRequest load;
    load.set_session_id(session);
    if (by_key) {
      load.set_cache_key(compiled.cache_key());
    } else {
      load.set_gem(compiled.model());
    }
    v1::LoadModelResponse loaded;
    s = c.LoadModel(load, &loaded);
    ASSERT_TRUE(s.ok()) << s.error_message();
    ASSERT_EQ(loaded.inputs_size(), 1);
    EXPECT_EQ(loaded.inputs(0).type().tensor().shape().dims(0), -1) << "the model keeps its dynamic dim";
    models.push_back(loaded.model_id());
  }
  for (int64_t rows : {1, 5, 2, 5, 1}) {
    std::vector<float> data(static_cast<size_t>(rows * 3));
    for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<float>(i % 7) - 3.0f;
    const Tensor input = Tensor::FromVector<float>(data, Shape{rows, 3});
    v1::RunGraphResponse by_graph;
    s = c.RunGraph(RunRequest(session, 1, {input}), &by_graph);
    ASSERT_TRUE(s.ok()) << s.error_message();
    for (uint32_t model : models) {
      v1::ExecuteModelRequest exec;
      exec.set_session_id(session);
      exec.set_model_id(model);
      ASSERT_TRUE(rpc::ValueToProto(Value(input), exec.add_inputs()).ok());
      v1::ExecuteModelResponse by_model;
      s = c.ExecuteModel(exec, &by_model);
      ASSERT_TRUE(s.ok()) << s.error_message();
      ASSERT_EQ(by_model.outputs_size(), 1);
      EXPECT_EQ(by_model.outputs(0).tensor().raw_data(), by_graph.outputs(0).tensor().raw_data())
          << "model " << model << " rows " << rows;
    }
  }
  d->Signal(SIGTERM);
  EXPECT_EQ(d->Wait(30), 0) << d->log();
  const std::string log = d->log();
  size_t from_compiled = 0;
  for (size_t at = log.find("per-shape plans from the compiled model"); at != std::string::npos;
       at = log.find("per-shape plans from the compiled model", at + 1)) {
    ++from_compiled;
  }
  EXPECT_EQ(from_compiled, 2u) << log;
  // Three shapes per model (1, 5, 2) and for the graph: nine plans, each
  // compiled once however often its shape came back.
  size_t plans = 0;
  for (size_t at = log.find("JIT stage 0 compiled a slice"); at != std::string::npos;
       at = log.find("JIT stage 0 compiled a slice", at + 1)) {
    ++plans;
  }
  EXPECT_EQ(plans, 9u) << log;
}

// Remote compilation: `gectl compile --remote` has the daemon compile
// (through its cache) and writes the .gem it sends back; that .gem runs
// locally to what the ONNX model gives, and a second compile is a hit.
TEST_F(DaemonTest, GectlCompilesRemotely) {
  dir_ = ge::testing::MakeTempDir("ged-remote-compile");
  auto d = DaemonProcess::Start({"--cache-dir", dir_ + "/cache"});
  ASSERT_NE(d, nullptr);
  const std::string gectl = ge::testing::BinaryDir() + "/bin/gectl";
  const std::string onnx = ge::testing::SourceDir() + "/examples/models/sample_cnn.onnx";
  const std::string gem = dir_ + "/remote.gem";
  auto compiled = ge::testing::RunProcess({gectl, "compile", "--remote", d->grpc_address(), onnx, "-o", gem});
  ASSERT_EQ(compiled.exit_code, 0) << compiled.err;
  EXPECT_NE(compiled.out.find("compiled by the daemon at"), std::string::npos) << compiled.out;
  EXPECT_NE(compiled.out.find("cache: miss "), std::string::npos) << compiled.out;
  const auto from_gem = ge::testing::RunProcess({gectl, "run", gem, "--seed", "3"});
  const auto from_onnx = ge::testing::RunProcess({gectl, "run", onnx, "--seed", "3"});
  EXPECT_EQ(from_gem.exit_code, 0) << from_gem.err;
  EXPECT_FALSE(from_gem.out.empty());
  EXPECT_EQ(from_gem.out, from_onnx.out);

  compiled = ge::testing::RunProcess({gectl, "compile", "--remote", d->grpc_address(), onnx, "-o", gem});
  ASSERT_EQ(compiled.exit_code, 0) << compiled.err;
  EXPECT_NE(compiled.out.find("cache: hit "), std::string::npos) << compiled.out;

  // Errors keep their exit codes: a missing model is 1, a bad output name 1,
  // a daemon that is not there 2.
  EXPECT_EQ(ge::testing::RunProcess({gectl, "compile", "--remote", d->grpc_address(), dir_ + "/none.onnx", "-o", gem})
                .exit_code,
            1);
  EXPECT_EQ(ge::testing::RunProcess({gectl, "compile", "--remote", d->grpc_address(), onnx, "-o", dir_ + "/x.bin"})
                .exit_code,
            1);
  const auto flags = ge::testing::RunProcess(
      {gectl, "compile", "--remote", d->grpc_address(), onnx, "-o", gem, "--external-weight", "2"});
  EXPECT_EQ(flags.exit_code, 1);
  EXPECT_NE(flags.err.find("apply to local compiles only"), std::string::npos) << flags.err;
}

// A run that has started stops between nodes when its deadline passes or
// its client cancels it, instead of holding the device's only worker.
TEST_F(DaemonTest, RunsStopBetweenNodesOnDeadlineAndCancellation) {
  const std::string config = WriteConfig("devices:\n  - {name: cpu:0, workers: 1, queue_capacity: 4}\n");
  auto d = DaemonProcess::Start({"--config", config, "--log-level", "debug"});
  ASSERT_NE(d, nullptr);
  client::Client c = MakeClient(*d);
  // 400 chained 512x512 products: seconds of work, one task each.
  std::string text = "graph long {\n  x = Data() {index = 0} -> (f32[512,512])\n";
  std::string prev = "x";
  for (int i = 0; i < 400; ++i) {
    const std::string name = "mm" + std::to_string(i);
    text += "  " + name + " = MatMul(" + prev + ":0, x:0) -> (f32[512,512])\n";
    prev = name;
  }
  text += "  out = NetOutput(" + prev + ":0)\n}\n";
  auto g = ir::ParseGraph(text);
  ASSERT_TRUE(g.ok()) << g.status();
  v1::GraphDef def;
  ASSERT_TRUE(ir::GraphToProto(**g, &def).ok());
  const std::string session = SessionWithGraph(c, def);
  v1::CompileGraphResponse compiled;
  ASSERT_TRUE(c.CompileGraph(session, 1, &compiled).ok());
  const v1::RunGraphRequest request = RunRequest(session, 1, {Filled(512, 0.001f)});

  v1::RunGraphResponse out;
  EXPECT_EQ(c.RunGraph(request, &out, /*timeout_seconds=*/0.3).error_code(), grpc::StatusCode::DEADLINE_EXCEEDED);
  // The first run may still be stopping on the device's only worker; the
  // second must be the one running when it is cancelled.
  ASSERT_TRUE(testing::PollUntil(std::chrono::seconds(60), [&] {
    v1::GetStatusResponse status;
    return c.GetStatus(&status).ok() && status.devices(0).running() == 0 && status.devices(0).queued() == 0;
  }));
  {
    std::unique_ptr<grpc::ClientContext> ctx = c.NewContext();
    std::atomic<bool> done{false};
    c.async()->RunGraph(ctx.get(), &request, &out, [&](grpc::Status) { done = true; });
    // Cancel once the run is executing (the device's only worker is busy).
    ASSERT_TRUE(testing::PollUntil(std::chrono::seconds(60), [&] {
      v1::GetStatusResponse status;
      return c.GetStatus(&status).ok() && status.devices(0).running() > 0;
    }));
    ctx->TryCancel();
    ASSERT_TRUE(testing::PollUntil(std::chrono::seconds(60), [&] { return done.load(); }));
  }
  // The worker is free again: a tiny graph runs.
  const std::string tiny = SessionWithGraph(c, ReluAdd());
  v1::RunGraphResponse tiny_out;
  grpc::Status s = c.RunGraph(RunRequest(tiny, 1, {Tensor::FromVector<float>({1, -2, 3}, Shape{1, 3})}), &tiny_out);
  EXPECT_TRUE(s.ok()) << s.error_message();
  // The daemon's log says where each run stopped (debug level).
  const auto wait_for = [&](const std::string& needle) {
    return testing::PollUntil(std::chrono::seconds(10), [&] { return d->log().find(needle) != std::string::npos; });
  };
  EXPECT_TRUE(wait_for("the deadline passed during the run, before node 'mm")) << d->log();
  EXPECT_TRUE(wait_for("the run was cancelled before node 'mm")) << d->log();
}

TEST_F(DaemonTest, SigtermFinishesRunsInFlightAndExitsZero) {
  auto d = DaemonProcess::Start({});
  ASSERT_NE(d, nullptr);
  client::Client c = MakeClient(*d);
  const std::string session = SessionWithGraph(c, SlowGraph());
  v1::CompileGraphResponse compiled;
  ASSERT_TRUE(c.CompileGraph(session, 1, &compiled).ok());
  const v1::RunGraphRequest request = RunRequest(session, 1, {Filled(768, 0.001f)});
  constexpr int kCalls = 4;
  std::vector<v1::RunGraphResponse> responses(kCalls);
  std::atomic<int> ok{0}, done{0};
  std::mutex done_mu;
  std::condition_variable done_cv;
  for (int i = 0; i < kCalls; ++i) {
    c.RunGraphAsync(request, &responses[i], [&](grpc::Status s) {
      if (s.ok()) ++ok;
      std::lock_guard<std::mutex> lock(done_mu);
      ++done;
      done_cv.notify_all();
    });
  }
  // SIGTERM once the daemon holds all four runs (running or queued on its
  // device), observed through GetStatus rather than guessed with a sleep.
  ASSERT_TRUE(testing::PollUntil(std::chrono::seconds(60),
                                 [&] {
                                   v1::GetStatusResponse status;
                                   if (!c.GetStatus(&status).ok()) return false;
                                   int64_t held = 0;
                                   for (const auto& device : status.devices())
                                     held += device.queued() + device.running();
                                   return held >= kCalls;
                                 }))
      << "the daemon never held the " << kCalls << " runs";
  d->Signal(SIGTERM);
  EXPECT_EQ(d->Wait(60), 0) << d->log();
  {
    std::unique_lock<std::mutex> lock(done_mu);
    ASSERT_TRUE(done_cv.wait_for(lock, std::chrono::seconds(60), [&] { return done.load() == kCalls; }));
  }
  EXPECT_EQ(ok.load(), kCalls) << "runs accepted before SIGTERM finish";
  for (const auto& r : responses) EXPECT_EQ(r.outputs_size(), 1);
}

TEST_F(DaemonTest, StreamsExecuteOpAndMetrics) {
  auto d = DaemonProcess::Start({});
  ASSERT_NE(d, nullptr);
  client::Client c = MakeClient(*d);
  const std::string session = SessionWithGraph(c, ReluAdd(), 2);

  auto ctx = c.NewContext();
  auto stream = c.stub().RunGraphStream(ctx.get());
  for (uint64_t i = 1; i <= 3; ++i) {
    v1::RunGraphRequest r = RunRequest(session, 2, {Tensor::FromVector<float>({float(i), -1, 0}, {1, 3})});
    r.set_request_id(i);
    ASSERT_TRUE(stream->Write(r));
  }
  v1::RunGraphRequest wrong = RunRequest(session, 2, {});
  wrong.set_request_id(4);
  ASSERT_TRUE(stream->Write(wrong));
  stream->WritesDone();
  v1::RunGraphResponse reply;
  std::map<uint64_t, v1::RunGraphResponse> replies;
  while (stream->Read(&reply)) replies[reply.request_id()] = reply;
  ASSERT_TRUE(stream->Finish().ok());
  ASSERT_EQ(replies.size(), 4u);
  for (uint64_t i = 1; i <= 3; ++i) {
    ASSERT_EQ(replies[i].error_code(), 0) << replies[i].error_message();
    auto y = rpc::ValueFromProto(replies[i].outputs(0), "y");
    ASSERT_TRUE(y.ok());
    EXPECT_EQ(y->tensor().GetAsDouble(0), 2.0 * i);
  }
  EXPECT_EQ(replies[4].error_code(), static_cast<int>(grpc::StatusCode::INVALID_ARGUMENT));

  v1::ExecuteOpRequest op;
  op.set_op_type("Add");
  for (float v : {1.5f, 2.0f}) ASSERT_TRUE(rpc::ValueToProto(Value(Tensor::FromVector<float>({v}, {1})), op.add_inputs()).ok());
  v1::ExecuteOpResponse op_out;
  grpc::Status s = c.ExecuteOp(op, &op_out);
  ASSERT_TRUE(s.ok()) << s.error_message();
  ASSERT_EQ(op_out.outputs_size(), 1);
  EXPECT_EQ(rpc::ValueFromProto(op_out.outputs(0), "sum")->tensor().GetAsDouble(0), 3.5);
  // The same op on other values of the same types is a cache hit; another
  // shape is a miss. Both compute.
  op.clear_inputs();
  for (float v : {4.0f, -1.0f}) ASSERT_TRUE(rpc::ValueToProto(Value(Tensor::FromVector<float>({v}, {1})), op.add_inputs()).ok());
  s = c.ExecuteOp(op, &op_out);
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_EQ(rpc::ValueFromProto(op_out.outputs(0), "sum")->tensor().GetAsDouble(0), 3.0);
  op.clear_inputs();
  for (float v : {1.0f, 2.0f}) {
    ASSERT_TRUE(rpc::ValueToProto(Value(Tensor::FromVector<float>({v, v}, {2})), op.add_inputs()).ok());
  }
  op_out.Clear();
  s = c.ExecuteOp(op, &op_out);
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_EQ(rpc::ValueFromProto(op_out.outputs(0), "sum")->tensor().GetAsDouble(1), 3.0);

  EXPECT_EQ(testing::HttpGet(d->metrics_address(), "/healthz").status, 200);
  EXPECT_EQ(testing::HttpGet(d->metrics_address(), "/readyz").status, 200);
  testing::HttpResult metrics = testing::HttpGet(d->metrics_address(), "/metrics");
  ASSERT_EQ(metrics.status, 200);
  for (const char* name :
       {"ged_requests_total{rpc=\"RunGraphStream\",code=\"OK\"} 1", "ged_request_duration_seconds_bucket",
        "ged_queue_duration_seconds_bucket", "ged_compile_duration_seconds_count", "ged_run_duration_seconds_bucket",
        "ged_pending_requests", "ged_sessions{tenant=\"default\"} 1", "ged_graphs{tenant=\"default\"} 1",
        "ged_device_memory_used_bytes{device=\"cpu:0\"}", "ged_tenant_device_memory_used_bytes{tenant=\"default\"}",
        "ged_device_memory_total_bytes{device=\"cpu:0\"}",
        "ged_cache_hits_total ", "ged_cache_misses_total ", "ged_cache_evictions_total ", "ged_cache_bytes ",
        "ged_model_load_duration_seconds_count 0", "ged_op_cache_lookups_total{result=\"hit\"} 1",
        "ged_op_cache_lookups_total{result=\"miss\"} 2", "ged_build_info{version=\""}) {
    EXPECT_NE(metrics.body.find(name), std::string::npos) << name << "\n" << metrics.body;
  }
}

}  // namespace
}  // namespace ge

namespace ge {
namespace {

// Graph options carry the gears into the daemon's CompileGraph; runs are
// counted by path in ged_gear_runs_total, and an input that fits no gear
// without hybrid mode is INVALID_ARGUMENT listing the gears.
TEST(DaemonGearsTest, GearRunsAreCountedByPath) {
  auto d = DaemonProcess::Start({});
  ASSERT_NE(d, nullptr);
  client::Client c = MakeClient(*d);
  auto add = [&](uint32_t id, bool hybrid) {
    std::string session;
    EXPECT_TRUE(c.CreateSession({}, &session).ok());
    v1::AddGraphRequest request;
    request.set_session_id(session);
    request.set_graph_id(id);
    *request.mutable_graph_def() = ReluAdd();
    auto& options = *request.mutable_options()->mutable_entries();
    options["ge.dynamicBatchSize"] = "1,2";
    if (hybrid) options["ge.compileHybridMode"] = "1";
    v1::AddGraphResponse added;
    grpc::Status s = c.AddGraph(request, &added);
    EXPECT_TRUE(s.ok()) << s.error_message();
    return session;
  };
  const std::string hybrid = add(1, true);
  const std::string strict = add(2, false);
  v1::RunGraphResponse out;
  for (int64_t rows : {1, 2, 3}) {
    std::vector<float> x(rows * 3, -1.0f);
    ASSERT_TRUE(c.RunGraph(RunRequest(hybrid, 1, {Tensor::FromVector<float>(x, Shape{rows, 3})}), &out).ok());
    ASSERT_EQ(out.outputs_size(), 1);
  }
  grpc::Status s = c.RunGraph(RunRequest(strict, 2, {Tensor::FromVector<float>({1, 2, 3, 4, 5, 6, 7, 8, 9},
                                                                                 Shape{3, 3})}),
                              &out);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(s.error_message().find("are: 1; 2"), std::string::npos) << s.error_message();
  const std::string page = testing::HttpGet(d->metrics_address(), "/metrics").body;
  EXPECT_EQ(MetricValue(page, "ged_gear_runs_total{path=\"gear\"}"), 2.0) << page;
  EXPECT_EQ(MetricValue(page, "ged_gear_runs_total{path=\"dynamic\"}"), 1.0) << page;
}

}  // namespace
}  // namespace ge
