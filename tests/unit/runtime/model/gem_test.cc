// .gem round trip (inline and external weights, static program and dynamic
// graph) and refusal of models built for other engine versions, missing
// engines, other CPUs, other format versions, and corrupt files.
#include "runtime/model/gem.h"

#include <cstring>
#include <filesystem>
#include <fstream>

#include "base/ir/text_format.h"
#include "base/version.h"
#include "compiler/build/model_builder.h"
#include "ge/v1/model.pb.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "session/session.h"
#include "tests/testing/engines_test.h"

namespace ge::runtime {
namespace {

using ::testing::HasSubstr;
namespace fs = std::filesystem;

constexpr char kStatic[] = R"(graph main {
    x = Data() {index = 0} -> (f32[2,3])
    s = Const() {value = tensor<i64[2]>[3, 2]} -> (i64[2])
    r = Reshape(x:0, s:0) -> (f32[3,2])
    i = Identity(r:0) -> (f32[3,2])
    out = NetOutput(i:0)
  })";
constexpr char kDynamic[] = R"(graph main {
    x = Data() {index = 0} -> (f32[-1,3])
    w = Const() {value = tensor<f32[3]>[1, 2, 3]} -> (f32[3])
    y = Add(x:0, w:0) -> (f32[-1,3])
    out = NetOutput(y:0)
  })";

class GemTest : public ge::testing::EnginesTest {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("gem_test_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  CompiledModel Build(const char* text) {
    auto graph = ir::ParseGraph(text);
    EXPECT_TRUE(graph.ok()) << graph.status();
    auto model = compiler::BuildCompiledModel(std::move(*graph), {}, *engines_, nullptr);
    EXPECT_TRUE(model.ok()) << model.status();
    return std::move(*model);
  }
  std::vector<Value> RunLoaded(CompiledModel model, std::vector<Value> inputs) {
    session::Session session(*engines_, {}, nullptr);
    absl::Status added = session.AddCompiledModel(0, std::move(model));
    EXPECT_TRUE(added.ok()) << added;
    auto out = session.RunGraph(0, std::move(inputs));
    EXPECT_TRUE(out.ok()) << out.status();
    return out.ok() ? *out : std::vector<Value>();
  }
  // Rewrites the message in `path` with `edit`.
  template <typename F>
  void Edit(const std::string& path, F edit) {
    v1::CompiledModelDef def;
    {
      std::ifstream in(path, std::ios::binary);
      ASSERT_TRUE(def.ParseFromIstream(&in));
    }
    edit(def);
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    ASSERT_TRUE(def.SerializeToOstream(&out));
  }

  fs::path dir_;
};

TEST_F(GemTest, StaticModelRoundTripsWithInlineAndExternalWeights) {
  for (bool external : {false, true}) {
    const std::string path = (dir_ / (external ? "ext.gem" : "inline.gem")).string();
    CompiledModel model = Build(kStatic);
    ASSERT_TRUE(model.program.has_value());
    ASSERT_TRUE(SaveGem(model, path, *engines_, {.external_weights = external}).ok());
    EXPECT_EQ(fs::exists(path + ".weights"), external);
    auto loaded = LoadGem(path, *engines_);
    ASSERT_TRUE(loaded.ok()) << loaded.status();
    ASSERT_TRUE(loaded->program.has_value());
    EXPECT_EQ(loaded->program->tasks.size(), model.program->tasks.size());
    EXPECT_EQ(loaded->program->arena_bytes, model.program->arena_bytes);
    EXPECT_EQ(loaded->ged_version, GED_VERSION_STRING);
    EXPECT_EQ(loaded->cpu_features, HostCpuFeatures());
    auto out = RunLoaded(*std::move(loaded), {Tensor::FromVector<float>({1, 2, 3, 4, 5, 6}, Shape{2, 3})});
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].tensor().shape(), (Shape{3, 2}));
    EXPECT_EQ(out[0].tensor().data<float>()[5], 6);
  }
}

