// The ge_local plugin's entry point.
#include "base/version.h"
#include "runtime/engines/api/plugin.h"
#include "runtime/engines/ge_local/ge_local_engine.h"

GE_DEFINE_ENGINE_PLUGIN(ge::engine::GeLocalEngine, "ge_local", ge::engine::ge_local::kAttributesJson)
