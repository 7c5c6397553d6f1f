// ModelCache: round trip, atomic publication by concurrent writers,
// corruption handling (a miss, moved aside, never an error), stale
// temporaries, LRU eviction with touch on hit, a full file system, and
// the session's use of the cache.
#include "runtime/cache/model_cache.h"

#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <thread>

#include "base/ir/text_format.h"
#include "compiler/build/model_builder.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/cache/cache_files.h"
#include "runtime/cache/cache_key.h"
#include "session/session.h"
#include "tests/testing/engines_test.h"

namespace ge::cache {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

constexpr char kGraph[] = R"(graph main {
    x = Data() {index = 0} -> (f32[2,3])
    s = Const() {value = tensor<i64[2]>[3, 2]} -> (i64[2])
    r = Reshape(x:0, s:0) -> (f32[3,2])
    i = Identity(r:0) -> (f32[3,2])
    out = NetOutput(i:0)
  })";

class ModelCacheTest : public ge::testing::EnginesTest {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("model_cache_test_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::unique_ptr<ModelCache> Open(int64_t max_bytes = 0, int64_t racy_seconds = kRacySeconds) {
    ModelCacheOptions options;
    options.dir = dir_.string();
    options.max_bytes = max_bytes;
    options.racy_seconds = racy_seconds;
    auto cache = ModelCache::Open(options);
    EXPECT_TRUE(cache.ok()) << cache.status();
    return std::move(*cache);
  }
  runtime::GemBytes Compile(const char* text = kGraph) {
    auto graph = ir::ParseGraph(text);
    EXPECT_TRUE(graph.ok()) << graph.status();
    auto model = compiler::BuildCompiledModel(std::move(*graph), {}, *engines_, nullptr);
    EXPECT_TRUE(model.ok()) << model.status();
    auto bytes = runtime::SerializeGem(*model->graph, model->program ? &*model->program : nullptr, {}, *engines_,
                                       true, kWeightsFile);
    EXPECT_TRUE(bytes.ok()) << bytes.status();
    return *std::move(bytes);
  }
  static std::string KeyOf(int n) { return ToHex(Sha256(std::to_string(n))); }
  std::string EntryDir(const std::string& key) {
    return (dir_ / kCacheLayoutDir / "ns" / "operator" / key.substr(0, 2) / key).string();
  }
  // Runs the loaded model on 1..6 and returns the output.
  std::vector<float> Run(runtime::CompiledModel model) {
    session::Session session(*engines_, {}, nullptr);
    EXPECT_TRUE(session.AddCompiledModel(0, std::move(model)).ok());
    auto out = session.RunGraph(0, {Tensor::FromVector<float>({1, 2, 3, 4, 5, 6}, Shape{2, 3})});
    EXPECT_TRUE(out.ok()) << out.status();
    if (!out.ok()) return {};
    const float* data = (*out)[0].tensor().data<float>();
    return std::vector<float>(data, data + 6);
  }
  int CountTemps() {
    int n = 0;
    for (const auto& e : fs::recursive_directory_iterator(dir_)) {
      n += e.path().filename().string().rfind(kTempPrefix, 0) == 0;
    }
    return n;
  }

  static std::string ReadFileOrEmpty(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }

  fs::path dir_;
};