// An engine's prepared state (TaskDef::prepared) goes beside the weights of
// an external-weights .gem and comes back as the same bytes (mapped from the
// weights of a cache entry); an inline .gem carries none; references outside
// the weights, unaligned ones, too many, or in a .gem sent as bytes are
// refused.
TEST_F(GemTest, PreparedStateTravelsWithExternalWeightsOnly) {
  CompiledModel model = Build(kStatic);
  ASSERT_TRUE(model.program.has_value());
  ASSERT_FALSE(model.program->tasks.empty());
  auto blob = Buffer::Allocate(1000);
  ASSERT_TRUE(blob.ok());
  for (int i = 0; i < 1000; ++i) static_cast<uint8_t*>((*blob)->data())[i] = static_cast<uint8_t>(i * 7);
  std::shared_ptr<Buffer> keep = *blob;
  model.program->tasks[0].def.prepared = {Buffer::Wrap(keep->data(), 1000, [keep] {})};
  auto same_bytes = [&](const StaticProgram& p) {
    if (p.tasks.empty() || p.tasks[0].def.prepared.size() != 1) return false;
    const Buffer& b = *p.tasks[0].def.prepared[0];
    return b.size() == 1000 && std::memcmp(b.data(), keep->data(), 1000) == 0;
  };
  auto bytes =
      SerializeGem(*model.graph, &*model.program, model.options, *engines_, /*external_weights=*/true, "w.bin");
  ASSERT_TRUE(bytes.ok()) << bytes.status();
  auto weights = Buffer::Allocate(bytes->weights.size());
  ASSERT_TRUE(weights.ok());
  std::memcpy((*weights)->data(), bytes->weights.data(), bytes->weights.size());
  auto mapped = LoadGemWithWeights(bytes->gem, *weights, "test", *engines_);
  ASSERT_TRUE(mapped.ok()) << mapped.status();
  EXPECT_TRUE(same_bytes(*mapped->program));
  // Mapped, not copied: the buffer points into the weights.
  const char* at = static_cast<const char*>(mapped->program->tasks[0].def.prepared[0]->data());
  EXPECT_TRUE(at >= static_cast<const char*>((*weights)->data()) &&
              at < static_cast<const char*>((*weights)->data()) + (*weights)->size());

  const std::string ext = (dir_ / "prepared.gem").string();
  ASSERT_TRUE(SaveGem(model, ext, *engines_, {.external_weights = true}).ok());
  auto from_file = LoadGem(ext, *engines_);
  ASSERT_TRUE(from_file.ok()) << from_file.status();
  EXPECT_TRUE(same_bytes(*from_file->program));
  const std::string inline_path = (dir_ / "prepared_inline.gem").string();
  ASSERT_TRUE(SaveGem(model, inline_path, *engines_).ok());
  auto inline_model = LoadGem(inline_path, *engines_);
  ASSERT_TRUE(inline_model.ok()) << inline_model.status();
  EXPECT_TRUE(inline_model->program->tasks[0].def.prepared.empty());

  auto edited = [&](auto edit) {
    v1::CompiledModelDef def;
    EXPECT_TRUE(def.ParseFromString(bytes->gem));
    edit(*def.mutable_program()->mutable_tasks(0));
    return LoadGemWithWeights(def.SerializeAsString(), *weights, "test", *engines_).status();
  };
  EXPECT_THAT(edited([&](v1::TaskDefProto& t) { t.mutable_prepared(0)->set_offset(bytes->weights.size()); }).message(),
              HasSubstr("prepared state"));
  EXPECT_THAT(edited([&](v1::TaskDefProto& t) { t.mutable_prepared(0)->set_size(uint64_t{1} << 62); }).message(),
              HasSubstr("prepared state"));
  EXPECT_THAT(
      edited([&](v1::TaskDefProto& t) { t.mutable_prepared(0)->set_offset(t.prepared(0).offset() - 8); }).message(),
      HasSubstr("aligned"));
  EXPECT_THAT(edited([&](v1::TaskDefProto& t) {
                for (int i = 0; i < 20; ++i) *t.add_prepared() = t.prepared(0);
              }).message(),
              HasSubstr("prepared buffers"));
  auto inline_bytes = SerializeGem(*model.graph, &*model.program, model.options, *engines_, false, "");
  ASSERT_TRUE(inline_bytes.ok()) << inline_bytes.status();
  v1::CompiledModelDef def;
  ASSERT_TRUE(def.ParseFromString(inline_bytes->gem));
  ASSERT_EQ(def.program().tasks(0).prepared_size(), 0);
  v1::PreparedBlobDef* ref = def.mutable_program()->mutable_tasks(0)->add_prepared();
  ref->set_file("w.bin");
  ref->set_size(64);
  auto sent = LoadGemFromBytes(def.SerializeAsString(), "client.gem", *engines_);
  EXPECT_THAT(sent.status().message(), HasSubstr("bytes cannot carry"));
}

TEST_F(GemTest, DynamicModelRoundTripsWithoutProgram) {
  const std::string path = (dir_ / "dyn.gem").string();
  CompiledModel model = Build(kDynamic);
  EXPECT_FALSE(model.program.has_value());
  ASSERT_TRUE(SaveGem(model, path, *engines_, {.external_weights = true}).ok());
  auto loaded = LoadGem(path, *engines_);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_FALSE(loaded->program.has_value());
  auto out = RunLoaded(*std::move(loaded), {Tensor::FromVector<float>({1, 1, 1}, Shape{1, 3})});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].tensor().data<float>()[2], 4);
}

