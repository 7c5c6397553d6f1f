// Attack class "file-system reach" (docs/security.md): a client names a file
// — FileConstant by file_path, by location under a client-set _model_dir,
// by file_id through a client-set ge.exec.value_bins, ONNX external-data
// initializers, path-naming options (ge.dump_path,
// ge.graph_compiler_cache_dir, ge.exec.value_bins) in CreateSession,
// AddGraph and ExecuteOp — and must get INVALID_ARGUMENT naming the node and
// attribute or the option, with no byte of the canary file or of the
// daemon's configuration in any reply, and no file written where it said.
// A request the daemon accepts is followed through (compile, run) so that a
// leak shows as one.
#include <filesystem>

#include "onnx/onnx_pb.h"
#include "tests/adversarial/adversarial_harness.h"

namespace ge::adversarial {
namespace {

using grpc::StatusCode;

v1::AttrValueDef StringAttr(const std::string& s) {
  v1::AttrValueDef a;
  a.set_s(s);
  return a;
}

// A FileConstant's own attributes: u8[bytes].
void SetFileConstantShape(google::protobuf::Map<std::string, v1::AttrValueDef>* attrs, int64_t bytes) {
  (*attrs)["shape"].mutable_shape()->add_dims(bytes);
  (*attrs)["dtype"].set_i(v1::DT_UINT8);
}

v1::ExecuteOpRequest FileConstantOp(const std::map<std::string, std::string>& path_attrs, int64_t bytes) {
  v1::ExecuteOpRequest r;
  r.set_op_type("FileConstant");
  SetFileConstantShape(r.mutable_attrs(), bytes);
  for (const auto& [k, v] : path_attrs) (*r.mutable_attrs())[k] = StringAttr(v);
  return r;
}

// fc = FileConstant(attrs) -> u8[bytes]; out = NetOutput(fc).
v1::GraphDef FileConstantGraph(const std::map<std::string, std::string>& path_attrs, int64_t bytes) {
  v1::GraphDef g;
  g.set_name("reach");
  v1::NodeDef* fc = g.add_nodes();
  fc->set_name("fc");
  fc->set_type("FileConstant");
  v1::TensorDescDef* t = fc->add_output_types()->mutable_tensor();
  t->set_dtype(v1::DT_UINT8);
  t->mutable_shape()->add_dims(bytes);
  SetFileConstantShape(fc->mutable_attrs(), bytes);
  for (const auto& [k, v] : path_attrs) (*fc->mutable_attrs())[k] = StringAttr(v);
  v1::NodeDef* out = g.add_nodes();
  out->set_name("out");
  out->set_type("NetOutput");
  out->add_inputs()->set_node("fc");
  *out->add_input_types() = fc->output_types(0);
  return g;
}

// X f32[3] + W (an initializer f32[3]) -> Y.
onnx::ModelProto AddWeightModel(onnx::TensorProto** weight) {
  onnx::ModelProto model;
  model.set_ir_version(8);
  model.add_opset_import()->set_version(17);
  onnx::GraphProto* g = model.mutable_graph();
  g->set_name("external");
  for (auto [io, name] : {std::pair{g->add_input(), "X"}, std::pair{g->add_output(), "Y"}}) {
    io->set_name(name);
    auto* t = io->mutable_type()->mutable_tensor_type();
    t->set_elem_type(onnx::TensorProto::FLOAT);
    t->mutable_shape()->add_dim()->set_dim_value(3);
  }
  onnx::NodeProto* add = g->add_node();
  add->set_name("add");
  add->set_op_type("Add");
  add->add_input("X");
  add->add_input("W");
  add->add_output("Y");
  onnx::TensorProto* w = g->add_initializer();
  w->set_name("W");
  w->set_data_type(onnx::TensorProto::FLOAT);
  w->add_dims(3);
  *weight = w;
  return model;
}

class FsReachTest : public AdversarialTest {
 protected:
  int64_t canary_bytes() { return static_cast<int64_t>(ReadFile(h().canary_path()).size()); }

  // ExecuteOp as alice; the reply and error are scanned.
  grpc::Status Execute(const v1::ExecuteOpRequest& r) {
    v1::ExecuteOpResponse out;
    grpc::Status s = h().alice().ExecuteOp(r, &out);
    Scan(s, out, "ExecuteOp " + r.op_type());
    return s;
  }

