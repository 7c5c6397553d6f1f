// The ingestion path's checks (session/ingest.h, session/runtime.h): every
// kind of file-system reach a client's model or options may try is
// INVALID_ARGUMENT naming the node and attribute (or the option); the
// documented user attributes and a compiler's own .gem pass; operator models
// resolve their files beneath the weights root, never through a symlink out
// of it.
#include "session/ingest.h"

#include <filesystem>
#include <fstream>

#include "base/ir/proto_convert.h"
#include "base/ir/text_format.h"
#include "compiler/build/model_builder.h"
#include "gtest/gtest.h"
#include "runtime/model/external_weights.h"
#include "session/runtime.h"
#include "tests/testing/onnx_builder.h"

namespace ge::session {
namespace {

namespace fs = std::filesystem;

void ExpectRefused(const absl::Status& s, const std::vector<std::string>& words) {
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  for (const std::string& w : words) EXPECT_NE(s.message().find(w), std::string::npos) << w << " not in " << s;
}

class IngestTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    RuntimeOptions options;
    options.devices = {DeviceConfig{"cpu0", 1, 0}};
    auto rt = Runtime::Create(options);
    ASSERT_TRUE(rt.ok()) << rt.status();
    rt_ = rt->release();
  }
  static void TearDownTestSuite() {
    delete rt_;
    rt_ = nullptr;
  }
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("ingest_test_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "root");
    fs::create_directories(dir_ / "outside");
    std::ofstream(dir_ / "root" / "w.bin", std::ios::binary) << std::string(16, '\1');
    std::ofstream(dir_ / "outside" / "canary.bin", std::ios::binary) << std::string(16, 'C');
  }
  void TearDown() override { fs::remove_all(dir_); }

  static std::unique_ptr<ir::Graph> Parse(const std::string& text) {
    auto graph = ir::ParseGraph(text);
    EXPECT_TRUE(graph.ok()) << graph.status();
    return graph.ok() ? *std::move(graph) : nullptr;
  }
  // A graph whose one middle node is `node` (reading x, named n, f32[4]).
  static std::string WithNode(const std::string& node) {
    return R"(graph g {
      x = Data() {index = 0} -> (f32[4])
      n = )" +
           node + R"( -> (f32[4])
      out = NetOutput(n:0)
    })";
  }
  static std::string FileConstantWith(const std::string& attrs) {
    return R"(graph g {
      f = FileConstant() {dtype = 1, shape = shape[4], )" +
           attrs + R"(} -> (f32[4])
      out = NetOutput(f:0)
    })";
  }
  absl::Status AddClientGraphDef(const std::string& text) {
    std::unique_ptr<ir::Graph> graph = Parse(text);
    v1::GraphDef def;
    EXPECT_TRUE(ir::GraphToProto(*graph, &def).ok());
    IngestOptions options;
    options.label = "session 1 graph 1";
    return rt_->AddModel(ModelSource::GraphDef(def), options).status();
  }

  inline static Runtime* rt_ = nullptr;
  fs::path dir_;
};

TEST_F(IngestTest, OperatorOnlyOptionsAreMarkedAndRefusedFromClients) {
  std::vector<std::string> marked;
  for (const OptionSpec& spec : AllOptionSpecs()) {
    if (spec.operator_only) marked.emplace_back(spec.key);
  }
  EXPECT_EQ(marked, (std::vector<std::string>{"ge.dump_graph", "ge.dump_path", "ge.exec.value_bins",
                                              "ge.graph_compiler_cache_dir"}));
  for (const std::string& key : marked) {
    ExpectRefused(CheckClientOptions({{key, "x"}}, "CreateSession"), {key, "CreateSession", "operator"});
    IngestOptions options;
    options.options = {{key, "1"}};
    v1::GraphDef def;
    ExpectRefused(rt_->AddModel(ModelSource::GraphDef(def), options).status(), {key});
  }
  EXPECT_TRUE(CheckClientOptions({{"ge.graph_key", "k"}, {"ge.oo.constantFolding", "0"}}, "").ok());
}

