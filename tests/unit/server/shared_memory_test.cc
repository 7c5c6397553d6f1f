// SharedMemoryRegistry: registration checks, tenant scoping, bounds of every
// reference, a shrunk object, and a mapping that outlives Unregister.
#include "server/shared_memory.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstring>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace ge::server {
namespace {

// A POSIX shared-memory object of `bytes`, unlinked at the end.
class Object {
 public:
  explicit Object(size_t bytes) : key_("/ged-unit-" + std::to_string(getpid()) + "-" + std::to_string(next_++)) {
    fd_ = shm_open(key_.c_str(), O_RDWR | O_CREAT | O_EXCL, 0600);
    EXPECT_GE(fd_, 0);
    EXPECT_EQ(ftruncate(fd_, static_cast<off_t>(bytes)), 0);
  }
  ~Object() {
    close(fd_);
    shm_unlink(key_.c_str());
  }
  const std::string& key() const { return key_; }
  void Resize(size_t bytes) { EXPECT_EQ(ftruncate(fd_, static_cast<off_t>(bytes)), 0); }

 private:
  static inline int next_ = 0;
  std::string key_;
  int fd_ = -1;
};

SharedMemoryRegionInfo Info(const std::string& name, const std::string& key, uint64_t offset, uint64_t size) {
  SharedMemoryRegionInfo info;
  info.name = name;
  info.key = key;
  info.offset = offset;
  info.byte_size = size;
  return info;
}

TEST(SharedMemoryRegistryTest, RegisterChecksNameKeyAndRange) {
  SharedMemoryRegistry registry(/*max_regions_per_tenant=*/2);
  Object object(8192);
  EXPECT_EQ(registry.Register("t", Info("", object.key(), 0, 64)).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(registry.Register("t", Info("r", "no-slash", 0, 64)).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(registry.Register("t", Info("r", "/a/b", 0, 64)).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(registry.Register("t", Info("r", object.key(), 0, 0)).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(registry.Register("t", Info("r", "/ged-unit-missing", 0, 64)).code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(registry.Register("t", Info("r", object.key(), 8000, 400)).code(), absl::StatusCode::kOutOfRange);
  // An offset that is not page aligned is mapped from the page below it.
  ASSERT_TRUE(registry.Register("t", Info("r", object.key(), 100, 4000)).ok());
  EXPECT_EQ(registry.Register("t", Info("r", object.key(), 0, 64)).code(), absl::StatusCode::kAlreadyExists);
  ASSERT_TRUE(registry.Register("u", Info("r", object.key(), 0, 64)).ok());  // another tenant's name space
  ASSERT_TRUE(registry.Register("t", Info("s", object.key(), 0, 64)).ok());
  EXPECT_EQ(registry.Register("t", Info("x", object.key(), 0, 64)).code(), absl::StatusCode::kResourceExhausted);
  auto listed = registry.Status("t", "");
  ASSERT_TRUE(listed.ok());
  ASSERT_EQ(listed->size(), 2u);
  EXPECT_EQ((*listed)[0].name, "r");
  EXPECT_EQ((*listed)[0].offset, 100u);
  EXPECT_EQ(registry.Status("t", "nope").status().code(), absl::StatusCode::kNotFound);
  ASSERT_TRUE(registry.Unregister("t", "").ok());
  EXPECT_EQ(registry.size(), 1u);  // u's region stays
  EXPECT_EQ(registry.Unregister("t", "r").code(), absl::StatusCode::kNotFound);
}

TEST(SharedMemoryRegistryTest, MapChecksEveryReference) {
  SharedMemoryRegistry registry;
  Object object(4096);
  ASSERT_TRUE(registry.Register("t", Info("r", object.key(), 64, 1024)).ok());
  auto a = registry.Map("t", "r", 16, 32, 32, "input 0 (x)");
  ASSERT_TRUE(a.ok()) << a.status();
  auto b = registry.Map("t", "r", 0, 1024, 1024, "input 1");
  ASSERT_TRUE(b.ok());
  // Both point into one mapping of object bytes [64, 1088).
  std::memcpy((*a)->data(), "hello", 5);
  EXPECT_EQ(std::memcmp(static_cast<char*>((*b)->data()) + 16, "hello", 5), 0);

  absl::Status s = registry.Map("u", "r", 0, 8, 8, "input 0 (x)").status();
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound);  // another tenant cannot use it
  EXPECT_NE(s.message().find("input 0 (x)"), absl::string_view::npos) << s;
  EXPECT_EQ(registry.Map("t", "r", 0, 8, 16, "x").status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(registry.Map("t", "r", 1000, 32, 32, "x").status().code(), absl::StatusCode::kOutOfRange);
  EXPECT_EQ(registry.Map("t", "r", ~uint64_t{0}, 2, 2, "x").status().code(), absl::StatusCode::kOutOfRange);

  object.Resize(512);  // shrunk below the registered range: refused, not a SIGBUS
  s = registry.Map("t", "r", 0, 8, 8, "x").status();
  EXPECT_EQ(s.code(), absl::StatusCode::kOutOfRange);
  EXPECT_NE(s.message().find("holds 512 bytes"), absl::string_view::npos) << s;
  object.Resize(4096);

  // A buffer handed out keeps its mapping after Unregister.
  ASSERT_TRUE(registry.Unregister("t", "r").ok());
  EXPECT_EQ(std::memcmp((*a)->data(), "hello", 5), 0);
  EXPECT_EQ(registry.Map("t", "r", 0, 8, 8, "x").status().code(), absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace ge::server

namespace ge::server {
namespace {

// A client that shrinks its object after every size check still cannot
// fault the daemon: the copy runs under the fault guard and fails alone.
TEST(SharedMemoryGuardTest, ACopyFromATruncatedMappingFailsInsteadOfFaulting) {
  Object object(3 * 4096);
  const int fd = shm_open(object.key().c_str(), O_RDWR, 0);
  ASSERT_GE(fd, 0);
  void* mapped = mmap(nullptr, 3 * 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  ASSERT_NE(mapped, MAP_FAILED);
  std::vector<char> local(3 * 4096, 'x');
  EXPECT_TRUE(GuardedCopy(local.data(), mapped, local.size()));
  object.Resize(4096);  // pages 2 and 3 are gone: touching them is SIGBUS
  EXPECT_FALSE(GuardedCopy(local.data(), mapped, local.size()));
  EXPECT_FALSE(GuardedCopy(static_cast<char*>(mapped) + 4096, local.data(), 4096));
  EXPECT_TRUE(GuardedCopy(local.data(), mapped, 4096));  // what is left still copies
  // The guard is per copy: it holds again after a fault.
  EXPECT_FALSE(GuardedCopy(local.data(), static_cast<char*>(mapped) + 8192, 16));
  munmap(mapped, 3 * 4096);
  close(fd);
}

TEST(SharedMemoryGuardTest, ReadCopiesOutOfTheRegionAndWriteIntoIt) {
  SharedMemoryRegistry registry;
  Object object(8192);
  ASSERT_TRUE(registry.Register("t", Info("r", object.key(), 0, 8192)).ok());
  const float values[2] = {1.5f, -2.0f};
  ASSERT_TRUE(registry.Write("t", "r", 64, 8, values, sizeof(values), "output 0").ok());
  auto copy = registry.Read("t", "r", 64, 8, 8, "input 0");
  ASSERT_TRUE(copy.ok()) << copy.status();
  EXPECT_EQ(std::memcmp((*copy)->data(), values, sizeof(values)), 0);
  // A copy, not a view: later writes to the region do not change it.
  const float other[2] = {7, 7};
  ASSERT_TRUE(registry.Write("t", "r", 64, 8, other, sizeof(other), "output 0").ok());
  EXPECT_EQ(std::memcmp((*copy)->data(), values, sizeof(values)), 0);
  object.Resize(16);
  auto shrunk = registry.Read("t", "r", 64, 8, 8, "input 0");
  EXPECT_EQ(shrunk.status().code(), absl::StatusCode::kOutOfRange);
  EXPECT_NE(shrunk.status().message().find("shared memory r"), absl::string_view::npos) << shrunk.status();
}

}  // namespace
}  // namespace ge::server
