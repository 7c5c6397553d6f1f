// ConfigureOpenMpWaiting (base/openmp_env.h): ged's short spin is set only
// when the environment names neither a wait policy nor a spin count, and
// what holds afterwards is reported.
#include "base/openmp_env.h"

#include <cstdlib>

#include "gtest/gtest.h"

namespace ge {
namespace {

class OpenMpEnvTest : public ::testing::Test {
 protected:
  void SetUp() override {
    unsetenv("OMP_WAIT_POLICY");
    unsetenv("GOMP_SPINCOUNT");
  }
  void TearDown() override { SetUp(); }
};

TEST_F(OpenMpEnvTest, SetsTheShortSpinWhenNothingIsSet) {
  const OpenMpWaiting w = ConfigureOpenMpWaiting();
  EXPECT_TRUE(w.set_by_ged);
  EXPECT_EQ(w.spin_count, kDefaultGompSpinCount);
  EXPECT_EQ(w.wait_policy, "");
  ASSERT_NE(std::getenv("GOMP_SPINCOUNT"), nullptr);
  EXPECT_STREQ(std::getenv("GOMP_SPINCOUNT"), "10000");
}

TEST_F(OpenMpEnvTest, LeavesAGivenPolicyAlone) {
  setenv("OMP_WAIT_POLICY", "passive", 1);
  const OpenMpWaiting w = ConfigureOpenMpWaiting();
  EXPECT_FALSE(w.set_by_ged);
  EXPECT_EQ(w.wait_policy, "passive");
  EXPECT_EQ(w.spin_count, "");
  EXPECT_EQ(std::getenv("GOMP_SPINCOUNT"), nullptr);
}

TEST_F(OpenMpEnvTest, LeavesAGivenSpinCountAlone) {
  setenv("GOMP_SPINCOUNT", "300000", 1);
  const OpenMpWaiting w = ConfigureOpenMpWaiting();
  EXPECT_FALSE(w.set_by_ged);
  EXPECT_EQ(w.spin_count, "300000");
  EXPECT_EQ(w.wait_policy, "");
}

}  // namespace
}  // namespace ge
