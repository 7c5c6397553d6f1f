// host_load (base/host_load.h): /proc/stat's per-CPU lines summed for the
// CPUs asked for, malformed text refused, and a busy child process seen as
// another process's load.
#include "base/host_load.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>

#include "gtest/gtest.h"

namespace ge {
namespace {

constexpr char kStat[] =
    "cpu  300 10 100 5000 20 5 5 7 0 0\n"
    "cpu0 100 0 50 2500 10 2 3 7 0 0\n"
    "cpu1 200 10 50 2500 10 3 2 0 0 0\n"
    "intr 12345 0 1 2\n"
    "ctxt 999\n"
    "cpufreq 1\n";

TEST(ParseProcStatTest, SumsTheCpuLinesAskedFor) {
  absl::StatusOr<CpuTicks> all = ParseProcStat(kStat, {});
  ASSERT_TRUE(all.ok()) << all.status();
  EXPECT_EQ(all->cpus, 2);
  // busy = user + nice + system + irq + softirq; idle = idle + iowait; steal is neither.
  EXPECT_EQ(all->busy, (100u + 0 + 50 + 2 + 3) + (200u + 10 + 50 + 3 + 2));
  EXPECT_EQ(all->idle, 2510u + 2510u);

  absl::StatusOr<CpuTicks> one = ParseProcStat(kStat, {1});
  ASSERT_TRUE(one.ok()) << one.status();
  EXPECT_EQ(one->cpus, 1);
  EXPECT_EQ(one->busy, 265u);
  EXPECT_EQ(one->idle, 2510u);
}

TEST(ParseProcStatTest, ReadsOldKernelsSevenFields) {
  absl::StatusOr<CpuTicks> t = ParseProcStat("cpu0 1 2 3 4 5 6 7\n", {});
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->busy, 1u + 2 + 3 + 6 + 7);
  EXPECT_EQ(t->idle, 4u + 5);
}

TEST(ParseProcStatTest, RefusesMalformedText) {
  EXPECT_FALSE(ParseProcStat("", {}).ok());
  EXPECT_FALSE(ParseProcStat("cpu  1 2 3 4 5 6 7\n", {}).ok());  // the total alone
  EXPECT_FALSE(ParseProcStat(kStat, {5}).ok());                  // no such CPU
  EXPECT_FALSE(ParseProcStat("cpu0 1 2 3\n", {}).ok());
  EXPECT_FALSE(ParseProcStat("cpu0 1 2 x 4 5 6 7\n", {}).ok());
  EXPECT_FALSE(ParseProcStat("cpuX 1 2 3 4 5 6 7\n", {}).ok());
  EXPECT_FALSE(ParseProcStat("cpu0 1 2 -3 4 5 6 7\n", {}).ok());
}

TEST(AllowedCpusTest, ListsTheAffinityMask) {
  const std::vector<int> cpus = AllowedCpus();
  ASSERT_FALSE(cpus.empty());
  EXPECT_GE(cpus.front(), 0);
}

TEST(MeasureHostLoadTest, SeesABusyChildProcess) {
  if (!ParseProcStat("cpu0 1 2 3 4 5 6 7\n", {}).ok()) GTEST_SKIP();
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    volatile unsigned long spin = 0;
    for (;;) spin = spin + 1;  // killed by the parent
  }
  absl::StatusOr<HostLoad> load = MeasureHostLoad(std::chrono::milliseconds(300));
  kill(child, SIGKILL);
  waitpid(child, nullptr, 0);
  if (!load.ok() && absl::IsUnavailable(load.status())) GTEST_SKIP() << load.status();
  ASSERT_TRUE(load.ok()) << load.status();
  EXPECT_EQ(load->cpus, static_cast<int>(AllowedCpus().size()));
  // The child holds a core for the whole window, whatever else runs; this
  // process (asleep) is not counted.
  EXPECT_GE(load->other_cpus, 0.5);
  EXPECT_LE(load->other_cpus, load->cpus);
}

}  // namespace
}  // namespace ge
