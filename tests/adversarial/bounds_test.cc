// Attack class "size and count bounds" (docs/security.md): one request
// that asks for more than a daemon can give — two billion ExecuteOp
// outputs, dims whose product overflows, a message above max_message_bytes,
// graph after graph in one session, a graph of more nodes than
// max_graph_nodes, ge.exec.inter_op_parallelism 100000, a Loop with a huge
// trip count, one tenant flooding the run queue. Each is RESOURCE_EXHAUSTED
// naming its config key, refused before anything is allocated; the daemon
// and bob go on. Cases whose limit is configured by the contract's keys
// expect the configured value (adversarial_harness.h).
#include <chrono>
#include <condition_variable>
#include <mutex>

#include "onnx/onnx_pb.h"
#include "tests/adversarial/adversarial_harness.h"

namespace ge::adversarial {
namespace {

using grpc::StatusCode;

class BoundsTest : public AdversarialTest {
 protected:
  grpc::Status Execute(const v1::ExecuteOpRequest& r) {
    v1::ExecuteOpResponse out;
    grpc::Status s = h().alice().ExecuteOp(r, &out);
    Scan(s, out, "ExecuteOp " + r.op_type());
    return s;
  }
};

TEST_F(BoundsTest, ExecuteOpWithTwoBillionOutputs) {
  v1::ExecuteOpRequest r;
  r.set_op_type("Relu");
  *r.add_inputs() = FloatValue({-1, 1}, {2});
  r.set_num_outputs(2000000000);
  EXPECT_TRUE(Refused(Execute(r), StatusCode::RESOURCE_EXHAUSTED, {"max_outputs"}));
}

TEST_F(BoundsTest, InputDimsWhoseProductOverflows) {
  v1::ExecuteOpRequest r;
  r.set_op_type("Relu");
  v1::Value v = FloatValue({1, 2, 3, 4}, {});
  v.mutable_tensor()->add_dims(int64_t{1} << 32);
  v.mutable_tensor()->add_dims(int64_t{1} << 32);
  v.mutable_tensor()->add_dims(16);
  *r.add_inputs() = v;
  // A shape whose element count overflows is malformed, not large.
  EXPECT_TRUE(Refused(Execute(r), StatusCode::INVALID_ARGUMENT, {"overflows"}));
}

TEST_F(BoundsTest, RunGraphInputDeclaredLargerThanMaxTensorBytes) {
  const std::string session = SessionWithGraph(h().alice(), ParseGraphDef("graph g {\n"
                                                                          "  x = Data() {index = 0} -> (f32[-1,-1])\n"
                                                                          "  y = Relu(x:0) -> (f32[-1,-1])\n"
                                                                          "  out = NetOutput(y:0)\n}\n"));
  ASSERT_FALSE(session.empty());
  v1::RunGraphRequest run;
  run.set_session_id(session);
  run.set_graph_id(1);
  *run.add_inputs() = FloatValue({}, {int64_t{1} << 20, int64_t{1} << 20});  // 4 TiB declared, no bytes
  v1::RunGraphResponse out;
  const grpc::Status s = h().alice().RunGraph(run, &out);
  Scan(s, out, "RunGraph");
  EXPECT_TRUE(Refused(s, StatusCode::RESOURCE_EXHAUSTED, {"max_tensor_bytes"}));
}

// A data-dependent output of 1e18 elements: its allocation is refused
// naming max_tensor_bytes (every single allocation of a run is bounded).
TEST_F(BoundsTest, ConstantOfShapeWithAHugeShape) {
  v1::ExecuteOpRequest r;
  r.set_op_type("ConstantOfShape");
  *r.add_inputs() = Int64Value({1000000, 1000000, 1000000}, {3});
  EXPECT_TRUE(Refused(Execute(r), StatusCode::RESOURCE_EXHAUSTED, {"max_tensor_bytes"}));
}

TEST_F(BoundsTest, MessageAboveMaxMessageBytes) {
  std::string session;
  ASSERT_TRUE(h().alice().CreateSession({}, &session).ok());
  v1::AddGraphRequest add;
  add.set_session_id(session);
  add.set_graph_id(1);
  add.set_onnx_model(std::string(kMaxMessageBytes + 1024, 'x'));
  v1::AddGraphResponse added;
  const grpc::Status s = h().alice().AddGraph(add, &added);
  Scan(s, added, "AddGraph");
  // gRPC refuses the message in its transport, before ged sees it, with
  // its own text (docs/security.md, Bounds).
  EXPECT_TRUE(Refused(s, StatusCode::RESOURCE_EXHAUSTED, {"max_message_bytes|larger than max"}));
}

TEST_F(BoundsTest, GraphAfterGraphInOneSession) {
  std::string session;
  ASSERT_TRUE(h().alice().CreateSession({}, &session).ok());
  const v1::GraphDef def = ParseGraphDef(
      "graph g {\n  x = Data() {index = 0} -> (f32[2])\n"
      "  y = Relu(x:0) -> (f32[2])\n  out = NetOutput(y:0)\n}\n");
  grpc::Status refused;
  int accepted = 0;
  for (uint32_t id = 1; id <= 2000; ++id) {
    v1::AddGraphRequest add;
    add.set_session_id(session);
    add.set_graph_id(id);
    *add.mutable_graph_def() = def;
    v1::AddGraphResponse added;
    const grpc::Status s = h().alice().AddGraph(add, &added);
    h().ScanStatus(s, "AddGraph");
    if (!s.ok()) {
      refused = s;
      break;
    }
    ++accepted;
  }
  EXPECT_TRUE(Refused(refused, StatusCode::RESOURCE_EXHAUSTED, {"max_graphs_per_session"}))
      << "after " << accepted << " graphs";
  if (h().contract_config()) {
    EXPECT_EQ(accepted, kMaxGraphsPerSession);
  }
}

TEST_F(BoundsTest, GraphWithMoreNodesThanMaxGraphNodes) {
  // An Identity chain of max_graph_nodes + 20000 nodes (a few MB).
  v1::GraphDef g;
  g.set_name("long_chain");
  v1::NodeDef* x = g.add_nodes();
  x->set_name("x");
  x->set_type("Data");
  (*x->mutable_attrs())["index"].set_i(0);
  v1::ValueTypeDef type;
  type.mutable_tensor()->set_dtype(v1::DT_FLOAT);
  type.mutable_tensor()->mutable_shape()->add_dims(1);
  *x->add_output_types() = type;
  std::string prev = "x";
  for (int64_t i = 0; i < kMaxGraphNodes + 20000; ++i) {
    v1::NodeDef* n = g.add_nodes();
    n->set_name("n" + std::to_string(i));
    n->set_type("Identity");
    n->add_inputs()->set_node(prev);
    *n->add_input_types() = type;
    *n->add_output_types() = type;
    prev = n->name();
  }
  v1::NodeDef* out = g.add_nodes();
  out->set_name("out");
  out->set_type("NetOutput");
  out->add_inputs()->set_node(prev);
  *out->add_input_types() = type;
  std::string session;
  ASSERT_TRUE(h().alice().CreateSession({}, &session).ok());
  v1::AddGraphRequest add;
  add.set_session_id(session);
  add.set_graph_id(1);
  *add.mutable_graph_def() = std::move(g);
  v1::AddGraphResponse added;
  const grpc::Status s = h().alice().AddGraph(add, &added);
  Scan(s, added, "AddGraph");
  EXPECT_TRUE(Refused(s, StatusCode::RESOURCE_EXHAUSTED, {"max_graph_nodes"}));
}

TEST_F(BoundsTest, InterOpParallelismInCreateSession) {
  std::string session;
  const grpc::Status s = h().alice().CreateSession({{"ge.exec.inter_op_parallelism", "100000"}}, &session);
  h().ScanStatus(s, "CreateSession");
  h().ScanForLeaks(session, "the session id");
  // Out of the option's range: refused when the options are validated,
  // before any budget is looked at (within the range, AddGraph charges
  // max_inter_op_threads: the next case).
  EXPECT_TRUE(Refused(s, StatusCode::INVALID_ARGUMENT, {"ge.exec.inter_op_parallelism"}));
}

TEST_F(BoundsTest, InterOpParallelismInAddGraphOptions) {
  std::string session;
  ASSERT_TRUE(h().alice().CreateSession({}, &session).ok());
  v1::AddGraphRequest add;
  add.set_session_id(session);
  add.set_graph_id(1);
  *add.mutable_graph_def() = ParseGraphDef(
      "graph g {\n  x = Data() {index = 0} -> (f32[2])\n"
      "  y = Relu(x:0) -> (f32[2])\n  out = NetOutput(y:0)\n}\n");
  (*add.mutable_options()->mutable_entries())["ge.exec.inter_op_parallelism"] = "100000";
  v1::AddGraphResponse added;
  const grpc::Status s = h().alice().AddGraph(add, &added);
  Scan(s, added, "AddGraph");
  EXPECT_TRUE(Refused(s, StatusCode::RESOURCE_EXHAUSTED, {"max_inter_op_threads"}));
}

// ONNX: Y = Loop(M, true, X) with body x + 1; M a graph input (int64 scalar).
onnx::ModelProto CountingLoop() {
  onnx::ModelProto model;
  model.set_ir_version(8);
  model.add_opset_import()->set_version(16);
  onnx::GraphProto* g = model.mutable_graph();
  g->set_name("counting_loop");
  auto value_info = [](onnx::ValueInfoProto* v, const std::string& name, int elem, std::vector<int64_t> dims) {
    v->set_name(name);
    auto* t = v->mutable_type()->mutable_tensor_type();
    t->set_elem_type(elem);
    auto* shape = t->mutable_shape();
    for (int64_t d : dims) shape->add_dim()->set_dim_value(d);
  };
  value_info(g->add_input(), "M", onnx::TensorProto::INT64, {});
  value_info(g->add_input(), "X", onnx::TensorProto::FLOAT, {1});
  value_info(g->add_output(), "Y", onnx::TensorProto::FLOAT, {1});
  onnx::TensorProto* cond = g->add_initializer();
  cond->set_name("cond");
  cond->set_data_type(onnx::TensorProto::BOOL);
  cond->add_int32_data(1);
  onnx::NodeProto* loop = g->add_node();
  loop->set_name("loop");
  loop->set_op_type("Loop");
  loop->add_input("M");
  loop->add_input("cond");
  loop->add_input("X");
  loop->add_output("Y");
  onnx::AttributeProto* body_attr = loop->add_attribute();
  body_attr->set_name("body");
  body_attr->set_type(onnx::AttributeProto::GRAPH);
  onnx::GraphProto* body = body_attr->mutable_g();
  body->set_name("body");
  value_info(body->add_input(), "i", onnx::TensorProto::INT64, {});
  value_info(body->add_input(), "c", onnx::TensorProto::BOOL, {});
  value_info(body->add_input(), "x", onnx::TensorProto::FLOAT, {1});
  value_info(body->add_output(), "c_out", onnx::TensorProto::BOOL, {});
  value_info(body->add_output(), "x_out", onnx::TensorProto::FLOAT, {1});
  onnx::NodeProto* one = body->add_node();
  one->set_op_type("Constant");
  one->add_output("one");
  onnx::AttributeProto* value = one->add_attribute();
  value->set_name("value");
  value->set_type(onnx::AttributeProto::TENSOR);
  value->mutable_t()->set_data_type(onnx::TensorProto::FLOAT);
  value->mutable_t()->add_dims(1);
  value->mutable_t()->add_float_data(1.0f);
  onnx::NodeProto* add = body->add_node();
  add->set_op_type("Add");
  add->add_input("x");
  add->add_input("one");
  add->add_output("x_out");
  onnx::NodeProto* keep = body->add_node();
  keep->set_op_type("Identity");
  keep->add_input("c");
  keep->add_output("c_out");
  return model;
}

TEST_F(BoundsTest, LoopWithAHugeTripCount) {
  std::string session;
  ASSERT_TRUE(h().alice().CreateSession({}, &session).ok());
  v1::AddGraphRequest add;
  add.set_session_id(session);
  add.set_graph_id(1);
  add.set_onnx_model(CountingLoop().SerializeAsString());
  v1::AddGraphResponse added;
  grpc::Status s = h().alice().AddGraph(add, &added);
  Scan(s, added, "AddGraph");
  ASSERT_TRUE(s.ok()) << s.error_message();
  v1::RunGraphRequest run;
  run.set_session_id(session);
  run.set_graph_id(1);
  *run.add_inputs() = Int64Value({int64_t{1} << 40}, {});
  *run.add_inputs() = FloatValue({0}, {1});
  v1::RunGraphResponse out;
  // A deadline, so that today's daemon (no bound) answers at all.
  s = h().alice().RunGraph(run, &out, /*timeout_seconds=*/20);
  Scan(s, out, "RunGraph");
  EXPECT_TRUE(Refused(s, StatusCode::RESOURCE_EXHAUSTED, {"max_loop_iterations"}));
}

TEST_F(BoundsTest, OneTenantFloodingTheRunQueue) {
  if (!NeedsContractConfig("tenants[].max_queued_calls")) return;
  // Four chained 512x512 products per run: tens of ms each.
  const std::string session = SessionWithGraph(h().alice(), ParseGraphDef("graph slow {\n"
                                                                          "  x = Data() {index = 0} -> (f32[512,512])\n"
                                                                          "  a = MatMul(x:0, x:0) -> (f32[512,512])\n"
                                                                          "  b = MatMul(a:0, x:0) -> (f32[512,512])\n"
                                                                          "  c = MatMul(b:0, x:0) -> (f32[512,512])\n"
                                                                          "  d = MatMul(c:0, x:0) -> (f32[512,512])\n"
                                                                          "  out = NetOutput(d:0)\n}\n"));
  ASSERT_FALSE(session.empty());
  v1::RunGraphRequest run;
  run.set_session_id(session);
  run.set_graph_id(1);
  *run.add_inputs() = FloatValue(std::vector<float>(512 * 512, 0.001f), {512, 512});
  constexpr int kCalls = 24;
  std::vector<v1::RunGraphResponse> responses(kCalls);
  std::mutex mu;
  std::condition_variable cv;
  std::vector<grpc::Status> statuses;
  for (int i = 0; i < kCalls; ++i) {
    h().alice().RunGraphAsync(run, &responses[i], [&](grpc::Status s) {
      std::lock_guard<std::mutex> lock(mu);
      statuses.push_back(std::move(s));
      cv.notify_all();
    });
  }
  // Bob's run during the flood is admitted and right (not RESOURCE_EXHAUSTED).
  std::string error;
  EXPECT_TRUE(h().VictimRunIsRight("during alice's flood", &error)) << "(d) " << error;
  std::unique_lock<std::mutex> lock(mu);
  ASSERT_TRUE(cv.wait_for(lock, std::chrono::seconds(120), [&] { return statuses.size() == kCalls; }));
  int refused = 0;
  for (const grpc::Status& s : statuses) {
    h().ScanStatus(s, "flooding RunGraph");
    if (s.ok()) continue;
    ++refused;
    EXPECT_TRUE(Refused(s, StatusCode::RESOURCE_EXHAUSTED, {"max_queued_calls"}));
  }
  EXPECT_GE(refused, kCalls - 2 * kAliceMaxQueuedCalls - 4) << "alice's flood was not bounded by max_queued_calls";
}

}  // namespace
}  // namespace ge::adversarial
