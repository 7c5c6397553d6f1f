// gectl's contract on bad input: every case exits 1 with a one-line message
// naming the cause on stderr, never a signal; and the happy paths of run.
#include <filesystem>
#include <fstream>

#include "base/io/npy.h"
#include "gtest/gtest.h"
#include "onnx/onnx_pb.h"
#include "tests/integration/process.h"
#include "tests/testing/onnx_builder.h"

namespace ge {
namespace {

namespace fs = std::filesystem;

class GectlErrorsTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = testing::MakeTempDir("gectl-errors"); }
  void TearDown() override { fs::remove_all(dir_); }

  testing::ProcessResult Gectl(std::vector<std::string> args) {
    args.insert(args.begin(), testing::BinaryDir() + "/bin/gectl");
    return testing::RunProcess(args, 120);
  }
  std::string Path(const std::string& name) const { return (fs::path(dir_) / name).string(); }
  void WriteFile(const std::string& name, const std::string& bytes) {
    std::ofstream(Path(name), std::ios::binary) << bytes;
  }
  std::string SampleModel() const { return testing::SourceDir() + "/examples/models/sample_cnn.onnx"; }

  // X f32[2,3] -> Relu -> Y, with hooks to break it.
  static onnx::ModelProto ReluModel() { return onnx_builder::UnaryModel("Relu", "relu", {2, 3}); }
  void WriteModel(const std::string& name, const onnx::ModelProto& model) {
    WriteFile(name, model.SerializeAsString());
  }

  static void ExpectUserError(const testing::ProcessResult& r, const std::string& needle) {
    EXPECT_EQ(r.signal, 0) << "gectl died of a signal: " << r.err;
    EXPECT_EQ(r.exit_code, 1) << r.err;
    EXPECT_NE(r.err.find(needle), std::string::npos) << "stderr lacks '" << needle << "': " << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << "expected one line: " << r.err;
    EXPECT_EQ(r.out, "");
  }

  std::string dir_;
};

TEST_F(GectlErrorsTest, RunsSampleModelAndPrintsSummary) {
  auto r = Gectl({"run", SampleModel()});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_NE(r.out.find("probabilities: f32[1,10]"), std::string::npos) << r.out;
}

