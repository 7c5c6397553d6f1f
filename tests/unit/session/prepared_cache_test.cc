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

namespace ge::session {
namespace {

namespace fs = std::filesystem;
using engine::cpu_dense::PreparedAdoptions;
using engine::cpu_dense::PreparedMismatches;
using engine::cpu_dense::WeightPacks;

// Y = Relu(Conv(X, W, B)) with X [1,16,8,8], W [32,16,3,3], pads 1.
onnx::ModelProto ConvModel() {
  onnx::ModelProto model;
  model.set_ir_version(8);
  model.add_opset_import()->set_version(17);
  onnx::GraphProto* g = model.mutable_graph();
  g->set_name("conv");
  auto io = [](onnx::ValueInfoProto* v, const char* name, std::vector<int64_t> dims) {
    v->set_name(name);
    auto* t = v->mutable_type()->mutable_tensor_type();
    t->set_elem_type(onnx::TensorProto::FLOAT);
    for (int64_t d : dims) t->mutable_shape()->add_dim()->set_dim_value(d);
  };
  io(g->add_input(), "X", {1, 16, 8, 8});
  io(g->add_output(), "Y", {1, 32, 8, 8});
  auto initializer = [&](const char* name, std::vector<int64_t> dims, uint64_t seed) {
    onnx::TensorProto* t = g->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::FLOAT);
    int64_t n = 1;
    for (int64_t d : dims) {
      t->add_dims(d);
      n *= d;
    }
    const Tensor values = test::RandomTensor(DataType::kFloat, Shape(dims), seed);
    for (int64_t i = 0; i < n; ++i) t->add_float_data(values.data<float>()[i]);
  };
  initializer("W", {32, 16, 3, 3}, 21);
  initializer("B", {32}, 22);
  onnx::NodeProto* conv = g->add_node();
  conv->set_name("conv");
  conv->set_op_type("Conv");
  for (const char* in : {"X", "W", "B"}) conv->add_input(in);
  conv->add_output("C");
  onnx::AttributeProto* pads = conv->add_attribute();
  pads->set_name("pads");
  pads->set_type(onnx::AttributeProto::INTS);
  for (int i = 0; i < 4; ++i) pads->add_ints(1);
  onnx::NodeProto* relu = g->add_node();
  relu->set_name("relu");
  relu->set_op_type("Relu");
  relu->add_input("C");
  relu->add_output("Y");
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