// A mixed graph keeps its partitioned form, its Consts shared with the
// flattened graph's, and runs its static units statically once loaded.
TEST_F(GemTest, MixedModelKeepsItsPartitionedFormAndRunsMixed) {
  constexpr char kMixed[] = R"(graph main {
      x = Data() {index = 0} -> (f32[2,3])
      s = Const() {value = tensor<i64[2]>[3, 2]} -> (i64[2])
      r = Reshape(x:0, s:0) -> (f32[3,2])
      i = Identity(r:0) -> (f32[3,2])
      n = Neg(i:0) {_ge_engine = "host_cpu"} -> (f32[3,2])
      f = Flatten(n:0) {axis = 0} -> (f32[1,6])
      j = Identity(f:0) -> (f32[1,6])
      out = NetOutput(j:0, i:0)
    })";
  const OptionMap options = {{"ge.exec.exclude_engines", "cpu_dense"}, {"ge.exec.static_model_ops_lower_limit", "1"}};
  auto graph = ir::ParseGraph(kMixed);
  ASSERT_TRUE(graph.ok());
  auto model = compiler::BuildCompiledModel(std::move(*graph), options, *engines_, nullptr);
  ASSERT_TRUE(model.ok()) << model.status();
  ASSERT_FALSE(model->program.has_value());
  ASSERT_NE(model->partitioned, nullptr);
  const std::string path = (dir_ / "mixed.gem").string();
  ASSERT_TRUE(SaveGem(*model, path, *engines_, {.external_weights = true}).ok());
  {
    v1::CompiledModelDef def;
    std::ifstream in(path, std::ios::binary);
    ASSERT_TRUE(def.ParseFromIstream(&in));
    EXPECT_TRUE(def.has_partitioned());
    // `s` is not stored twice: the partitioned form's copy names the graph's.
    bool shared = false;
    for (const v1::WeightAlias& w : def.weight_aliases()) {
      shared = shared || (w.node().partitioned() && w.node().node() == "s" && !w.source().partitioned());
    }
    EXPECT_TRUE(shared) << def.weight_aliases_size() << " aliases";
  }
  auto loaded = LoadGem(path, *engines_);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  ASSERT_NE(loaded->partitioned, nullptr);
  session::Session session(*engines_, {}, nullptr);
  ASSERT_TRUE(session.AddCompiledModel(0, *std::move(loaded)).ok());
  EXPECT_GE(*session.NumStaticSubgraphs(0), 1);
  auto out = session.RunGraph(0, {Tensor::FromVector<float>({1, 2, 3, 4, 5, 6}, Shape{2, 3})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].tensor().data<float>()[5], -6);
}

TEST_F(GemTest, RefusesOtherEngineVersionsEnginesCpusAndFormats) {
  const std::string path = (dir_ / "m.gem").string();
  auto expect_refused = [&](auto edit, const std::string& what) {
    ASSERT_TRUE(SaveGem(Build(kStatic), path, *engines_).ok());
    Edit(path, edit);
    auto loaded = LoadGem(path, *engines_);
    EXPECT_EQ(loaded.status().code(), absl::StatusCode::kFailedPrecondition) << loaded.status();
    EXPECT_THAT(std::string(loaded.status().message()), HasSubstr(what));
    EXPECT_THAT(std::string(loaded.status().message()), HasSubstr(path));
  };
  expect_refused([](v1::CompiledModelDef& d) { d.mutable_engines(0)->set_version("0.0-old"); },
                 "version 0.0-old, but the loaded engine is version");
  expect_refused([](v1::CompiledModelDef& d) { d.add_engines()->set_name("npu_core"); },
                 "engine 'npu_core' (version ), which is not loaded here");
  expect_refused([](v1::CompiledModelDef& d) { d.add_cpu_features("avx1024"); },
                 "built for a CPU with avx1024, which this CPU lacks");
  expect_refused([](v1::CompiledModelDef& d) { d.set_format_version(99); }, "format version 99");
}

TEST_F(GemTest, CorruptFilesAndMissingWeightsAreErrorsNotCrashes) {
  const std::string path = (dir_ / "bad.gem").string();
  {
    std::ofstream out(path, std::ios::binary);
    out << "this is not a compiled model";
  }
  EXPECT_EQ(LoadGem(path, *engines_).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(LoadGem((dir_ / "none.gem").string(), *engines_).status().code(), absl::StatusCode::kNotFound);
  ASSERT_TRUE(SaveGem(Build(kStatic), path, *engines_, {.external_weights = true}).ok());
  fs::remove(path + ".weights");
  EXPECT_THAT(std::string(LoadGem(path, *engines_).status().message()), HasSubstr("cannot be opened"));
  ASSERT_TRUE(SaveGem(Build(kStatic), path, *engines_).ok());
  Edit(path, [](v1::CompiledModelDef& d) { d.mutable_program()->mutable_tasks(0)->mutable_outputs(0)->set_offset(1 << 30); });
  EXPECT_THAT(std::string(LoadGem(path, *engines_).status().message()), HasSubstr("points outside the program"));
}

}  // namespace
}  // namespace ge::runtime