  // AddGraph as alice into a new session of hers; when the daemon accepts
  // it, compile with return_model and run it too, scanning every reply.
  grpc::Status AddAndFollow(v1::AddGraphRequest add, const std::map<std::string, std::string>& session_options = {}) {
    std::string session;
    grpc::Status s = h().alice().CreateSession(session_options, &session);
    h().ScanStatus(s, "CreateSession");
    if (!s.ok()) return s;
    add.set_session_id(session);
    add.set_graph_id(1);
    v1::AddGraphResponse added;
    s = h().alice().AddGraph(add, &added);
    Scan(s, added, "AddGraph");
    if (!s.ok()) return s;
    v1::CompileGraphRequest compile;
    compile.set_session_id(session);
    compile.set_graph_id(1);
    compile.set_return_model(true);
    v1::CompileGraphResponse compiled;
    grpc::Status c = h().alice().CompileGraph(compile, &compiled);
    Scan(c, compiled, "CompileGraph");
    v1::RunGraphRequest run;
    run.set_session_id(session);
    run.set_graph_id(1);
    for (int i = 0; i < added.inputs_size(); ++i) *run.add_inputs() = FloatValue({1, 2, 3}, {3});
    v1::RunGraphResponse ran;
    grpc::Status r = h().alice().RunGraph(run, &ran);
    Scan(r, ran, "RunGraph");
    return s;
  }

  grpc::Status AddGraphDef(const v1::GraphDef& def, const std::map<std::string, std::string>& options = {}) {
    v1::AddGraphRequest add;
    *add.mutable_graph_def() = def;
    for (const auto& [k, v] : options) (*add.mutable_options()->mutable_entries())[k] = v;
    return AddAndFollow(add);
  }

  grpc::Status AddOnnx(const onnx::ModelProto& model) {
    v1::AddGraphRequest add;
    add.set_onnx_model(model.SerializeAsString());
    return AddAndFollow(add);
  }

