// Compile-through-cache in direct mode (session/compile_cache.h): a hit by
// the direct key of a model's bytes never calls the importer (Runtime::
// imports() and the importer's own count say so); a client's checks that do
// not depend on the bytes still run before any lookup, and bytes a client
// may not send never get an entry; an operator model's external data is
// part of its direct entry (a changed file is a miss, then a hit again); a
// model file that changes while it is imported gets no direct entry; a
// ge.graph_key hit needs no import either.
#include "session/compile_cache.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "gtest/gtest.h"
#include "onnx/onnx_pb.h"
#include "session/runtime.h"
#include "tests/testing/onnx_builder.h"

namespace ge::session {
namespace {

namespace fs = std::filesystem;

// Y = X + W, W = [1, 2, 3, 4] (inline, or external in `location`).
onnx::ModelProto AddModel(const std::string& location = "") {
  onnx::ModelProto model = onnx_builder::AddWeightModel({1, 2, 3, 4});
  if (!location.empty()) {
    onnx::TensorProto* w = model.mutable_graph()->mutable_initializer(0);
    w->clear_float_data();
    w->set_data_location(onnx::TensorProto::EXTERNAL);
    auto* entry = w->add_external_data();
    entry->set_key("location");
    entry->set_value(location);
  }
  return model;
}

std::string FloatBytes(std::vector<float> values) {
  return std::string(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(float));
}

class CompileCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("compile_cache_test_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "models");
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

  // Adds `source` to a new session in `scope` and runs it on [0, 0, 0, 0].
  struct Added {
    absl::Status status;
    CacheUse use;
    std::vector<float> out;
  };
  Added AddAndRun(const GraphSource& source, const CacheScope& scope, const OptionMap& options = {}) {
    Added a;
    std::unique_ptr<Session> session = rt_->NewSession({}, 0, scope);
    a.status = session->AddGraph(0, source, options);
    if (!a.status.ok()) return a;
    a.status = session->CompileGraph(0);
    if (!a.status.ok()) return a;
    a.use = *session->GetCacheUse(0);
    auto out = session->RunGraph(0, {Tensor::FromVector<float>({0, 0, 0, 0}, Shape{4})});
    EXPECT_TRUE(out.ok()) << out.status();
    if (out.ok()) a.out.assign((*out)[0].tensor().data<float>(), (*out)[0].tensor().data<float>() + 4);
    return a;
  }
  GraphSource ClientSource(const std::string& bytes, const OptionMap& options = {}) {
    IngestOptions ingest;
    ingest.options = options;
    auto source = rt_->DirectSource(ModelSource::OnnxBytes(bytes), ingest);
    EXPECT_TRUE(source.ok()) << source.status();
    return source.ok() ? *std::move(source) : GraphSource{};
  }

  fs::path dir_;
  std::unique_ptr<Runtime> rt_;
};

TEST_F(CompileCacheTest, ADirectHitNeverCallsTheImporter) {
  const std::string bytes = AddModel().SerializeAsString();
  const int64_t before = rt_->imports();
  Added first = AddAndRun(ClientSource(bytes), rt_->TenantScope("a"));
  ASSERT_TRUE(first.status.ok()) << first.status;
  EXPECT_FALSE(first.use.hit);
  EXPECT_EQ(first.use.direct_key.size(), 64u);
  EXPECT_EQ(rt_->imports(), before + 1);
  // Another session of the tenant, the same bytes: no import at all.
  int imports = 0;
  GraphSource counted = ClientSource(bytes);
  counted.import = [inner = counted.import, &imports]() {
    ++imports;
    return inner();
  };
  Added second = AddAndRun(counted, rt_->TenantScope("a"));
  ASSERT_TRUE(second.status.ok()) << second.status;
  EXPECT_TRUE(second.use.hit);
  EXPECT_TRUE(second.use.direct_hit);
  EXPECT_EQ(second.use.key, first.use.key);  // the content key, checked against the entry
  EXPECT_EQ(imports, 0);
  EXPECT_EQ(rt_->imports(), before + 1);
  EXPECT_EQ(second.out, first.out);
  EXPECT_EQ(second.out, (std::vector<float>{1, 2, 3, 4}));
  EXPECT_EQ(rt_->cache()->stats().direct_hits, 1);
  // Other options are another key: imported again.
  Added other = AddAndRun(ClientSource(bytes), rt_->TenantScope("a"), {{"ge.oo.constantFolding", "0"}});
  ASSERT_TRUE(other.status.ok()) << other.status;
  EXPECT_FALSE(other.use.direct_hit);
  EXPECT_EQ(rt_->imports(), before + 2);
}

TEST_F(CompileCacheTest, AClientsChecksHoldWithoutAnImport) {
  // Options a client may not set are refused before anything is looked up.
  IngestOptions ingest;
  ingest.options = {{"ge.dump_path", "/tmp"}};
  auto refused = rt_->DirectSource(ModelSource::OnnxBytes(AddModel().SerializeAsString()), ingest);
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(refused.status().message().find("ge.dump_path"), std::string::npos) << refused.status();
  // Bytes a client may not send (external data) are refused every time: no
  // entry is ever made for them.
  const std::string external = AddModel("w.bin").SerializeAsString();
  for (int i = 0; i < 2; ++i) {
    Added a = AddAndRun(ClientSource(external), rt_->TenantScope("a"));
    EXPECT_EQ(a.status.code(), absl::StatusCode::kInvalidArgument) << a.status;
  }
  // A path is never a client's source.
  IngestOptions client;
  EXPECT_EQ(rt_->DirectSource(ModelSource::OnnxPath((dir_ / "models" / "m.onnx").string()), client).status().code(),
            absl::StatusCode::kInvalidArgument);
  // The same bytes as the operator's file: another provenance, another key.
  const std::string path = (dir_ / "models" / "m.onnx").string();
  std::ofstream(path, std::ios::binary) << AddModel().SerializeAsString();
  IngestOptions op;
  op.provenance = Provenance::kOperator;
  auto from_file = rt_->DirectSource(ModelSource::OnnxPath(path), op);
  ASSERT_TRUE(from_file.ok()) << from_file.status();
  Added operator_added = AddAndRun(*from_file, rt_->OperatorScope());
  Added client_added = AddAndRun(ClientSource(AddModel().SerializeAsString()), rt_->OperatorScope());
  ASSERT_TRUE(operator_added.status.ok() && client_added.status.ok());
  EXPECT_NE(operator_added.use.direct_key, client_added.use.direct_key);
  EXPECT_FALSE(client_added.use.direct_hit);
}

TEST_F(CompileCacheTest, ExternalDataIsPartOfAnOperatorModelsDirectEntry) {
  const fs::path weights = dir_ / "models" / "w.bin";
  std::ofstream(weights, std::ios::binary) << FloatBytes({1, 2, 3, 4});
  const std::string path = (dir_ / "models" / "m.onnx").string();
  std::ofstream(path, std::ios::binary) << AddModel("w.bin").SerializeAsString();
  IngestOptions op;
  op.provenance = Provenance::kOperator;
  auto compile = [&](CacheUse* use) {
    auto source = rt_->DirectSource(ModelSource::OnnxPath(path), op);
    EXPECT_TRUE(source.ok()) << source.status();
    auto model = CompileSourceThroughCache(*source, {}, rt_->engines(), nullptr, rt_->OperatorScope(), use);
    EXPECT_TRUE(model.ok()) << model.status();
  };
  const int64_t before = rt_->imports();
  CacheUse first, second, changed, again;
  compile(&first);
  EXPECT_FALSE(first.hit);
  compile(&second);
  EXPECT_TRUE(second.direct_hit);
  EXPECT_EQ(rt_->imports(), before + 1);
  // The weights change (same size): the direct entry is stale.
  std::ofstream(weights, std::ios::binary | std::ios::trunc) << FloatBytes({4, 3, 2, 1});
  compile(&changed);
  EXPECT_FALSE(changed.direct_hit);
  EXPECT_EQ(changed.direct_key, first.direct_key);
  EXPECT_EQ(rt_->imports(), before + 2);
  compile(&again);
  EXPECT_TRUE(again.direct_hit);
  EXPECT_EQ(rt_->imports(), before + 2);
  // The same file in another directory is another origin: another key.
  fs::create_directories(dir_ / "copy");
  fs::copy_file(path, dir_ / "copy" / "m.onnx");
  fs::copy_file(weights, dir_ / "copy" / "w.bin");
  auto copied = rt_->DirectSource(ModelSource::OnnxPath((dir_ / "copy" / "m.onnx").string()), op);
  ASSERT_TRUE(copied.ok());
  CacheUse elsewhere;
  ASSERT_TRUE(CompileSourceThroughCache(*copied, {}, rt_->engines(), nullptr, rt_->OperatorScope(), &elsewhere).ok());
  EXPECT_FALSE(elsewhere.direct_hit);
  EXPECT_NE(elsewhere.direct_key, first.direct_key);
}

TEST_F(CompileCacheTest, AModelFileThatChangesWhileImportedGetsNoDirectEntry) {
  const std::string path = (dir_ / "models" / "m.onnx").string();
  std::ofstream(path, std::ios::binary) << AddModel().SerializeAsString();
  IngestOptions op;
  op.provenance = Provenance::kOperator;
  auto source = rt_->DirectSource(ModelSource::OnnxPath(path), op);
  ASSERT_TRUE(source.ok());
  // Rewritten while it is imported (after it was read and hashed).
  source->import = [inner = source->import, path]() {
    onnx::ModelProto other = AddModel();
    other.mutable_graph()->mutable_initializer(0)->set_float_data(0, 7);
    std::ofstream(path, std::ios::binary | std::ios::trunc) << other.SerializeAsString();
    return inner();
  };
  CacheUse use;
  ASSERT_TRUE(CompileSourceThroughCache(*source, {}, rt_->engines(), nullptr, rt_->OperatorScope(), &use).ok());
  EXPECT_FALSE(use.hit);
  EXPECT_FALSE(rt_->cache()->LookupDirectIn(cache::kOperatorNamespace, use.direct_key).ok());
}

TEST_F(CompileCacheTest, AGraphKeyHitNeedsNoImport) {
  const OptionMap named = {{"ge.graph_key", "my-model"}};
  const std::string bytes = AddModel().SerializeAsString();
  const int64_t before = rt_->imports();
  Added first = AddAndRun(ClientSource(bytes, named), rt_->TenantScope("a"), named);
  ASSERT_TRUE(first.status.ok()) << first.status;
  EXPECT_FALSE(first.use.hit);
  Added second = AddAndRun(ClientSource(bytes, named), rt_->TenantScope("a"), named);
  ASSERT_TRUE(second.status.ok()) << second.status;
  EXPECT_TRUE(second.use.direct_hit);
  EXPECT_EQ(second.use.key, first.use.key);
  EXPECT_EQ(rt_->imports(), before + 1);
  // Never across tenants.
  Added other = AddAndRun(ClientSource(bytes, named), rt_->TenantScope("b"), named);
  ASSERT_TRUE(other.status.ok()) << other.status;
  EXPECT_FALSE(other.use.hit);
  EXPECT_EQ(rt_->imports(), before + 2);
}

TEST_F(CompileCacheTest, ARememberedDigestReadsNoByteOfTheModel) {
  const std::string bytes = AddModel().SerializeAsString();
  Added first = AddAndRun(ClientSource(bytes), rt_->TenantScope("a"));
  ASSERT_TRUE(first.status.ok()) << first.status;
  // The digest known (as a file's remembered one is), the bytes absent: the
  // same key, a hit, nothing read or imported.
  GraphSource known = ClientSource(bytes);
  known.digest = cache::ModelBytesDigest(bytes);
  known.bytes = {};
  int imports = 0;
  known.import = [&imports]() -> absl::StatusOr<ImportedGraph> {
    ++imports;
    return absl::InternalError("not to be imported");
  };
  Added second = AddAndRun(known, rt_->TenantScope("a"));
  ASSERT_TRUE(second.status.ok()) << second.status;
  EXPECT_TRUE(second.use.direct_hit);
  EXPECT_EQ(second.use.direct_key, first.use.direct_key);
  EXPECT_EQ(imports, 0);
}

}  // namespace
}  // namespace ge::session
