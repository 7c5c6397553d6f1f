// Every test model compiled with `gectl compile` to a .gem is static (one
// flat task list: cpu_dense, cpu_vector, cpu_fused and ge_local cover all its nodes once
// constant folding has removed the shape arithmetic) and runs from the .gem
// (`gectl run`) to the same outputs as from its .onnx; a .gem refused for another host fails
// `gectl run` with exit code 1 and a clear message.
#include <filesystem>
#include <fstream>

#include "base/io/npy.h"
#include "gtest/gtest.h"
#include "tests/integration/process.h"
#include "yaml-cpp/yaml.h"

namespace ge {
namespace {

namespace fs = std::filesystem;
using testing::RunProcess;

std::string Gectl() { return testing::BinaryDir() + "/bin/gectl"; }

// Runs `model` with the test inputs of `dir`, outputs into `out_dir`.
testing::ProcessResult RunModel(const fs::path& dir, const std::string& model, const std::string& out_dir) {
  YAML::Node meta = YAML::LoadFile((dir / "meta.json").string());
  std::vector<std::string> argv = {Gectl(), "run", model, "--output-dir", out_dir};
  for (const auto& input : meta["inputs"]) {
    const std::string name = input.as<std::string>();
    argv.push_back("--input");
    argv.push_back(name + "=" + (dir / "inputs" / (name + ".npy")).string());
  }
  return RunProcess(argv, 300);
}

class GemModelsTest : public ::testing::TestWithParam<std::string> {};

TEST_P(GemModelsTest, GemRunsLikeOnnx) {
  const fs::path dir = fs::path(testing::BinaryDir()) / "models" / GetParam();
  ASSERT_TRUE(fs::exists(dir / "model.onnx")) << dir << " missing: run scripts/make_test_models.py";
  const std::string tmp = testing::MakeTempDir("gem-models");
  const std::string gem = tmp + "/model.gem";
  testing::ProcessResult c = RunProcess({Gectl(), "compile", (dir / "model.onnx").string(), "-o", gem}, 300);
  ASSERT_EQ(c.exit_code, 0) << c.err;
  EXPECT_NE(c.out.find("model.gem: static,"), std::string::npos) << c.out;
  testing::ProcessResult a = RunModel(dir, gem, tmp + "/gem");
  ASSERT_EQ(a.exit_code, 0) << a.err;
  testing::ProcessResult b = RunModel(dir, (dir / "model.onnx").string(), tmp + "/onnx");
  ASSERT_EQ(b.exit_code, 0) << b.err;
  YAML::Node meta = YAML::LoadFile((dir / "meta.json").string());
  for (const auto& output : meta["outputs"]) {
    const std::string name = output.as<std::string>();
    auto from_gem = io::ReadNpyFile(tmp + "/gem/" + name + ".npy");
    auto from_onnx = io::ReadNpyFile(tmp + "/onnx/" + name + ".npy");
    ASSERT_TRUE(from_gem.ok()) << from_gem.status();
    ASSERT_TRUE(from_onnx.ok()) << from_onnx.status();
    ASSERT_EQ(from_gem->shape(), from_onnx->shape()) << name;
    ASSERT_EQ(from_gem->dtype(), from_onnx->dtype()) << name;
    for (int64_t i = 0; i < from_gem->NumElements(); ++i) {
      ASSERT_EQ(from_gem->GetAsDouble(i), from_onnx->GetAsDouble(i)) << "output " << name << " element " << i;
    }
  }
  fs::remove_all(tmp);
}

INSTANTIATE_TEST_SUITE_P(Models, GemModelsTest,
                         ::testing::Values("resnet18_op13", "resnet18_op17", "mobilenet_v2_op13",
                                           "mobilenet_v2_op17", "transformer_op13", "transformer_op17"));

// Outputs of two runs (`a`, `b` output directories) are identical.
void ExpectSameOutputs(const fs::path& dir, const std::string& a, const std::string& b) {
  YAML::Node meta = YAML::LoadFile((dir / "meta.json").string());
  for (const auto& output : meta["outputs"]) {
    const std::string name = output.as<std::string>();
    auto x = io::ReadNpyFile(a + "/" + name + ".npy");
    auto y = io::ReadNpyFile(b + "/" + name + ".npy");
    ASSERT_TRUE(x.ok()) << x.status();
    ASSERT_TRUE(y.ok()) << y.status();
    ASSERT_EQ(x->shape(), y->shape()) << name;
    for (int64_t i = 0; i < x->NumElements(); ++i) {
      ASSERT_EQ(x->GetAsDouble(i), y->GetAsDouble(i)) << "output " << name << " element " << i;
    }
  }
}

// --external-weight 2: the .gem keeps graph and program only (under 1 MB for
// resnet18's 45 MB of weights) and runs with its weight file to the same
// outputs; --external-weight 1 writes one file per weight and does too.
TEST(ExternalWeightTest, Resnet18GemIsSmallAndRunsWithItsWeightFiles) {
  const fs::path dir = fs::path(testing::BinaryDir()) / "models" / "resnet18_op13";
  ASSERT_TRUE(fs::exists(dir / "model.onnx")) << dir << " missing: run scripts/make_test_models.py";
  const std::string tmp = testing::MakeTempDir("gem-external");
  testing::ProcessResult inline_run = RunModel(dir, (dir / "model.onnx").string(), tmp + "/onnx");
  ASSERT_EQ(inline_run.exit_code, 0) << inline_run.err;
  for (const std::string mode : {"2", "1"}) {
    const std::string gem = tmp + "/m" + mode + ".gem";
    testing::ProcessResult c = RunProcess(
        {Gectl(), "compile", (dir / "model.onnx").string(), "-o", gem, "--external-weight", mode}, 300);
    ASSERT_EQ(c.exit_code, 0) << c.err;
    EXPECT_LT(fs::file_size(gem), 1u << 20) << "mode " << mode;
    if (mode == "2") {
      EXPECT_GT(fs::file_size(tmp + "/m2.weights.bin"), 40u << 20);
    } else {
      // One file per weight of at least 1 KiB: the 20 convolutions' (batch norms folded in) and the rest.
      EXPECT_GE(std::distance(fs::directory_iterator(tmp + "/m1_weights"), fs::directory_iterator{}), 20);
    }
    testing::ProcessResult r = RunModel(dir, gem, tmp + "/gem" + mode);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    ExpectSameOutputs(dir, tmp + "/gem" + mode, tmp + "/onnx");
  }
  testing::ProcessResult both = RunProcess({Gectl(), "compile", (dir / "model.onnx").string(), "-o", tmp + "/x.gem",
                                            "--external-weight", "2", "--external-weights"}, 300);
  EXPECT_EQ(both.exit_code, 1) << both.err;
  fs::remove_all(tmp);
}

TEST(GemRefusalTest, CorruptOrForeignGemIsAClearUserError) {
  const std::string tmp = testing::MakeTempDir("gem-refusal");
  {
    std::ofstream out(tmp + "/bad.gem", std::ios::binary);
    out << "not a model";
  }
  testing::ProcessResult r = RunProcess({Gectl(), "run", tmp + "/bad.gem"}, 60);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("is not a .gem compiled model"), std::string::npos) << r.err;
  r = RunProcess({Gectl(), "run", tmp + "/bad.gem", "--option", "ge.dump_graph=0"}, 60);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("already compiled"), std::string::npos) << r.err;
  r = RunProcess({Gectl(), "compile", tmp + "/bad.gem", "-o", tmp + "/x.gem"}, 60);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("this command takes a source model"), std::string::npos) << r.err;
  fs::remove_all(tmp);
}

}  // namespace
}  // namespace ge
