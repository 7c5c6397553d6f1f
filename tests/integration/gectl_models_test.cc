// Runs the torch-exported test models through `gectl run` and compares the
// outputs with torch's (scripts/make_test_models.py writes both).
#include <filesystem>
#include <fstream>
#include <map>
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

fs::path ModelDir(const std::string& model) { return fs::path(testing::BinaryDir()) / "models" / model; }

// Runs `gectl run` on the model's recorded inputs with `extra` flags and
// compares every output with torch's.
void ExpectMatchesTorch(const std::string& model, const std::vector<std::string>& extra) {
  const fs::path dir = ModelDir(model);
  ASSERT_TRUE(fs::exists(dir / "model.onnx")) << dir << " missing: run scripts/make_test_models.py";
  YAML::Node meta = YAML::LoadFile((dir / "meta.json").string());
  const double atol = meta["atol"].as<double>();
  const std::string out_dir = testing::MakeTempDir("gectl-models");
  std::vector<std::string> argv = {testing::BinaryDir() + "/bin/gectl", "run", (dir / "model.onnx").string(),
                                   "--output-dir", out_dir};
  argv.insert(argv.end(), extra.begin(), extra.end());
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

// The engine of every node in `gectl partition --report json`, by node name.
std::map<std::string, std::string> Placement(const std::string& model, const std::vector<std::string>& extra) {
  std::vector<std::string> argv = {testing::BinaryDir() + "/bin/gectl", "partition",
                                   (ModelDir(model) / "model.onnx").string(), "--report", "json"};
  argv.insert(argv.end(), extra.begin(), extra.end());
  testing::ProcessResult r = RunProcess(argv, 300);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  std::map<std::string, std::string> engines;
  if (r.exit_code != 0) return engines;
  YAML::Node report = YAML::Load(r.out);
  for (const auto& node : report["nodes"]) engines[node["name"].as<std::string>()] = node["engine"].as<std::string>();
  return engines;
}

size_t CountOn(const std::map<std::string, std::string>& placement, const std::string& engine) {
  size_t n = 0;
  for (const auto& [node, e] : placement) n += e == engine;
  return n;
}

TEST_P(GectlModelsTest, MatchesTorch) { ExpectMatchesTorch(GetParam(), {}); }

// With the fast dense engine excluded, its ops fall back to the reference
// engine and the outputs still match.
TEST_P(GectlModelsTest, MatchesTorchWithCpuDenseExcluded) {
  ExpectMatchesTorch(GetParam(), {"--option", "ge.exec.exclude_engines=cpu_dense"});
}

TEST(GectlPlacementTest, ExcludedEngineGetsNoNode) {
  for (const std::string model : {"resnet18_op17", "transformer_op17"}) {
    const auto by_default = Placement(model, {});
    EXPECT_GT(CountOn(by_default, "cpu_dense"), 0u) << model << ": the fast engine wins its ops by default";
    const auto excluded = Placement(model, {"--option", "ge.exec.exclude_engines=cpu_dense"});
    // cpu_dense's optimizer fuses nodes, so the graphs differ in size.
    ASSERT_GE(excluded.size(), by_default.size()) << model;
    EXPECT_EQ(CountOn(excluded, "cpu_dense"), 0u) << model;
  }
}

TEST(GectlPlacementTest, StrictModeWithAnExcludedEngineFailsNamingTheNodes) {
  const std::string model = (ModelDir("resnet18_op17") / "model.onnx").string();
  const std::vector<std::string> strict = {"--option", "ge.exec.exclude_engines=cpu_dense", "--option",
                                           "ge.exec.disable_host_cpu_fallback=1"};
  for (const std::string command : {"partition", "run"}) {
    std::vector<std::string> argv = {testing::BinaryDir() + "/bin/gectl", command, model};
    argv.insert(argv.end(), strict.begin(), strict.end());
    testing::ProcessResult r = RunProcess(argv, 300);
    EXPECT_EQ(r.signal, 0) << command;
    EXPECT_EQ(r.exit_code, 1) << command << ": " << r.err;
    EXPECT_NE(r.err.find("host_cpu"), std::string::npos) << command << ": " << r.err;
    EXPECT_NE(r.err.find("(Conv)"), std::string::npos) << command << " names the Conv nodes: " << r.err;
  }
}

INSTANTIATE_TEST_SUITE_P(Models, GectlModelsTest,
                         ::testing::Values("resnet18_op13", "resnet18_op17", "mobilenet_v2_op13",
                                           "mobilenet_v2_op17", "transformer_op13", "transformer_op17"));

}  // namespace
}  // namespace ge