TEST_F(IngestTest, ClientGraphsCarryNoFileConstantNorPathAttribute) {
  const std::string canary = (dir_ / "outside" / "canary.bin").string();
  ExpectRefused(AddClientGraphDef(FileConstantWith("file_path = \"" + canary + "\"")),
                {"session 1 graph 1", "node 'f'", "FileConstant"});
  ExpectRefused(AddClientGraphDef(FileConstantWith("location = \"canary.bin\", _model_dir = \"/\"")),
                {"node 'f'", "FileConstant"});
  ExpectRefused(AddClientGraphDef(FileConstantWith("file_id = \"bin0\"")), {"node 'f'", "FileConstant"});
  for (const char* attr : {"file_path", "location", "file_id", "_model_dir"}) {
    ExpectRefused(AddClientGraphDef(WithNode(std::string("Relu(x:0) {") + attr + " = \"/etc/passwd\"}")),
                  {"node 'n'", std::string("attribute '") + attr + "'"});
  }
}

TEST_F(IngestTest, ReservedAttributesAreRefusedAndDocumentedOnesPass) {
  ExpectRefused(AddClientGraphDef(WithNode("Relu(x:0) {_secret = 1}")), {"node 'n'", "'_secret'", "reserved"});
  // The compiler's own attributes are not a client's to set in a source graph.
  ExpectRefused(AddClientGraphDef(WithNode("Relu(x:0) {_engine_name = \"host_cpu\"}")), {"'_engine_name'"});
  ExpectRefused(AddClientGraphDef(WithNode("Relu(x:0) {_max_loop_iterations = 100}")), {"'_max_loop_iterations'"});
  EXPECT_TRUE(AddClientGraphDef(WithNode("Relu(x:0) {_ge_engine = \"host_cpu\", _stage_level = 0}")).ok());
  // A compiled model may carry the compiler's attributes, of their kind only.
  auto compiled = Parse(WithNode("Relu(x:0) {_engine_name = \"host_cpu\", _is_unknown_shape = false}"));
  EXPECT_TRUE(CheckClientGraph(*compiled, AttrPolicy::kCompiled).ok());
  auto mistyped = Parse(WithNode("Relu(x:0) {_engine_name = 3}"));
  ExpectRefused(CheckClientGraph(*mistyped, AttrPolicy::kCompiled), {"'_engine_name'", "string"});
  auto unknown = Parse(WithNode("Relu(x:0) {_whatever = 3}"));
  ExpectRefused(CheckClientGraph(*unknown, AttrPolicy::kCompiled), {"'_whatever'"});
}

TEST_F(IngestTest, ExecuteOpsAreCheckedAsReceived) {
  ExpectRefused(CheckClientOp("FileConstant", {"file_path", "dtype", "shape"}), {"FileConstant"});
  ExpectRefused(CheckClientOp("Relu", {"location"}), {"Relu", "'location'"});
  ExpectRefused(CheckClientOp("Relu", {"_model_dir"}), {"'_model_dir'"});
  ExpectRefused(CheckClientOp("Relu", {"_x"}), {"'_x'"});
  EXPECT_TRUE(CheckClientOp("Add", {}).ok());
}

// X f32[4] -> Add(X, W) -> Y with W an initializer; hooks to break it.
onnx::ModelProto AddModel() { return onnx_builder::AddWeightModel({1, 1, 1, 1}); }

void MakeExternal(onnx::TensorProto* t, const std::string& location) {
  t->clear_float_data();
  t->set_data_location(onnx::TensorProto::EXTERNAL);
  auto* entry = t->add_external_data();
  entry->set_key("location");
  entry->set_value(location);
}

