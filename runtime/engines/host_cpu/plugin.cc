// The plugin entry point of the host_cpu engine.
#include "base/version.h"
#include "runtime/engines/api/plugin.h"
#include "runtime/engines/host_cpu/host_cpu_engine.h"

GE_DEFINE_ENGINE_PLUGIN(ge::engine::HostCpuEngine, "host_cpu", ge::engine::host_cpu::kAttributesJson)
