// Cache keys: the same for the same graph whatever the node order, and
// different whenever the weights, shapes, result-changing options, thread
// count, engines' cost tables or user key differ. Direct keys (from the
// source bytes) change with the bytes, the options, the namespace, the
// provenance, the checks and the model's location, and are stable otherwise.
#include "runtime/cache/cache_key.h"

#include <algorithm>

#include "runtime/cache/build_identity.h"

#include "base/ir/text_format.h"
#include "compiler/frontend/onnx_importer.h"
#include "gtest/gtest.h"
#include "tests/testing/onnx_builder.h"
#include "tests/testing/engines_test.h"

namespace ge::cache {
namespace {

constexpr char kGraph[] = R"(graph main {
    x = Data() {index = 0} -> (f32[2,3])
    w = Const() {value = tensor<f32[3]>[1, 2, 3]} -> (f32[3])
    y = Add(x:0, w:0) -> (f32[2,3])
    r = Relu(y:0) -> (f32[2,3])
    out = NetOutput(r:0)
  })";
// The same graph, nodes in another order.
constexpr char kReordered[] = R"(graph main {
    w = Const() {value = tensor<f32[3]>[1, 2, 3]} -> (f32[3])
    x = Data() {index = 0} -> (f32[2,3])
    y = Add(x:0, w:0) -> (f32[2,3])
    r = Relu(y:0) -> (f32[2,3])
    out = NetOutput(r:0)
  })";
constexpr char kOtherWeights[] = R"(graph main {
    x = Data() {index = 0} -> (f32[2,3])
    w = Const() {value = tensor<f32[3]>[1, 2, 4]} -> (f32[3])
    y = Add(x:0, w:0) -> (f32[2,3])
    r = Relu(y:0) -> (f32[2,3])
    out = NetOutput(r:0)
  })";
constexpr char kOtherShape[] = R"(graph main {
    x = Data() {index = 0} -> (f32[4,3])
    w = Const() {value = tensor<f32[3]>[1, 2, 3]} -> (f32[3])
    y = Add(x:0, w:0) -> (f32[4,3])
    r = Relu(y:0) -> (f32[4,3])
    out = NetOutput(r:0)
  })";

class CacheKeyTest : public ge::testing::EnginesTest {
 protected:
  std::string Key(const char* text, const OptionMap& options = {}, int threads = 2) {
    auto graph = ir::ParseGraph(text);
    EXPECT_TRUE(graph.ok()) << graph.status();
    auto key = ComputeCacheKey(**graph, options, {engines_, threads});
    EXPECT_TRUE(key.ok()) << key.status();
    EXPECT_TRUE(IsCacheKey(*key)) << *key;
    return *key;
  }
};

TEST_F(CacheKeyTest, SameGraphSameKeyWhateverTheNodeOrder) {
  EXPECT_EQ(Key(kGraph), Key(kGraph));
  EXPECT_EQ(Key(kGraph), Key(kReordered));
}

TEST_F(CacheKeyTest, HashingInParallelGivesTheSameKey) {
  ThreadPool pool(3, "key-test");
  auto graph = ir::ParseGraph(kGraph);
  ASSERT_TRUE(graph.ok());
  auto parallel = ComputeCacheKey(**graph, {}, {engines_, 2, &pool});
  ASSERT_TRUE(parallel.ok());
  EXPECT_EQ(*parallel, Key(kGraph));
}

TEST_F(CacheKeyTest, WeightsShapesAndThreadsChangeTheKey) {
  const std::string base = Key(kGraph);
  EXPECT_NE(base, Key(kOtherWeights));
  EXPECT_NE(base, Key(kOtherShape));
  EXPECT_NE(base, Key(kGraph, {}, /*threads=*/3));
}