TEST_F(IngestTest, ClientOnnxModelsAreCheckedBeforeImport) {
  IngestOptions client;
  EXPECT_TRUE(rt_->AddModel(ModelSource::OnnxBytes(AddModel().SerializeAsString()), client).ok());
  {
    onnx::ModelProto m = AddModel();
    MakeExternal(m.mutable_graph()->mutable_initializer(0), "../outside/canary.bin");
    ExpectRefused(rt_->AddModel(ModelSource::OnnxBytes(m.SerializeAsString()), client).status(),
                  {"tensor 'W'", "external data"});
  }
  {
    onnx::ModelProto m = AddModel();
    auto* attr = m.mutable_graph()->mutable_node(0)->add_attribute();
    attr->set_name("_model_dir");
    attr->set_type(onnx::AttributeProto::STRING);
    attr->set_s("/");
    ExpectRefused(rt_->AddModel(ModelSource::OnnxBytes(m.SerializeAsString()), client).status(),
                  {"node 'add'", "'_model_dir'"});
  }
  {
    onnx::ModelProto m = AddModel();
    onnx::NodeProto* fc = m.mutable_graph()->add_node();
    fc->set_name("fc");
    fc->set_op_type("FileConstant");
    fc->add_output("F");
    ExpectRefused(rt_->AddModel(ModelSource::OnnxBytes(m.SerializeAsString()), client).status(),
                  {"node 'fc'", "FileConstant"});
  }
  {
    // A Constant whose value tensor is external.
    onnx::ModelProto m = AddModel();
    onnx::NodeProto* c = m.mutable_graph()->add_node();
    c->set_name("const");
    c->set_op_type("Constant");
    c->add_output("C");
    auto* attr = c->add_attribute();
    attr->set_name("value");
    attr->set_type(onnx::AttributeProto::TENSOR);
    attr->mutable_t()->set_data_type(onnx::TensorProto::FLOAT);
    MakeExternal(attr->mutable_t(), "/etc/passwd");
    ExpectRefused(rt_->AddModel(ModelSource::OnnxBytes(m.SerializeAsString()), client).status(),
                  {"node 'const'", "external data"});
  }
  // A path is never a client's source.
  ExpectRefused(rt_->AddModel(ModelSource::OnnxPath((dir_ / "m.onnx").string()), client).status(), {"bytes"});
}

TEST_F(IngestTest, ClientGemsPassTheirCompilerAttributesButNotFiles) {
  // A weight of 512 floats: large enough to move out (kMinExternalWeightBytes).
  std::string values;
  for (int i = 0; i < 512; ++i) values += (i ? ", " : "") + std::to_string(i) + ".0";
  const std::string text = R"(graph m {
      x = Data() {index = 0} -> (f32[512])
      w = Const() {value = tensor<f32[512]>[)" +
                           values + R"(]} -> (f32[512])
      y = Add(x:0, w:0) -> (f32[512])
      out = NetOutput(y:0)
    })";
  IngestOptions client;
  {
    auto model = compiler::BuildCompiledModel(Parse(text), {}, rt_->engines(), nullptr);
    ASSERT_TRUE(model.ok()) << model.status();
    auto bytes = runtime::SerializeGem(*model->graph, model->program ? &*model->program : nullptr, {}, rt_->engines(),
                                       false, "");
    ASSERT_TRUE(bytes.ok());
    auto loaded = rt_->AddModel(ModelSource::GemBytes(bytes->gem), client);
    EXPECT_TRUE(loaded.ok()) << loaded.status();
  }
  {
    // ge.externalWeight: the Const became a FileConstant beside the .gem.
    auto model = compiler::BuildCompiledModel(Parse(text), {}, rt_->engines(), nullptr);
    ASSERT_TRUE(model.ok()) << model.status();
    ASSERT_TRUE(runtime::ExternalizeWeights(*model, (dir_ / "m.gem").string(), 1).ok());
    auto bytes = runtime::SerializeGem(*model->graph, model->program ? &*model->program : nullptr, model->options,
                                       rt_->engines(), false, "", nullptr, &model->variables);
    ASSERT_TRUE(bytes.ok());
    ExpectRefused(rt_->AddModel(ModelSource::GemBytes(bytes->gem), client).status(), {"--external-weight"});
  }
  runtime::CompiledModel with_options;
  with_options.options = {{"ge.dump_path", "/tmp"}};
  ExpectRefused(CheckClientCompiledModel(with_options), {"ge.dump_path"});
}