TEST_F(GectlErrorsTest, SavesOutputsWithSanitizedNames) {
  onnx::ModelProto model = ReluModel();
  model.mutable_graph()->mutable_output(0)->set_name("out/y:0");
  model.mutable_graph()->mutable_node(0)->set_output(0, "out/y:0");
  WriteModel("m.onnx", model);
  auto r = Gectl({"run", Path("m.onnx"), "--output-dir", Path("a/b"), "--seed", "3"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto y = io::ReadNpyFile(Path("a/b/out_y_0.npy"));
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_EQ(y->shape(), (Shape{2, 3}));
  for (int64_t i = 0; i < y->NumElements(); ++i) EXPECT_GE(y->data<float>()[i], 0.0f);
}

TEST_F(GectlErrorsTest, ReluOfGivenInputIsExact) {
  WriteModel("m.onnx", ReluModel());
  ASSERT_TRUE(io::WriteNpyFile(Path("x.npy"), Tensor::FromVector<float>({-1, 2, -3, 4, 0, -0.5f}, Shape{2, 3})).ok());
  auto r = Gectl({"run", Path("m.onnx"), "--input", "X=" + Path("x.npy"), "--output-dir", Path("out")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto y = io::ReadNpyFile(Path("out/Y.npy"));
  ASSERT_TRUE(y.ok());
  EXPECT_TRUE(TensorsEqual(*y, Tensor::FromVector<float>({0, 2, 0, 4, 0, 0}, Shape{2, 3})));
}

TEST_F(GectlErrorsTest, BenchPrintsOneJsonLine) {
  auto r = Gectl({"bench", SampleModel(), "--iterations", "3", "--warmup", "1", "--threads", "1"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << r.out;
  for (const char* key : {"\"model\":", "\"iterations\":3,", "\"p50_ms\":", "\"p90_ms\":", "\"p99_ms\":",
                          "\"mean_ms\":", "\"peak_rss_mb\":"}) {
    EXPECT_NE(r.out.find(key), std::string::npos) << key << " missing in " << r.out;
  }
  ExpectUserError(Gectl({"bench", SampleModel(), "--iterations", "0"}), "--iterations");
}

// A model with a dynamic batch, compiled to a .gem: bench runs input sets
// in turn (each name given three times, interleaved) and reports each; the
// .gem plans per shape (one plan per set, logged), as the .onnx does.
TEST_F(GectlErrorsTest, BenchRunsInputSetsOnADynamicGem) {
  onnx::ModelProto model = onnx_builder::MakeModel(17);
  onnx::GraphProto* g = model.mutable_graph();
  g->set_name("add");
  onnx_builder::AddInput(g, "X", onnx_builder::kF32, {-1, 3}, {"batch", ""});
  onnx_builder::AddInput(g, "Y", onnx_builder::kF32, {-1, 3}, {"batch", ""});
  onnx_builder::AddOutput(g, "Z", onnx_builder::kF32, {-1, 3}, {"batch", ""});
  onnx_builder::AddNode(g, "Add", {"X", "Y"}, {"Z"}, "add");
  WriteModel("dyn.onnx", model);
  auto compiled = Gectl({"compile", Path("dyn.onnx"), "-o", Path("dyn.gem"), "--no-cache"});
  ASSERT_EQ(compiled.exit_code, 0) << compiled.err;
  EXPECT_NE(compiled.out.find("dynamic"), std::string::npos) << compiled.out;
  for (const std::string m : {"dyn.onnx", "dyn.gem"}) {
    auto r = Gectl({"--log-level", "info",      "bench", Path(m),   "--no-cache", "--iterations", "6",     "--warmup",
                    "3",           "--threads", "1",     "--shape", "X=1,3",      "--shape",      "Y=1,3", "--shape",
                    "X=4,3",       "--shape",   "Y=4,3", "--shape", "X=7,3",      "--shape",      "Y=7,3"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("\"sets\":[{\"runs\":2,\"p50_ms\":"), std::string::npos) << r.out;
    size_t plans = 0;
    for (size_t at = r.err.find("compiled a slice"); at != std::string::npos;
         at = r.err.find("compiled a slice", at + 1))
      ++plans;
    EXPECT_EQ(plans, 3u) << m << ": " << r.err;
  }
}

TEST_F(GectlErrorsTest, MissingModelFile) { ExpectUserError(Gectl({"run", Path("nope.onnx")}), "does not exist"); }

TEST_F(GectlErrorsTest, TruncatedModel) {
  std::ifstream in(SampleModel(), std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  WriteFile("t.onnx", bytes.substr(0, bytes.size() / 2));
  ExpectUserError(Gectl({"run", Path("t.onnx")}), "t.onnx");
}

TEST_F(GectlErrorsTest, NotAnOnnxFile) {
  WriteFile("text.onnx", "this is not a model\n");
  ExpectUserError(Gectl({"run", Path("text.onnx")}), "text.onnx");
}

TEST_F(GectlErrorsTest, GraphWithCycle) {
  onnx::ModelProto model = ReluModel();
  onnx::GraphProto* g = model.mutable_graph();
  g->mutable_node(0)->set_input(0, "Z");  // relu reads Z
  onnx::NodeProto* neg = g->add_node();    // neg reads Y (relu's output) and writes Z
  neg->set_name("neg");
  neg->set_op_type("Neg");
  neg->add_input("Y");
  neg->add_output("Z");
  WriteModel("cycle.onnx", model);
  ExpectUserError(Gectl({"run", Path("cycle.onnx")}), "cycle");
}

TEST_F(GectlErrorsTest, EdgeToMissingNode) {
  onnx::ModelProto model = ReluModel();
  model.mutable_graph()->mutable_node(0)->set_input(0, "ghost");
  WriteModel("dangling.onnx", model);
  ExpectUserError(Gectl({"run", Path("dangling.onnx")}), "ghost");
}

TEST_F(GectlErrorsTest, UnsupportedOp) {
  onnx::ModelProto model = ReluModel();
  model.mutable_graph()->mutable_node(0)->set_op_type("FrobnicateTensor");
  WriteModel("unknown.onnx", model);
  ExpectUserError(Gectl({"run", Path("unknown.onnx")}), "FrobnicateTensor");
}

TEST_F(GectlErrorsTest, ExternalDataOutsideModelDirectory) {
  onnx::ModelProto model = ReluModel();
  onnx::GraphProto* g = model.mutable_graph();
  g->mutable_node(0)->set_op_type("Add");
  g->mutable_node(0)->add_input("W");
  onnx::TensorProto* w = g->add_initializer();
  w->set_name("W");
  w->set_data_type(onnx::TensorProto::FLOAT);
  w->add_dims(3);
  w->set_data_location(onnx::TensorProto::EXTERNAL);
  auto* entry = w->add_external_data();
  entry->set_key("location");
  entry->set_value("../../etc/passwd");
  fs::create_directories(Path("model"));
  WriteModel("model/ext.onnx", model);
  ExpectUserError(Gectl({"run", Path("model/ext.onnx")}), "outside");
}

TEST_F(GectlErrorsTest, ExternalDataMissing) {
  onnx::ModelProto model = ReluModel();
  onnx::GraphProto* g = model.mutable_graph();
  g->mutable_node(0)->set_op_type("Add");
  g->mutable_node(0)->add_input("W");
  onnx::TensorProto* w = g->add_initializer();
  w->set_name("W");
  w->set_data_type(onnx::TensorProto::FLOAT);
  w->add_dims(3);
  w->set_data_location(onnx::TensorProto::EXTERNAL);
  auto* entry = w->add_external_data();
  entry->set_key("location");
  entry->set_value("weights.bin");
  WriteModel("ext.onnx", model);
  ExpectUserError(Gectl({"run", Path("ext.onnx")}), "weights.bin");
}

TEST_F(GectlErrorsTest, InputOfWrongDtype) {
  WriteModel("m.onnx", ReluModel());
  ASSERT_TRUE(io::WriteNpyFile(Path("x.npy"), Tensor::FromVector<double>({1, 2, 3, 4, 5, 6}, Shape{2, 3})).ok());
  ExpectUserError(Gectl({"run", Path("m.onnx"), "--input", "X=" + Path("x.npy")}), "expected f32[2,3], got f64[2,3]");
}

TEST_F(GectlErrorsTest, InputOfWrongShape) {
  WriteModel("m.onnx", ReluModel());
  ASSERT_TRUE(io::WriteNpyFile(Path("x.npy"), Tensor::FromVector<float>({1, 2, 3}, Shape{3})).ok());
  ExpectUserError(Gectl({"run", Path("m.onnx"), "--input", "X=" + Path("x.npy")}), "expected f32[2,3], got f32[3]");
}

TEST_F(GectlErrorsTest, InputNameUnknown) {
  WriteModel("m.onnx", ReluModel());
  ExpectUserError(Gectl({"run", Path("m.onnx"), "--shape", "nope=1,2"}), "inputs are: X");
}

TEST_F(GectlErrorsTest, UnknownOptionKey) {
  ExpectUserError(Gectl({"run", SampleModel(), "--option", "ge.no_such_key=1"}), "unknown option 'ge.no_such_key'");
}

TEST_F(GectlErrorsTest, BadOptionValue) {
  ExpectUserError(Gectl({"run", SampleModel(), "--option", "ge.exec.disable_host_cpu_fallback=maybe"}),
                  "ge.exec.disable_host_cpu_fallback");
}

TEST_F(GectlErrorsTest, BadFlagIsUserError) {
  auto r = Gectl({"run"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.signal, 0);
}

}  // namespace
}  // namespace ge

namespace ge {
namespace {

// atc's gear flags, in both spellings, reach the compiler as options; their
// errors are user errors on one line.
TEST_F(GectlErrorsTest, GearFlagErrors) {
  onnx::ModelProto model = ReluModel();
  model.mutable_graph()->mutable_input(0)->mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim(0)
      ->set_dim_param("batch");
  WriteModel("dyn.onnx", model);
  ExpectUserError(Gectl({"compile", Path("dyn.onnx"), "-o", Path("x.gem"), "--no-cache", "--dynamic_batch_size",
                         "1,2", "--dynamic-dims", "1;2"}),
                  "--dynamic_batch_size (ge.dynamicBatchSize) and --dynamic_dims (ge.dynamicDims) are mutually "
                  "exclusive");
  ExpectUserError(Gectl({"compile", Path("dyn.onnx"), "-o", Path("x.gem"), "--no-cache", "--dynamic-batch-size",
                         "1,2", "--option", "ge.dynamicBatchSize=4"}),
                  "--dynamic_batch_size '1,2' and --option ge.dynamicBatchSize=4 disagree");
  ExpectUserError(Gectl({"run", Path("dyn.onnx"), "--no-cache", "--input_shape", "X:1,3", "--dynamic_batch_size",
                         "1,2"}),
                  "dim 0 of input 'X' to 1, but that dim is fixed at 1 in --input_shape");
  ExpectUserError(Gectl({"bench", Path("dyn.onnx"), "--no-cache", "--dynamic_dims", "1,3,5"}),
                  "has 3 values, more than the rank 2 of input 'X'");
}

TEST_F(GectlErrorsTest, InputThatFitsNoGearListsTheGears) {
  onnx::ModelProto model = ReluModel();
  for (auto* io : {model.mutable_graph()->mutable_input(0), model.mutable_graph()->mutable_output(0)}) {
    io->mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim(0)->set_dim_param("batch");
  }
  WriteModel("dyn.onnx", model);
  auto ok = Gectl({"run", Path("dyn.onnx"), "--no-cache", "--dynamic_batch_size", "1,4", "--shape", "X=4,3"});
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
  ExpectUserError(Gectl({"run", Path("dyn.onnx"), "--no-cache", "--dynamic_batch_size", "1,4", "--shape", "X=3,3"}),
                  "input shape [3,3] fits no gear of this model; the gears of --dynamic_batch_size "
                  "(ge.dynamicBatchSize) are: 1; 4");
  auto hybrid = Gectl({"run", Path("dyn.onnx"), "--no-cache", "--dynamic_batch_size", "1,4", "--shape", "X=3,3",
                       "--compile_hybrid_mode"});
  EXPECT_EQ(hybrid.exit_code, 0) << hybrid.err;
}

}  // namespace
}  // namespace ge
