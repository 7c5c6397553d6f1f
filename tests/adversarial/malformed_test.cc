// Attack class "malformed graphs and values" (docs/security.md): negative
// declared dims (ONNX dim_value -5, a GraphDef Data of [-5,3], run inputs
// and ExecuteOp inputs of [-5,4]), a dtype or input count that does not
// match the graph, raw data shorter than its dims, and a variable
// redeclared by a second graph (or set) with another shape or dtype — the
// small allocation must never be viewed as the large one. All
// INVALID_ARGUMENT; the daemon and bob go on.
#include "onnx/onnx_pb.h"
#include "tests/adversarial/adversarial_harness.h"

namespace ge::adversarial {
namespace {

using grpc::StatusCode;

v1::GraphDef ReluGraph(const std::string& dims) {
  return ParseGraphDef("graph relu {\n  x = Data() {index = 0} -> (f32[" + dims + "])\n  y = Relu(x:0) -> (f32[" +
                       dims + "])\n  out = NetOutput(y:0)\n}\n");
}

std::string VariableGraph(const std::string& type, const std::string& dims) {
  return "graph var {\n  v = Variable() {dtype = " + std::string(type == "f32" ? "1" : "7") + ", shape = shape[" +
         dims + "]} -> (" + type + "[" + dims + "])\n  y = Identity(v:0) -> (" + type + "[" + dims +
         "])\n  out = NetOutput(y:0)\n}\n";
}

class MalformedTest : public AdversarialTest {
 protected:
  grpc::Status Run(const std::string& session, uint32_t graph, const std::vector<v1::Value>& inputs) {
    v1::RunGraphRequest run;
    run.set_session_id(session);
    run.set_graph_id(graph);
    for (const v1::Value& v : inputs) *run.add_inputs() = v;
    v1::RunGraphResponse out;
    grpc::Status s = h().alice().RunGraph(run, &out);
    Scan(s, out, "RunGraph");
    return s;
  }

  grpc::Status Add(const std::string& session, uint32_t graph, const v1::GraphDef& def) {
    v1::AddGraphRequest add;
    add.set_session_id(session);
    add.set_graph_id(graph);
    *add.mutable_graph_def() = def;
    v1::AddGraphResponse added;
    grpc::Status s = h().alice().AddGraph(add, &added);
    Scan(s, added, "AddGraph");
    return s;
  }

