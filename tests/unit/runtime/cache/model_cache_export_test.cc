// Cache exports (model_cache_export.cc): the output of a hit is a hard link
// to the read-only export where there is no reflink, replacing the output
// whatever it was (a link to the export included) and leaving no temporary
// name behind; a write into a linked output changes the export's identity,
// so the next hit checks its CRC and drops it; a record of an earlier
// build (no identity) is checked by its CRC; and a .gem written over a
// link replaces the link instead of writing through it.
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "gtest/gtest.h"
#include "base/sha256.h"
#include "runtime/cache/cache_entry.h"
#include "runtime/cache/model_cache.h"

namespace ge::cache {
namespace {

namespace fs = std::filesystem;

const std::string kKey(64, 'e');

std::string Read(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

void Write(const fs::path& path, const std::string& text) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
}

struct stat Stat(const fs::path& path) {
  struct stat st {};
  EXPECT_EQ(::stat(path.c_str(), &st), 0) << path;
  return st;
}

class ModelCacheExportTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("model_cache_export_test_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "out");
    ModelCacheOptions options;
    options.dir = (dir_ / "cache").string();
    options.max_bytes = 0;
    auto cache = ModelCache::Open(options);
    ASSERT_TRUE(cache.ok()) << cache.status();
    cache_ = std::move(*cache);
    ASSERT_TRUE(cache_->StoreIn("operator", kKey, runtime::GemBytes{"the entry's gem", ""}).ok());
    source_ = dir_ / "out" / "first.gem";
    Write(source_, std::string(100000, 'g'));
    ASSERT_TRUE(cache_->AddExport("operator", kKey, source_.string(), "static, 1 task").ok());
  }
  void TearDown() override {
    cache_.reset();
    fs::remove_all(dir_);
  }
  // The entry's directory, found by its export record (the layout is the
  // cache's own business).
  fs::path EntryDir() const {
    for (const auto& e : fs::recursive_directory_iterator(dir_ / "cache")) {
      if (e.path().filename() == kExportMetaFile) return e.path().parent_path();
    }
    return {};
  }
  fs::path ExportPath() const { return EntryDir() / kExportFile; }
  size_t FilesIn(const fs::path& dir) const {
    return static_cast<size_t>(std::distance(fs::directory_iterator(dir), fs::directory_iterator()));
  }

  fs::path dir_, source_;
  std::unique_ptr<ModelCache> cache_;
};

TEST_F(ModelCacheExportTest, AHitLinksTheReadOnlyExportAndLeavesNoTemporaryName) {
  const fs::path out = dir_ / "out" / "hit.gem";
  Write(out, "an older output");
  std::string how;
  auto summary = cache_->ExportTo("operator", kKey, out.string(), &how);
  ASSERT_TRUE(summary.ok()) << summary.status();
  EXPECT_EQ(*summary, "static, 1 task");
  EXPECT_EQ(Read(out), Read(source_));
  // This file system has no reflinks (ext4, tmpfs): a hard link, where one
  // with reflinks would have made an independent file.
  if (how == "link") {
    EXPECT_EQ(Stat(out).st_ino, Stat(ExportPath()).st_ino);
    EXPECT_EQ(Stat(out).st_mode & 0777, 0444u);
  } else {
    EXPECT_EQ(how, "reflink");
  }
  // Again over the output that already is a link to the export: still one
  // output and no temporary name (rename() of a link over another link of
  // the same inode does nothing).
  ASSERT_TRUE(cache_->ExportTo("operator", kKey, out.string(), &how).ok());
  EXPECT_EQ(FilesIn(dir_ / "out"), 2u);  // first.gem and hit.gem
  EXPECT_EQ(Read(out), Read(source_));
}

TEST_F(ModelCacheExportTest, AWriteIntoALinkedOutputIsCaughtAndTheExportDropped) {
  const fs::path out = dir_ / "out" / "hit.gem";
  std::string how;
  ASSERT_TRUE(cache_->ExportTo("operator", kKey, out.string(), &how).ok());
  if (how != "link") GTEST_SKIP() << "the output is a " << how << ", not a link";
  // Written in place, same size (as root may, whatever the mode).
  fs::permissions(out, fs::perms::owner_write, fs::perm_options::add);
  {
    std::fstream f(out, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(500);
    f << "tampered";
  }
  auto again = cache_->ExportTo("operator", kKey, (dir_ / "out" / "second.gem").string(), &how);
  EXPECT_EQ(again.status().code(), absl::StatusCode::kNotFound);
  EXPECT_FALSE(fs::exists(ExportPath()));
  EXPECT_FALSE(fs::exists(dir_ / "out" / "second.gem"));
  EXPECT_TRUE(cache_->ContainsIn("operator", kKey)) << "the entry itself stays";
}

TEST_F(ModelCacheExportTest, ARecordWithoutIdentityIsCheckedByItsCrc) {
  const fs::path meta = EntryDir() / kExportMetaFile;
  const std::string record = Read(meta);
  ASSERT_NE(record.find("\nidentity "), std::string::npos) << record;
  // The record an earlier build wrote: no identity line (and its own digest).
  std::string old = record.substr(0, record.find("\nidentity ") + 1);
  old += record.substr(record.find('\n', record.find("\nidentity ") + 1) + 1);
  old = old.substr(0, old.find("record_sha256 "));
  old += "record_sha256 " + ToHex(Sha256(old)) + "\n";
  fs::permissions(meta, fs::perms::owner_write, fs::perm_options::add);
  Write(meta, old);
  std::string how;
  const fs::path out = dir_ / "out" / "hit.gem";
  ASSERT_TRUE(cache_->ExportTo("operator", kKey, out.string(), &how).ok());
  EXPECT_EQ(Read(out), Read(source_));
  // Damaged bytes of the same size, written in place (the identity would
  // have told; this record has none): the CRC tells.
  const fs::path gem = ExportPath();
  fs::remove(out);
  fs::permissions(gem, fs::perms::owner_write, fs::perm_options::add);
  {
    std::fstream f(gem, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(10);
    f << "h";
  }
  EXPECT_EQ(cache_->ExportTo("operator", kKey, out.string(), &how).status().code(), absl::StatusCode::kNotFound);
  EXPECT_FALSE(fs::exists(gem));
}

}  // namespace
}  // namespace ge::cache
