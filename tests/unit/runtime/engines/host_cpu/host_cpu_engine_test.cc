// The host_cpu engine as a whole: attributes, CheckSupported answers and
// their reasons, the kernel factory's errors, coverage of the op registry,
// the built plugin (dlopen, entry point, ABI and version, configuration
// file) and the kernel test harness itself.
#include "runtime/engines/host_cpu/host_cpu_engine.h"

#include <dlfcn.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "absl/strings/str_join.h"
#include "base/ir/graph.h"
#include "base/ops/op_registry.h"
#include "base/version.h"
#include "runtime/engines/api/plugin.h"
#include "runtime/engines/plugin_loader.h"
#include "tests/unit/runtime/engines/host_cpu/host_cpu_test_util.h"

namespace ge::engine::host_cpu {
namespace {

TEST(HostCpuEngine, Attributes) {
  const EngineAttributes& a = Engine().attributes();
  EXPECT_EQ(a.name, "host_cpu");
  EXPECT_EQ(a.compute_cost, 10);
  EXPECT_TRUE(a.atomic);
  EXPECT_FALSE(a.independent_stream);
  EXPECT_TRUE(a.reference);  // host_cpu.json: the reference engine
  EXPECT_EQ(a.version, "1.0");
  // The embedded json parsed (Initialize would return its error).
  HostCpuEngine engine;
  EXPECT_TRUE(engine.Initialize({}).ok());
}

// CheckSupported on a node of a real graph, typed as the compiler types it.
absl::Status Check(ir::OpDesc op) {
  ir::Graph graph("g");
  auto node = graph.AddNode(std::move(op));
  EXPECT_TRUE(node.ok());
  return Engine().info_store().CheckSupported(**node);
}

ir::OpDesc Typed(const std::string& type, std::vector<DataType> inputs, std::vector<DataType> outputs) {
  test::OpBuilder b(type, "n1");
  for (DataType d : inputs) b.Input(ir::ValueType::Tensor(d, Shape{2}));
  for (DataType d : outputs) b.Output(ir::ValueType::Tensor(d, Shape{2}));
  return b.Build();
}

TEST(HostCpuEngine, CheckSupportedAcceptsHandledDtypes) {
  EXPECT_TRUE(Check(Typed("Relu", {DataType::kFloat}, {DataType::kFloat})).ok());
  EXPECT_TRUE(Check(Typed("Add", {DataType::kUint16, DataType::kUint16}, {DataType::kUint16})).ok());
  EXPECT_TRUE(Check(Typed("Equal", {DataType::kBool, DataType::kBool}, {DataType::kBool})).ok());
  ir::OpDesc cast = Typed("Cast", {DataType::kString}, {DataType::kFloat16});
  cast.SetAttr("to", static_cast<int64_t>(DataType::kFloat16));
  EXPECT_TRUE(Check(cast).ok());
  EXPECT_TRUE(Check(Typed("Pow", {DataType::kFloat, DataType::kInt8}, {DataType::kFloat})).ok());
  // Untyped ports (not yet inferred) do not block.
  EXPECT_TRUE(Check(Typed("Relu", {DataType::kUndefined}, {DataType::kUndefined})).ok());
}

TEST(HostCpuEngine, CheckSupportedGivesTheReason) {
  absl::Status s = Check(Typed("Foo", {DataType::kFloat}, {DataType::kFloat}));
  EXPECT_EQ(s.code(), absl::StatusCode::kUnimplemented);
  EXPECT_EQ(std::string(s.message()), "host_cpu has no kernel for op type Foo");
  s = Check(Typed("Relu", {DataType::kString}, {DataType::kString}));
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(std::string(s.message()).rfind("Relu on host_cpu does not support dtype string", 0), 0u) << s;
  s = Check(Typed("Sqrt", {DataType::kInt32}, {DataType::kInt32}));
  EXPECT_NE(s.message().find("i32"), absl::string_view::npos) << s;
  s = Check(Typed("Gather", {DataType::kFloat, DataType::kFloat}, {DataType::kFloat}));
  EXPECT_NE(s.message().find("input 1"), absl::string_view::npos) << s;
  // Attributes the kernel cannot run with.
  ir::OpDesc bn = Typed("BatchNormalization", {DataType::kFloat}, {DataType::kFloat});
  bn.SetAttr("training_mode", int64_t{1});
  s = Check(bn);
  EXPECT_EQ(s.code(), absl::StatusCode::kUnimplemented) << s;
  EXPECT_NE(s.message().find("training_mode"), absl::string_view::npos) << s;
}

TEST(HostCpuEngine, FactoryErrors) {
  auto k = Engine().kernel_factory().CreateKernel(test::OpBuilder("NoSuchOp", "x9").Build());
  ASSERT_FALSE(k.ok());
  EXPECT_EQ(k.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_NE(k.status().message().find("NoSuchOp"), absl::string_view::npos);
  EXPECT_NE(k.status().message().find("x9"), absl::string_view::npos);
  EXPECT_FALSE(Engine().kernel_factory().CreateKernel(test::OpBuilder("Concat").Build()).ok());  // no axis
}

// Every computational op in the registry has a host_cpu kernel: host_cpu is
// the fallback of last resort.
TEST(HostCpuEngine, CoversTheOpRegistry) {
  const std::vector<std::string> types = Engine().info_store().SupportedOpTypes();
  const StringSet supported(types.begin(), types.end());
  // ged's structural ops are run by the executor and ge_local, control flow
  // and the loop accumulators, SequenceMap and GearIndex by the control_flow engine; the importer
  // lowers Loop and Scan to While.
  const StringSet elsewhere = {"Data",
                               "NetOutput",
                               "Const",
                               "FileConstant",
                               "Variable",
                               "VarIsInitializedOp",
                               "NoOp",
                               "TransData",
                               "PartitionedCall",
                               "InnerData",
                               "InnerNetOutput",
                               "PlaceHolder",
                               "End",
                               "If",
                               "Case",
                               "While",
                               "Loop",
                               "Scan",
                               "LoopAccumulatorInit",
                               "LoopAccumulatorAppend",
                               "LoopAccumulatorStack",
                               "LoopAccumulatorConcat",
                               "SequenceMap",
                               "GearIndex"};
  std::vector<std::string> missing;
  for (const ops::OpSchema* schema : ops::OpRegistry::Global().All()) {
    if (!schema->domain.empty() || elsewhere.contains(schema->type)) continue;
    if (!supported.contains(schema->type)) missing.push_back(schema->type);
  }
  EXPECT_TRUE(missing.empty()) << "no host_cpu kernel for: " << absl::StrJoin(missing, ", ");
  // And no kernel for an op the registry does not know.
  for (const std::string& type : types) {
    EXPECT_NE(ops::OpRegistry::Global().Find(type), nullptr) << type << " has a kernel but no schema";
  }
}

// ---- The plugin ----

std::string PluginPath() {
  const char* dir = std::getenv("GED_BINARY_DIR");
  return std::string(dir ? dir : ".") + "/lib/ged/engines/libge_engine_host_cpu.so";
}

TEST(HostCpuPlugin, EntryPointNamesAbiVersionAndEngine) {
  void* handle = dlopen(PluginPath().c_str(), RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(handle, nullptr) << dlerror();
  auto entry = reinterpret_cast<GeEnginePluginEntryFn>(dlsym(handle, GE_ENGINE_PLUGIN_ENTRY_SYMBOL));
  ASSERT_NE(entry, nullptr) << dlerror();
  const GeEnginePlugin* plugin = entry();
  ASSERT_NE(plugin, nullptr);
  EXPECT_EQ(plugin->abi_version, GE_ENGINE_ABI_VERSION);
  EXPECT_STREQ(plugin->ged_version, GED_VERSION_STRING);
  EXPECT_STREQ(plugin->engine_name, "host_cpu");
  ge::engine::Engine* engine = plugin->create();
  ASSERT_NE(engine, nullptr);
  EXPECT_EQ(engine->attributes().name, "host_cpu");
  EXPECT_GT(engine->info_store().SupportedOpTypes().size(), 90u);
  plugin->destroy(engine);
  dlclose(handle);
}

TEST(HostCpuPlugin, LoadsThroughThePluginLoaderWithItsConfiguration) {
  // The json is embedded in the plugin: no file beside it.
  EXPECT_FALSE(std::filesystem::exists(std::filesystem::path(PluginPath()).parent_path() / "host_cpu.json"));
  auto loaded = LoadEnginePlugin(PluginPath());
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ((*loaded)->attributes().name, "host_cpu");
  EXPECT_EQ((*loaded)->attributes().compute_cost, 10);
  EXPECT_TRUE((*loaded)->attributes().reference);
  // The loaded engine computes.
  auto y = test::RunOp1((*loaded)->engine(), "Add", {F32({1}, {1}), F32({2}, {1})});
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_EQ(y->data<float>()[0], 3.0f);
}

// ---- The harness ----

TEST(KernelTestHarness, TensorNearReportsTheFirstMismatch) {
  const Tensor a = F32({1, 2, 3, 4, 5, 6}, {2, 3});
  const Tensor b = F32({1, 2, 3, 4, 5.5f, 7}, {2, 3});
  const ::testing::AssertionResult r = test::TensorNear(a, b, {1e-3, 0});
  ASSERT_FALSE(r);
  const std::string message = r.message();
  EXPECT_NE(message.find("2 of 6 elements differ"), std::string::npos) << message;
  EXPECT_NE(message.find("flat index 4 [1,1]"), std::string::npos) << message;
  EXPECT_NE(message.find("got 5, expected 5.5"), std::string::npos) << message;
  EXPECT_TRUE(test::TensorNear(a, b, {1.0, 0}));
  EXPECT_FALSE(test::TensorEq(a, a.Reshaped(Shape{3, 2})));
  EXPECT_FALSE(test::TensorEq(a, test::MakeTensor(DataType::kDouble, {1, 2, 3, 4, 5, 6}, {2, 3})));
  EXPECT_TRUE(test::TensorEq(F32({NAN}, {1}), F32({NAN}, {1})));
  EXPECT_FALSE(test::TensorEq(F32({INFINITY}, {1}), F32({-INFINITY}, {1})));
}

// Kernels that break the contract: output 0 with a shape inference did
// not give, or output 0 only when the node has two.
class BrokenKernel final : public Kernel {
 public:
  explicit BrokenKernel(bool wrong_shape) : wrong_shape_(wrong_shape) {}
  absl::Status Compute(ExecuteContext& ctx) override {
    if (wrong_shape_) return ctx.Output(0, Shape{7}).status();
    return ctx.SetOutputValue(0, ctx.input_value(0));
  }

 private:
  bool wrong_shape_;
};
class BrokenFactory final : public KernelFactory {
 public:
  explicit BrokenFactory(bool wrong_shape) : wrong_shape_(wrong_shape) {}
  absl::StatusOr<std::unique_ptr<Kernel>> CreateKernel(const ir::OpDesc&) const override {
    return std::unique_ptr<Kernel>(new BrokenKernel(wrong_shape_));
  }

 private:
  bool wrong_shape_;
};

TEST(KernelTestHarness, ChecksOutputsAgainstInference) {
  const Tensor x = F32({1, 2}, {2});
  const ir::OpDesc op = test::OpBuilder("Relu").Inputs({x}).Outputs(1).Build();
  auto out = test::RunKernel(BrokenFactory(/*wrong_shape=*/true), op, {x});
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().message().find("inference gave f32[2]"), absl::string_view::npos) << out.status();
  const ir::OpDesc two = test::OpBuilder("Dropout").Inputs({x}).Outputs(2).Build();
  out = test::RunKernel(BrokenFactory(/*wrong_shape=*/false), two, {x});
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().message().find("did not produce output 1"), absl::string_view::npos) << out.status();
  EXPECT_TRUE(test::RunKernel(BrokenFactory(/*wrong_shape=*/false), op, {x}).ok());
}

// An engine whose Relu is off by one, to see MatchesReference fail.
class OffByOneEngine final : public ge::engine::Engine {
 public:
  class Factory final : public KernelFactory {
   public:
    absl::StatusOr<std::unique_ptr<Kernel>> CreateKernel(const ir::OpDesc& op) const override {
      auto inner = host_cpu::Engine().kernel_factory().CreateKernel(op);
      if (!inner.ok()) return inner.status();
      return std::unique_ptr<Kernel>(new Wrapper(*std::move(inner)));
    }
  };
  class Wrapper final : public Kernel {
   public:
    explicit Wrapper(std::unique_ptr<Kernel> inner) : inner_(std::move(inner)) {}
    absl::Status Compute(ExecuteContext& ctx) override {
      GE_RETURN_IF_ERROR(inner_->Compute(ctx));
      GE_ASSIGN_OR_RETURN(Tensor y, ctx.Output(0));
      y.data<float>()[0] += 1.0f;
      return absl::OkStatus();
    }

