// Attack class "shared memory truncated under a run" (docs/security.md):
// alice registers a region of a POSIX shared-memory object she owns and then
// shrinks the object (ftruncate) — before a run reads its input there,
// before a run writes its output there, at registration (a range past the
// end), and while a long run is reading it in place. The call fails alone
// with OUT_OF_RANGE naming the region (or, when the daemon copied the input
// before the shrink, succeeds); the daemon never takes a SIGBUS.
// Regions are registered over the contract's unix socket when ged serves
// one (Harness::local_address).
#include <chrono>
#include <cstring>

#include "tests/adversarial/adversarial_harness.h"

namespace ge::adversarial {
namespace {

using grpc::StatusCode;

constexpr size_t kRegionBytes = 8192;

class ShmTruncationTest : public AdversarialTest {
 protected:
  void SetUp() override {
    AdversarialTest::SetUp();
    alice_ = h().LocalClient(kAliceToken);
    session_ = SessionWithGraph(*alice_, ParseGraphDef("graph relu_add {\n"
                                                       "  x = Data() {index = 0} -> (f32[2,3])\n"
                                                       "  r = Relu(x:0) -> (f32[2,3])\n"
                                                       "  y = Add(r:0, x:0) -> (f32[2,3])\n"
                                                       "  out = NetOutput(y:0)\n}\n"));
    ASSERT_FALSE(session_.empty());
  }
  void TearDown() override {
    if (alice_ != nullptr) alice_->UnregisterSharedMemory("");
    AdversarialTest::TearDown();
  }

  // Graph 1's input from `region` at 0 and (optionally) its output there at 4096.
  v1::RunGraphRequest ShmRun(const std::string& region, bool input_in_region, bool output_in_region) {
    v1::RunGraphRequest r;
    r.set_session_id(session_);
    r.set_graph_id(1);
    if (input_in_region) {
      v1::Tensor* t = r.add_inputs()->mutable_tensor();
      t->set_dtype(v1::DT_FLOAT);
      t->add_dims(2);
      t->add_dims(3);
      t->mutable_shared_memory()->set_region(region);
      t->mutable_shared_memory()->set_byte_size(24);
    } else {
      *r.add_inputs() = FloatValue({1, -2, 3, -4, 5, -6}, {2, 3});
    }
    if (output_in_region) {
      v1::SharedMemoryRef& out = (*r.mutable_output_shared_memory())[0];
      out.set_region(region);
      out.set_offset(4096);
      out.set_byte_size(64);
    }
    return r;
  }

  grpc::Status Run(const v1::RunGraphRequest& r) {
    v1::RunGraphResponse out;
    grpc::Status s = alice_->RunGraph(r, &out);
    Scan(s, out, "RunGraph");
    return s;
  }

