// GE-style option keys: the table of every key ged accepts, and validation.
//
// Options arrive as strings (from gectl --option, the daemon's requests, a
// config file). They are validated here once, against one table, then parsed
// into the typed structs of the layer that uses them (for example
// compiler::CompileOptions); no code reads option strings deep inside.
// docs/options.md lists the same keys.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace ge {

using OptionMap = std::map<std::string, std::string, std::less<>>;

enum class OptionScope : uint8_t { kGlobal, kSession, kGraph };

struct OptionSpec {
  std::string_view key;
  std::string_view default_value;
  std::string_view description;
  // Checks one value; the message says what is accepted.
  absl::Status (*validate)(std::string_view value);
  // The value names a path or a file (or makes the process write files):
  // only the operator may set it (gectl, the daemon's own configuration);
  // over RPC it is refused (session::CheckClientOptions).
  bool operator_only = false;
};

// Every option key ged knows, sorted by key.
const std::vector<OptionSpec>& AllOptionSpecs();
const OptionSpec* FindOptionSpec(std::string_view key);

// InvalidArgument for an unknown key (with close matches) or a bad value
// (naming the key, the value, and what is accepted).
absl::Status ValidateOptions(const OptionMap& options);

// Parses "KEY=VALUE" (gectl's --option form).
absl::Status ParseOptionAssignment(std::string_view text, OptionMap& options);

// Value helpers shared by the typed option structs.
absl::StatusOr<bool> ParseBoolOption(std::string_view key, std::string_view value);
absl::StatusOr<int64_t> ParseIntOption(std::string_view key, std::string_view value);
// Comma-separated list; blanks trimmed, empty items dropped.
std::vector<std::string> ParseListOption(std::string_view value);
// The value of `key` in `options`, else the table's default.
std::string OptionOrDefault(const OptionMap& options, std::string_view key);

}  // namespace ge
