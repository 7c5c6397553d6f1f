// Input validation against a real daemon (the Reliability issue's table):
// every way a request can be wrong gets the right code and a message naming
// the problem, and the daemon keeps serving. One daemon serves the whole
// table; after it, a valid run still succeeds and the process is alive.
// GED_VERBOSE=1 prints each case's code and message. External data that is
// missing from the model's directory is gectl's case (gectl_errors_test):
// over RPC a model has no directory.
#include <signal.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>

#include "base/ir/proto_convert.h"
#include "base/ir/text_format.h"
#include "client/cpp/client.h"
#include "proto/value_convert.h"
#include "gtest/gtest.h"
#include "onnx/onnx_pb.h"
#include "tests/integration/daemon_process.h"
#include "tests/integration/process.h"
#include "tests/testing/onnx_builder.h"

namespace ge {
namespace {

using testing::DaemonProcess;

constexpr int64_t kMaxMessageBytes = 1 << 20;

// x: f32[2,3] -> Relu -> y
v1::GraphDef ReluGraph() {
  auto g = ir::ParseGraph(R"(graph relu {
    x = Data() {index = 0} -> (f32[2,3])
    y = Relu(x:0) -> (f32[2,3])
    out = NetOutput(y:0)
  })");
  EXPECT_TRUE(g.ok()) << g.status();
  v1::GraphDef def;
  EXPECT_TRUE(ir::GraphToProto(**g, &def).ok());
  return def;
}

v1::NodeDef* FindNode(v1::GraphDef& def, const std::string& name) {
  for (v1::NodeDef& n : *def.mutable_nodes()) {
    if (n.name() == name) return &n;
  }
  ADD_FAILURE() << "no node " << name;
  return def.mutable_nodes(0);
}

// X f32[2,3] -> Relu -> Y at opset 17.
onnx::ModelProto ReluModel() { return onnx_builder::UnaryModel("Relu", "relu", {2, 3}); }

// ReluModel with Relu turned into Add(X, W) and W an initializer f32[3].
onnx::ModelProto AddWeightModel(onnx::TensorProto** weight) {
  onnx::ModelProto model = ReluModel();
  onnx::GraphProto* g = model.mutable_graph();
  g->mutable_node(0)->set_op_type("Add");
  g->mutable_node(0)->add_input("W");
  onnx::TensorProto* w = g->add_initializer();
  w->set_name("W");
  w->set_data_type(onnx::TensorProto::FLOAT);
  w->add_dims(3);
  *weight = w;
  return model;
}

v1::Tensor FloatTensor(std::vector<int64_t> dims, size_t bytes) {
  v1::Tensor t;
  t.set_dtype(v1::DT_FLOAT);
  for (int64_t d : dims) t.add_dims(d);
  t.set_raw_data(std::string(bytes, '\0'));
  return t;
}

struct Case {
  std::string name;
  std::function<grpc::Status()> call;
  grpc::StatusCode code;
  std::string needle;  // in the message
};

class DaemonValidationTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new std::string(testing::MakeTempDir("ged-validation"));
    const std::string config = *dir_ + "/ged.yaml";
    std::ofstream(config) << "max_message_bytes: " << kMaxMessageBytes << "\n";
    daemon_ = DaemonProcess::Start({"--config", config}).release();
  }
  static void TearDownTestSuite() {
    delete daemon_;
    std::filesystem::remove_all(*dir_);
    delete dir_;
  }

  void SetUp() override {
    ASSERT_NE(daemon_, nullptr);
    client::ClientOptions options;
    options.address = daemon_->grpc_address();
    options.max_retries = 0;
    client_ = std::make_unique<client::Client>(options);
    ASSERT_TRUE(client_->CreateSession({}, &session_).ok());
    v1::AddGraphRequest add;
    add.set_session_id(session_);
    add.set_graph_id(1);
    *add.mutable_graph_def() = ReluGraph();
    v1::AddGraphResponse added;
    ASSERT_TRUE(client_->AddGraph(add, &added).ok());
  }

  grpc::Status Run(std::vector<v1::Tensor> inputs) {
    v1::RunGraphRequest r;
    r.set_session_id(session_);
    r.set_graph_id(1);
    for (v1::Tensor& t : inputs) *r.add_inputs()->mutable_tensor() = std::move(t);
    v1::RunGraphResponse out;
    return client_->RunGraph(r, &out);
  }
  grpc::Status AddGraphDef(const v1::GraphDef& def, uint32_t id = 7) {
    v1::AddGraphRequest add;
    add.set_session_id(session_);
    add.set_graph_id(id);
    *add.mutable_graph_def() = def;
    v1::AddGraphResponse added;
    return client_->AddGraph(add, &added);
  }
  grpc::Status AddOnnx(const onnx::ModelProto& model, uint32_t id = 8) {
    v1::AddGraphRequest add;
    add.set_session_id(session_);
    add.set_graph_id(id);
    add.set_onnx_model(model.SerializeAsString());
    v1::AddGraphResponse added;
    return client_->AddGraph(add, &added);
  }
  grpc::Status CreateSession(const std::map<std::string, std::string>& options) {
    std::string id;
    return client_->CreateSession(options, &id);
  }

  std::vector<Case> Cases();

  static std::string* dir_;
  static DaemonProcess* daemon_;
  std::unique_ptr<client::Client> client_;
  std::string session_;
};