TEST_F(CacheKeyTest, ResultChangingOptionsChangeTheKeyOthersDoNot) {
  const std::string base = Key(kGraph);
  EXPECT_NE(base, Key(kGraph, {{"ge.exec.static_model_ops_lower_limit", "-1"}}));
  EXPECT_NE(base, Key(kGraph, {{"ge.exec.exclude_engines", "cpu_dense"}}));
  EXPECT_NE(base, Key(kGraph, {{"ge.engineType", "cpu_vector"}}));
  // Disabling a pass changes what the compiler produces.
  EXPECT_NE(base, Key(kGraph, {{"ge.disable_passes", "ConstantFoldingPass"}}));
  EXPECT_FALSE(IsOptionIgnoredByCacheKey("ge.disable_passes"));
  // An explicit default is the same compile as no option.
  EXPECT_EQ(base, Key(kGraph, {{"ge.exec.static_model_ops_lower_limit", "4"}}));
  // Dumps and the cache's own options do not change the compiled model.
  EXPECT_EQ(base, Key(kGraph, {{"ge.dump_graph", "1"}, {"ge.dump_path", "/tmp/x"}}));
  EXPECT_EQ(base, Key(kGraph, {{"ge.graph_compiler_cache_dir", "/tmp/c"}}));
}

TEST_F(CacheKeyTest, UserKeysNameTheGraphAndKeepTheRest) {
  const KeyContext context{engines_, 2};
  const std::string a = UserCacheKey("resnet", {}, context);
  EXPECT_TRUE(IsCacheKey(a));
  EXPECT_EQ(a, UserCacheKey("resnet", {}, context));
  EXPECT_NE(a, UserCacheKey("resnet2", {}, context));
  EXPECT_NE(a, UserCacheKey("resnet", {{"ge.exec.static_model_ops_lower_limit", "-1"}}, context));
  EXPECT_NE(a, UserCacheKey("resnet", {}, {engines_, 4}));
  EXPECT_NE(a, Key(kGraph));
}

// The same ONNX model with its nodes and initializers in another order in
// the file (two independent branches, so both orders are topological).
onnx::ModelProto TwoBranchModel(bool reversed, float bias) {
  using namespace onnx_builder;  // NOLINT
  onnx::ModelProto model = MakeModel(13);
  onnx::GraphProto* g = model.mutable_graph();
  AddInput(g, "x", kF32, {2, 3});
  auto add_initializers = [&](bool flip) {
    for (int i = 0; i < 2; ++i) {
      const int which = flip ? 1 - i : i;
      AddInitializer(g, which == 0 ? "a" : "b", Tensor::FromVector<float>({bias + which, 2, 3}, Shape{3}));
    }
  };
  add_initializers(reversed);
  auto branch = [&](int which) {
    if (which == 0) {
      AddNode(g, "Add", {"x", "a"}, {"p"}, "add_a");
    } else {
      AddNode(g, "Mul", {"x", "b"}, {"q"}, "mul_b");
    }
  };
  branch(reversed ? 1 : 0);
  branch(reversed ? 0 : 1);
  AddNode(g, "Sub", {"p", "q"}, {"y"}, "sub");
  AddOutput(g, "y", kF32, {2, 3});
  return model;
}

TEST_F(CacheKeyTest, OnnxFilesDifferingOnlyInNodeOrderShareAKey) {
  auto key = [&](const onnx::ModelProto& model) {
    auto graph = frontend::ImportOnnxModel(model, "");
    EXPECT_TRUE(graph.ok()) << graph.status();
    auto k = ComputeCacheKey(**graph, {}, {engines_, 1});
    EXPECT_TRUE(k.ok()) << k.status();
    return *k;
  };
  // The imported graphs do hold their nodes in different orders.
  auto order = [](const onnx::ModelProto& model) {
    std::vector<std::string> names;
    auto graph = frontend::ImportOnnxModel(model, "");
    if (graph.ok()) {
      for (const ir::Node* n : (*graph)->nodes()) names.push_back(n->name());
    }
    return names;
  };
  ASSERT_NE(order(TwoBranchModel(false, 1)), order(TwoBranchModel(true, 1)));
  const std::string forward = key(TwoBranchModel(false, 1));
  EXPECT_EQ(forward, key(TwoBranchModel(true, 1)));
  EXPECT_NE(forward, key(TwoBranchModel(false, 5)));  // other weights
}

