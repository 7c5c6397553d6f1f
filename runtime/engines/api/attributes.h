// An engine's json: the one source of its attributes (EngineAttributes).
//
// Every engine has one `<engine>.json` (GE's engine_conf.json). A built-in
// engine embeds it at build time (the SDK's ged_engine_attributes CMake
// function) and its constructor parses it; a plugin either embeds it the
// same way (GeEnginePlugin::attributes_json) or ships it beside its library,
// where the plugin loader reads it. Keys (docs/design/engines.md):
//   name              the engine's name; when present it must be the
//                     plugin's (the entry names the engine)
//   compute_cost      0 (preferred) .. 10 (fallback); default 10
//   atomic            false for a composite engine; default true
//   composite_engine  the composite engine this atomic engine belongs to
//   independent       its nodes run on a stream of their own; default false
//   reference         the reference engine (engine.h); default false
//   version           the engine's own version (kernels, parameter blobs)
//   cost              placement estimates: {"ops": {"<op or *>": [call_ns,
//                     element_ns]}, "boundary": [call_ns, element_ns]}
// Any other key is an error naming it, so a misspelt or retired key (the
// unread `attach`, `skip_assign_stream` and `runtime_type` of engine ABI 3)
// does not pass silently.
#pragma once

#include <string_view>

#include "absl/status/statusor.h"
#include "runtime/engines/api/engine.h"

namespace ge::engine {

// Parses `json` (one JSON object) into the attributes of engine
// `engine_name`. Errors are InvalidArgument and start with `source` (a
// file path, or "<engine>.json (embedded)").
absl::StatusOr<EngineAttributes> ParseEngineAttributes(std::string_view json, std::string_view source,
                                                       std::string_view engine_name);

// For a built-in engine's constructor: its embedded json's attributes. The
// embedded text is part of the build and every built-in engine's unit test
// checks it parses; should it not, the engine keeps only its name and
// `error` holds why, which the engine's Initialize returns (the registry
// then skips it, naming the reason).
struct EmbeddedAttributes {
  EngineAttributes attributes;
  absl::Status error;
};
EmbeddedAttributes ParseEmbeddedAttributes(const char* json, std::string_view engine_name);

}  // namespace ge::engine
