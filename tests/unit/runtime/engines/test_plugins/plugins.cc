// Engine plugins made for the plugin loader's tests. One source, built
// several times with different definitions:
//   GOOD            a valid plugin for engine "test_good", its json embedded
//   BESIDE          the same engine with its json to be shipped beside it
//   WRONG_ABI       declares an engine ABI version this ged does not speak
//   WRONG_VERSION   declares another ged version
//   NO_ENTRY        exports no entry point
#include "base/version.h"
#include "runtime/engines/api/plugin.h"

namespace {

class TestEngine final : public ge::engine::Engine {
 public:
  class Store final : public ge::engine::OpsKernelInfoStore {
   public:
    absl::Status CheckSupported(const ge::ir::Node& node) const override {
      if (node.type() == "Relu") return absl::OkStatus();
      return absl::UnimplementedError("test_good runs Relu only");
    }
    std::vector<std::string> SupportedOpTypes() const override { return {"Relu"}; }
  };
  class Factory final : public ge::engine::KernelFactory {
   public:
    absl::StatusOr<std::unique_ptr<ge::engine::Kernel>> CreateKernel(const ge::ir::OpDesc&) const override {
      return absl::UnimplementedError("test engine has no kernels");
    }
  };
  const ge::engine::OpsKernelInfoStore& info_store() const override { return store_; }
  const ge::engine::KernelFactory& kernel_factory() const override { return factory_; }

 private:
  Store store_;
  Factory factory_;
};

}  // namespace

#if defined(GOOD)
GE_DEFINE_ENGINE_PLUGIN(TestEngine, "test_good", R"({"name": "test_good", "compute_cost": 5, "version": "2"})")
#elif defined(BESIDE)
GE_DEFINE_ENGINE_PLUGIN(TestEngine, "test_good", nullptr)
#elif defined(WRONG_ABI) || defined(WRONG_VERSION)
extern "C" __attribute__((visibility("default"))) const GeEnginePlugin* ge_engine_plugin_entry() {
#if defined(WRONG_ABI)
  static const GeEnginePlugin plugin = {
    GE_ENGINE_ABI_VERSION + 1,
    GED_VERSION_STRING,
    "test_good",
#else
  static const GeEnginePlugin plugin = {GE_ENGINE_ABI_VERSION, "0.0.0-other", "test_good",
#endif
    R"({"compute_cost": 5})",
    []() -> ge::engine::Engine* { return new TestEngine(); },
    [](ge::engine::Engine* e) { delete e; }
  };
  return &plugin;
}
#elif defined(NO_ENTRY)
extern "C" __attribute__((visibility("default"))) int not_the_entry_point() { return 0; }
#endif