TEST_F(CacheKeyTest, OnlyHexDigestsAreKeys) {
  EXPECT_FALSE(IsCacheKey(""));
  EXPECT_FALSE(IsCacheKey(std::string(64, 'A')));
  EXPECT_FALSE(IsCacheKey(std::string(63, 'a') + "/"));
  EXPECT_FALSE(IsCacheKey("../" + std::string(61, 'a')));
  EXPECT_TRUE(IsCacheKey(std::string(64, 'f')));
}

// The key covers the build of the compiler and of the loaded engines, so a
// rebuilt ged never loads what an older build compiled.
TEST_F(CacheKeyTest, BuildIdentityNamesTheCompilerAndTheLoadedEngines) {
  const auto identity = CompilerBuildIdentity();
  auto find = [&](std::string_view name) {
    return std::find_if(identity.begin(), identity.end(), [&](const auto& entry) { return entry.first == name; });
  };
  auto compiler = find("libge_ops.so");  // shape inference: loaded by every process that compiles
  ASSERT_NE(compiler, identity.end());
  EXPECT_EQ(compiler->second.size(), 40u) << compiler->second;  // a SHA-1 build ID in hex
  EXPECT_EQ(compiler->second.find_first_not_of("0123456789abcdef"), std::string::npos);
  // The engine plugins this suite loaded are part of it; test binaries are not.
  bool plugin = false;
  for (const auto& [library, id] : identity) {
    plugin = plugin || library.find("host_cpu") != std::string::npos;
    EXPECT_EQ(library.find("test"), std::string::npos) << library;
  }
  EXPECT_TRUE(plugin);
  EXPECT_TRUE(std::is_sorted(identity.begin(), identity.end()));
}

// An engine with attributes only: what the key reads of a registry.
class AttributesOnlyEngine final : public engine::Engine {
 public:
  explicit AttributesOnlyEngine(engine::EngineAttributes attributes) { set_attributes(std::move(attributes)); }
  const engine::OpsKernelInfoStore& info_store() const override { std::abort(); }
  const engine::KernelFactory& kernel_factory() const override { std::abort(); }
};

// Cost tables decide placement, so they are part of the key.
TEST_F(CacheKeyTest, CostTablesChangeTheKey) {
  auto key_with = [](double call_ns) {
    engine::EngineAttributes a;
    a.name = "costed";
    a.cost.ops["*"] = {call_ns, 0.5};
    engine::EngineRegistry registry;
    EXPECT_TRUE(registry.AddEngine(std::make_unique<AttributesOnlyEngine>(a), {}).ok());
    auto graph = ir::ParseGraph(kGraph);
    EXPECT_TRUE(graph.ok());
    auto key = ComputeCacheKey(**graph, {}, {&registry, 2});
    EXPECT_TRUE(key.ok()) << key.status();
    return *key;
  };
  EXPECT_EQ(key_with(30), key_with(30));
  EXPECT_NE(key_with(30), key_with(8000));
}

// Direct mode: the key of a model's source bytes.
class DirectKeyTest : public CacheKeyTest {
 protected:
  static DirectSource Source(std::string_view bytes) {
    DirectSource source;
    source.format = "onnx";
    source.provenance = "operator";
    source.origin = "model_dir /models\nweights_root /models";
    source.bytes = ModelBytesDigest(bytes);
    return source;
  }
  std::string Key(const DirectSource& source, const OptionMap& options = {}, std::string ns = "operator") {
    KeyContext context{engines_, 2};
    context.cache_namespace = std::move(ns);
    const std::string key = DirectCacheKey(source, options, context);
    EXPECT_TRUE(IsCacheKey(key)) << key;
    return key;
  }
};

