// Plugin loading: the good path, each refusal, the engine's json (embedded
// or beside the library: its one source of attributes), and the registry's
// ordering, failure isolation and reference engine.
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
  EXPECT_EQ((*loaded)->attributes().compute_cost, 5);  // from the json the plugin embeds
  EXPECT_EQ((*loaded)->attributes().version, "2");
  // The engine object holds the same attributes (one copy, one source).
  EXPECT_EQ(&(*loaded)->engine().attributes(), &(*loaded)->attributes());
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

// A plugin that embeds no json: `<engine>.json` beside it.
std::string BesidePlugin(const std::string& dir) {
  fs::copy_file(PluginPath("beside"), dir + "/libge_engine_test.so");
  return dir + "/libge_engine_test.so";
}

TEST(PluginLoaderTest, ConfigurationFileOverridesAttributes) {
  const std::string dir = TempDir();
  const std::string plugin = BesidePlugin(dir);
  std::ofstream(dir + "/test_good.json")
      << R"({"name": "test_good", "compute_cost": 3, "independent": true, "version": "7"})";
  auto loaded = LoadEnginePlugin(plugin);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ((*loaded)->attributes().name, "test_good");
  EXPECT_EQ((*loaded)->attributes().compute_cost, 3);
  EXPECT_TRUE((*loaded)->attributes().independent_stream);
  EXPECT_EQ((*loaded)->attributes().version, "7");
  EXPECT_FALSE((*loaded)->attributes().reference);
  fs::remove_all(dir);
}

