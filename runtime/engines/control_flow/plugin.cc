// The control_flow plugin's entry point.
#include "base/version.h"
#include "runtime/engines/api/plugin.h"
#include "runtime/engines/control_flow/control_flow_engine.h"

GE_DEFINE_ENGINE_PLUGIN(ge::engine::ControlFlowEngine, "control_flow", ge::engine::control_flow::kAttributesJson)
