// Faults (the Reliability issue): a client killed in the middle of its
// calls, the daemon killed in the middle of a compile and started again,
// and engine plugins that fail to load. In every case the daemon keeps
// serving (or serves again) and says clearly what happened.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "client/cpp/client.h"
#include "gtest/gtest.h"
#include "onnx/onnx_pb.h"
#include "tests/integration/daemon_process.h"
#include "tests/testing/poll.h"
#include "tests/integration/process.h"

namespace ge {
namespace {

using testing::DaemonProcess;

// X f32[n,n] -> `count` chained ops (t, X) -> Y: MatMul at n = 1536, count = 48
// is about 0.3 TFLOP, more than a second on two cores.
onnx::ModelProto SlowModel(int n, int count, const char* op = "MatMul") {
  onnx::ModelProto model;
  model.set_ir_version(8);
  model.add_opset_import()->set_version(17);
  onnx::GraphProto* g = model.mutable_graph();
  g->set_name("slow");
  for (auto [io, name] : {std::pair{g->add_input(), "X"}, std::pair{g->add_output(), "Y"}}) {
    io->set_name(name);
    auto* t = io->mutable_type()->mutable_tensor_type();
    t->set_elem_type(onnx::TensorProto::FLOAT);
    t->mutable_shape()->add_dim()->set_dim_value(n);
    t->mutable_shape()->add_dim()->set_dim_value(n);
  }
  std::string prev = "X";
  for (int i = 0; i < count; ++i) {
    onnx::NodeProto* mm = g->add_node();
    mm->set_op_type(op);
    mm->add_input(prev);
    mm->add_input("X");
    prev = i == count - 1 ? "Y" : "t" + std::to_string(i);
    mm->add_output(prev);
  }
  return model;
}

client::Client MakeClient(const DaemonProcess& d) {
  client::ClientOptions options;
  options.address = d.grpc_address();
  options.max_retries = 0;
  return client::Client(options);
}

class DaemonFaultsTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = testing::MakeTempDir("ged-faults"); }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string dir_;
};

// gectl run --remote, killed with SIGKILL while its runs are in flight: the
// daemon notices the broken calls, keeps serving, and releases every call
// state and session at shutdown.
TEST_F(DaemonFaultsTest, AClientKilledMidCallLeavesNothingBehind) {
  const std::string model = dir_ + "/slow.onnx";
  std::ofstream(model, std::ios::binary) << SlowModel(1536, 48).SerializeAsString();
  auto d = DaemonProcess::Start({"--shutdown-timeout", "5"});
  ASSERT_NE(d, nullptr);
  client::Client c = MakeClient(*d);
  // A call of gectl's is on the device (compiling or running).
  const auto busy = [&c] {
    v1::GetStatusResponse status;
    return c.GetStatus(&status).ok() && status.devices(0).running() > 0;
  };
  for (int round = 0; round < 3; ++round) {
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      const std::string gectl = testing::BinaryDir() + "/bin/gectl";
      execl(gectl.c_str(), gectl.c_str(), "run", "--remote", d->grpc_address().c_str(), model.c_str(), nullptr);
      _exit(127);
    }
    ASSERT_TRUE(testing::PollUntil(std::chrono::seconds(60), busy)) << d->log();
    kill(pid, SIGKILL);
    int status = 0;
    waitpid(pid, &status, 0);
    EXPECT_TRUE(WIFSIGNALED(status)) << "gectl finished before it was killed; the model is too fast";
  }
  v1::GetStatusResponse status;
  ASSERT_TRUE(c.GetStatus(&status).ok());
  d->Signal(SIGTERM);
  EXPECT_EQ(d->Wait(60), 0) << d->log();
  EXPECT_NE(d->log().find("released every call state"), std::string::npos) << d->log();
}

// The daemon SIGKILLed while it compiles, then started again on the same
// port: it serves, and a client holding a session id from before the
// restart gets NOT_FOUND saying so.
TEST_F(DaemonFaultsTest, ADaemonKilledMidCompileServesAgainAndOldSessionsAreGoneClearly) {
  std::string session;
  std::string address;
  {
    auto d = DaemonProcess::Start({});
    ASSERT_NE(d, nullptr);
    address = d->grpc_address();
    client::Client c = MakeClient(*d);
    ASSERT_TRUE(c.CreateSession({}, &session).ok());
    v1::AddGraphRequest add;
    add.set_session_id(session);
    add.set_graph_id(1);
    // Many small nodes: compiling takes a while.
    add.set_onnx_model(SlowModel(8, 4000, "Add").SerializeAsString());
    v1::AddGraphResponse added;
    ASSERT_TRUE(c.AddGraph(add, &added).ok());
    std::thread compile([&] {
      v1::CompileGraphResponse compiled;
      (void)c.CompileGraph(session, 1, &compiled);  // cut off by the kill
    });
    // Killed once the compile is on the device.
    ASSERT_TRUE(testing::PollUntil(std::chrono::seconds(60), [&c] {
      v1::GetStatusResponse status;
      return c.GetStatus(&status).ok() && status.devices(0).running() > 0;
    }));
    d->Signal(SIGKILL);
    EXPECT_EQ(d->Wait(30), 128 + SIGKILL);
    compile.join();
  }
  auto d = DaemonProcess::Start({"--listen", address});
  ASSERT_NE(d, nullptr) << "ged did not start again on " << address;
  client::Client c = MakeClient(*d);
  v1::RunGraphRequest run;
  run.set_session_id(session);
  run.set_graph_id(1);
  v1::RunGraphResponse out;
  const grpc::Status s = c.RunGraph(run, &out);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_NE(s.error_message().find("before a restart"), std::string::npos) << s.error_message();
  std::string fresh;
  EXPECT_TRUE(c.CreateSession({}, &fresh).ok());
}

// A plugin directory holding a file that is not a shared library, a
// plugin built for another engine ABI, and a library without the entry
// point: ged names each in its log, skips them, and serves with its own
// engines.
TEST_F(DaemonFaultsTest, PluginsThatFailToLoadAreNamedAndSkipped) {
  const std::string plugins = dir_ + "/plugins";
  std::filesystem::create_directories(plugins);
  std::ofstream(plugins + "/libge_engine_garbage.so") << "not an ELF file\n";
  const std::string built = testing::BinaryDir() + "/tests/plugins/";
  std::filesystem::copy_file(built + "wrong_abi/libge_engine_test.so", plugins + "/libge_engine_wrong_abi.so");
  std::filesystem::copy_file(built + "no_entry/libge_engine_test.so", plugins + "/libge_engine_no_entry.so");
  auto d = DaemonProcess::Start({"--plugin-dir", plugins});
  ASSERT_NE(d, nullptr) << "ged must start despite plugins that fail to load";
  const std::string log = d->log();
  for (const char* name : {"libge_engine_garbage.so", "libge_engine_wrong_abi.so", "libge_engine_no_entry.so"}) {
    EXPECT_NE(log.find(name), std::string::npos) << "the log does not name " << name << ":\n" << log;
  }
  client::Client c = MakeClient(*d);
  v1::GetStatusResponse status;
  ASSERT_TRUE(c.GetStatus(&status).ok());
  EXPECT_GE(status.engines_size(), 4);
  for (const std::string& engine : status.engines()) EXPECT_NE(engine.find("test"), 0u) << engine;
}

}  // namespace
}  // namespace ge