  // Graph 1 of a new session declares v as `first`, graph 2 as `second`:
  // the second AddGraph or its compile is refused naming both.
  void ExpectRedeclarationRefused(const std::string& first_type, const std::string& first_dims,
                                  const std::string& second_type, const std::string& second_dims,
                                  const std::vector<std::string>& names) {
    std::string session;
    ASSERT_TRUE(h().alice().CreateSession({}, &session).ok());
    ASSERT_TRUE(Add(session, 1, ParseGraphDef(VariableGraph(first_type, first_dims))).ok());
    v1::CompileGraphResponse compiled;
    ASSERT_TRUE(h().alice().CompileGraph(session, 1, &compiled).ok());
    ASSERT_TRUE(Run(session, 1, {}).ok());
    grpc::Status s = Add(session, 2, ParseGraphDef(VariableGraph(second_type, second_dims)));
    if (s.ok()) {
      s = h().alice().CompileGraph(session, 2, &compiled);
      Scan(s, compiled, "CompileGraph");
    }
    EXPECT_TRUE(Refused(s, StatusCode::INVALID_ARGUMENT, names));
    if (s.ok()) {
      // Accepted: running it must at least not read past the first
      // allocation (ASan shows it; here the daemon must survive).
      Run(session, 2, {});
      v1::Value value;
      const grpc::Status g = h().alice().GetVariable(session, "v", &value);
      h().ScanStatus(g, "GetVariable");
      h().ScanMessage(value, "GetVariable");
    }
  }
};

TEST_F(MalformedTest, OnnxInputWithDimValueMinusFive) {
  onnx::ModelProto model;
  model.set_ir_version(8);
  model.add_opset_import()->set_version(17);
  onnx::GraphProto* g = model.mutable_graph();
  g->set_name("neg");
  for (auto [io, name] : {std::pair{g->add_input(), "X"}, std::pair{g->add_output(), "Y"}}) {
    io->set_name(name);
    auto* t = io->mutable_type()->mutable_tensor_type();
    t->set_elem_type(onnx::TensorProto::FLOAT);
    t->mutable_shape()->add_dim()->set_dim_value(-5);
    t->mutable_shape()->add_dim()->set_dim_value(3);
  }
  onnx::NodeProto* relu = g->add_node();
  relu->set_op_type("Relu");
  relu->add_input("X");
  relu->add_output("Y");
  std::string session;
  ASSERT_TRUE(h().alice().CreateSession({}, &session).ok());
  v1::AddGraphRequest add;
  add.set_session_id(session);
  add.set_graph_id(1);
  add.set_onnx_model(model.SerializeAsString());
  v1::AddGraphResponse added;
  const grpc::Status s = h().alice().AddGraph(add, &added);
  Scan(s, added, "AddGraph");
  EXPECT_TRUE(Refused(s, StatusCode::INVALID_ARGUMENT, {"-5"}));
}

TEST_F(MalformedTest, GraphDefDataWithANegativeDim) {
  v1::GraphDef def = ReluGraph("2,3");
  for (v1::NodeDef& n : *def.mutable_nodes()) {
    for (v1::ValueTypeDef& t : *n.mutable_output_types()) t.mutable_tensor()->mutable_shape()->set_dims(0, -5);
    for (v1::ValueTypeDef& t : *n.mutable_input_types()) t.mutable_tensor()->mutable_shape()->set_dims(0, -5);
  }
  std::string session;
  ASSERT_TRUE(h().alice().CreateSession({}, &session).ok());
  EXPECT_TRUE(Refused(Add(session, 1, def), StatusCode::INVALID_ARGUMENT, {"-5"}));
}

TEST_F(MalformedTest, RunInputWithANegativeDim) {
  const std::string session = SessionWithGraph(h().alice(), ReluGraph("-1,4"));
  ASSERT_FALSE(session.empty());
  EXPECT_TRUE(Refused(Run(session, 1, {FloatValue({1, 2, 3, 4}, {-5, 4})}), StatusCode::INVALID_ARGUMENT, {"input 0"}));
}

TEST_F(MalformedTest, ExecuteOpInputWithANegativeDim) {
  v1::ExecuteOpRequest r;
  r.set_op_type("Relu");
  *r.add_inputs() = FloatValue({1, 2, 3, 4}, {-5, 4});
  v1::ExecuteOpResponse out;
  const grpc::Status s = h().alice().ExecuteOp(r, &out);
  Scan(s, out, "ExecuteOp");
  EXPECT_TRUE(Refused(s, StatusCode::INVALID_ARGUMENT, {"input 0"}));
}

TEST_F(MalformedTest, InputDtypeMismatch) {
  const std::string session = SessionWithGraph(h().alice(), ReluGraph("2,3"));
  ASSERT_FALSE(session.empty());
  EXPECT_TRUE(
      Refused(Run(session, 1, {Int64Value({1, 2, 3, 4, 5, 6}, {2, 3})}), StatusCode::INVALID_ARGUMENT, {"input 0"}));
}

TEST_F(MalformedTest, InputCountMismatch) {
  const std::string session = SessionWithGraph(h().alice(), ReluGraph("2,3"));
  ASSERT_FALSE(session.empty());
  const v1::Value x = FloatValue({1, 2, 3, 4, 5, 6}, {2, 3});
  EXPECT_TRUE(Refused(Run(session, 1, {x, x, x}), StatusCode::INVALID_ARGUMENT, {"expected 1 inputs"}));
  EXPECT_TRUE(Refused(Run(session, 1, {}), StatusCode::INVALID_ARGUMENT, {"expected 1 inputs"}));
}

TEST_F(MalformedTest, RawDataShorterThanItsDims) {
  const std::string session = SessionWithGraph(h().alice(), ReluGraph("-1,3"));
  ASSERT_FALSE(session.empty());
  EXPECT_TRUE(Refused(Run(session, 1, {FloatValue({1, 2, 3}, {1000, 3})}), StatusCode::INVALID_ARGUMENT, {"input 0"}));
}

TEST_F(MalformedTest, VariableRedeclaredWithALargerShape) {
  ExpectRedeclarationRefused("f32", "2", "f32", "65536", {"[2]", "[65536]"});
}

TEST_F(MalformedTest, VariableRedeclaredWithAnotherDtype) { ExpectRedeclarationRefused("f32", "4", "i64", "4", {"v"}); }

TEST_F(MalformedTest, SetVariableWithAnotherShape) {
  std::string session;
  ASSERT_TRUE(h().alice().CreateSession({}, &session).ok());
  ASSERT_TRUE(Add(session, 1, ParseGraphDef(VariableGraph("f32", "2"))).ok());
  v1::CompileGraphResponse compiled;
  ASSERT_TRUE(h().alice().CompileGraph(session, 1, &compiled).ok());
  const grpc::Status s = h().alice().SetVariable(session, "v", FloatValue(std::vector<float>(65536, 1.0f), {65536}));
  h().ScanStatus(s, "SetVariable");
  EXPECT_TRUE(Refused(s, StatusCode::INVALID_ARGUMENT, {"v"}));
  Run(session, 1, {});
}

}  // namespace
}  // namespace ge::adversarial