   private:
    std::unique_ptr<Kernel> inner_;
  };
  OffByOneEngine() { attributes_.name = "off_by_one"; }
  const OpsKernelInfoStore& info_store() const override { return host_cpu::Engine().info_store(); }
  const KernelFactory& kernel_factory() const override { return factory_; }

 private:
  Factory factory_;
};

TEST(KernelTestHarness, MatchesReferenceComparesEngines) {
  const Tensor x = F32({-1, 2}, {2});
  const ir::OpDesc op = test::OpBuilder("Relu", "relu3").Inputs({x}).Outputs(1).Build();
  EXPECT_TRUE(test::MatchesReference(Engine(), Engine(), op, {x}));
  const ::testing::AssertionResult r = test::MatchesReference(OffByOneEngine(), Engine(), op, {x});
  ASSERT_FALSE(r);
  EXPECT_NE(std::string(r.message()).find("off_by_one vs host_cpu on node 'relu3' (Relu)"),
            std::string::npos)
      << r.message();
}

// Executors do not clear output storage (the static executor's arena is
// reused, the dynamic executor's caching allocator hands blocks back as they
// were), so the harness poisons what Output() returns: a kernel that leaves
// an element unwritten fails its comparison instead of passing on a zero.
TEST(KernelTestHarness, OutputsComePoisonedNotZeroed) {
  test::TestExecuteContext ctx(
      {},
      {ir::ValueType::Tensor(DataType::kFloat, Shape{3}), ir::ValueType::Tensor(DataType::kInt32, Shape{2}),
       ir::ValueType::Tensor(DataType::kBool, Shape{2})},
      nullptr, 0);
  auto f = ctx.Output(0);
  auto i = ctx.Output(1);
  auto b = ctx.Output(2);
  ASSERT_TRUE(f.ok() && i.ok() && b.ok());
  for (int64_t k = 0; k < 3; ++k) EXPECT_TRUE(std::isnan(f->data<float>()[k]));
  for (int64_t k = 0; k < 2; ++k) EXPECT_EQ(i->data<int32_t>()[k], -1);
  for (int64_t k = 0; k < 2; ++k) EXPECT_TRUE(b->data<bool>()[k]);
}

}  // namespace
}  // namespace ge::engine::host_cpu