TEST_F(ModelCacheTest, StoreThenLookupRoundTripsAndCounts) {
  auto cache = Open();
  const std::string key = KeyOf(1);
  EXPECT_EQ(cache->Lookup(key, *engines_).status().code(), absl::StatusCode::kNotFound);
  ASSERT_TRUE(cache->Store(key, Compile()).ok());
  EXPECT_TRUE(cache->Contains(key));
  EXPECT_TRUE(fs::exists(fs::path(EntryDir(key)) / kGemFile));
  EXPECT_TRUE(fs::exists(fs::path(EntryDir(key)) / kWeightsFile));
  LookupTimings timings;
  auto model = cache->Lookup(key, *engines_, &timings);
  ASSERT_TRUE(model.ok()) << model.status();
  EXPECT_THAT(Run(*std::move(model)), ::testing::ElementsAre(1, 2, 3, 4, 5, 6));
  const CacheStats stats = cache->stats();
  EXPECT_EQ(stats.hits, 1);
  EXPECT_EQ(stats.misses, 1);
  EXPECT_EQ(stats.stores, 1);
  EXPECT_GT(stats.bytes, 0);
  EXPECT_EQ(CountTemps(), 0);
  // Another process's view of the directory sees the entry too.
  auto other = Open();
  EXPECT_TRUE(other->Lookup(key, *engines_).ok());
  EXPECT_EQ(other->stats().bytes, stats.bytes);
}

// The entry's CRCs are read once per file identity: a hit whose files keep
// the stamps recorded in `verified` after a full check skips them; a write
// into a file changes its stamps, so the CRCs are read again and find it;
// and `gectl cache verify` always reads everything.
TEST_F(ModelCacheTest, ChecksumsAreCheckedOncePerFileIdentity) {
  constexpr char kAdd[] = R"(graph main {
      x = Data() {index = 0} -> (f32[3])
      w = Const() {value = tensor<f32[3]>[1, 2, 3]} -> (f32[3])
      y = Add(x:0, w:0) -> (f32[3])
      out = NetOutput(y:0)
    })";
  auto cache = Open(0, /*racy_seconds=*/0);
  const std::string key = KeyOf(40);
  const fs::path entry(EntryDir(key));
  auto run = [&](runtime::CompiledModel model) {
    session::Session session(*engines_, {}, nullptr);
    EXPECT_TRUE(session.AddCompiledModel(0, std::move(model)).ok());
    auto out = session.RunGraph(0, {Tensor::FromVector<float>({10, 20, 30}, Shape{3})});
    EXPECT_TRUE(out.ok()) << out.status();
    return out.ok() ? std::vector<float>((*out)[0].tensor().data<float>(), (*out)[0].tensor().data<float>() + 3)
                    : std::vector<float>();
  };
  // Overwrites the first weight (w[0]) in place: same size, new stamps.
  auto damage = [&] {
    std::fstream f(entry / kWeightsFile, std::ios::in | std::ios::out | std::ios::binary);
    const float other = 100;
    f.write(reinterpret_cast<const char*>(&other), sizeof(other));
  };
  // The `verified` record that would vouch for the entry's files as they are now.
  auto vouch_for_now = [&] {
    auto dir = DirHandle::Open(entry.string());
    ASSERT_TRUE(dir.ok());
    EntryBlobs now;
    now.meta = *dir->ReadFile(kMetaFile);
    ASSERT_TRUE(dir->MapFile(kGemFile, &now.gem_stamp).ok());
    ASSERT_TRUE(dir->MapFile(kWeightsFile, &now.weights_stamp).ok());
    std::ofstream(entry / kVerifiedFile, std::ios::trunc) << VerifiedRecord(key, now);
  };

  ASSERT_TRUE(cache->Store(key, Compile(kAdd)).ok());
  EXPECT_FALSE(fs::exists(entry / kVerifiedFile));
  auto first = cache->Lookup(key, *engines_);
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_THAT(run(*std::move(first)), ::testing::ElementsAre(11, 22, 33));
  ASSERT_TRUE(fs::exists(entry / kVerifiedFile)) << "a full check records the files' stamps";

  // A write after the check: other stamps, so the CRC is read and fails.
  damage();
  EXPECT_EQ(cache->Lookup(key, *engines_).status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(cache->stats().corrupt, 1);
  EXPECT_FALSE(fs::exists(entry));

  // A record that does not match is no record: the full check runs (and passes).
  ASSERT_TRUE(cache->Store(key, Compile(kAdd)).ok());
  std::ofstream(entry / kVerifiedFile) << "ged-cache-verified 1\nforged\n";
  ASSERT_TRUE(cache->Lookup(key, *engines_).ok());
  EXPECT_NE(ReadFileOrEmpty(entry / kVerifiedFile), "ged-cache-verified 1\nforged\n");

  // A record matching the files' current stamps is trusted: the CRCs are
  // not read (the damaged value is loaded) ...
  damage();
  vouch_for_now();
  auto trusted = cache->Lookup(key, *engines_);
  ASSERT_TRUE(trusted.ok()) << trusted.status();
  EXPECT_THAT(run(*std::move(trusted)), ::testing::ElementsAre(110, 22, 33));
  // ... but a verification reads everything.
  const VerifyReport report = cache->Verify(engines_);
  ASSERT_EQ(report.moved_aside.size(), 1u);
  EXPECT_THAT(report.moved_aside[0], HasSubstr(key));
}

