// The plugin entry point of the cpu_dense engine.
#include "base/version.h"
#include "runtime/engines/api/plugin.h"
#include "runtime/engines/cpu_dense/cpu_dense_engine.h"

GE_DEFINE_ENGINE_PLUGIN(ge::engine::CpuDenseEngine, "cpu_dense", ge::engine::cpu_dense::kAttributesJson)
