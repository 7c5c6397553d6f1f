// Attack class "cross-tenant" (docs/security.md): alice reaches for what is
// bob's — his model through the shared ge.graph_key or his cache key, his
// session by id (RunGraph, GetVariable, SetVariable, DestroySession,
// AddGraph, CompileGraph with return_model, LoadModel, RunGraphStream), his
// shared-memory regions by name, his sessions in listings. Each gets the
// contract's answer: no cache hit (alice's own model), NOT_FOUND with the
// text of a missing key, PERMISSION_DENIED / NOT_FOUND for his session or
// region; bob's weights and variable never reach alice, and bob's session,
// variable and region stay as they were.
#include <cstring>
#include <random>

#include "tests/adversarial/adversarial_harness.h"

namespace ge::adversarial {
namespace {

using grpc::StatusCode;

const std::vector<StatusCode> kNotYours = {StatusCode::PERMISSION_DENIED, StatusCode::NOT_FOUND};

// alice's graph with bob's signature (x f32[2,4] -> y f32[2,4]): y = 2x.
v1::GraphDef AliceDoubler() {
  return ParseGraphDef(
      "graph alice_doubler {\n"
      "  x = Data() {index = 0} -> (f32[2,4])\n"
      "  y = Add(x:0, x:0) -> (f32[2,4])\n"
      "  out = NetOutput(y:0)\n}\n");
}

const std::vector<float> kInput = {1, 2, 3, 4, 5, 6, 7, 8};

std::string Doubled() {
  std::vector<float> y;
  for (float v : kInput) y.push_back(2 * v);
  return std::string(reinterpret_cast<const char*>(y.data()), y.size() * sizeof(float));
}

class CrossTenantTest : public AdversarialTest {
 protected:
  v1::RunGraphRequest Run(const std::string& session, uint32_t graph) {
    v1::RunGraphRequest r;
    r.set_session_id(session);
    r.set_graph_id(graph);
    *r.add_inputs() = FloatValue(kInput, {2, 4});
    return r;
  }
};

TEST_F(CrossTenantTest, SameGraphKeyCompilesAlicesOwnModel) {
  const std::string session = SessionWithGraph(h().alice(), AliceDoubler(), 1, {{"ge.graph_key", kSharedGraphKey}});
  ASSERT_FALSE(session.empty());
  v1::CompileGraphRequest compile;
  compile.set_session_id(session);
  compile.set_graph_id(1);
  compile.set_return_model(true);
  v1::CompileGraphResponse compiled;
  grpc::Status s = h().alice().CompileGraph(compile, &compiled);
  Scan(s, compiled, "CompileGraph under bob's graph key");
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_FALSE(compiled.cache_hit()) << "alice's compile under bob's ge.graph_key hit bob's cache entry";
  EXPECT_NE(compiled.cache_key(), h().victim_cache_key());
  v1::RunGraphResponse out;
  s = h().alice().RunGraph(Run(session, 1), &out);
  Scan(s, out, "RunGraph under bob's graph key");
  ASSERT_TRUE(s.ok()) << s.error_message();
  ASSERT_EQ(out.outputs_size(), 1);
  EXPECT_EQ(out.outputs(0).tensor().raw_data(), Doubled()) << "alice ran a model that is not hers";
}

TEST_F(CrossTenantTest, GraphKeyClaimedFirstByAliceDoesNotReachBob) {
  // alice compiles first under a key bob will use; bob must get his own.
  const std::string key = "claimed-by-alice";
  const std::string a = SessionWithGraph(h().alice(), AliceDoubler(), 1, {{"ge.graph_key", key}});
  ASSERT_FALSE(a.empty());
  v1::CompileGraphResponse compiled;
  grpc::Status s = h().alice().CompileGraph(a, 1, &compiled);
  Scan(s, compiled, "alice's CompileGraph");
  ASSERT_TRUE(s.ok()) << s.error_message();
  const std::string b = SessionWithGraph(h().bob(),
                                         ParseGraphDef("graph bob_negate {\n"
                                                       "  x = Data() {index = 0} -> (f32[2,4])\n"
                                                       "  y = Neg(x:0) -> (f32[2,4])\n"
                                                       "  out = NetOutput(y:0)\n}\n"),
                                         1, {{"ge.graph_key", key}});
  ASSERT_FALSE(b.empty());
  s = h().bob().CompileGraph(b, 1, &compiled);
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_FALSE(compiled.cache_hit()) << "bob's compile hit the entry alice planted";
  v1::RunGraphResponse out;
  s = h().bob().RunGraph(Run(b, 1), &out);
  ASSERT_TRUE(s.ok()) << s.error_message();
  std::vector<float> negated;
  for (float v : kInput) negated.push_back(-v);
  ASSERT_EQ(out.outputs_size(), 1);
  EXPECT_EQ(out.outputs(0).tensor().raw_data(),
            std::string(reinterpret_cast<const char*>(negated.data()), negated.size() * sizeof(float)))
      << "bob ran alice's model";
  EXPECT_TRUE(h().bob().DestroySession(b).ok());
}

TEST_F(CrossTenantTest, LoadModelByTheVictimsCacheKeyIsNotFoundLikeAMissingKey) {
  ASSERT_FALSE(h().victim_cache_key().empty());
  std::string session;
  ASSERT_TRUE(h().alice().CreateSession({}, &session).ok());
  v1::LoadModelRequest load;
  load.set_session_id(session);
  load.set_cache_key(h().victim_cache_key());
  v1::LoadModelResponse loaded;
  const grpc::Status s = h().alice().LoadModel(load, &loaded);
  Scan(s, loaded, "LoadModel by bob's key");
  EXPECT_TRUE(Refused(s, StatusCode::NOT_FOUND));
  // The same text as a key nobody stored (with the key swapped).
  std::string missing(64, '0');
  std::mt19937 rng(7);
  for (char& c : missing) c = "0123456789abcdef"[rng() % 16];
  load.set_cache_key(missing);
  const grpc::Status m = h().alice().LoadModel(load, &loaded);
  Scan(m, loaded, "LoadModel by a missing key");
  ASSERT_EQ(m.error_code(), StatusCode::NOT_FOUND) << m.error_message();
  std::string expected = m.error_message();
  const size_t at = expected.find(missing);
  ASSERT_NE(at, std::string::npos) << expected;
  expected.replace(at, missing.size(), h().victim_cache_key());
  EXPECT_EQ(s.error_message(), expected) << "a key of another tenant is told apart from a missing one";
}

TEST_F(CrossTenantTest, RunGraphOnTheVictimsSession) {
  v1::RunGraphResponse out;
  const grpc::Status s = h().alice().RunGraph(Run(h().victim_session(), kVictimGraph), &out);
  Scan(s, out, "RunGraph on bob's session");
  EXPECT_TRUE(RefusedWithAnyOf(s, kNotYours));
}

TEST_F(CrossTenantTest, GetVariableOnTheVictimsSession) {
  v1::Value value;
  const grpc::Status s = h().alice().GetVariable(h().victim_session(), "bob_secret", &value);
  h().ScanStatus(s, "GetVariable on bob's session");
  h().ScanMessage(value, "GetVariable on bob's session");
  EXPECT_TRUE(RefusedWithAnyOf(s, kNotYours));
}

TEST_F(CrossTenantTest, SetVariableOnTheVictimsSession) {
  const grpc::Status s = h().alice().SetVariable(h().victim_session(), "bob_secret", FloatValue({0, 0, 0, 0}, {4}));
  h().ScanStatus(s, "SetVariable on bob's session");
  EXPECT_TRUE(RefusedWithAnyOf(s, kNotYours));
  h().ExpectVictimVariableIntact();
}

TEST_F(CrossTenantTest, DestroyTheVictimsSession) {
  const grpc::Status s = h().alice().DestroySession(h().victim_session());
  h().ScanStatus(s, "DestroySession of bob's session");
  EXPECT_TRUE(RefusedWithAnyOf(s, kNotYours));
  // TearDown runs bob's graph on that session again.
}

TEST_F(CrossTenantTest, AddGraphAndExportFromTheVictimsSession) {
  v1::AddGraphRequest add;
  add.set_session_id(h().victim_session());
  add.set_graph_id(9);
  *add.mutable_graph_def() = AliceDoubler();
  v1::AddGraphResponse added;
  grpc::Status s = h().alice().AddGraph(add, &added);
  Scan(s, added, "AddGraph into bob's session");
  EXPECT_TRUE(RefusedWithAnyOf(s, kNotYours));
  v1::CompileGraphRequest compile;
  compile.set_session_id(h().victim_session());
  compile.set_graph_id(kVictimGraph);
  compile.set_return_model(true);  // bob's weights, inline
  v1::CompileGraphResponse compiled;
  s = h().alice().CompileGraph(compile, &compiled);
  Scan(s, compiled, "CompileGraph(return_model) of bob's graph");
  EXPECT_TRUE(RefusedWithAnyOf(s, kNotYours));
}

TEST_F(CrossTenantTest, LoadAndExecuteModelInTheVictimsSession) {
  v1::LoadModelRequest load;
  load.set_session_id(h().victim_session());
  load.set_cache_key(h().victim_cache_key());
  v1::LoadModelResponse loaded;
  grpc::Status s = h().alice().LoadModel(load, &loaded);
  Scan(s, loaded, "LoadModel into bob's session");
  EXPECT_TRUE(RefusedWithAnyOf(s, kNotYours));
  v1::ExecuteModelRequest exec;
  exec.set_session_id(h().victim_session());
  exec.set_model_id(1);
  *exec.add_inputs() = FloatValue(kInput, {2, 4});
  v1::ExecuteModelResponse out;
  s = h().alice().ExecuteModel(exec, &out);
  Scan(s, out, "ExecuteModel in bob's session");
  EXPECT_TRUE(RefusedWithAnyOf(s, kNotYours));
}

TEST_F(CrossTenantTest, RunGraphStreamOnTheVictimsSession) {
  auto ctx = h().alice().NewContext(60);
  auto stream = h().alice().stub().RunGraphStream(ctx.get());
  v1::RunGraphRequest r = Run(h().victim_session(), kVictimGraph);
  r.set_request_id(1);
  stream->Write(r);
  stream->WritesDone();
  v1::RunGraphResponse reply;
  int replies = 0;
  while (stream->Read(&reply)) {
    ++replies;
    h().ScanMessage(reply, "stream reply");
    EXPECT_TRUE(reply.error_code() == static_cast<int>(StatusCode::PERMISSION_DENIED) ||
                reply.error_code() == static_cast<int>(StatusCode::NOT_FOUND))
        << "(a) stream reply code " << reply.error_code() << ": " << reply.error_message();
    EXPECT_EQ(reply.outputs_size(), 0);
  }
  const grpc::Status s = stream->Finish();
  h().ScanStatus(s, "the stream's status");
  if (replies == 0) {
    EXPECT_TRUE(RefusedWithAnyOf(s, kNotYours));
  }
}

TEST_F(CrossTenantTest, SharedMemoryRegionsOfTheVictimAreOutOfReach) {
  SharedObject object(4096);
  std::unique_ptr<client::Client> bob = h().LocalClient(kBobToken);
  std::unique_ptr<client::Client> alice = h().LocalClient(kAliceToken);
  grpc::Status s = bob->RegisterSharedMemory("bob-region", object.key(), 0, 4096);
  ASSERT_TRUE(s.ok()) << s.error_message();
  std::memcpy(object.floats(0), h().victim_weights().data(), 64);  // bob's data in his region

  // alice names bob's region in a run of her own graph.
  const std::string session = SessionWithGraph(h().alice(), AliceDoubler());
  ASSERT_FALSE(session.empty());
  v1::RunGraphRequest run;
  run.set_session_id(session);
  run.set_graph_id(1);
  v1::Tensor* t = run.add_inputs()->mutable_tensor();
  t->set_dtype(v1::DT_FLOAT);
  t->add_dims(2);
  t->add_dims(4);
  t->mutable_shared_memory()->set_region("bob-region");
  t->mutable_shared_memory()->set_byte_size(32);
  v1::RunGraphResponse out;
  s = alice->RunGraph(run, &out);
  Scan(s, out, "RunGraph from bob's region");
  EXPECT_TRUE(Refused(s, StatusCode::NOT_FOUND, {"bob-region"}));

  v1::SharedMemoryStatusResponse status;
  s = alice->SharedMemoryStatus("", &status);
  Scan(s, status, "SharedMemoryStatus");
  for (const auto& r : status.regions()) EXPECT_NE(r.name(), "bob-region") << "alice sees bob's region";
  s = alice->SharedMemoryStatus("bob-region", &status);
  Scan(s, status, "SharedMemoryStatus of bob's region");
  EXPECT_TRUE(Refused(s, StatusCode::NOT_FOUND));
  s = alice->UnregisterSharedMemory("bob-region");
  h().ScanStatus(s, "UnregisterSharedMemory of bob's region");
  EXPECT_TRUE(Refused(s, StatusCode::NOT_FOUND));
  // Bob's region is still his.
  s = bob->SharedMemoryStatus("bob-region", &status);
  EXPECT_TRUE(s.ok()) << s.error_message();
  EXPECT_TRUE(bob->UnregisterSharedMemory("bob-region").ok());
}

TEST_F(CrossTenantTest, ListingsAndStatusShowOnlyTheCallersSessions) {
  std::string mine;
  ASSERT_TRUE(h().alice().CreateSession({}, &mine).ok());
  v1::ListSessionsResponse listed;
  grpc::Status s = h().alice().ListSessions(&listed);
  Scan(s, listed, "ListSessions");
  ASSERT_TRUE(s.ok());
  for (const auto& info : listed.sessions()) {
    EXPECT_NE(info.session_id(), h().victim_session()) << "alice lists bob's session";
    EXPECT_EQ(info.tenant(), "alice");
  }
  v1::GetStatusResponse status;
  s = h().alice().GetStatus(&status);
  Scan(s, status, "GetStatus");
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(status.sessions(), listed.sessions_size()) << "GetStatus counts other tenants' sessions";
  EXPECT_TRUE(h().alice().DestroySession(mine).ok());
}

}  // namespace
}  // namespace ge::adversarial