TEST_F(ModelCacheTest, ConcurrentWritersOfOneKeyBothSucceedAndLeaveOneEntry) {
  auto cache = Open();
  const std::string key = KeyOf(2);
  const runtime::GemBytes bytes = Compile();
  std::vector<std::thread> writers;
  std::atomic<int> failures{0};
  for (int i = 0; i < 8; ++i) {
    writers.emplace_back([&] {
      if (!cache->Store(key, bytes).ok()) failures.fetch_add(1);
    });
  }
  for (auto& t : writers) t.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(CountTemps(), 0);
  auto model = cache->Lookup(key, *engines_);
  ASSERT_TRUE(model.ok()) << model.status();
  EXPECT_THAT(Run(*std::move(model)), ::testing::ElementsAre(1, 2, 3, 4, 5, 6));
}

TEST_F(ModelCacheTest, CorruptEntriesAreMissesMovedAsideAndCounted) {
  auto cache = Open();
  struct Damage {
    const char* file;
    std::function<void(std::string&)> edit;
  };
  const std::vector<Damage> damages = {
      {kWeightsFile, [](std::string& d) { d[d.size() / 2] ^= 1; }},
      {kGemFile, [](std::string& d) { d.resize(d.size() / 2); }},
      {kMetaFile, [](std::string& d) { d.replace(d.find("created"), 7, "CREATED"); }},
      {kMetaFile, [](std::string& d) { d.clear(); }},
  };
  int n = 10;
  for (const Damage& damage : damages) {
    const std::string key = KeyOf(n++);
    ASSERT_TRUE(cache->Store(key, Compile()).ok());
    const std::string path = (fs::path(EntryDir(key)) / damage.file).string();
    std::string data;
    {
      std::ifstream in(path, std::ios::binary);
      data.assign(std::istreambuf_iterator<char>(in), {});
    }
    damage.edit(data);
    std::ofstream(path, std::ios::binary | std::ios::trunc) << data;
    auto model = cache->Lookup(key, *engines_);
    EXPECT_EQ(model.status().code(), absl::StatusCode::kNotFound) << damage.file << ": " << model.status();
    EXPECT_FALSE(fs::exists(EntryDir(key))) << damage.file;
    // The next store of the key works again.
    ASSERT_TRUE(cache->Store(key, Compile()).ok());
    EXPECT_TRUE(cache->Lookup(key, *engines_).ok());
  }
  EXPECT_EQ(cache->stats().corrupt, static_cast<int64_t>(damages.size()));
  int aside = 0;
  for (const auto& e : fs::directory_iterator(dir_ / "corrupt")) aside += e.is_directory();
  EXPECT_EQ(aside, static_cast<int>(damages.size()));
  auto gc = cache->Collect(int64_t{1} << 40);
  ASSERT_TRUE(gc.ok());
  EXPECT_EQ(gc->corrupt_removed, static_cast<int64_t>(damages.size()));
  EXPECT_EQ(gc->entries_removed, 0);
}

