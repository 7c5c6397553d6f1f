// ConfigureOpenMpWaiting: environment variables set before libgomp loads,
// chosen by the host's load; whether libgomp has loaded, from the program
// headers of the loaded objects.
#include "base/openmp_env.h"

#include <link.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>

#include "base/logging.h"

namespace ge {
namespace {

std::string EnvOr(const char* name) {
  const char* value = std::getenv(name);
  return value == nullptr ? std::string() : std::string(value);
}

}  // namespace

bool OpenMpRuntimeLoaded() {
  auto visit = [](dl_phdr_info* info, size_t, void*) -> int {
    return info->dlpi_name != nullptr && std::strstr(info->dlpi_name, "libgomp") != nullptr ? 1 : 0;
  };
  return dl_iterate_phdr(visit, nullptr) != 0;
}

bool PreferPassiveWaiting(const HostLoad& load, int threads) {
  if (load.cpus <= 1) return false;
  const int team = threads <= 0 ? load.cpus : std::min(threads, load.cpus);
  if (team <= 1) return false;
  // The team's cores are those the other processes leave; waiting passively
  // pays once they take more than half a core of them.
  return load.other_cpus > static_cast<double>(load.cpus - team) + 0.5;
}

HostLoadProbe DefaultHostLoadProbe() {
  return [] { return MeasureHostLoad(std::chrono::milliseconds(50)); };
}

OpenMpWaiting ConfigureOpenMpWaiting(int threads, const HostLoadProbe& probe) {
  OpenMpWaiting result;
  result.runtime_already_loaded = OpenMpRuntimeLoaded();
  if (std::getenv("OMP_WAIT_POLICY") == nullptr && std::getenv("GOMP_SPINCOUNT") == nullptr) {
    bool passive = false;
    if (threads != 1 && probe) {
      absl::StatusOr<HostLoad> load = probe();
      if (load.ok()) {
        result.host_load = *load;
        passive = PreferPassiveWaiting(*load, threads);
      }
    }
    result.set_by_ged = passive ? setenv("OMP_WAIT_POLICY", "passive", /*overwrite=*/0) == 0
                                : setenv("GOMP_SPINCOUNT", kDefaultGompSpinCount, /*overwrite=*/0) == 0;
  }
  result.wait_policy = EnvOr("OMP_WAIT_POLICY");
  result.spin_count = EnvOr("GOMP_SPINCOUNT");
  return result;
}

void LogOpenMpWaiting(const OpenMpWaiting& waiting) {
  const std::string policy = !waiting.wait_policy.empty()  ? "OMP_WAIT_POLICY=" + waiting.wait_policy
                             : !waiting.spin_count.empty() ? "GOMP_SPINCOUNT=" + waiting.spin_count
                                                           : std::string("libgomp's default");
  if (waiting.set_by_ged && waiting.host_load.has_value()) {
    GE_LOG_INFO("openmp", "idle threads wait with {} (chosen by ged: other processes kept {:.2f} of {} CPUs busy)",
                policy, waiting.host_load->other_cpus, waiting.host_load->cpus);
  } else {
    GE_LOG_INFO("openmp", "idle threads wait with {} ({})", policy,
                waiting.set_by_ged ? "ged's default" : "set by the environment");
  }
  if (waiting.runtime_already_loaded) {
    GE_LOG_WARN("openmp", "libgomp was loaded before ged chose its wait policy: the setting does not apply");
  }
}

}  // namespace ge
