// Tenant isolation on a real daemon (issue 19 items 2 and 3): a request
// reaches no file of the daemon's host — a FileConstant by file_path, by
// location with a client-set _model_dir of "/", by file_id through a
// client-set ge.exec.value_bins, ONNX external data, ExecuteOp — each is
// INVALID_ARGUMENT and no byte of the canary file comes back; two tenants
// compiling under one ge.graph_key each run their own model, and a key of
// another tenant is NOT_FOUND with the words of a missing one.
#include <filesystem>
#include <fstream>

#include "base/ir/proto_convert.h"
#include "base/ir/text_format.h"
#include "base/sha256.h"
#include "client/cpp/client.h"
#include "gtest/gtest.h"
#include "onnx/onnx_pb.h"
#include "proto/value_convert.h"
#include "tests/integration/daemon_process.h"
#include "tests/integration/process.h"

namespace ge {
namespace {

using testing::DaemonProcess;

constexpr char kCanary[] = "CANARY-9f2c1e77!";  // 16 bytes: four floats' worth

class DaemonIsolationTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = ge::testing::MakeTempDir("ged-isolation");
    canary_ = dir_ + "/canary.bin";
    std::ofstream(canary_, std::ios::binary) << kCanary;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string WriteConfig(const std::string& yaml) {
    const std::string path = dir_ + "/ged.yaml";
    std::ofstream(path) << yaml;
    return path;
  }
  static client::Client MakeClient(const DaemonProcess& d, const std::string& token = "") {
    client::ClientOptions options;
    options.address = d.grpc_address();
    options.token = token;
    options.max_retries = 1;
    return client::Client(options);
  }
  static v1::GraphDef Def(const std::string& text) {
    auto g = ir::ParseGraph(text);
    EXPECT_TRUE(g.ok()) << g.status();
    v1::GraphDef def;
    if (g.ok()) {
      EXPECT_TRUE(ir::GraphToProto(**g, &def).ok());
    }
    return def;
  }
  static v1::GraphDef FileConstantGraph(const std::string& attrs) {
    return Def(R"(graph leak {
      f = FileConstant() {dtype = 1, shape = shape[4], )" +
               attrs + R"(} -> (f32[4])
      out = NetOutput(f:0)
    })");
  }
  // A refusal: INVALID_ARGUMENT naming every word, no canary byte.
  static void ExpectRefused(const grpc::Status& s, const std::vector<std::string>& words) {
    EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << s.error_message();
    for (const std::string& w : words) EXPECT_NE(s.error_message().find(w), std::string::npos) << s.error_message();
    EXPECT_EQ(s.error_message().find("CANARY"), std::string::npos) << s.error_message();
  }
  grpc::Status AddGraph(client::Client& c, const std::string& session, uint32_t id, const v1::GraphDef& def,
                        const std::map<std::string, std::string>& options = {}) {
    v1::AddGraphRequest add;
    add.set_session_id(session);
    add.set_graph_id(id);
    *add.mutable_graph_def() = def;
    for (const auto& [k, v] : options) (*add.mutable_options()->mutable_entries())[k] = v;
    v1::AddGraphResponse added;
    return c.AddGraph(add, &added);
  }

  std::string dir_;
  std::string canary_;
};

