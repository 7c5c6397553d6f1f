// ConfigureOpenMpWaiting (base/openmp_env.h): ged chooses only when the
// environment names neither a wait policy nor a spin count, by the host's
// load (an injected probe here): the short spin on a quiet host, passive
// when other processes hold the team's cores; what holds is reported.
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

HostLoadProbe Load(int cpus, double other_cpus, int* calls = nullptr) {
  return [=]() -> absl::StatusOr<HostLoad> {
    if (calls != nullptr) ++*calls;
    return HostLoad{cpus, other_cpus};
  };
}

TEST_F(OpenMpEnvTest, SetsTheShortSpinOnAQuietHost) {
  const OpenMpWaiting w = ConfigureOpenMpWaiting(0, Load(2, 0.05));
  EXPECT_TRUE(w.set_by_ged);
  ASSERT_TRUE(w.host_load.has_value());
  EXPECT_EQ(w.host_load->cpus, 2);
  EXPECT_EQ(w.spin_count, kDefaultGompSpinCount);
  EXPECT_EQ(w.wait_policy, "");
  ASSERT_NE(std::getenv("GOMP_SPINCOUNT"), nullptr);
  EXPECT_STREQ(std::getenv("GOMP_SPINCOUNT"), "10000");
  EXPECT_EQ(std::getenv("OMP_WAIT_POLICY"), nullptr);
}

TEST_F(OpenMpEnvTest, WaitsPassivelyWhenOtherProcessesHoldTheTeamsCores) {
  const OpenMpWaiting w = ConfigureOpenMpWaiting(2, Load(2, 1.4));
  EXPECT_TRUE(w.set_by_ged);
  EXPECT_EQ(w.wait_policy, "passive");
  EXPECT_EQ(w.spin_count, "");
  ASSERT_NE(std::getenv("OMP_WAIT_POLICY"), nullptr);
  EXPECT_STREQ(std::getenv("OMP_WAIT_POLICY"), "passive");
  EXPECT_EQ(std::getenv("GOMP_SPINCOUNT"), nullptr);
}

TEST_F(OpenMpEnvTest, OneThreadNeedsNoMeasurement) {
  int calls = 0;
  const OpenMpWaiting w = ConfigureOpenMpWaiting(1, Load(2, 2.0, &calls));
  EXPECT_EQ(calls, 0);
  EXPECT_FALSE(w.host_load.has_value());
  EXPECT_EQ(w.spin_count, kDefaultGompSpinCount);
}

TEST_F(OpenMpEnvTest, AnUnreadableHostKeepsTheShortSpin) {
  const OpenMpWaiting w =
      ConfigureOpenMpWaiting(0, []() -> absl::StatusOr<HostLoad> { return absl::UnavailableError("no /proc"); });
  EXPECT_TRUE(w.set_by_ged);
  EXPECT_FALSE(w.host_load.has_value());
  EXPECT_EQ(w.spin_count, kDefaultGompSpinCount);
  EXPECT_EQ(w.wait_policy, "");
}

TEST_F(OpenMpEnvTest, NoProbeKeepsTheShortSpin) {
  const OpenMpWaiting w = ConfigureOpenMpWaiting(0, HostLoadProbe());
  EXPECT_FALSE(w.host_load.has_value());
  EXPECT_EQ(w.spin_count, kDefaultGompSpinCount);
}

TEST(PreferPassiveWaitingTest, ComparesTheLoadWithTheCoresTheTeamLeaves) {
  // Two CPUs, a team of two: any other process holding half a core.
  EXPECT_FALSE(PreferPassiveWaiting(HostLoad{2, 0.0}, 2));
  EXPECT_FALSE(PreferPassiveWaiting(HostLoad{2, 0.4}, 0));
  EXPECT_TRUE(PreferPassiveWaiting(HostLoad{2, 0.6}, 0));
  EXPECT_TRUE(PreferPassiveWaiting(HostLoad{2, 2.0}, 2));
  // Sixty-four CPUs, a team of eight: the others may keep 56 busy.
  EXPECT_FALSE(PreferPassiveWaiting(HostLoad{64, 40.0}, 8));
  EXPECT_TRUE(PreferPassiveWaiting(HostLoad{64, 60.0}, 8));
  // A team asking for more threads than CPUs is the whole host.
  EXPECT_TRUE(PreferPassiveWaiting(HostLoad{4, 1.0}, 16));
  // One thread or one CPU: nobody waits for a team.
  EXPECT_FALSE(PreferPassiveWaiting(HostLoad{4, 4.0}, 1));
  EXPECT_FALSE(PreferPassiveWaiting(HostLoad{1, 1.0}, 0));
}

TEST_F(OpenMpEnvTest, LeavesAGivenPolicyAlone) {
  setenv("OMP_WAIT_POLICY", "active", 1);
  int calls = 0;
  const OpenMpWaiting w = ConfigureOpenMpWaiting(0, Load(2, 2.0, &calls));
  EXPECT_EQ(calls, 0);
  EXPECT_FALSE(w.set_by_ged);
  EXPECT_EQ(w.wait_policy, "active");
  EXPECT_EQ(w.spin_count, "");
  EXPECT_EQ(std::getenv("GOMP_SPINCOUNT"), nullptr);
}

TEST_F(OpenMpEnvTest, LeavesAGivenSpinCountAlone) {
  setenv("GOMP_SPINCOUNT", "300000", 1);
  const OpenMpWaiting w = ConfigureOpenMpWaiting(0, Load(2, 2.0));
  EXPECT_FALSE(w.set_by_ged);
  EXPECT_EQ(w.spin_count, "300000");
  EXPECT_EQ(w.wait_policy, "");
}

}  // namespace
}  // namespace ge
