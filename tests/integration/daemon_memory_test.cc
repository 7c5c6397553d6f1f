// Memory accounting end to end (docs/security.md, "memory"): two tenants on
// one daemon; one asks for a dynamic output larger than its
// max_memory_bytes and gets RESOURCE_EXHAUSTED naming the key, while the
// other tenant's runs (before, during and after) return the right answer;
// the daemon budget (memory_budget_bytes) refuses what no tenant limit
// would.
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

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

// y = ConstantOfShape(n) + 1: an output of n floats, its size known only at
// run time (the dynamic path: outputs from the session's output cache).
v1::GraphDef Fill() {
  auto g = ir::ParseGraph(R"(graph fill {
    n = Data() {index = 0} -> (i64[1])
    z = ConstantOfShape(n:0) -> (f32[-1])
    one = Const() {value = tensor<f32[1]>[1]} -> (f32[1])
    y = Add(z:0, one:0) -> (f32[-1])
    out = NetOutput(y:0)
  })");
  EXPECT_TRUE(g.ok()) << g.status();
  v1::GraphDef def;
  EXPECT_TRUE(ir::GraphToProto(**g, &def).ok());
  return def;
}

std::string Token(const std::string& name) { return server::ToHex(server::Sha256(name + "-token").data(), 32); }

client::Client MakeClient(const DaemonProcess& d, const std::string& token) {
  client::ClientOptions options;
  options.address = d.grpc_address();
  options.token = token;
  options.max_retries = 1;
  return client::Client(options);
}

std::string SessionWithFill(client::Client& c) {
  std::string session;
  EXPECT_TRUE(c.CreateSession({}, &session).ok());
  v1::AddGraphRequest add;
  add.set_session_id(session);
  add.set_graph_id(1);
  *add.mutable_graph_def() = Fill();
  v1::AddGraphResponse added;
  grpc::Status s = c.AddGraph(add, &added);
  EXPECT_TRUE(s.ok()) << s.error_message();
  return session;
}

grpc::Status RunFill(client::Client& c, const std::string& session, int64_t n, v1::RunGraphResponse* out) {
  v1::RunGraphRequest r;
  r.set_session_id(session);
  r.set_graph_id(1);
  EXPECT_TRUE(rpc::ValueToProto(Value(Tensor::FromVector<int64_t>({n}, Shape{1})), r.add_inputs()).ok());
  return c.RunGraph(r, out);
}

// The run's output is n ones.
void ExpectOnes(const v1::RunGraphResponse& out, int64_t n) {
  ASSERT_EQ(out.outputs_size(), 1);
  auto v = rpc::ValueFromProto(out.outputs(0), "output");
  ASSERT_TRUE(v.ok()) << v.status();
  ASSERT_EQ(v->tensor().shape(), (Shape{n}));
  for (int64_t i = 0; i < n; ++i) ASSERT_EQ(v->tensor().data<float>()[i], 1.0f) << i;
}

class DaemonMemoryTest : public ::testing::Test {
 protected:
  std::string WriteConfig(const std::string& yaml) {
    dir_ = ge::testing::MakeTempDir("ged-memory");
    const std::string path = dir_ + "/ged.yaml";
    std::ofstream(path) << yaml;
    return path;
  }
  void TearDown() override {
    if (!dir_.empty()) std::filesystem::remove_all(dir_);
  }
  std::string dir_;
};

TEST_F(DaemonMemoryTest, ATenantPastMaxMemoryBytesIsRefusedAndTheOtherRunsOn) {
  const std::string config = WriteConfig(
      "tenants:\n"
      "  - {name: alice, token_sha256: " +
      Token("alice") +
      ", max_memory_bytes: 8388608}\n"
      "  - {name: bob, token_sha256: " +
      Token("bob") + "}\n");
  auto d = DaemonProcess::Start({"--config", config});
  ASSERT_NE(d, nullptr);
  client::Client alice = MakeClient(*d, "alice-token");
  client::Client bob = MakeClient(*d, "bob-token");
  const std::string a = SessionWithFill(alice);
  const std::string b = SessionWithFill(bob);

  v1::RunGraphResponse out;
  grpc::Status s = RunFill(alice, a, 1000, &out);  // 4 KB: within the quota
  ASSERT_TRUE(s.ok()) << s.error_message();
  ExpectOnes(out, 1000);

  // Bob's runs go on while alice is refused, and after.
  std::thread other([&] {
    for (int i = 0; i < 20; ++i) {
      v1::RunGraphResponse bob_out;
      grpc::Status bs = RunFill(bob, b, 4096, &bob_out);
      ASSERT_TRUE(bs.ok()) << bs.error_message();
      ExpectOnes(bob_out, 4096);
    }
  });
  for (int i = 0; i < 5; ++i) {
    s = RunFill(alice, a, int64_t{16} << 20, &out);  // 64 MiB of floats
    EXPECT_EQ(s.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED) << s.error_message();
    EXPECT_NE(s.error_message().find("max_memory_bytes of tenant alice"), std::string::npos) << s.error_message();
    EXPECT_NE(s.error_message().find("8388608-byte memory quota"), std::string::npos) << s.error_message();
  }
  other.join();
  // What is held shows per tenant and for the daemon; refusals left nothing behind.
  const std::string page = testing::HttpGet(d->metrics_address(), "/metrics").body;
  EXPECT_NE(page.find("ged_tenant_memory_used_bytes{tenant=\"alice\"}"), std::string::npos) << page;
  EXPECT_NE(page.find("ged_memory_budget_used_bytes "), std::string::npos) << page;
  EXPECT_NE(page.find("ged_memory_budget_bytes "), std::string::npos) << page;
  // What alice was refused left nothing held: she runs again within her quota.
  s = RunFill(alice, a, 1000, &out);
  ASSERT_TRUE(s.ok()) << s.error_message();
  ExpectOnes(out, 1000);
  // Bob has no limit of his own: the same large output is his to make.
  s = RunFill(bob, b, int64_t{4} << 20, &out);
  ASSERT_TRUE(s.ok()) << s.error_message();
  ExpectOnes(out, int64_t{4} << 20);
}

TEST_F(DaemonMemoryTest, TheDaemonBudgetHoldsForEveryTenant) {
  const std::string config = WriteConfig(
      "memory_budget_bytes: 16777216\n"
      "tenants:\n"
      "  - {name: alice, token_sha256: " +
      Token("alice") +
      "}\n"
      "  - {name: bob, token_sha256: " +
      Token("bob") + "}\n");
  auto d = DaemonProcess::Start({"--config", config});
  ASSERT_NE(d, nullptr);
  client::Client alice = MakeClient(*d, "alice-token");
  client::Client bob = MakeClient(*d, "bob-token");
  const std::string a = SessionWithFill(alice);
  const std::string b = SessionWithFill(bob);
  v1::RunGraphResponse out;
  grpc::Status s = RunFill(alice, a, int64_t{8} << 20, &out);  // 32 MiB
  EXPECT_EQ(s.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED) << s.error_message();
  EXPECT_NE(s.error_message().find("memory_budget_bytes"), std::string::npos) << s.error_message();
  s = RunFill(bob, b, 2048, &out);
  ASSERT_TRUE(s.ok()) << s.error_message();
  ExpectOnes(out, 2048);
}

}  // namespace
}  // namespace ge
