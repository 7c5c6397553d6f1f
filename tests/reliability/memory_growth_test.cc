// Memory growth under load (the Reliability issue): ged_load drives a real
// daemon with concurrent clients creating sessions, adding, compiling and
// running graphs and destroying sessions, while the test samples the
// daemon's resident set. Once warm, a daemon that releases what each call
// and session took keeps a flat RSS: the growth over the second half of the
// run must stay under kBoundBytes. The negative control runs the same load
// against a daemon that deliberately keeps 8 KiB per run
// (testing_retain_bytes_per_run) and requires the same check to flag it.
//
// Not in the ASan tree (asan_excluded): ASan's quarantine holds freed
// memory on purpose, so RSS grows there whatever the daemon does.
#include <sys/types.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "gtest/gtest.h"
#include "tests/integration/daemon_process.h"
#include "tests/integration/process.h"

namespace ge {
namespace {

using testing::DaemonProcess;

constexpr int64_t kBoundBytes = 16 << 20;
constexpr double kSeconds = 8;

int64_t ResidentBytes(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmRSS:", 0) == 0) {
      std::istringstream fields(line.substr(6));
      int64_t kb = 0;
      fields >> kb;
      return kb * 1024;
    }
  }
  return -1;
}

struct LoadRun {
  std::string report;          // ged_load's JSON line
  int exit_code = -1;
  int64_t first_half_max = 0;  // RSS
  int64_t second_half_max = 0;
  int64_t growth() const { return second_half_max - first_half_max; }
};

LoadRun RunLoad(const std::string& config_yaml) {
  LoadRun run;
  const std::string dir = testing::MakeTempDir("ged-memory");
  const std::string config = dir + "/ged.yaml";
  std::ofstream(config) << config_yaml;
  auto d = DaemonProcess::Start({"--config", config});
  EXPECT_NE(d, nullptr);
  if (d == nullptr) return run;
  testing::ProcessResult result;
  std::thread load([&] {
    result = testing::RunProcess({testing::BinaryDir() + "/bin/ged_load", "--address", d->grpc_address(),
                                  "--clients", "8", "--duration", std::to_string(kSeconds), "--progress", "0"},
                                 kSeconds + 60);
  });
  const auto start = std::chrono::steady_clock::now();
  for (;;) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    const double t = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (t >= kSeconds) break;
    const int64_t rss = ResidentBytes(d->pid());
    // The first second is warm-up (engines, kernels, arenas): not counted.
    if (t < 1.0) continue;
    int64_t& half_max = t < 1.0 + (kSeconds - 1.0) / 2 ? run.first_half_max : run.second_half_max;
    half_max = std::max(half_max, rss);
  }
  load.join();
  run.report = result.out;
  run.exit_code = result.exit_code;
  EXPECT_EQ(result.exit_code, 0) << result.out << result.err;
  std::filesystem::remove_all(dir);
  return run;
}

TEST(MemoryGrowthTest, SteadyLoadKeepsTheDaemonsMemoryFlat) {
  const LoadRun run = RunLoad("{}\n");
  std::printf("growth over the second half: %.1f MiB (first half max %.1f MiB, second %.1f MiB)\n%s",
              run.growth() / 1048576.0, run.first_half_max / 1048576.0, run.second_half_max / 1048576.0,
              run.report.c_str());
  EXPECT_NE(run.report.find("\"unexpected_errors\": 0"), std::string::npos) << run.report;
  EXPECT_LT(run.growth(), kBoundBytes) << run.report;
}

TEST(MemoryGrowthTest, NegativeControlALeakingDaemonIsFlagged) {
  const LoadRun run = RunLoad("testing_retain_bytes_per_run: 8192\n");
  std::printf("leaking daemon: growth over the second half %.1f MiB\n%s", run.growth() / 1048576.0,
              run.report.c_str());
  EXPECT_GE(run.growth(), kBoundBytes) << "the memory-growth check missed a daemon that leaks 8 KiB per run: "
                                       << run.report;
}

}  // namespace
}  // namespace ge