TEST_F(ModelCacheTest, VerifyReportsCorruptEntriesAndCleansStaleTemporaries) {
  auto cache = Open();
  ASSERT_TRUE(cache->Store(KeyOf(20), Compile()).ok());
  ASSERT_TRUE(cache->Store(KeyOf(21), Compile()).ok());
  // A writer killed mid-write (a pid that cannot exist on this host) and a
  // half-written file in it.
  const std::string stale = TempName("put");
  const std::string dead = stale.substr(0, stale.find('-', stale.find('-', 5) + 1) + 1) + "999999999-1";
  fs::create_directories(dir_ / kCacheLayoutDir / "ns" / "operator" / "ab" / dead);
  std::ofstream(dir_ / kCacheLayoutDir / "ns" / "operator" / "ab" / dead / kGemFile) << "partial";
  VerifyReport clean = cache->Verify(engines_);
  EXPECT_EQ(clean.entries, 2);
  EXPECT_TRUE(clean.moved_aside.empty());
  EXPECT_EQ(clean.temps_removed, 1);
  EXPECT_FALSE(fs::exists(dir_ / kCacheLayoutDir / "ns" / "operator" / "ab" / dead));
  // A remembered digest's writer killed before its rename (RememberDigest).
  const std::string dead_digest = ".tmp-digest" + dead.substr(dead.find('-', 5));
  fs::create_directories(dir_ / kCacheLayoutDir / "digests");
  std::ofstream(dir_ / kCacheLayoutDir / "digests" / dead_digest) << "partial";
  EXPECT_EQ(cache->Verify(engines_).temps_removed, 1);
  EXPECT_FALSE(fs::exists(dir_ / kCacheLayoutDir / "digests" / dead_digest));
  std::ofstream(fs::path(EntryDir(KeyOf(21))) / kWeightsFile, std::ios::app) << "x";
  VerifyReport dirty = cache->Verify(engines_);
  EXPECT_EQ(dirty.entries, 1);
  ASSERT_EQ(dirty.moved_aside.size(), 1u);
  EXPECT_THAT(dirty.moved_aside[0], HasSubstr(KeyOf(21)));
  EXPECT_TRUE(cache->Verify(engines_).moved_aside.empty());
}

