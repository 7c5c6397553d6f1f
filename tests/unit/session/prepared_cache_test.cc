// Compile-through-cache with prepared state (issue 22 item 2): a cache hit
// creates its executor from the packed weights kept in the entry
// (engine::TaskDef::prepared, cpu_dense's prepared_weights.h) and packs
// nothing; the cold compile packs each constant weight once, at build time,
// and its executor adopts that packing too. Counted with cpu_dense's
// counters (the engine library the loaded plugin shares), not timed.
#include <unistd.h>

#include <filesystem>

#include "gtest/gtest.h"
#include "onnx/onnx_pb.h"
#include "runtime/engines/cpu_dense/dense_kernel.h"
#include "runtime/engines/cpu_dense/prepared_weights.h"
#include "session/compile_cache.h"
#include "session/runtime.h"
#include "tests/testing/kernel_test_util.h"
#include "tests/testing/onnx_builder.h"

namespace ge::session {
namespace {

namespace fs = std::filesystem;
using engine::cpu_dense::PreparedAdoptions;
using engine::cpu_dense::PreparedMismatches;
using engine::cpu_dense::WeightPacks;

// Y = Relu(Conv(X, W, B)) with X [1,16,8,8], W [32,16,3,3], pads 1.
onnx::ModelProto ConvModel() {
  using namespace onnx_builder;  // NOLINT
  onnx::ModelProto model = MakeModel(17);
  onnx::GraphProto* g = model.mutable_graph();
  g->set_name("conv");
  AddInput(g, "X", kF32, {1, 16, 8, 8});
  AddOutput(g, "Y", kF32, {1, 32, 8, 8});
  AddInitializer(g, "W", test::RandomTensor(DataType::kFloat, Shape({32, 16, 3, 3}), 21));
  AddInitializer(g, "B", test::RandomTensor(DataType::kFloat, Shape({32}), 22));
  AttrInts(AddNode(g, "Conv", {"X", "W", "B"}, {"C"}, "conv"), "pads", {1, 1, 1, 1});
  AddNode(g, "Relu", {"C"}, {"Y"}, "relu");
  return model;
}

class PreparedCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("prepared_cache_test_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    RuntimeOptions options;
    options.devices = {DeviceConfig{"cpu0", 1, 0}};
    CacheConfig cache;
    cache.dir = (dir_ / "cache").string();
    options.cache = cache;
    options.cache_required = true;
    auto rt = Runtime::Create(options);
    ASSERT_TRUE(rt.ok()) << rt.status();
    rt_ = *std::move(rt);
  }
  void TearDown() override {
    rt_.reset();
    fs::remove_all(dir_);
  }

  struct Compiled {
    bool hit = false;
    int64_t packs = 0, adopted = 0, refused = 0;  // during AddGraph + CompileGraph
    Tensor out;
  };
  // A new session adds and compiles the model (counting cpu_dense's
  // packings), then runs it.
  Compiled CompileAndRun(const std::string& bytes) {
    Compiled c;
    const int64_t packs = WeightPacks().load(), adopted = PreparedAdoptions().load(),
                  refused = PreparedMismatches().load();
    std::unique_ptr<Session> session = rt_->NewSession({}, 0, rt_->TenantScope("a"));
    auto source = rt_->DirectSource(ModelSource::OnnxBytes(bytes), IngestOptions{});
    EXPECT_TRUE(source.ok()) << source.status();
    if (!source.ok()) return c;
    absl::Status s = session->AddGraph(0, *source, {});
    if (s.ok()) s = session->CompileGraph(0);
    EXPECT_TRUE(s.ok()) << s;
    if (!s.ok()) return c;
    c.packs = WeightPacks().load() - packs;
    c.adopted = PreparedAdoptions().load() - adopted;
    c.refused = PreparedMismatches().load() - refused;
    c.hit = session->GetCacheUse(0)->hit;
    auto out = session->RunGraph(0, {test::RandomTensor(DataType::kFloat, Shape{1, 16, 8, 8}, 23)});
    EXPECT_TRUE(out.ok()) << out.status();
    if (out.ok()) c.out = (*out)[0].tensor();
    return c;
  }

  fs::path dir_;
  std::unique_ptr<Runtime> rt_;
};

TEST_F(PreparedCacheTest, AHitCreatesItsExecutorWithoutPacking) {
  const std::string bytes = ConvModel().SerializeAsString();
  Compiled cold = CompileAndRun(bytes);
  ASSERT_FALSE(cold.hit);
  // Packed once, at build time; the executor adopted that packing.
  EXPECT_EQ(cold.packs, 1);
  EXPECT_EQ(cold.adopted, 1);
  EXPECT_EQ(cold.refused, 0);

  Compiled hit = CompileAndRun(bytes);
  ASSERT_TRUE(hit.hit);
  EXPECT_EQ(hit.packs, 0) << "the hit's executor packed weights again";
  EXPECT_EQ(hit.adopted, 1);
  EXPECT_EQ(hit.refused, 0);
  ASSERT_TRUE(cold.out.defined() && hit.out.defined());
  EXPECT_TRUE(test::TensorNear(hit.out, cold.out, {0, 0})) << "the adopted weights compute another result";
}

}  // namespace
}  // namespace ge::session
