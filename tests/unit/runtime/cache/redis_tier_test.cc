// RedisTier against a real redis-server: entries round trip, missing keys
// are nullopt, a dead server is an error (a miss for the cache), and two
// caches on different directories share entries through one server.
#include "runtime/cache/redis_tier.h"

#include <filesystem>

#include "base/ir/text_format.h"
#include "compiler/build/model_builder.h"
#include "gtest/gtest.h"
#include "runtime/cache/cache_key.h"
#include "runtime/cache/model_cache.h"
#include "tests/testing/redis_server.h"

namespace ge::cache {
namespace {

namespace fs = std::filesystem;

constexpr char kGraph[] = R"(graph main {
    x = Data() {index = 0} -> (f32[2,3])
    s = Const() {value = tensor<i64[2]>[3, 2]} -> (i64[2])
    r = Reshape(x:0, s:0) -> (f32[3,2])
    out = NetOutput(r:0)
  })";

class RedisTierTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!testing::RedisServer::Available()) GTEST_SKIP() << "redis-server is not installed (apt-get install redis-server)";
    server_ = std::make_unique<testing::RedisServer>();
    ASSERT_TRUE(server_->ready()) << "redis-server did not start";
    dir_ = fs::temp_directory_path() / ("redis_tier_test_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
  }
  void TearDown() override {
    server_.reset();
    fs::remove_all(dir_);
  }
  std::unique_ptr<testing::RedisServer> server_;
  fs::path dir_;
};

TEST_F(RedisTierTest, EntriesRoundTripAndMissingKeysAreEmpty) {
  auto tier = RedisTier::Create(server_->address());
  ASSERT_TRUE(tier.ok()) << tier.status();
  const std::string key(64, 'a');
  auto missing = (*tier)->Get(key);
  ASSERT_TRUE(missing.ok()) << missing.status();
  EXPECT_FALSE(missing->has_value());
  EntryBlobs entry;
  entry.meta = "meta";
  entry.gem = std::string("g\0em", 4);
  entry.weights = std::string(1 << 20, 'w');
  ASSERT_TRUE((*tier)->Put(key, entry).ok());
  auto got = (*tier)->Get(key);
  ASSERT_TRUE(got.ok()) << got.status();
  ASSERT_TRUE(got->has_value());
  EXPECT_EQ((*got)->meta, entry.meta);
  EXPECT_EQ((*got)->gem, entry.gem);
  EXPECT_EQ((*got)->weights, entry.weights);
}

TEST_F(RedisTierTest, AddressesAreParsedAndADeadServerIsAnError) {
  EXPECT_FALSE(RedisTier::Create("redis://host:notaport").ok());
  EXPECT_FALSE(RedisTier::Create("redis://:6379").ok());
  EXPECT_TRUE(RedisTier::Create("redis://127.0.0.1:6379").ok());
  auto tier = RedisTier::Create("unix:" + (dir_ / "no-such.sock").string(), 1);
  ASSERT_TRUE(tier.ok());
  EXPECT_EQ((*tier)->Get(std::string(64, 'b')).status().code(), absl::StatusCode::kUnavailable);
}

TEST_F(RedisTierTest, TwoCachesOnDifferentDirectoriesShareEntriesThroughRedis) {
  auto registry = engine::CreateEngineRegistry({}, {});
  ASSERT_TRUE(registry.ok()) << registry.status();
  const engine::EngineRegistry& engines = **registry;
  auto open = [&](const std::string& name) {
    ModelCacheOptions options;
    options.dir = (dir_ / name).string();
    auto tier = RedisTier::Create(server_->address());
    EXPECT_TRUE(tier.ok());
    options.remote = std::shared_ptr<RemoteTier>(std::move(*tier));
    options.remote_mac_key = "the operator's key, 32 bytes ...";
    auto cache = ModelCache::Open(options);
    EXPECT_TRUE(cache.ok()) << cache.status();
    return std::move(*cache);
  };
  auto a = open("a"), b = open("b");
  auto graph = ir::ParseGraph(kGraph);
  ASSERT_TRUE(graph.ok());
  auto key = ComputeCacheKey(**graph, {}, {&engines, 1});
  ASSERT_TRUE(key.ok());
  auto model = compiler::BuildCompiledModel(std::move(*graph), {}, engines, nullptr);
  ASSERT_TRUE(model.ok()) << model.status();
  ASSERT_TRUE(a->StoreModel(*key, *model->graph, model->program ? &*model->program : nullptr, {}, engines).ok());
  EXPECT_FALSE(b->Contains(*key));
  auto hit = b->Lookup(*key, engines);
  ASSERT_TRUE(hit.ok()) << hit.status();
  EXPECT_EQ(b->stats().remote_hits, 1);
  EXPECT_TRUE(b->Contains(*key));  // written locally
  ASSERT_TRUE(b->Lookup(*key, engines).ok());
  EXPECT_EQ(b->stats().remote_hits, 1);  // the second is local
  EXPECT_EQ(b->stats().hits, 2);
}

