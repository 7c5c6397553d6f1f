// Every test model compiled with `gectl compile` to a .gem runs from the
// .gem (`gectl run`) to the same outputs as from its .onnx, and on the
// static path when the .onnx does; a .gem refused for another host fails
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
  EXPECT_NE(c.out.find("model.gem: "), std::string::npos) << c.out;
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
