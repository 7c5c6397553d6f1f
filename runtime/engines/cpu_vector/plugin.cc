// The plugin entry point of the cpu_vector engine.
#include "base/version.h"
#include "runtime/engines/api/plugin.h"
#include "runtime/engines/cpu_vector/cpu_vector_engine.h"

GE_DEFINE_ENGINE_PLUGIN(ge::engine::CpuVectorEngine, "cpu_vector", ge::engine::cpu_vector::kAttributesJson)
