// Gears on the torch-exported dynamic models (scripts/make_test_models.py:
// resnet18_dynbatch, transformer_dynseq): `gectl compile` with the model's
// gear flags writes a .gem whose gear branches are static; `gectl run` of
// that .gem returns torch's outputs at every gear; a size between gears
// fails listing them, and runs on the dynamic graph in hybrid mode.
#include <filesystem>

#include "base/io/npy.h"
#include "gtest/gtest.h"
#include "tests/integration/process.h"
#include "yaml-cpp/yaml.h"

namespace ge {
namespace {

namespace fs = std::filesystem;
using testing::RunProcess;

fs::path ModelDir(const std::string& model) { return fs::path(testing::BinaryDir()) / "models" / model; }
std::string Gectl() { return testing::BinaryDir() + "/bin/gectl"; }

class GearsModelsTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = testing::MakeTempDir("gectl-gears"); }
  void TearDown() override { fs::remove_all(dir_); }

  YAML::Node Meta(const std::string& model) {
    const fs::path dir = ModelDir(model);
    EXPECT_TRUE(fs::exists(dir / "model.onnx")) << dir << " missing: run scripts/make_test_models.py";
    return YAML::LoadFile((dir / "meta.json").string());
  }

  // Compiles `model` with its gear flags (and `extra`) into a .gem.
  std::string Compile(const std::string& model, const std::vector<std::string>& extra) {
    const YAML::Node meta = Meta(model);
    const std::string gem = dir_ + "/" + model + (extra.empty() ? "" : "_hybrid") + ".gem";
    std::vector<std::string> argv = {Gectl(), "compile", (ModelDir(model) / "model.onnx").string(), "-o", gem,
                                     "--no-cache"};
    for (const auto& flag : meta["gear_flags"]) argv.push_back(flag.as<std::string>());
    argv.insert(argv.end(), extra.begin(), extra.end());
    testing::ProcessResult r = RunProcess(argv, 600);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return gem;
  }

  // Runs `path` (a .gem, or the .onnx with `extra` flags) on the inputs
  // recorded for `size`, writing the outputs under dir_/out_<size>.
  testing::ProcessResult Run(const std::string& model, const std::string& path, int64_t size,
                             const std::vector<std::string>& extra = {}) {
    const YAML::Node meta = Meta(model);
    const std::string out = dir_ + "/out_" + std::to_string(size);
    std::vector<std::string> argv = {Gectl(), "run", path, "--output-dir", out};
    argv.insert(argv.end(), extra.begin(), extra.end());
    for (const auto& input : meta["inputs"]) {
      const std::string name = input.as<std::string>();
      argv.push_back("--input");
      argv.push_back(name + "=" + (ModelDir(model) / "inputs" / (name + "_" + std::to_string(size) + ".npy")).string());
    }
    return RunProcess(argv, 300);
  }

  void ExpectTorch(const std::string& model, const std::string& path, int64_t size,
                   const std::vector<std::string>& extra = {}) {
    testing::ProcessResult r = Run(model, path, size, extra);
    ASSERT_EQ(r.exit_code, 0) << "size " << size << ": " << r.err;
    const YAML::Node meta = Meta(model);
    const double atol = meta["atol"].as<double>();
    for (const auto& output : meta["outputs"]) {
      const std::string name = output.as<std::string>();
      auto actual = io::ReadNpyFile(dir_ + "/out_" + std::to_string(size) + "/" + name + ".npy");
      auto expected = io::ReadNpyFile(
          (ModelDir(model) / "expected" / (name + "_" + std::to_string(size) + ".npy")).string());
      ASSERT_TRUE(actual.ok() && expected.ok()) << actual.status() << expected.status();
      ASSERT_EQ(actual->shape(), expected->shape()) << "size " << size;
      double worst = 0;
      for (int64_t i = 0; i < actual->NumElements(); ++i) {
        worst = std::max(worst, std::abs(actual->GetAsDouble(i) - expected->GetAsDouble(i)));
      }
      EXPECT_LE(worst, atol) << model << " size " << size << " output " << name;
    }
  }

  std::string dir_;
};