TEST_F(DirectKeyTest, StableForTheSameInputs) {
  EXPECT_EQ(Key(Source("model bytes")), Key(Source("model bytes")));
  EXPECT_EQ(Key(Source("model bytes"), {{"ge.oo.constantFolding", "0"}}),
            Key(Source("model bytes"), {{"ge.oo.constantFolding", "0"}}));
  // Options that never change the compiled model leave it alone, as for
  // content keys.
  EXPECT_EQ(Key(Source("model bytes")), Key(Source("model bytes"), {{"ge.exec.inter_op_parallelism", "3"}}));
}

TEST_F(DirectKeyTest, ChangesWithTheBytesOptionsNamespaceProvenanceChecksAndOrigin) {
  const std::string base = Key(Source("model bytes"));
  EXPECT_NE(base, Key(Source("model byteS")));
  EXPECT_NE(base, Key(Source("model bytes ")));
  EXPECT_NE(base, Key(Source("model bytes"), {{"ge.oo.constantFolding", "0"}}));
  EXPECT_NE(base, Key(Source("model bytes"), {}, TenantNamespace("a")));
  EXPECT_NE(Key(Source("model bytes"), {}, TenantNamespace("a")), Key(Source("model bytes"), {}, TenantNamespace("b")));
  DirectSource client = Source("model bytes");
  client.provenance = "client";
  EXPECT_NE(base, Key(client));
  DirectSource bounded = client;
  bounded.checks = "max_graph_nodes=10";
  EXPECT_NE(Key(client), Key(bounded));
  DirectSource moved = Source("model bytes");
  moved.origin = "model_dir /elsewhere\nweights_root /elsewhere";
  EXPECT_NE(base, Key(moved));
  DirectSource other_format = Source("model bytes");
  other_format.format = "graphdef";
  EXPECT_NE(base, Key(other_format));
  // Another thread count is another compiled model.
  KeyContext one_thread{engines_, 1};
  EXPECT_NE(base, DirectCacheKey(Source("model bytes"), {}, one_thread));
  // Never the content key of anything: another domain of keys.
  auto graph = ir::ParseGraph(kGraph);
  ASSERT_TRUE(graph.ok());
  EXPECT_NE(base, *ComputeCacheKey(**graph, {}, {engines_, 2}));
}

TEST_F(DirectKeyTest, BytesDigestIsTheSameInChunksAndInParallel) {
  // Three chunks and a bit, so the chunking and the pool both take part.
  std::string bytes((size_t{8} << 20) * 3 + 17, '\0');
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<char>((i * 2654435761u) >> 13);
  ThreadPool pool(2, "digest-test");
  const Sha256Digest serial = ModelBytesDigest(bytes);
  EXPECT_EQ(serial, ModelBytesDigest(bytes, &pool));
  std::string changed = bytes;
  changed[(size_t{8} << 20) * 2 + 5] ^= 1;  // one bit in the third chunk
  EXPECT_NE(serial, ModelBytesDigest(changed, &pool));
  EXPECT_NE(serial, ModelBytesDigest(std::string_view(bytes).substr(0, bytes.size() - 1)));
  EXPECT_NE(ModelBytesDigest(""), ModelBytesDigest(std::string_view("\0", 1)));
}

TEST_F(DirectKeyTest, IngestionBuildIdentityNamesTheImporter) {
  // Direct keys hash what the importer and the ingestion checks make of the
  // bytes: their libraries' builds are part of it when loaded.
  const auto identity = IngestionBuildIdentity();
  bool frontend = false;
  for (const auto& [library, id] : identity) {
    frontend = frontend || library == "libge_frontend.so";
    EXPECT_FALSE(id.empty()) << library;
  }
  EXPECT_TRUE(frontend);  // this test links the ONNX importer
  EXPECT_TRUE(std::is_sorted(identity.begin(), identity.end()));
}

}  // namespace
}  // namespace ge::cache
