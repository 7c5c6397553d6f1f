// Plugin loading: the good path, each refusal, configuration files, and the
// registry's ordering and failure isolation.
#include "runtime/engines/plugin_loader.h"

#include <filesystem>
#include <fstream>

#include "base/strings.h"
#include "gtest/gtest.h"
#include "runtime/engines/api/plugin.h"
#include "runtime/engines/engine_registry.h"

namespace ge::engine {
namespace {

namespace fs = std::filesystem;

std::string PluginPath(const std::string& kind) {
  return std::string(std::getenv("GED_BINARY_DIR")) + "/tests/plugins/" + kind + "/libge_engine_test.so";
}

std::string TempDir() {
  auto dir = fs::temp_directory_path() / ("plugin-test-" + std::to_string(::getpid()) + "-" +
                                          ::testing::UnitTest::GetInstance()->current_test_info()->name());
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir.string();
}

TEST(PluginLoaderTest, LoadsGoodPlugin) {
  auto loaded = LoadEnginePlugin(PluginPath("good"));
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ((*loaded)->attributes().name, "test_good");
  EXPECT_EQ((*loaded)->attributes().compute_cost, 5);
  EXPECT_EQ((*loaded)->engine().info_store().SupportedOpTypes(), std::vector<std::string>{"Relu"});
}

TEST(PluginLoaderTest, RefusesOtherAbiVersion) {
  auto loaded = LoadEnginePlugin(PluginPath("wrong_abi"));
  ASSERT_FALSE(loaded.ok());
  EXPECT_EQ(loaded.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(std::string(loaded.status().message()).find(StrCat("engine ABI version ", GE_ENGINE_ABI_VERSION + 1)), std::string::npos) << loaded.status();
  EXPECT_NE(std::string(loaded.status().message()).find(PluginPath("wrong_abi")), std::string::npos);
}

TEST(PluginLoaderTest, RefusesOtherGedVersion) {
  auto loaded = LoadEnginePlugin(PluginPath("wrong_version"));
  ASSERT_FALSE(loaded.ok());
  EXPECT_NE(std::string(loaded.status().message()).find("built against ged 0.0.0-other"), std::string::npos)
      << loaded.status();
}

TEST(PluginLoaderTest, RefusesMissingEntryPoint) {
  auto loaded = LoadEnginePlugin(PluginPath("no_entry"));
  ASSERT_FALSE(loaded.ok());
  EXPECT_NE(std::string(loaded.status().message()).find("missing entry point 'ge_engine_plugin_entry'"),
            std::string::npos)
      << loaded.status();
}

TEST(PluginLoaderTest, RefusesFileThatIsNotALibrary) {
  const std::string dir = TempDir();
  std::ofstream(dir + "/libge_engine_fake.so") << "not an ELF file";
  auto loaded = LoadEnginePlugin(dir + "/libge_engine_fake.so");
  ASSERT_FALSE(loaded.ok());
  EXPECT_NE(std::string(loaded.status().message()).find("cannot load"), std::string::npos) << loaded.status();
  fs::remove_all(dir);
}

TEST(PluginLoaderTest, ConfigurationFileOverridesAttributes) {
  const std::string dir = TempDir();
  fs::copy_file(PluginPath("good"), dir + "/libge_engine_test.so");
  std::ofstream(dir + "/test_good.json")
      << R"({"name": "test_good", "compute_cost": 3, "runtime_type": "device", "independent": true})";
  auto loaded = LoadEnginePlugin(dir + "/libge_engine_test.so");
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ((*loaded)->attributes().compute_cost, 3);
  EXPECT_EQ((*loaded)->attributes().runtime_type, RuntimeType::kDevice);
  EXPECT_TRUE((*loaded)->attributes().independent_stream);
  fs::remove_all(dir);
}

TEST(PluginLoaderTest, BadConfigurationFileIsAnError) {
  const std::string dir = TempDir();
  fs::copy_file(PluginPath("good"), dir + "/libge_engine_test.so");
  std::ofstream(dir + "/test_good.json") << R"({"compute_cost": 11})";
  auto loaded = LoadEnginePlugin(dir + "/libge_engine_test.so");
  ASSERT_FALSE(loaded.ok());
  EXPECT_NE(std::string(loaded.status().message()).find("compute_cost 11 is outside 0..10"), std::string::npos)
      << loaded.status();
  fs::remove_all(dir);
}

TEST(PluginLoaderTest, ConfigurationFileDeclaresACostTable) {
  const std::string dir = TempDir();
  fs::copy_file(PluginPath("good"), dir + "/libge_engine_test.so");
  std::ofstream(dir + "/test_good.json")
      << R"({"cost": {"ops": {"*": [8000, 0.3], "Tanh": [30, 2.5]}, "boundary": [300, 0.5]}})";
  auto loaded = LoadEnginePlugin(dir + "/libge_engine_test.so");
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  const CostTable& cost = (*loaded)->attributes().cost;
  ASSERT_EQ(cost.ops.size(), 2u);
  EXPECT_EQ(cost.Find("Tanh")->element_ns, 2.5);
  EXPECT_EQ(cost.Find("Add")->call_ns, 8000);  // "*"
  EXPECT_EQ(cost.boundary.element_ns, 0.5);
  fs::remove_all(dir);
}

TEST(PluginLoaderTest, BadCostTablesAreErrors) {
  const std::string dir = TempDir();
  fs::copy_file(PluginPath("good"), dir + "/libge_engine_test.so");
  const std::pair<const char*, const char*> cases[] = {
      {R"({"cost": {"ops": {"*": [-1, 0]}}})", "must be finite and not negative"},
      {R"({"cost": {"ops": {"*": [1]}}})", "expected [call_ns, element_ns]"},
      {R"({"cost": {"ops": {}}})", "cost.ops must be a non-empty object"},
      {R"({"cost": {"ops": {"*": [1, 1]}, "per_call": 3}})", "unknown key 'per_call'"},
  };
  for (const auto& [text, expected] : cases) {
    std::ofstream(dir + "/test_good.json") << text;
    auto loaded = LoadEnginePlugin(dir + "/libge_engine_test.so");
    ASSERT_FALSE(loaded.ok()) << text;
    EXPECT_NE(std::string(loaded.status().message()).find(expected), std::string::npos) << loaded.status();
  }
  fs::remove_all(dir);
}

TEST(EngineRegistryTest, SkipsBrokenPluginsAndKeepsGoodOnes) {
  const std::string dir = TempDir();
  fs::copy_file(PluginPath("good"), dir + "/libge_engine_good.so");
  fs::copy_file(PluginPath("wrong_abi"), dir + "/libge_engine_wrong.so");
  EngineRegistry registry;
  std::vector<absl::Status> failures = registry.LoadDirectories({dir}, {});
  ASSERT_EQ(failures.size(), 1u);
  EXPECT_NE(std::string(failures[0].message()).find("libge_engine_wrong.so"), std::string::npos);
  EXPECT_EQ(registry.Names(), std::vector<std::string>{"test_good"});
  fs::remove_all(dir);
}

TEST(EngineRegistryTest, BuiltInEnginesLoadFromDefaultDirectory) {
  auto registry = CreateEngineRegistry({}, {});
  ASSERT_TRUE(registry.ok()) << registry.status();
  EXPECT_NE((*registry)->Find("ge_local"), nullptr);
}

class FakeEngine final : public Engine {
 public:
  FakeEngine(std::string name, int cost) {
    attributes_.name = std::move(name);
    attributes_.compute_cost = cost;
  }
  const EngineAttributes& attributes() const override { return attributes_; }
  const OpsKernelInfoStore& info_store() const override { std::abort(); }
  const KernelFactory& kernel_factory() const override { std::abort(); }

 private:
  EngineAttributes attributes_;
};

TEST(EngineRegistryTest, OrdersByCostThenName) {
  EngineRegistry registry;
  ASSERT_TRUE(registry.AddEngine(std::make_unique<FakeEngine>("zeta", 2), {}).ok());
  ASSERT_TRUE(registry.AddEngine(std::make_unique<FakeEngine>("alpha", 2), {}).ok());
  ASSERT_TRUE(registry.AddEngine(std::make_unique<FakeEngine>("last", 10), {}).ok());
  ASSERT_TRUE(registry.AddEngine(std::make_unique<FakeEngine>("first", 0), {}).ok());
  EXPECT_EQ(registry.Names(), (std::vector<std::string>{"first", "alpha", "zeta", "last"}));
  EXPECT_EQ(registry.AddEngine(std::make_unique<FakeEngine>("alpha", 1), {}).code(),
            absl::StatusCode::kAlreadyExists);
}

}  // namespace
}  // namespace ge::engine
