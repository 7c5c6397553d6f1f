// The C entry point of an engine plugin.
//
// Each engine shared library exports exactly one symbol,
// `ge_engine_plugin_entry`, returning a GeEnginePlugin that names the ABI
// version and the ged version it was built against. The loader refuses a
// plugin whose ABI version or ged version differs from its own, naming the
// file. Engines are C++ objects built by the same toolchain against the same
// ged headers; the entry point is C so that it can be found with dlsym.
#pragma once

#include <cstdint>

#include "runtime/engines/api/engine.h"

// Bumped whenever a class in runtime/engines/api changes layout or meaning.
// Appending a virtual to an interface only ged implements (ExecuteContext::
// RunSubgraph, planned_output) keeps existing plugins' calls valid and did not bump it; a
// plugin built against another ged version is refused anyway. Version 2:
// Engine::kernel_builder() (a new virtual in a class plugins implement).
// Version 3: ExecuteContext holds the dense-input array its inline input()
// reads (a layout change; the out-of-line input() is gone). Version 4: the
// engine SDK (issue 22): Engine holds its attributes (attributes() is no
// longer virtual), EngineAttributes lost runtime_type, attach and
// skip_assign_stream and gained reference, Engine::SetReferenceEngine, and
// the entry carries the engine's json (attributes_json). Version 5: TaskDef
// carries an engine's prepared state (TaskDef::prepared, a layout change).
#define GE_ENGINE_ABI_VERSION 5u
#define GE_ENGINE_PLUGIN_ENTRY_SYMBOL "ge_engine_plugin_entry"

extern "C" {

struct GeEnginePlugin {
  uint32_t abi_version;     // GE_ENGINE_ABI_VERSION at the plugin's build
  const char* ged_version;  // GED_VERSION_STRING at the plugin's build
  const char* engine_name;
  // The engine's json (its attributes, attributes.h) when the plugin embeds
  // it (built-in engines: ged_engine_plugin's CONF file); null when the
  // plugin ships `<engine_name>.json` beside its library instead. Either
  // way it is the one source of the engine's attributes.
  const char* attributes_json;
  // Creates the engine; the loader owns it and destroys it with `destroy`.
  ge::engine::Engine* (*create)();
  void (*destroy)(ge::engine::Engine*);
};

typedef const GeEnginePlugin* (*GeEnginePluginEntryFn)();
}

// Defines the entry point of a plugin whose engine class is default
// constructible. `attributes_json` is the embedded json (a `const char*`) or
// nullptr for a json beside the library. Use once per plugin library.
#define GE_DEFINE_ENGINE_PLUGIN(EngineClass, engine_name_literal, attributes_json)                   \
  extern "C" __attribute__((visibility("default"))) const GeEnginePlugin* ge_engine_plugin_entry() { \
    static const GeEnginePlugin plugin = {GE_ENGINE_ABI_VERSION,                                     \
                                          GED_VERSION_STRING,                                        \
                                          engine_name_literal,                                       \
                                          attributes_json,                                           \
                                          []() -> ge::engine::Engine* { return new EngineClass(); }, \
                                          [](ge::engine::Engine* e) { delete e; }};                  \
    return &plugin;                                                                                  \
  }