  std::unique_ptr<client::Client> alice_;
  std::string session_;
};

TEST_F(ShmTruncationTest, InputRegionShrunkBeforeTheRun) {
  SharedObject object(kRegionBytes);
  const float x[6] = {1, -2, 3, -4, 5, -6};
  std::memcpy(object.floats(0), x, sizeof(x));
  grpc::Status s = alice_->RegisterSharedMemory("in", object.key(), 0, kRegionBytes);
  h().ScanStatus(s, "RegisterSharedMemory");
  ASSERT_TRUE(s.ok()) << s.error_message();
  ASSERT_TRUE(object.Truncate(0));
  EXPECT_TRUE(Refused(Run(ShmRun("in", true, false)), StatusCode::OUT_OF_RANGE, {"shared memory in"}));
}

TEST_F(ShmTruncationTest, OutputRegionShrunkBeforeTheRun) {
  SharedObject object(kRegionBytes);
  grpc::Status s = alice_->RegisterSharedMemory("out", object.key(), 0, kRegionBytes);
  h().ScanStatus(s, "RegisterSharedMemory");
  ASSERT_TRUE(s.ok()) << s.error_message();
  ASSERT_TRUE(object.Truncate(1024));
  EXPECT_TRUE(Refused(Run(ShmRun("out", false, true)), StatusCode::OUT_OF_RANGE, {"shared memory out"}));
}

TEST_F(ShmTruncationTest, RangePastTheEndOfTheObjectAtRegistration) {
  SharedObject object(kRegionBytes);
  ASSERT_TRUE(object.Truncate(100));
  const grpc::Status s = alice_->RegisterSharedMemory("short", object.key(), 0, kRegionBytes);
  h().ScanStatus(s, "RegisterSharedMemory");
  EXPECT_TRUE(Refused(s, StatusCode::OUT_OF_RANGE, {"short|" + object.key()}));
}

TEST_F(ShmTruncationTest, InputRegionShrunkWhileALongRunReadsIt) {
  // 160 chained 256x256 products, each reading x from the region again.
  constexpr int n = 256;
  std::string text = "graph long {\n  x = Data() {index = 0} -> (f32[256,256])\n";
  std::string prev = "x";
  for (int i = 0; i < 160; ++i) {
    text += "  mm" + std::to_string(i) + " = MatMul(" + prev + ":0, x:0) -> (f32[256,256])\n";
    prev = "mm" + std::to_string(i);
  }
  text += "  out = NetOutput(" + prev + ":0)\n}\n";
  v1::AddGraphRequest add;
  add.set_session_id(session_);
  add.set_graph_id(2);
  *add.mutable_graph_def() = ParseGraphDef(text);
  v1::AddGraphResponse added;
  ASSERT_TRUE(alice_->AddGraph(add, &added).ok());
  v1::CompileGraphResponse compiled;
  ASSERT_TRUE(alice_->CompileGraph(session_, 2, &compiled).ok());

  constexpr size_t kBytes = n * n * sizeof(float);
  SharedObject object(kBytes);
  for (size_t i = 0; i < n * n; ++i) object.floats(0)[i] = 0.001f;
  grpc::Status s = alice_->RegisterSharedMemory("live", object.key(), 0, kBytes);
  ASSERT_TRUE(s.ok()) << s.error_message();

  // Bob's runner pauses so that "a run is running" is alice's run; it starts
  // again once the object is shrunk, while alice's run goes on.
  std::string error;
  runner_->Stop(&error);
  EXPECT_TRUE(error.empty()) << "(d) " << error;
  v1::RunGraphRequest run;
  run.set_session_id(session_);
  run.set_graph_id(2);
  v1::Tensor* t = run.add_inputs()->mutable_tensor();
  t->set_dtype(v1::DT_FLOAT);
  t->add_dims(n);
  t->add_dims(n);
  t->mutable_shared_memory()->set_region("live");
  t->mutable_shared_memory()->set_byte_size(kBytes);
  v1::RunGraphResponse out;
  std::mutex mu;
  std::condition_variable cv;
  bool done = false;
  grpc::Status result;
  alice_->RunGraphAsync(run, &out, [&](grpc::Status status) {
    std::lock_guard<std::mutex> lock(mu);
    result = std::move(status);
    done = true;
    cv.notify_all();
  });
  // Poll (with a deadline) until the device runs alice's run.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  bool running = false;
  while (!running && std::chrono::steady_clock::now() < deadline) {
    v1::GetStatusResponse status;
    if (!alice_->GetStatus(&status).ok()) break;
    for (const auto& d : status.devices()) running = running || d.running() > 0;
    std::unique_lock<std::mutex> lock(mu);
    if (done) break;
  }
  EXPECT_TRUE(running) << "alice's long run was never seen running";
  ASSERT_TRUE(object.Truncate(0));
  runner_ = std::make_unique<VictimRunner>(h());
  std::unique_lock<std::mutex> lock(mu);
  ASSERT_TRUE(cv.wait_for(lock, std::chrono::seconds(120), [&] { return done; }));
  h().ScanStatus(result, "RunGraph");
  h().ScanMessage(out, "RunGraph");
  // Copied before the shrink: it ran. Read in place: OUT_OF_RANGE naming the
  // region. Never a dead daemon (UNAVAILABLE).
  if (!result.ok()) {
    EXPECT_TRUE(Refused(result, StatusCode::OUT_OF_RANGE, {"live"}));
  }
}

}  // namespace
}  // namespace ge::adversarial