TEST_F(IngestTest, OperatorFilesResolveBeneathTheWeightsRootWithoutFollowingLinksOut) {
  const std::string root = (dir_ / "root").string();
  // Inside: accepted and rewritten to the resolved path.
  {
    auto graph = Parse(FileConstantWith("file_path = \"w.bin\""));
    ASSERT_TRUE(ResolveOperatorFiles(*graph, root, {}).ok());
    const ir::Node* f = graph->FindNode("f");
    EXPECT_EQ(f->op_desc().GetAttrOr<std::string>("file_path", ""), fs::canonical(dir_ / "root" / "w.bin").string());
  }
  // Outside by an absolute path, by .., by location under another model dir.
  const std::string canary = (dir_ / "outside" / "canary.bin").string();
  for (const std::string& attrs :
       {"file_path = \"" + canary + "\"", std::string("file_path = \"../outside/canary.bin\""),
        "location = \"canary.bin\", _model_dir = \"" + (dir_ / "outside").string() + "\""}) {
    auto graph = Parse(FileConstantWith(attrs));
    ExpectRefused(ResolveOperatorFiles(*graph, root, {}), {"node 'f'", "outside the weights root"});
  }
  // A symlink inside the root that leads out of it.
  fs::create_symlink(canary, dir_ / "root" / "escape.bin");
  {
    auto graph = Parse(FileConstantWith("file_path = \"escape.bin\""));
    ExpectRefused(ResolveOperatorFiles(*graph, root, {}), {"node 'f'", "'file_path'", "outside the weights root"});
  }
  // A linked directory as well.
  fs::create_directory_symlink(dir_ / "outside", dir_ / "root" / "linked");
  {
    auto graph = Parse(FileConstantWith("file_path = \"linked/canary.bin\""));
    ExpectRefused(ResolveOperatorFiles(*graph, root, {}), {"outside the weights root"});
  }
  // file_id through the operator's ge.exec.value_bins.
  {
    const OptionMap options = {
        {"ge.exec.value_bins", R"({"value_bins": [{"value_bin_id": "b", "value_bin_file": ")" + canary + "\"}]}"}};
    auto graph = Parse(FileConstantWith("file_id = \"b\""));
    ExpectRefused(ResolveOperatorFiles(*graph, root, options), {"'file_id'", "outside the weights root"});
  }
}

TEST_F(IngestTest, OperatorOnnxExternalDataStaysBeneathTheWeightsRoot) {
  // The model's weights in its own directory: accepted with the default root.
  onnx::ModelProto m = AddModel();
  MakeExternal(m.mutable_graph()->mutable_initializer(0), "w.bin");
  const std::string path = (dir_ / "root" / "m.onnx").string();
  std::ofstream(path, std::ios::binary) << m.SerializeAsString();
  IngestOptions op;
  op.provenance = Provenance::kOperator;
  auto ok = rt_->AddModel(ModelSource::OnnxPath(path), op);
  EXPECT_TRUE(ok.ok()) << ok.status();
  // A narrower weights root the file is not beneath: refused.
  fs::create_directories(dir_ / "root" / "narrow");
  op.weights_root = (dir_ / "root" / "narrow").string();
  ExpectRefused(rt_->AddModel(ModelSource::OnnxPath(path), op).status(), {"outside the weights root"});
  // A location that is a symlink out of the model's directory.
  fs::create_symlink(dir_ / "outside" / "canary.bin", dir_ / "root" / "link.bin");
  MakeExternal(m.mutable_graph()->mutable_initializer(0), "link.bin");
  std::ofstream(path, std::ios::binary | std::ios::trunc) << m.SerializeAsString();
  op.weights_root.clear();
  EXPECT_EQ(rt_->AddModel(ModelSource::OnnxPath(path), op).status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace ge::session