TEST_F(DaemonIsolationTest, FileConstantsAndPathOptionsAreRefusedAndNothingLeaks) {
  auto d = DaemonProcess::Start({"--config", WriteConfig("cache_dir: " + dir_ + "/cache\n")});
  ASSERT_NE(d, nullptr);
  client::Client c = MakeClient(*d);
  std::string session;
  ASSERT_TRUE(c.CreateSession({}, &session).ok());

  // By file_path.
  ExpectRefused(AddGraph(c, session, 1, FileConstantGraph("file_path = \"" + canary_ + "\"")),
                {"graph 1", "node 'f'", "FileConstant"});
  // By location with a client-set _model_dir of "/".
  ExpectRefused(
      AddGraph(c, session, 2, FileConstantGraph("location = \"" + canary_.substr(1) + "\", _model_dir = \"/\"")),
      {"node 'f'", "FileConstant"});
  // By file_id through ge.exec.value_bins, as a graph option and as a session option.
  const std::string bins = R"({"value_bins": [{"value_bin_id": "b", "value_bin_file": ")" + canary_ + "\"}]}";
  ExpectRefused(AddGraph(c, session, 3, FileConstantGraph("file_id = \"b\""), {{"ge.exec.value_bins", bins}}),
                {"ge.exec.value_bins"});
  std::string refused_session;
  ExpectRefused(c.CreateSession({{"ge.exec.value_bins", bins}}, &refused_session), {"ge.exec.value_bins"});
  // The path attributes on any other node, and the other path options.
  ExpectRefused(AddGraph(c, session, 4, Def(R"(graph g {
      x = Data() {index = 0} -> (f32[4])
      n = Relu(x:0) {_model_dir = "/"} -> (f32[4])
      out = NetOutput(n:0)
    })")),
                {"node 'n'", "'_model_dir'"});
  for (const char* option : {"ge.dump_path", "ge.graph_compiler_cache_dir"}) {
    ExpectRefused(c.CreateSession({{option, dir_}}, &refused_session), {option});
  }

  // ExecuteOp: the op as received, and its options.
  v1::ExecuteOpRequest op;
  op.set_op_type("FileConstant");
  (*op.mutable_attrs())["file_path"].set_s(canary_);
  (*op.mutable_attrs())["dtype"].set_i(1);
  v1::ExecuteOpResponse op_out;
  ExpectRefused(c.ExecuteOp(op, &op_out), {"FileConstant"});
  EXPECT_EQ(op_out.outputs_size(), 0);
  v1::ExecuteOpRequest relu;
  relu.set_op_type("Relu");
  ASSERT_TRUE(rpc::ValueToProto(Value(Tensor::FromVector<float>({1, -1}, Shape{2})), relu.add_inputs()).ok());
  (*relu.mutable_options()->mutable_entries())["ge.dump_path"] = dir_;
  ExpectRefused(c.ExecuteOp(relu, &op_out), {"ge.dump_path"});

  // ONNX bytes whose initializer is external data next to the canary.
  onnx::ModelProto model;
  model.set_ir_version(8);
  model.add_opset_import()->set_version(17);
  onnx::GraphProto* g = model.mutable_graph();
  g->set_name("leak");
  onnx::ValueInfoProto* y = g->add_output();
  y->set_name("W");
  y->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  onnx::TensorProto* w = g->add_initializer();
  w->set_name("W");
  w->set_data_type(onnx::TensorProto::FLOAT);
  w->add_dims(4);
  w->set_data_location(onnx::TensorProto::EXTERNAL);
  auto* entry = w->add_external_data();
  entry->set_key("location");
  entry->set_value(std::filesystem::relative(canary_, std::filesystem::current_path()).string());
  v1::AddGraphRequest add;
  add.set_session_id(session);
  add.set_graph_id(5);
  add.set_onnx_model(model.SerializeAsString());
  v1::AddGraphResponse added;
  ExpectRefused(c.AddGraph(add, &added), {"tensor 'W'", "external data"});

  // The daemon is up, and a plain graph still runs.
  ASSERT_TRUE(AddGraph(c, session, 6, Def(R"(graph ok {
      x = Data() {index = 0} -> (f32[2])
      n = Relu(x:0) -> (f32[2])
      out = NetOutput(n:0)
    })"))
                  .ok());
  v1::RunGraphRequest run;
  run.set_session_id(session);
  run.set_graph_id(6);
  ASSERT_TRUE(rpc::ValueToProto(Value(Tensor::FromVector<float>({1, -1}, Shape{2})), run.add_inputs()).ok());
  v1::RunGraphResponse ran;
  ASSERT_TRUE(c.RunGraph(run, &ran).ok());
  EXPECT_EQ(ran.outputs(0).tensor().raw_data().find("CANARY"), std::string::npos);
}