TEST(PluginLoaderTest, PluginWithoutJsonIsRefused) {
  const std::string dir = TempDir();
  auto loaded = LoadEnginePlugin(BesidePlugin(dir));
  ASSERT_FALSE(loaded.ok());
  EXPECT_EQ(loaded.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(std::string(loaded.status().message()).find("embeds no json and " + dir + "/test_good.json"),
            std::string::npos)
      << loaded.status();
  fs::remove_all(dir);
}

TEST(PluginLoaderTest, EmbeddedJsonIsTheOnlySource) {
  // A file beside a plugin that embeds its json is not read.
  const std::string dir = TempDir();
  fs::copy_file(PluginPath("good"), dir + "/libge_engine_test.so");
  std::ofstream(dir + "/test_good.json") << R"({"compute_cost": 3})";
  auto loaded = LoadEnginePlugin(dir + "/libge_engine_test.so");
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ((*loaded)->attributes().compute_cost, 5);
  fs::remove_all(dir);
}

TEST(PluginLoaderTest, BadConfigurationFileIsAnError) {
  const std::string dir = TempDir();
  const std::string plugin = BesidePlugin(dir);
  const std::pair<const char*, const char*> cases[] = {
      {R"({"compute_cost": 11})", "compute_cost 11 is outside 0..10"},
      {R"({"name": "other"})", "names engine 'other' but the plugin provides 'test_good'"},
      {R"([1, 2])", "expected a JSON object"},
      // The keys engine ABI 3 parsed and never read are gone.
      {R"({"attach": true})", "unknown key 'attach'"},
      {R"({"skip_assign_stream": false})", "unknown key 'skip_assign_stream'"},
      {R"({"runtime_type": "host"})", "unknown key 'runtime_type'"},
      {R"({"atomic": false, "composite_engine": "x"})", "cannot itself name a composite_engine"},
  };
  for (const auto& [text, expected] : cases) {
    std::ofstream(dir + "/test_good.json") << text;
    auto loaded = LoadEnginePlugin(plugin);
    ASSERT_FALSE(loaded.ok()) << text;
    EXPECT_NE(std::string(loaded.status().message()).find(expected), std::string::npos) << loaded.status();
    EXPECT_NE(std::string(loaded.status().message()).find(dir + "/test_good.json"), std::string::npos)
        << loaded.status();
  }
  fs::remove_all(dir);
}

TEST(PluginLoaderTest, ConfigurationFileDeclaresACostTable) {
  const std::string dir = TempDir();
  const std::string plugin = BesidePlugin(dir);
  std::ofstream(dir + "/test_good.json")
      << R"({"cost": {"ops": {"*": [8000, 0.3], "Tanh": [30, 2.5]}, "boundary": [300, 0.5]}})";
  auto loaded = LoadEnginePlugin(plugin);
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
  const std::string plugin = BesidePlugin(dir);
  const std::pair<const char*, const char*> cases[] = {
      {R"({"cost": {"ops": {"*": [-1, 0]}}})", "must be finite and not negative"},
      {R"({"cost": {"ops": {"*": [1]}}})", "expected [call_ns, element_ns]"},
      {R"({"cost": {"ops": {}}})", "cost.ops must be a non-empty object"},
      {R"({"cost": {"ops": {"*": [1, 1]}, "per_call": 3}})", "unknown key 'per_call'"},
  };
  for (const auto& [text, expected] : cases) {
    std::ofstream(dir + "/test_good.json") << text;
    auto loaded = LoadEnginePlugin(plugin);
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

// Every built-in engine loads (its embedded json parses), and the reference
// engine is the one whose json says so: host_cpu.
TEST(EngineRegistryTest, BuiltInEnginesDeclareTheReferenceEngine) {
  EngineRegistry registry;
  std::vector<absl::Status> failures = registry.LoadDirectories({DefaultEngineDirectory()}, {});
  for (const absl::Status& f : failures) ADD_FAILURE() << f;
  EXPECT_EQ(registry.Names(),
            (std::vector<std::string>{"cpu_dense", "cpu_fused", "control_flow", "cpu_vector", "ge_local", "host_cpu"}));
  ASSERT_NE(registry.Reference(), nullptr);
  EXPECT_EQ(registry.Reference()->attributes().name, "host_cpu");
  int references = 0;
  for (const std::string& name : registry.Names()) {
    const EngineAttributes* a = registry.FindAttributes(name);
    ASSERT_NE(a, nullptr) << name;
    references += a->reference ? 1 : 0;
    EXPECT_FALSE(a->version.empty()) << name;
  }
  EXPECT_EQ(references, 1);
}

class FakeEngine final : public Engine {
 public:
  FakeEngine(std::string name, int cost, bool reference = false, const Engine** told = nullptr) : told_(told) {
    attributes_.name = std::move(name);
    attributes_.compute_cost = cost;
    attributes_.reference = reference;
  }
  const OpsKernelInfoStore& info_store() const override { std::abort(); }
  const KernelFactory& kernel_factory() const override { std::abort(); }
  void SetReferenceEngine(const Engine* reference) override {
    if (told_ != nullptr) *told_ = reference;
  }

 private:
  const Engine** told_;
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

// The reference engine is whichever engine's attribute says so, whatever its
// name or cost; every engine is told which it is, also when it comes later.
TEST(EngineRegistryTest, ReferenceEngineIsChosenByAttribute) {
  EngineRegistry registry;
  const Engine* told_fast = nullptr;
  ASSERT_TRUE(registry.AddEngine(std::make_unique<FakeEngine>("fast", 1, false, &told_fast), {}).ok());
  EXPECT_EQ(registry.Reference(), nullptr);
  ASSERT_TRUE(registry.AddEngine(std::make_unique<FakeEngine>("slow", 10), {}).ok());
  EXPECT_EQ(registry.Reference(), nullptr);  // the highest cost alone does not make a reference
  ASSERT_TRUE(registry.AddEngine(std::make_unique<FakeEngine>("oracle", 5, true), {}).ok());
  ASSERT_NE(registry.Reference(), nullptr);
  EXPECT_EQ(registry.Reference()->attributes().name, "oracle");
  EXPECT_EQ(told_fast, registry.Reference());
  const Engine* told_late = nullptr;
  ASSERT_TRUE(registry.AddEngine(std::make_unique<FakeEngine>("late", 3, false, &told_late), {}).ok());
  EXPECT_EQ(told_late, registry.Reference());
}

TEST(EngineRegistryTest, RefusesASecondReferenceEngine) {
  EngineRegistry registry;
  ASSERT_TRUE(registry.AddEngine(std::make_unique<FakeEngine>("oracle", 10, true), {}).ok());
  absl::Status second = registry.AddEngine(std::make_unique<FakeEngine>("other", 10, true), {});
  EXPECT_EQ(second.code(), absl::StatusCode::kAlreadyExists);
  EXPECT_NE(std::string(second.message()).find("'oracle' already is"), std::string::npos) << second;
  EXPECT_EQ(registry.Names(), std::vector<std::string>{"oracle"});
}

}  // namespace
}  // namespace ge::engine