TEST_F(RedisTierTest, EntriesSignedWithAnotherKeyOrNamespaceAreMisses) {
  auto registry = engine::CreateEngineRegistry({}, {});
  ASSERT_TRUE(registry.ok()) << registry.status();
  const engine::EngineRegistry& engines = **registry;
  auto open = [&](const std::string& name, const std::string& mac_key) {
    ModelCacheOptions options;
    options.dir = (dir_ / name).string();
    auto tier = RedisTier::Create(server_->address());
    EXPECT_TRUE(tier.ok());
    options.remote = std::shared_ptr<RemoteTier>(std::move(*tier));
    options.remote_mac_key = mac_key;
    auto cache = ModelCache::Open(options);
    EXPECT_TRUE(cache.ok()) << cache.status();
    return std::move(*cache);
  };
  auto a = open("a", "the operator's key, 32 bytes ...");
  auto forger = open("f", "somebody else's key, 32 bytes ..");
  auto graph = ir::ParseGraph(kGraph);
  ASSERT_TRUE(graph.ok());
  auto key = ComputeCacheKey(**graph, {}, {&engines, 1});
  ASSERT_TRUE(key.ok());
  auto model = compiler::BuildCompiledModel(std::move(*graph), {}, engines, nullptr);
  ASSERT_TRUE(model.ok()) << model.status();
  // The forger's entry is signed with its own key: the operator's caches miss it.
  ASSERT_TRUE(forger->StoreModel(*key, *model->graph, model->program ? &*model->program : nullptr, {}, engines).ok());
  auto b = open("b", "the operator's key, 32 bytes ...");
  EXPECT_EQ(b->Lookup(*key, engines).status().code(), absl::StatusCode::kNotFound);
  EXPECT_FALSE(b->Contains(*key));  // never published locally
  // Signed right, but for the operator's namespace: not an entry of tenant t.
  ASSERT_TRUE(a->StoreModel(*key, *model->graph, model->program ? &*model->program : nullptr, {}, engines).ok());
  EXPECT_EQ(b->LookupIn(TenantNamespace("t"), *key, engines).status().code(), absl::StatusCode::kNotFound);
  EXPECT_TRUE(b->Lookup(*key, engines).ok());
}

TEST(RemoteTierKeyTest, ARemoteTierWithoutAKeyIsRefusedAtOpen) {
  ModelCacheOptions options;
  options.dir = (std::filesystem::temp_directory_path() / ("redis_nokey_" + std::to_string(::getpid()))).string();
  auto tier = RedisTier::Create("redis://127.0.0.1:1");
  ASSERT_TRUE(tier.ok());
  options.remote = std::shared_ptr<RemoteTier>(std::move(*tier));
  auto cache = ModelCache::Open(options);
  ASSERT_FALSE(cache.ok());
  EXPECT_EQ(cache.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(cache.status().message().find("cache_remote_key_file"), std::string::npos) << cache.status();
  std::filesystem::remove_all(options.dir);
}

TEST(RemoteTierKeyTest, HmacSha256MatchesRfc4231) {
  // RFC 4231 test cases 2 (short key) and 6 (a key longer than the block).
  EXPECT_EQ(ToHex(HmacSha256("Jefe", "what do ya want for nothing?")),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
  EXPECT_EQ(ToHex(HmacSha256(std::string(131, '\xaa'), "Test Using Larger Than Block-Size Key - Hash Key First")),
            "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54");
}

}  // namespace
}  // namespace ge::cache
