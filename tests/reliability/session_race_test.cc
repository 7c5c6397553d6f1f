// CompileGraph, RemoveGraph and DestroySession in any interleaving (issue 19
// item 8): threads race the three on shared sessions of a real daemon, with
// runs in between. Every call ends with OK or a clean refusal (NOT_FOUND,
// FAILED_PRECONDITION, ALREADY_EXISTS...), never INTERNAL or a crash, and
// the daemon releases every call state and session at exit.
#include <signal.h>

#include <algorithm>
#include <atomic>
#include <functional>
#include <mutex>
#include <random>
#include <thread>
#include <vector>

#include "base/ir/proto_convert.h"
#include "base/ir/text_format.h"
#include "client/cpp/client.h"
#include "proto/value_convert.h"
#include "gtest/gtest.h"
#include "tests/integration/daemon_process.h"

namespace ge {
namespace {

using testing::DaemonProcess;

v1::GraphDef Chain() {
  std::string text = "graph chain {\n x = Data() {index = 0} -> (f32[64,64])\n";
  std::string prev = "x";
  for (int i = 0; i < 20; ++i) {
    text += " m" + std::to_string(i) + " = MatMul(" + prev + ":0, x:0) -> (f32[64,64])\n";
    prev = "m" + std::to_string(i);
  }
  text += " out = NetOutput(" + prev + ":0)\n}\n";
  auto g = ir::ParseGraph(text);
  EXPECT_TRUE(g.ok()) << g.status();
  v1::GraphDef def;
  EXPECT_TRUE(ir::GraphToProto(**g, &def).ok());
  return def;
}

bool Clean(const grpc::Status& s) {
  return s.error_code() != grpc::StatusCode::INTERNAL && s.error_code() != grpc::StatusCode::UNKNOWN &&
         s.error_code() != grpc::StatusCode::UNAVAILABLE;
}

TEST(SessionRaceTest, CompileRemoveAndDestroyInAnyInterleaving) {
  auto d = DaemonProcess::Start({});
  ASSERT_NE(d, nullptr);
  client::ClientOptions options;
  options.address = d->grpc_address();
  options.max_retries = 1;
  client::Client c(options);
  const v1::GraphDef def = Chain();
  constexpr int kRounds = 12;
  std::atomic<int> unclean{0};
  std::string last_error;
  std::mutex error_mu;
  const auto note = [&](const char* what, const grpc::Status& s) {
    if (Clean(s)) return;
    ++unclean;
    std::lock_guard<std::mutex> lock(error_mu);
    last_error = std::string(what) + ": " + s.error_message();
  };
  for (int round = 0; round < kRounds; ++round) {
    std::string session;
    ASSERT_TRUE(c.CreateSession({}, &session).ok());
    for (uint32_t id = 1; id <= 3; ++id) {
      v1::AddGraphRequest add;
      add.set_session_id(session);
      add.set_graph_id(id);
      *add.mutable_graph_def() = def;
      v1::AddGraphResponse added;
      ASSERT_TRUE(c.AddGraph(add, &added).ok());
    }
    // Each round starts the three kinds of call in another order.
    std::vector<std::function<void()>> calls;
    for (uint32_t id = 1; id <= 3; ++id) {
      calls.push_back([&, id] {
        v1::CompileGraphResponse compiled;
        note("CompileGraph", c.CompileGraph(session, id, &compiled));
        v1::RunGraphRequest run;
        run.set_session_id(session);
        run.set_graph_id(id);
        (void)rpc::ValueToProto(Value(Tensor::FromVector<float>(std::vector<float>(64 * 64, 0.01f), {64, 64})),
                                run.add_inputs());
        v1::RunGraphResponse out;
        note("RunGraph", c.RunGraph(run, &out));
      });
      calls.push_back([&, id] { note("RemoveGraph", c.RemoveGraph(session, id)); });
    }
    calls.push_back([&] { note("DestroySession", c.DestroySession(session)); });
    std::mt19937 random(round);
    std::shuffle(calls.begin(), calls.end(), random);
    std::vector<std::thread> threads;
    for (auto& call : calls) threads.emplace_back(call);
    for (auto& t : threads) t.join();
  }
  EXPECT_EQ(unclean.load(), 0) << last_error;
  v1::GetStatusResponse status;
  ASSERT_TRUE(c.GetStatus(&status).ok());
  EXPECT_EQ(status.sessions(), 0);
  d->Signal(SIGTERM);
  EXPECT_EQ(d->Wait(60), 0) << d->log();
  EXPECT_NE(d->log().find("released every call state"), std::string::npos) << d->log();
}

}  // namespace
}  // namespace ge
