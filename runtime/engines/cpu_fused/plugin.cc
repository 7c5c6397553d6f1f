// The plugin entry point of the cpu_fused engine.
#include "base/version.h"
#include "runtime/engines/api/plugin.h"
#include "runtime/engines/cpu_fused/cpu_fused_engine.h"

GE_DEFINE_ENGINE_PLUGIN(ge::engine::CpuFusedEngine, "cpu_fused", ge::engine::cpu_fused::kAttributesJson)
