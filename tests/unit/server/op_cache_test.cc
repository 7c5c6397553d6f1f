#include "server/op_cache.h"

#include "gtest/gtest.h"

namespace ge::server {
namespace {

class OpCacheTest : public ::testing::Test {
 protected:
  OpCache::Factory Maker() {
    return [this]() -> absl::StatusOr<std::unique_ptr<session::Session>> {
      ++made_;
      return std::make_unique<session::Session>(engines_, OptionMap{}, nullptr);
    };
  }
  engine::EngineRegistry engines_;
  int made_ = 0;
};

TEST_F(OpCacheTest, HitsReturnTheSameSessionAndTheLeastRecentlyUsedGoesFirst) {
  OpCache cache(2);
  bool hit = true;
  auto a = cache.GetOrCreate("a", Maker(), &hit);
  ASSERT_TRUE(a.ok());
  EXPECT_FALSE(hit);
  auto again = cache.GetOrCreate("a", Maker(), &hit);
  EXPECT_TRUE(hit);
  EXPECT_EQ(a->get(), again->get());
  ASSERT_TRUE(cache.GetOrCreate("b", Maker(), &hit).ok());
  ASSERT_TRUE(cache.GetOrCreate("a", Maker(), &hit).ok());  // a is now the most recent
  ASSERT_TRUE(cache.GetOrCreate("c", Maker(), &hit).ok());  // evicts b
  EXPECT_EQ(cache.size(), 2u);
  EXPECT_EQ(made_, 3);
  ASSERT_TRUE(cache.GetOrCreate("a", Maker(), &hit).ok());
  EXPECT_TRUE(hit);
  ASSERT_TRUE(cache.GetOrCreate("b", Maker(), &hit).ok());
  EXPECT_FALSE(hit);
  EXPECT_EQ(made_, 4);
}

TEST_F(OpCacheTest, FailuresAreNotCachedAndCapacityZeroKeepsNothing) {
  OpCache cache(4);
  bool hit = true;
  auto failed = cache.GetOrCreate("x", [] { return absl::StatusOr<std::unique_ptr<session::Session>>(
                                                absl::InvalidArgumentError("bad op")); },
                                  &hit);
  EXPECT_EQ(failed.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(cache.size(), 0u);
  ASSERT_TRUE(cache.GetOrCreate("x", Maker(), &hit).ok());
  EXPECT_FALSE(hit);

  OpCache off(0);
  ASSERT_TRUE(off.GetOrCreate("y", Maker(), &hit).ok());
  ASSERT_TRUE(off.GetOrCreate("y", Maker(), &hit).ok());
  EXPECT_FALSE(hit);
  EXPECT_EQ(off.size(), 0u);
}

}  // namespace
}  // namespace ge::server