  std::string ValueBinsJson(const std::string& path) {
    return "{\"value_bins\": [{\"value_bin_id\": \"w\", \"value_bin_file\": \"" + path + "\"}]}";
  }
};

TEST_F(FsReachTest, ExecuteOpFileConstantByFilePath) {
  const grpc::Status s = Execute(FileConstantOp({{"file_path", h().canary_path()}}, canary_bytes()));
  EXPECT_TRUE(Refused(s, StatusCode::INVALID_ARGUMENT, {"FileConstant|file_path"}));
}

TEST_F(FsReachTest, ExecuteOpFileConstantByLocationUnderClientModelDirRoot) {
  const std::string relative = h().canary_path().substr(1);  // below "/"
  const grpc::Status s = Execute(FileConstantOp({{"location", relative}, {"_model_dir", "/"}}, canary_bytes()));
  EXPECT_TRUE(Refused(s, StatusCode::INVALID_ARGUMENT, {"FileConstant|_model_dir|location"}));
}

TEST_F(FsReachTest, ExecuteOpFileConstantByFileIdThroughValueBinsOption) {
  v1::ExecuteOpRequest r = FileConstantOp({{"file_id", "w"}}, canary_bytes());
  (*r.mutable_options()->mutable_entries())["ge.exec.value_bins"] = ValueBinsJson(h().canary_path());
  const grpc::Status s = Execute(r);
  EXPECT_TRUE(Refused(s, StatusCode::INVALID_ARGUMENT, {"FileConstant|ge.exec.value_bins|file_id"}));
}

TEST_F(FsReachTest, AddGraphFileConstantReadsTheDaemonConfiguration) {
  const int64_t bytes = static_cast<int64_t>(ReadFile(h().config_path()).size());
  const grpc::Status s = AddGraphDef(FileConstantGraph({{"file_path", h().config_path()}}, bytes));
  EXPECT_TRUE(Refused(s, StatusCode::INVALID_ARGUMENT, {"fc", "FileConstant|file_path"}));
}

TEST_F(FsReachTest, AddGraphFileConstantByLocationUnderClientModelDir) {
  const std::string dir = std::filesystem::path(h().canary_path()).parent_path().string();
  const grpc::Status s =
      AddGraphDef(FileConstantGraph({{"location", "canary.txt"}, {"_model_dir", dir}}, canary_bytes()));
  EXPECT_TRUE(Refused(s, StatusCode::INVALID_ARGUMENT, {"fc", "FileConstant|_model_dir|location"}));
}

TEST_F(FsReachTest, AddGraphFileConstantByFileIdWithValueBinsGraphOption) {
  const grpc::Status s = AddGraphDef(FileConstantGraph({{"file_id", "w"}}, canary_bytes()),
                                     {{"ge.exec.value_bins", ValueBinsJson(h().canary_path())}});
  EXPECT_TRUE(Refused(s, StatusCode::INVALID_ARGUMENT, {"ge.exec.value_bins|file_id"}));
}

TEST_F(FsReachTest, CreateSessionWithValueBinsOption) {
  std::string session;
  const grpc::Status s =
      h().alice().CreateSession({{"ge.exec.value_bins", ValueBinsJson(h().canary_path())}}, &session);
  h().ScanStatus(s, "CreateSession");
  h().ScanForLeaks(session, "the session id");
  EXPECT_TRUE(Refused(s, StatusCode::INVALID_ARGUMENT, {"ge.exec.value_bins"}));
}

TEST_F(FsReachTest, OnnxExternalDataAtAnAbsolutePath) {
  onnx::TensorProto* w = nullptr;
  onnx::ModelProto m = AddWeightModel(&w);
  w->set_data_location(onnx::TensorProto::EXTERNAL);
  auto* entry = w->add_external_data();
  entry->set_key("location");
  entry->set_value(h().canary_path());
  auto* length = w->add_external_data();
  length->set_key("length");
  length->set_value("12");
  const grpc::Status s = AddOnnx(m);
  EXPECT_TRUE(Refused(s, StatusCode::INVALID_ARGUMENT, {"W", "external"}));
}

TEST_F(FsReachTest, OnnxExternalDataClimbingOutOfTheModelDirectory) {
  onnx::TensorProto* w = nullptr;
  onnx::ModelProto m = AddWeightModel(&w);
  w->set_data_location(onnx::TensorProto::EXTERNAL);
  auto* entry = w->add_external_data();
  entry->set_key("location");
  entry->set_value("../../../../../../../../.." + h().canary_path());
  const grpc::Status s = AddOnnx(m);
  EXPECT_TRUE(Refused(s, StatusCode::INVALID_ARGUMENT, {"W", "external"}));
}

TEST_F(FsReachTest, OnnxFileConstantNodeWithFilePath) {
  // An ONNX node of GE's FileConstant type: the importer would keep its
  // attributes as they are.
  onnx::ModelProto model;
  model.set_ir_version(8);
  model.add_opset_import()->set_version(17);
  onnx::GraphProto* g = model.mutable_graph();
  g->set_name("fc");
  onnx::NodeProto* fc = g->add_node();
  fc->set_name("fc");
  fc->set_op_type("FileConstant");
  fc->add_output("Y");
  auto* path = fc->add_attribute();
  path->set_name("file_path");
  path->set_type(onnx::AttributeProto::STRING);
  path->set_s(h().canary_path());
  auto* dtype = fc->add_attribute();
  dtype->set_name("dtype");
  dtype->set_type(onnx::AttributeProto::INT);
  dtype->set_i(2);
  auto* shape = fc->add_attribute();
  shape->set_name("shape");
  shape->set_type(onnx::AttributeProto::INTS);
  shape->add_ints(canary_bytes());
  auto* out = g->add_output();
  out->set_name("Y");
  out->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::UINT8);
  const grpc::Status s = AddOnnx(model);
  EXPECT_TRUE(Refused(s, StatusCode::INVALID_ARGUMENT, {"fc", "file_path|FileConstant"}));
}

TEST_F(FsReachTest, DumpPathInCreateSession) {
  const std::string target = h().dir() + "/alice-dump-session";
  std::string session;
  const grpc::Status s = h().alice().CreateSession({{"ge.dump_path", target}, {"ge.dump_graph", "1"}}, &session);
  h().ScanStatus(s, "CreateSession");
  h().ScanForLeaks(session, "the session id");
  EXPECT_TRUE(Refused(s, StatusCode::INVALID_ARGUMENT, {"ge.dump_path|ge.dump_graph"}));
  if (s.ok()) {
    // Accepted: compile a graph so that a dump would be written.
    v1::AddGraphRequest add;
    add.set_session_id(session);
    add.set_graph_id(1);
    *add.mutable_graph_def() = ParseGraphDef(
        "graph g {\n x = Data() {index = 0} -> (f32[3])\n"
        " y = Relu(x:0) -> (f32[3])\n out = NetOutput(y:0)\n}\n");
    v1::AddGraphResponse added;
    h().alice().AddGraph(add, &added);
    v1::CompileGraphResponse compiled;
    h().alice().CompileGraph(session, 1, &compiled);
  }
  EXPECT_FALSE(std::filesystem::exists(target)) << "a client's ge.dump_path was written: " << target;
}

TEST_F(FsReachTest, DumpPathInAddGraphOptions) {
  const std::string target = h().dir() + "/alice-dump-graph";
  const grpc::Status s = AddGraphDef(ParseGraphDef("graph g {\n x = Data() {index = 0} -> (f32[3])\n"
                                                   " y = Relu(x:0) -> (f32[3])\n out = NetOutput(y:0)\n}\n"),
                                     {{"ge.dump_path", target}, {"ge.dump_graph", "1"}});
  EXPECT_TRUE(Refused(s, StatusCode::INVALID_ARGUMENT, {"ge.dump_path|ge.dump_graph"}));
  EXPECT_FALSE(std::filesystem::exists(target)) << "a client's ge.dump_path was written: " << target;
}

TEST_F(FsReachTest, DumpPathInExecuteOpOptions) {
  const std::string target = h().dir() + "/alice-dump-op";
  v1::ExecuteOpRequest r;
  r.set_op_type("Relu");
  *r.add_inputs() = FloatValue({-1, 2, -3}, {3});
  (*r.mutable_options()->mutable_entries())["ge.dump_path"] = target;
  (*r.mutable_options()->mutable_entries())["ge.dump_graph"] = "1";
  const grpc::Status s = Execute(r);
  EXPECT_TRUE(Refused(s, StatusCode::INVALID_ARGUMENT, {"ge.dump_path|ge.dump_graph"}));
  EXPECT_FALSE(std::filesystem::exists(target)) << "a client's ge.dump_path was written: " << target;
}

TEST_F(FsReachTest, GraphCompilerCacheDirInAddGraphOptions) {
  const std::string target = h().dir() + "/alice-cache-graph";
  const grpc::Status s = AddGraphDef(ParseGraphDef("graph g {\n x = Data() {index = 0} -> (f32[3])\n"
                                                   " y = Relu(x:0) -> (f32[3])\n out = NetOutput(y:0)\n}\n"),
                                     {{"ge.graph_compiler_cache_dir", target}, {"ge.graph_key", "alice-model"}});
  EXPECT_TRUE(Refused(s, StatusCode::INVALID_ARGUMENT, {"ge.graph_compiler_cache_dir"}));
  EXPECT_FALSE(std::filesystem::exists(target)) << "a client's cache directory was written: " << target;
}

TEST_F(FsReachTest, GraphCompilerCacheDirInCreateSession) {
  const std::string target = h().dir() + "/alice-cache-session";
  std::string session;
  const grpc::Status s = h().alice().CreateSession({{"ge.graph_compiler_cache_dir", target}}, &session);
  h().ScanStatus(s, "CreateSession");
  h().ScanForLeaks(session, "the session id");
  EXPECT_TRUE(Refused(s, StatusCode::INVALID_ARGUMENT, {"ge.graph_compiler_cache_dir"}));
}

TEST_F(FsReachTest, GraphCompilerCacheDirPointingAtTheOperatorCacheInExecuteOp) {
  // The operator's own cache directory: a client writing there could plant
  // entries every tenant loads.
  v1::ExecuteOpRequest r;
  r.set_op_type("Relu");
  *r.add_inputs() = FloatValue({-1, 2, -3}, {3});
  (*r.mutable_options()->mutable_entries())["ge.graph_compiler_cache_dir"] = h().dir() + "/cache";
  const grpc::Status s = Execute(r);
  EXPECT_TRUE(Refused(s, StatusCode::INVALID_ARGUMENT, {"ge.graph_compiler_cache_dir"}));
}

TEST_F(FsReachTest, UnderscoreAttributeOutsideTheAllowListOnAnOrdinaryNode) {
  v1::ExecuteOpRequest r;
  r.set_op_type("Relu");
  *r.add_inputs() = FloatValue({-1, 2, -3}, {3});
  (*r.mutable_attrs())["_model_dir"] = StringAttr("/");
  const grpc::Status s = Execute(r);
  EXPECT_TRUE(Refused(s, StatusCode::INVALID_ARGUMENT, {"_model_dir"}));
}

}  // namespace
}  // namespace ge::adversarial
