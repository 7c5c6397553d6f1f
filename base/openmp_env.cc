// ConfigureOpenMpWaiting: environment variables set before libgomp loads;
// whether it has loaded, from the program headers of the loaded objects.
#include "base/openmp_env.h"

#include <link.h>

#include <cstdlib>
#include <cstring>

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

OpenMpWaiting ConfigureOpenMpWaiting() {
  OpenMpWaiting result;
  result.runtime_already_loaded = OpenMpRuntimeLoaded();
  if (std::getenv("OMP_WAIT_POLICY") == nullptr && std::getenv("GOMP_SPINCOUNT") == nullptr) {
    result.set_by_ged = setenv("GOMP_SPINCOUNT", kDefaultGompSpinCount, /*overwrite=*/0) == 0;
  }
  result.wait_policy = EnvOr("OMP_WAIT_POLICY");
  result.spin_count = EnvOr("GOMP_SPINCOUNT");
  return result;
}

}  // namespace ge
