// Runs the torch-exported test models through `gectl run` and compares the
// outputs with torch's (scripts/make_test_models.py writes both).
#include <filesystem>
#include <fstream>
#include <sstream>

#include "base/io/npy.h"
#include "gtest/gtest.h"
#include "tests/integration/process.h"
#include "yaml-cpp/yaml.h"

namespace ge {
namespace {

namespace fs = std::filesystem;
using testing::RunProcess;

struct ModelCase {
  std::string name;
};

class GectlModelsTest : public ::testing::TestWithParam<std::string> {};

// Largest absolute difference, or an explanation when shapes differ.
std::string Compare(const Tensor& actual, const Tensor& expected, double atol) {
  if (actual.dtype() != expected.dtype() || actual.shape() != expected.shape()) {
    return "type mismatch: got " + actual.DebugString(0) + ", expected " + expected.DebugString(0);
  }
  double worst = 0;
  int64_t worst_index = -1;
  for (int64_t i = 0; i < actual.NumElements(); ++i) {
    double diff = std::abs(actual.GetAsDouble(i) - expected.GetAsDouble(i));
    if (!(diff <= worst)) {
      worst = diff;
      worst_index = i;
    }
  }
  if (worst <= atol) return "";
  std::ostringstream msg;
  msg << "max abs difference " << worst << " > " << atol << " at flat index " << worst_index << ": got "
      << actual.GetAsDouble(worst_index) << ", expected " << expected.GetAsDouble(worst_index);
  return msg.str();
}

TEST_P(GectlModelsTest, MatchesTorch) {
  const fs::path dir = fs::path(testing::BinaryDir()) / "models" / GetParam();
  ASSERT_TRUE(fs::exists(dir / "model.onnx")) << dir << " missing: run scripts/make_test_models.py";
  YAML::Node meta = YAML::LoadFile((dir / "meta.json").string());
  const double atol = meta["atol"].as<double>();
  const std::string out_dir = testing::MakeTempDir("gectl-models");
  std::vector<std::string> argv = {testing::BinaryDir() + "/bin/gectl", "run", (dir / "model.onnx").string(),
                                   "--output-dir", out_dir};
  for (const auto& input : meta["inputs"]) {
    const std::string name = input.as<std::string>();
    argv.push_back("--input");
    argv.push_back(name + "=" + (dir / "inputs" / (name + ".npy")).string());
  }
  testing::ProcessResult r = RunProcess(argv, 300);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "") << "a successful command writes nothing to stderr";
  for (const auto& output : meta["outputs"]) {
    const std::string name = output.as<std::string>();
    auto actual = io::ReadNpyFile(out_dir + "/" + name + ".npy");
    ASSERT_TRUE(actual.ok()) << actual.status();
    auto expected = io::ReadNpyFile((dir / "expected" / (name + ".npy")).string());
    ASSERT_TRUE(expected.ok()) << expected.status();
    EXPECT_EQ(Compare(*actual, *expected, atol), "") << "output " << name;
  }
  fs::remove_all(out_dir);
}

INSTANTIATE_TEST_SUITE_P(Models, GectlModelsTest,
                         ::testing::Values("resnet18_op13", "resnet18_op17", "mobilenet_v2_op13",
                                           "mobilenet_v2_op17", "transformer_op13", "transformer_op17"));

}  // namespace
}  // namespace ge