TEST_F(ModelCacheTest, ReadersIgnoreTemporariesOfLiveWriters) {
  auto cache = Open();
  const std::string key = KeyOf(30);
  // A live writer's (this process) temporary is neither an entry nor stale.
  const fs::path temp = dir_ / kCacheLayoutDir / "ns" / "operator" / key.substr(0, 2) / TempName("put");
  fs::create_directories(temp);
  EXPECT_EQ(cache->Lookup(key, *engines_).status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(cache->Verify(engines_).temps_removed, 0);
  EXPECT_TRUE(fs::exists(temp));
  auto listed = cache->List();
  ASSERT_TRUE(listed.ok());
  EXPECT_TRUE(listed->empty());
}

TEST_F(ModelCacheTest, EvictsLeastRecentlyUsedAndAHitCountsAsUse) {
  auto probe = Open();
  ASSERT_TRUE(probe->Store(KeyOf(40), Compile()).ok());
  const int64_t entry_bytes = probe->stats().bytes;
  fs::remove_all(dir_);
  auto cache = Open(/*max_bytes=*/entry_bytes * 2 + entry_bytes / 2);  // room for two
  auto age = [&](const std::string& key, int seconds_ago) {
    const auto when = fs::file_time_type::clock::now() - std::chrono::seconds(seconds_ago);
    fs::last_write_time(fs::path(EntryDir(key)) / kMetaFile, when);
  };
  ASSERT_TRUE(cache->Store(KeyOf(41), Compile()).ok());
  age(KeyOf(41), 300);
  ASSERT_TRUE(cache->Store(KeyOf(42), Compile()).ok());
  age(KeyOf(42), 200);
  ASSERT_TRUE(cache->Lookup(KeyOf(41), *engines_).ok());  // 41 is now the most recent
  ASSERT_TRUE(cache->Store(KeyOf(43), Compile()).ok());   // over the limit: 42 goes
  EXPECT_TRUE(cache->Contains(KeyOf(41)));
  EXPECT_FALSE(cache->Contains(KeyOf(42)));
  EXPECT_TRUE(cache->Contains(KeyOf(43)));
  EXPECT_EQ(cache->stats().evictions, 1);
  EXPECT_LE(cache->stats().bytes, entry_bytes * 2 + entry_bytes / 2);
  auto gc = cache->Collect(0);
  ASSERT_TRUE(gc.ok());
  EXPECT_EQ(gc->entries_removed, 2);
  EXPECT_EQ(gc->bytes_left, 0);
}

// While files may not grow past 64 bytes (RLIMIT_FSIZE's soft limit, with
// SIGXFSZ ignored so a write fails with EFBIG instead of killing the test):
// storing fails with a clear message and leaves nothing behind, and the
// session still compiles and runs the graph. No fork: the limit is lowered
// and restored around the work (nothing else writes files meanwhile).
class FileSizeLimit {
 public:
  explicit FileSizeLimit(rlim_t bytes) {
    getrlimit(RLIMIT_FSIZE, &saved_);
    previous_ = signal(SIGXFSZ, SIG_IGN);
    struct rlimit limit = saved_;
    limit.rlim_cur = bytes;
    setrlimit(RLIMIT_FSIZE, &limit);
  }
  ~FileSizeLimit() {
    setrlimit(RLIMIT_FSIZE, &saved_);
    signal(SIGXFSZ, previous_);
  }

 private:
  struct rlimit saved_ {};
  sighandler_t previous_ = SIG_DFL;
};

TEST_F(ModelCacheTest, FullFileSystemIsAWarningAndTheModelStillRuns) {
  auto cache = Open();
  const runtime::GemBytes bytes = Compile();
  absl::Status stored;
  absl::StatusOr<std::vector<Value>> out;
  absl::StatusOr<session::CacheUse> use;
  {
    FileSizeLimit limit(64);
    stored = cache->Store(KeyOf(50), bytes);
    session::Session session(*engines_, {}, nullptr);
    session.set_model_cache(cache.get());
    auto graph = ir::ParseGraph(kGraph);
    ASSERT_TRUE(graph.ok());
    ASSERT_TRUE(session.AddGraph(0, std::move(*graph)).ok());
    out = session.RunGraph(0, {Tensor::FromVector<float>({1, 2, 3, 4, 5, 6}, Shape{2, 3})});
    use = session.GetCacheUse(0);
  }
  EXPECT_EQ(stored.code(), absl::StatusCode::kResourceExhausted) << stored;
  EXPECT_THAT(std::string(stored.message()), HasSubstr("File too large"));
  EXPECT_EQ(CountTemps(), 0);
  EXPECT_FALSE(cache->Contains(KeyOf(50)));
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].tensor().data<float>()[5], 6);
  ASSERT_TRUE(use.ok());
  EXPECT_FALSE(use->hit);
  EXPECT_THAT(use->store_error, HasSubstr("File too large"));
  EXPECT_FALSE(cache->Contains(use->key));
  EXPECT_EQ(cache->stats().store_failures, 2);
}

