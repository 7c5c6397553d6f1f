// GetVariable / SetVariable through the daemon: a graph's variable keeps
// its value across RunGraph calls, reads and writes reach it by name, and
// another session has its own.
#include "base/ir/proto_convert.h"
#include "base/ir/text_format.h"
#include "client/cpp/client.h"
#include "proto/value_convert.h"
#include "gtest/gtest.h"
#include "tests/integration/daemon_process.h"

namespace ge {
namespace {

constexpr const char* kCounter = R"(graph counter {
  x = Data() {index = 0} -> (f32[2])
  c = Variable() {dtype = 1, shape = shape[2], value = tensor<f32[2]>[10.0, 20.0]} -> (f32[2])
  n = AssignAdd(c:0, x:0) -> (f32[2])
  out = NetOutput(n:0)
})";

class DaemonVariablesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    daemon_ = testing::DaemonProcess::Start({});
    ASSERT_NE(daemon_, nullptr);
    client::ClientOptions options;
    options.address = daemon_->grpc_address();
    client_ = std::make_unique<client::Client>(options);
  }
  std::string NewSessionWithCounter() {
    std::string session;
    EXPECT_TRUE(client_->CreateSession({}, &session).ok());
    auto graph = ir::ParseGraph(kCounter);
    EXPECT_TRUE(graph.ok()) << graph.status();
    v1::AddGraphRequest add;
    add.set_session_id(session);
    add.set_graph_id(1);
    EXPECT_TRUE(ir::GraphToProto(**graph, add.mutable_graph_def()).ok());
    v1::AddGraphResponse added;
    grpc::Status s = client_->AddGraph(add, &added);
    EXPECT_TRUE(s.ok()) << s.error_message();
    return session;
  }
  float RunCounter(const std::string& session, float add) {
    v1::RunGraphRequest request;
    request.set_session_id(session);
    request.set_graph_id(1);
    EXPECT_TRUE(rpc::ValueToProto(Value(Tensor::FromVector<float>({0, add}, Shape{2})), request.add_inputs()).ok());
    v1::RunGraphResponse response;
    grpc::Status s = client_->RunGraph(request, &response);
    EXPECT_TRUE(s.ok()) << s.error_message();
    if (!s.ok() || response.outputs_size() != 1) return -1;
    auto out = rpc::ValueFromProto(response.outputs(0), "output");
    return out.ok() ? out->tensor().data<float>()[1] : -1;
  }
  float ReadCounter(const std::string& session) {
    v1::Value value;
    grpc::Status s = client_->GetVariable(session, "c", &value);
    EXPECT_TRUE(s.ok()) << s.error_message();
    auto t = rpc::ValueFromProto(value, "c");
    return t.ok() && t->is_tensor() ? t->tensor().data<float>()[1] : -1;
  }

  std::unique_ptr<testing::DaemonProcess> daemon_;
  std::unique_ptr<client::Client> client_;
};

TEST_F(DaemonVariablesTest, VariablesPersistAndAreReadAndWrittenByName) {
  const std::string s1 = NewSessionWithCounter();
  const std::string s2 = NewSessionWithCounter();
  EXPECT_EQ(RunCounter(s1, 1), 21.0f);
  EXPECT_EQ(RunCounter(s1, 1), 22.0f);
  EXPECT_EQ(ReadCounter(s1), 22.0f);
  v1::Value value;
  ASSERT_TRUE(rpc::ValueToProto(Value(Tensor::FromVector<float>({0, 100}, Shape{2})), &value).ok());
  grpc::Status set = client_->SetVariable(s1, "c", value);
  ASSERT_TRUE(set.ok()) << set.error_message();
  EXPECT_EQ(RunCounter(s1, 1), 101.0f);
  // Session 2 has not run: its variable does not exist yet, then starts from its init value.
  EXPECT_EQ(client_->GetVariable(s2, "c", &value).error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(RunCounter(s2, 1), 21.0f);
  grpc::Status missing = client_->GetVariable(s1, "nope", &value);
  EXPECT_EQ(missing.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_NE(missing.error_message().find("'nope'"), std::string::npos) << missing.error_message();
  ASSERT_TRUE(rpc::ValueToProto(Value(Tensor::FromVector<float>({1}, Shape{1})), &value).ok());
  EXPECT_EQ(client_->SetVariable(s1, "c", value).error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_TRUE(client_->DestroySession(s1).ok());
  EXPECT_TRUE(client_->DestroySession(s2).ok());
}

}  // namespace
}  // namespace ge