std::string* DaemonValidationTest::dir_ = nullptr;
DaemonProcess* DaemonValidationTest::daemon_ = nullptr;

using grpc::StatusCode;

std::vector<Case> DaemonValidationTest::Cases() {
  std::vector<Case> cases;
  const auto add = [&](std::string name, std::function<grpc::Status()> call, StatusCode code, std::string needle) {
    cases.push_back({std::move(name), std::move(call), code, std::move(needle)});
  };
  const size_t kBytes = 2 * 3 * sizeof(float);

  // Run inputs.
  add("missing input", [&] { return Run({}); }, StatusCode::INVALID_ARGUMENT, "expected 1 inputs (x), got 0");
  add("extra input", [&] { return Run({FloatTensor({2, 3}, kBytes), FloatTensor({2, 3}, kBytes)}); },
      StatusCode::INVALID_ARGUMENT, "expected 1 inputs (x), got 2");
  add("wrong dtype", [&] {
        v1::Tensor t = FloatTensor({2, 3}, kBytes);
        t.set_dtype(v1::DT_INT32);
        return Run({t});
      },
      StatusCode::INVALID_ARGUMENT, "expected f32[2,3], got i32[2,3]");
  add("wrong rank", [&] { return Run({FloatTensor({6}, kBytes)}); }, StatusCode::INVALID_ARGUMENT,
      "expected f32[2,3], got f32[6]");
  add("wrong dim", [&] { return Run({FloatTensor({2, 4}, 2 * 4 * sizeof(float))}); }, StatusCode::INVALID_ARGUMENT,
      "expected f32[2,3], got f32[2,4]");
  add("byte size not matching the shape", [&] { return Run({FloatTensor({2, 3}, 5)}); },
      StatusCode::INVALID_ARGUMENT, "needs 24 bytes, got 5");
  add("element count overflows", [&] { return Run({FloatTensor({int64_t{1} << 40, int64_t{1} << 40}, 4)}); },
      StatusCode::INVALID_ARGUMENT, "overflow");
  add("negative dim", [&] { return Run({FloatTensor({-2, 3}, kBytes)}); }, StatusCode::INVALID_ARGUMENT,
      "negative");
  add("absurd dim", [&] { return Run({FloatTensor({std::numeric_limits<int64_t>::max(), 1}, 4)}); },
      StatusCode::INVALID_ARGUMENT, "input 0 (x)");
  add("unknown dtype", [&] {
        v1::Tensor t = FloatTensor({2, 3}, kBytes);
        t.set_dtype(static_cast<v1::DataType>(977));
        return Run({t});
      },
      StatusCode::INVALID_ARGUMENT, "977");
  add("unknown graph", [&] {
        v1::RunGraphRequest r;
        r.set_session_id(session_);
        r.set_graph_id(99);
        v1::RunGraphResponse out;
        return client_->RunGraph(r, &out);
      },
      StatusCode::NOT_FOUND, "graph 99 does not exist");
  add("unknown session", [&] {
        v1::RunGraphRequest r;
        r.set_session_id("feedfacefeedfacefeedfacefeedface");
        v1::RunGraphResponse out;
        return client_->RunGraph(r, &out);
      },
      StatusCode::NOT_FOUND, "feedfacefeedfacefeedfacefeedface");
  add("oversized message", [&] {
        const int64_t n = kMaxMessageBytes / 4 + 1024;
        return Run({FloatTensor({n}, static_cast<size_t>(n) * 4)});
      },
      StatusCode::RESOURCE_EXHAUSTED, "");

  // GraphDef models.
  add("graphdef with a cycle", [&] {
        v1::GraphDef def = ReluGraph();
        v1::NodeDef* relu = FindNode(def, "y");
        relu->mutable_inputs(0)->set_node("y");
        return AddGraphDef(def);
      },
      StatusCode::INVALID_ARGUMENT, "cycle");
  add("graphdef with a dangling edge", [&] {
        v1::GraphDef def = ReluGraph();
        FindNode(def, "y")->mutable_inputs(0)->set_node("ghost");
        return AddGraphDef(def);
      },
      StatusCode::INVALID_ARGUMENT, "ghost");
  add("graphdef with a port past the producer's outputs", [&] {
        v1::GraphDef def = ReluGraph();
        FindNode(def, "y")->mutable_inputs(0)->set_port(5);
        return AddGraphDef(def);
      },
      StatusCode::INVALID_ARGUMENT, "5");
  add("graphdef with duplicate node names", [&] {
        v1::GraphDef def = ReluGraph();
        *def.add_nodes() = *FindNode(def, "y");
        return AddGraphDef(def);
      },
      StatusCode::INVALID_ARGUMENT, "y");
  add("graphdef with an unknown op", [&] {
        v1::GraphDef def = ReluGraph();
        FindNode(def, "y")->set_type("Frobnicate");
        return AddGraphDef(def);
      },
      StatusCode::INVALID_ARGUMENT, "Frobnicate");
  add("graphdef whose subgraph reference does not resolve", [&] {
        v1::GraphDef def = ReluGraph();
        v1::NodeDef* relu = FindNode(def, "y");
        relu->add_subgraphs("no_such_graph");
        return AddGraphDef(def);
      },
      StatusCode::INVALID_ARGUMENT, "no_such_graph");

  // ONNX models.
  add("onnx bytes that are not a model", [&] {
        v1::AddGraphRequest r;
        r.set_session_id(session_);
        r.set_graph_id(8);
        r.set_onnx_model("\x08\x01garbage");
        v1::AddGraphResponse out;
        return client_->AddGraph(r, &out);
      },
      StatusCode::INVALID_ARGUMENT, "graph 8");
  add("onnx with a cycle", [&] {
        onnx::ModelProto m = ReluModel();
        m.mutable_graph()->mutable_node(0)->set_input(0, "Z");
        onnx::NodeProto* neg = m.mutable_graph()->add_node();
        neg->set_op_type("Neg");
        neg->add_input("Y");
        neg->add_output("Z");
        return AddOnnx(m);
      },
      StatusCode::INVALID_ARGUMENT, "cycle");
  add("onnx with a dangling edge", [&] {
        onnx::ModelProto m = ReluModel();
        m.mutable_graph()->mutable_node(0)->set_input(0, "ghost");
        return AddOnnx(m);
      },
      StatusCode::INVALID_ARGUMENT, "ghost");
  add("onnx with duplicate producers", [&] {
        onnx::ModelProto m = ReluModel();
        *m.mutable_graph()->add_node() = m.graph().node(0);
        m.mutable_graph()->mutable_node(1)->set_name("relu2");
        return AddOnnx(m);
      },
      StatusCode::INVALID_ARGUMENT, "Y");
  add("onnx with an unknown op", [&] {
        onnx::ModelProto m = ReluModel();
        m.mutable_graph()->mutable_node(0)->set_op_type("FrobnicateTensor");
        return AddOnnx(m);
      },
      StatusCode::INVALID_ARGUMENT, "FrobnicateTensor");
  add("onnx with an unknown domain", [&] {
        onnx::ModelProto m = ReluModel();
        m.mutable_graph()->mutable_node(0)->set_domain("com.nowhere");
        auto* opset = m.add_opset_import();
        opset->set_domain("com.nowhere");
        opset->set_version(1);
        return AddOnnx(m);
      },
      StatusCode::INVALID_ARGUMENT, "com.nowhere");
  add("onnx with an opset beyond the supported ones", [&] {
        onnx::ModelProto m = ReluModel();
        m.mutable_opset_import(0)->set_version(99);
        return AddOnnx(m);
      },
      StatusCode::INVALID_ARGUMENT, "99");
  add("onnx If without its branches", [&] {
        onnx::ModelProto m = ReluModel();
        onnx::NodeProto* n = m.mutable_graph()->mutable_node(0);
        n->set_op_type("If");
        return AddOnnx(m);
      },
      StatusCode::INVALID_ARGUMENT, "branch");
  add("onnx initializer whose data does not match its shape", [&] {
        onnx::TensorProto* w = nullptr;
        onnx::ModelProto m = AddWeightModel(&w);
        w->set_raw_data(std::string(5, '\0'));
        return AddOnnx(m);
      },
      StatusCode::INVALID_ARGUMENT, "W");
  add("onnx external data outside the model directory", [&] {
        onnx::TensorProto* w = nullptr;
        onnx::ModelProto m = AddWeightModel(&w);
        w->set_data_location(onnx::TensorProto::EXTERNAL);
        auto* entry = w->add_external_data();
        entry->set_key("location");
        entry->set_value("../../etc/passwd");
        return AddOnnx(m);
      },
      StatusCode::INVALID_ARGUMENT, "external data");
  add("onnx external data with no model directory over RPC", [&] {
        onnx::TensorProto* w = nullptr;
        onnx::ModelProto m = AddWeightModel(&w);
        w->set_data_location(onnx::TensorProto::EXTERNAL);
        auto* entry = w->add_external_data();
        entry->set_key("location");
        entry->set_value("weights.bin");
        return AddOnnx(m);
      },
      StatusCode::INVALID_ARGUMENT, "external data");

  // Names that could reach the file system.
  add("cache key with path traversal", [&] {
        v1::LoadModelRequest r;
        r.set_session_id(session_);
        r.set_cache_key("../../../../etc/passwd");
        v1::LoadModelResponse out;
        return client_->LoadModel(r, &out);
      },
      StatusCode::INVALID_ARGUMENT, "not 64 lowercase hex digits");
  add("cache key naming a link or directory", [&] {
        v1::LoadModelRequest r;
        r.set_session_id(session_);
        r.set_cache_key(std::string(62, 'a') + "/.");
        v1::LoadModelResponse out;
        return client_->LoadModel(r, &out);
      },
      StatusCode::INVALID_ARGUMENT, "not 64 lowercase hex digits");
  add("model bytes that are not a .gem", [&] {
        v1::LoadModelRequest r;
        r.set_session_id(session_);
        r.set_gem(std::string("\x0a\x05hello", 7));
        v1::LoadModelResponse out;
        return client_->LoadModel(r, &out);
      },
      StatusCode::INVALID_ARGUMENT, ".gem");

  // Options.
  add("unknown session option", [&] { return CreateSession({{"ge.no_such_key", "1"}}); },
      StatusCode::INVALID_ARGUMENT, "ge.no_such_key");
  add("bad session option value", [&] { return CreateSession({{"ge.exec.disable_host_cpu_fallback", "maybe"}}); },
      StatusCode::INVALID_ARGUMENT, "ge.exec.disable_host_cpu_fallback");
  add("unknown graph option", [&] {
        v1::AddGraphRequest r;
        r.set_session_id(session_);
        r.set_graph_id(9);
        *r.mutable_graph_def() = ReluGraph();
        (*r.mutable_options()->mutable_entries())["ge.no_such_key"] = "1";
        v1::AddGraphResponse out;
        return client_->AddGraph(r, &out);
      },
      StatusCode::INVALID_ARGUMENT, "ge.no_such_key");
  return cases;
}

TEST_F(DaemonValidationTest, EveryBadRequestGetsAPreciseErrorAndTheDaemonKeepsServing) {
  for (const Case& c : Cases()) {
    SCOPED_TRACE(c.name);
    const grpc::Status s = c.call();
    if (getenv("GED_VERBOSE") != nullptr) printf("%-55s %d %s\n", c.name.c_str(), s.error_code(), s.error_message().c_str());
    EXPECT_EQ(s.error_code(), c.code) << c.name << ": " << s.error_message();
    EXPECT_NE(s.error_message().find(c.needle), std::string::npos)
        << c.name << ": the message lacks '" << c.needle << "': " << s.error_message();
  }
  // Still serving: a valid run works and the process is alive.
  v1::Tensor x = FloatTensor({2, 3}, 24);
  EXPECT_TRUE(Run({x}).ok());
  EXPECT_EQ(kill(daemon_->pid(), 0), 0);
}

}  // namespace
}  // namespace ge