TEST_F(ModelCacheTest, SessionCompilesOnceThenHitsAndGraphKeyOptionWorks) {
  auto cache = Open();
  std::string first_key;
  for (int round = 0; round < 2; ++round) {
    session::Session session(*engines_, {}, nullptr);
    session.set_model_cache(cache.get());
    auto graph = ir::ParseGraph(kGraph);
    ASSERT_TRUE(graph.ok());
    ASSERT_TRUE(session.AddGraph(0, std::move(*graph)).ok());
    ASSERT_TRUE(session.CompileGraph(0).ok());
    auto use = session.GetCacheUse(0);
    ASSERT_TRUE(use.ok());
    EXPECT_EQ(use->hit, round == 1);
    if (round == 0) first_key = use->key;
    EXPECT_EQ(use->key, first_key);
    auto out = session.RunGraph(0, {Tensor::FromVector<float>({1, 2, 3, 4, 5, 6}, Shape{2, 3})});
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ((*out)[0].tensor().shape(), (Shape{3, 2}));
  }
  // LoadModel by key.
  session::Session session(*engines_, {}, nullptr);
  session.set_model_cache(cache.get());
  ASSERT_TRUE(session.AddCachedModel(7, first_key).ok());
  EXPECT_EQ(session.AddCachedModel(8, KeyOf(99)).code(), absl::StatusCode::kNotFound);
  // GE's form: the options name the directory and the graph.
  const std::string ge_dir = (dir_ / "ge_form").string();
  for (int round = 0; round < 2; ++round) {
    session::Session s(*engines_, {}, nullptr);
    auto graph = ir::ParseGraph(kGraph);
    ASSERT_TRUE(graph.ok());
    ASSERT_TRUE(s.AddGraph(0, std::move(*graph),
                           {{"ge.graph_compiler_cache_dir", ge_dir}, {"ge.graph_key", "reshape_net"}}).ok());
    ASSERT_TRUE(s.CompileGraph(0).ok());
    auto use = s.GetCacheUse(0);
    ASSERT_TRUE(use.ok());
    EXPECT_EQ(use->hit, round == 1);
    EXPECT_TRUE(fs::exists(fs::path(ge_dir) / kCacheLayoutDir / "ns" / "operator" / use->key.substr(0, 2) / use->key));
  }
  // A cache directory that cannot be used (a file is in the way) is a
  // warning: the graph compiles and runs without the cache.
  std::ofstream(dir_ / "a_file") << "x";
  session::Session s(*engines_, {}, nullptr);
  auto graph = ir::ParseGraph(kGraph);
  ASSERT_TRUE(graph.ok());
  ASSERT_TRUE(s.AddGraph(0, std::move(*graph), {{"ge.graph_compiler_cache_dir", (dir_ / "a_file").string()}}).ok());
  ASSERT_TRUE(s.RunGraph(0, {Tensor::FromVector<float>({1, 2, 3, 4, 5, 6}, Shape{2, 3})}).ok());
  EXPECT_TRUE(s.GetCacheUse(0)->key.empty());
}

// A mixed graph (static units around a host_cpu node) loaded from the cache
// runs its static units statically, as when it was compiled.
TEST_F(ModelCacheTest, MixedGraphsRunMixedFromTheCache) {
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
  auto cache = Open();
  std::vector<float> first;
  for (int round = 0; round < 2; ++round) {
    session::Session session(*engines_, {}, nullptr);
    session.set_model_cache(cache.get());
    auto graph = ir::ParseGraph(kMixed);
    ASSERT_TRUE(graph.ok());
    ASSERT_TRUE(session.AddGraph(0, std::move(*graph), options).ok());
    ASSERT_TRUE(session.CompileGraph(0).ok());
    EXPECT_EQ(session.GetCacheUse(0)->hit, round == 1);
    EXPECT_GE(*session.NumStaticSubgraphs(0), 1) << "round " << round;
    auto out = session.RunGraph(0, {Tensor::FromVector<float>({1, 2, 3, 4, 5, 6}, Shape{2, 3})});
    ASSERT_TRUE(out.ok()) << out.status();
    const float* data = (*out)[0].tensor().data<float>();
    std::vector<float> values(data, data + 6);
    EXPECT_EQ(values[5], -6);
    if (round == 0) first = values;
    EXPECT_EQ(values, first);
  }
}

}  // namespace
}  // namespace ge::cache