TEST_F(DaemonIsolationTest, TwoTenantsWithOneGraphKeyEachRunTheirOwnModel) {
  auto token_hash = [](const std::string& token) { return ToHex(Sha256(token)); };
  auto d = DaemonProcess::Start({"--config", WriteConfig("cache_dir: " + dir_ +
                                                         "/cache\n"
                                                         "tenants:\n"
                                                         "  - {name: alice, token_sha256: " +
                                                         token_hash("alice-token") +
                                                         "}\n"
                                                         "  - {name: bob, token_sha256: " +
                                                         token_hash("bob-token") + "}\n")});
  ASSERT_NE(d, nullptr);
  client::Client alice = MakeClient(*d, "alice-token");
  client::Client bob = MakeClient(*d, "bob-token");
  const std::map<std::string, std::string> key = {{"ge.graph_key", "the-model"}};
  auto compile_and_run = [&](client::Client& c, const std::string& op, bool expect_hit) {
    std::string session;
    EXPECT_TRUE(c.CreateSession({}, &session).ok());
    EXPECT_TRUE(AddGraph(c, session, 1, Def(R"(graph m {
        x = Data() {index = 0} -> (f32[2])
        n = )" + op + R"((x:0) -> (f32[2])
        out = NetOutput(n:0)
      })"),
                         key)
                    .ok());
    v1::CompileGraphResponse compiled;
    grpc::Status s = c.CompileGraph(session, 1, &compiled);
    EXPECT_TRUE(s.ok()) << s.error_message();
    EXPECT_EQ(compiled.cache_hit(), expect_hit) << op;
    v1::RunGraphRequest run;
    run.set_session_id(session);
    run.set_graph_id(1);
    EXPECT_TRUE(rpc::ValueToProto(Value(Tensor::FromVector<float>({1, -2}, Shape{2})), run.add_inputs()).ok());
    v1::RunGraphResponse ran;
    EXPECT_TRUE(c.RunGraph(run, &ran).ok());
    auto out = rpc::ValueFromProto(ran.outputs(0), "output");
    EXPECT_TRUE(out.ok());
    const float* v = out->tensor().data<float>();
    return std::make_pair(compiled.cache_key(), std::vector<float>(v, v + 2));
  };
  auto [alice_key, alice_out] = compile_and_run(alice, "Relu", false);
  EXPECT_EQ(alice_out, (std::vector<float>{1, 0}));
  // Bob names another graph alike: no hit, his own model.
  auto [bob_key, bob_out] = compile_and_run(bob, "Neg", false);
  EXPECT_EQ(bob_out, (std::vector<float>{-1, 2}));
  EXPECT_NE(bob_key, alice_key);
  // Each hits his own afterwards.
  EXPECT_EQ(compile_and_run(alice, "Neg", true).second, (std::vector<float>{1, 0}));
  EXPECT_EQ(compile_and_run(bob, "Relu", true).second, (std::vector<float>{-1, 2}));

  // LoadModel by alice's key from bob: the words of a key nobody stored.
  std::string session;
  ASSERT_TRUE(bob.CreateSession({}, &session).ok());
  auto load = [&](const std::string& cache_key) {
    v1::LoadModelRequest request;
    request.set_session_id(session);
    request.set_cache_key(cache_key);
    v1::LoadModelResponse response;
    return bob.LoadModel(request, &response);
  };
  const std::string absent(64, 'e');
  grpc::Status other = load(alice_key), missing = load(absent);
  ASSERT_EQ(other.error_code(), grpc::StatusCode::NOT_FOUND) << other.error_message();
  ASSERT_EQ(missing.error_code(), grpc::StatusCode::NOT_FOUND) << missing.error_message();
  std::string other_text = other.error_message(), missing_text = missing.error_message();
  other_text.replace(other_text.find(alice_key), alice_key.size(), "KEY");
  missing_text.replace(missing_text.find(absent), absent.size(), "KEY");
  EXPECT_EQ(other_text, missing_text);
  EXPECT_TRUE(load(bob_key).ok());
}

}  // namespace
}  // namespace ge
