// Direct-mode entries: the record round-trips (paths with spaces, '%' and
// newlines included), a damaged or misnamed record is DataLoss, and a file
// the model read that changes, is replaced or goes away makes the entry
// stale; in the cache, a direct entry is found, replaced, never taken for
// a compiled model, and counted apart.
#include "runtime/cache/direct_entry.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "gtest/gtest.h"
#include "runtime/cache/cache_key.h"
#include "runtime/cache/model_cache.h"
#include "tests/testing/engines_test.h"

namespace ge::cache {
namespace {

namespace fs = std::filesystem;

const std::string kKey(64, 'd');
const std::string kContent(64, 'c');

class DirectEntryTest : public ge::testing::EnginesTest {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("direct_entry_test_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string Write(const std::string& name, const std::string& text) {
    const std::string path = (dir_ / name).string();
    std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
    return path;
  }
  fs::path dir_;
};

TEST_F(DirectEntryTest, RecordsRoundTrip) {
  DirectEntry entry{"t-alice", kContent, {}};
  for (const char* name : {"weights.bin", "odd name %41\nwith newline"}) {
    auto f = IdentifyFile(Write(name, "0123456789"));
    ASSERT_TRUE(f.ok()) << f.status();
    EXPECT_EQ(f->size, 10);
    entry.files.push_back(*f);
  }
  const std::string record = DirectRecord(kKey, entry);
  auto parsed = ParseDirectRecord(record, kKey);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->content_ns, "t-alice");
  EXPECT_EQ(parsed->content_key, kContent);
  ASSERT_EQ(parsed->files.size(), 2u);
  EXPECT_EQ(parsed->files, entry.files);
  EXPECT_TRUE(CheckDirectFiles(*parsed).ok());
}

TEST_F(DirectEntryTest, DamagedOrMisnamedRecordsAreDataLoss) {
  const std::string record = DirectRecord(kKey, DirectEntry{"operator", kContent, {}});
  EXPECT_EQ(ParseDirectRecord(record, std::string(64, 'e')).status().code(), absl::StatusCode::kDataLoss);
  std::string flipped = record;
  flipped[flipped.find("content_key ") + 12] = 'a';  // another content key, the digest unchanged
  EXPECT_EQ(ParseDirectRecord(flipped, kKey).status().code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(ParseDirectRecord(record.substr(0, record.size() / 2), kKey).status().code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(ParseDirectRecord("", kKey).status().code(), absl::StatusCode::kDataLoss);
  // A sound record naming no valid namespace is refused too.
  EXPECT_EQ(ParseDirectRecord(DirectRecord(kKey, DirectEntry{"../x", kContent, {}}), kKey).status().code(),
            absl::StatusCode::kDataLoss);
}

TEST_F(DirectEntryTest, AFileThatChangesMovesOrGoesMakesTheEntryStale) {
  const std::string path = Write("weights.bin", "0123456789");
  auto f = IdentifyFile(path);
  ASSERT_TRUE(f.ok());
  const DirectEntry entry{"operator", kContent, {*f}};
  ASSERT_TRUE(CheckDirectFiles(entry).ok());
  // Rewritten with the same size: its times tell, or (moments after it was
  // written, within one clock tick) its recorded content.
  Write("weights.bin", "9876543210");
  EXPECT_EQ(CheckDirectFiles(entry).code(), absl::StatusCode::kFailedPrecondition);
  // Replaced by another file (a rename over it): another inode.
  auto now = IdentifyFile(path);
  ASSERT_TRUE(now.ok());
  const DirectEntry current{"operator", kContent, {*now}};
  ASSERT_TRUE(CheckDirectFiles(current).ok());
  const std::string other = Write("other.bin", "9876543210");
  fs::rename(other, path);
  EXPECT_EQ(CheckDirectFiles(current).code(), absl::StatusCode::kFailedPrecondition);
  fs::remove(path);
  EXPECT_EQ(CheckDirectFiles(current).code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(IdentifyFile(path).status().code(), absl::StatusCode::kNotFound);
}

TEST_F(DirectEntryTest, TheCacheKeepsDirectEntriesApartFromModels) {
  ModelCacheOptions options;
  options.dir = (dir_ / "cache").string();
  auto cache = ModelCache::Open(options);
  ASSERT_TRUE(cache.ok()) << cache.status();
  ModelCache& c = **cache;
  EXPECT_EQ(c.LookupDirectIn("operator", kKey).status().code(), absl::StatusCode::kNotFound);
  const std::string path = Write("weights.bin", "0123456789");
  auto f = IdentifyFile(path);
  ASSERT_TRUE(f.ok());
  ASSERT_TRUE(c.StoreDirectIn("operator", kKey, DirectEntry{"operator", kContent, {*f}}).ok());
  auto found = c.LookupDirectIn("operator", kKey);
  ASSERT_TRUE(found.ok()) << found.status();
  EXPECT_EQ(found->content_key, kContent);
  // Only in its own namespace.
  EXPECT_EQ(c.LookupDirectIn(TenantNamespace("a"), kKey).status().code(), absl::StatusCode::kNotFound);
  // Never a compiled model, and looking it up as one leaves it in place.
  EXPECT_EQ(c.Lookup(kKey, *engines_).status().code(), absl::StatusCode::kNotFound);
  EXPECT_FALSE(c.Contains(kKey));
  EXPECT_TRUE(c.LookupDirectIn("operator", kKey).ok());
  // A stale entry is a miss, and storing again replaces it.
  Write("weights.bin", "changed!!!");
  EXPECT_EQ(c.LookupDirectIn("operator", kKey).status().code(), absl::StatusCode::kNotFound);
  auto changed = IdentifyFile(path);
  ASSERT_TRUE(changed.ok());
  ASSERT_TRUE(c.StoreDirectIn("operator", kKey, DirectEntry{"operator", kContent, {*changed}}).ok());
  EXPECT_TRUE(c.LookupDirectIn("operator", kKey).ok());
  const CacheStats stats = c.stats();
  EXPECT_EQ(stats.direct_hits, 3);
  EXPECT_EQ(stats.direct_misses, 3);
  EXPECT_EQ(stats.hits, 0);
  // Listed as a direct entry; verify passes it; gc removes it, its model
  // entry being absent.
  auto listed = c.List();
  ASSERT_TRUE(listed.ok());
  ASSERT_EQ(listed->size(), 1u);
  EXPECT_TRUE((*listed)[0].direct);
  const VerifyReport report = c.Verify(engines_);
  EXPECT_EQ(report.direct_entries, 1);
  EXPECT_EQ(report.entries, 0);
  EXPECT_TRUE(report.moved_aside.empty());
  auto gc = c.Collect(int64_t{1} << 40);
  ASSERT_TRUE(gc.ok());
  EXPECT_EQ(gc->dangling_removed, 1);
  EXPECT_EQ(c.LookupDirectIn("operator", kKey).status().code(), absl::StatusCode::kNotFound);
}

TEST_F(DirectEntryTest, ACorruptDirectRecordIsMovedAside) {
  ModelCacheOptions options;
  options.dir = (dir_ / "cache").string();
  auto cache = ModelCache::Open(options);
  ASSERT_TRUE(cache.ok()) << cache.status();
  ASSERT_TRUE((*cache)->StoreDirectIn("operator", kKey, DirectEntry{"operator", kContent, {}}).ok());
  const fs::path record = dir_ / "cache" / kCacheLayoutDir / "ns" / "operator" / kKey.substr(0, 2) / kKey / kDirectFile;
  ASSERT_TRUE(fs::exists(record));
  std::ofstream(record, std::ios::app) << "junk";
  const VerifyReport report = (*cache)->Verify(engines_);
  ASSERT_EQ(report.moved_aside.size(), 1u);
  EXPECT_FALSE(fs::exists(record));
  EXPECT_EQ((*cache)->stats().corrupt, 1);
}

TEST_F(DirectEntryTest, DigestsAreRememberedByIdentityExceptForRacyFiles) {
  ModelCacheOptions options;
  options.dir = (dir_ / "cache").string();
  auto cache = ModelCache::Open(options);
  ASSERT_TRUE(cache.ok()) << cache.status();
  FileIdentity settled{"/models/m.onnx", 100, 1000, 2000, 7, 8, ""};
  const Sha256Digest digest = ModelBytesDigest("the model's bytes");
  EXPECT_FALSE((*cache)->RecallDigest(settled).has_value());
  (*cache)->RememberDigest(settled, digest);
  ASSERT_TRUE((*cache)->RecallDigest(settled).has_value());
  EXPECT_EQ(*(*cache)->RecallDigest(settled), digest);
  // Any field of the identity differing: no memory.
  for (int field = 0; field < 5; ++field) {
    FileIdentity changed = settled;
    if (field == 0) changed.size += 1;
    if (field == 1) changed.mtime_ns += 1;
    if (field == 2) changed.ctime_ns += 1;
    if (field == 3) changed.inode += 1;
    if (field == 4) changed.device += 1;
    EXPECT_FALSE((*cache)->RecallDigest(changed).has_value()) << field;
  }
  // A racy identity (its content digest recorded) is neither remembered nor recalled.
  FileIdentity racy = settled;
  racy.path = "/models/racy.onnx";
  racy.sha256 = std::string(64, '0');
  (*cache)->RememberDigest(racy, digest);
  EXPECT_FALSE((*cache)->RecallDigest(racy).has_value());
  racy.sha256.clear();
  EXPECT_FALSE((*cache)->RecallDigest(racy).has_value());
}

}  // namespace
}  // namespace ge::cache