TEST_F(GearsModelsTest, Resnet18GearsMatchTorchAndBatch3NeedsHybridMode) {
  const std::string model = "resnet18_dynbatch";
  const std::string gem = Compile(model, {});
  for (int64_t batch : {1, 4, 8}) ExpectTorch(model, gem, batch);
  testing::ProcessResult off = Run(model, gem, 3);
  EXPECT_EQ(off.exit_code, 1);
  EXPECT_NE(off.err.find("input shape [3,3,224,224] fits no gear of this model; the gears of --dynamic_batch_size "
                         "(ge.dynamicBatchSize) are: 1; 4; 8"),
            std::string::npos)
      << off.err;
  const std::string hybrid = Compile(model, {"--compile_hybrid_mode"});
  for (int64_t batch : {3, 4}) ExpectTorch(model, hybrid, batch);
}

// Each gear branch of resnet18 is one static unit on the StaticExecutor.
TEST_F(GearsModelsTest, Resnet18GearBranchesAreStatic) {
  const YAML::Node meta = Meta("resnet18_dynbatch");
  std::vector<std::string> argv = {Gectl(), "partition", (ModelDir("resnet18_dynbatch") / "model.onnx").string(),
                                   "--no-cache"};
  for (const auto& flag : meta["gear_flags"]) argv.push_back(flag.as<std::string>());
  testing::ProcessResult r = RunProcess(argv, 600);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const std::string unit : {"torch_jit_gear_0_static_0: static", "torch_jit_gear_1_static_0: static",
                                 "torch_jit_gear_2_static_0: static"}) {
    EXPECT_NE(r.out.find(unit), std::string::npos) << unit << "\n" << r.out.substr(r.out.find("subgraphs ("));
  }
  EXPECT_EQ(r.out.find("torch_jit_gear_0_dynamic"), std::string::npos);
}

// --external-weight covers every graph a gear model runs from: the gear
// branches and, in hybrid mode, the dynamic graph. Each weight is written
// once (the branches share it), the .gem keeps none, and the runs read the
// file: without it they fail naming it.
TEST_F(GearsModelsTest, ExternalWeightsCoverEveryGearAndTheHybridGraph) {
  const std::string model = "resnet18_dynbatch";
  const std::string gem = Compile(model, {"--compile_hybrid_mode", "--external-weight", "2"});
  const std::string weights = dir_ + "/" + model + "_hybrid.weights.bin";
  EXPECT_LT(fs::file_size(gem), 1u << 20);
  EXPECT_GT(fs::file_size(weights), 40u << 20);
  EXPECT_LT(fs::file_size(weights), 50u << 20) << "resnet18's 45 MB of weights written more than once";
  for (int64_t batch : {4, 3}) ExpectTorch(model, gem, batch);
  fs::rename(weights, weights + ".moved");
  for (int64_t batch : {4, 3}) {
    testing::ProcessResult r = Run(model, gem, batch);
    EXPECT_EQ(r.exit_code, 1) << "batch " << batch;
    EXPECT_NE(r.err.find(model + "_hybrid.weights.bin"), std::string::npos) << r.err;
  }
}

TEST_F(GearsModelsTest, TransformerDynamicDimsMatchTorchAtEveryGear) {
  const std::string model = "transformer_dynseq";
  const std::string gem = Compile(model, {});
  for (int64_t seq : {8, 16, 32}) ExpectTorch(model, gem, seq);
}

// The same dynamic models without gears, JIT-compiled at run time
// (ge.jitCompile): slice by slice for the sizes the inputs have. The
// transformer's slices run its int64 shape arithmetic (Gather of a Shape,
// Unsqueeze, Mul) on the static path, where the memory planner once let Mul
// overwrite a buffer an Unsqueeze view of the same value still needed.
TEST_F(GearsModelsTest, JitCompiledDynamicModelsMatchTorch) {
  ExpectTorch("transformer_dynseq", (ModelDir("transformer_dynseq") / "model.onnx").string(), 16,
              {"--no-cache", "--option", "ge.jitCompile=1"});
  ExpectTorch("resnet18_dynbatch", (ModelDir("resnet18_dynbatch") / "model.onnx").string(), 3,
              {"--no-cache", "--option", "ge.jitCompile=1"});
}

}  // namespace
}  // namespace ge
