// Loggers, one per subsystem, on spdlog.
//
// Logs go to stderr. At the default level (warn) a successful command writes
// nothing, so tools can pipe stdout straight into a parser.
#pragma once

#include <memory>
#include <string_view>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "spdlog/spdlog.h"

// Lets loggers format Debian abseil's own string_view (status messages).
template <>
struct fmt::formatter<absl::string_view> : fmt::formatter<fmt::string_view> {
  template <typename FormatContext>
  auto format(absl::string_view s, FormatContext& ctx) const {
    return fmt::formatter<fmt::string_view>::format(fmt::string_view(s.data(), s.size()), ctx);
  }
};

namespace ge {

// Returns the logger of `subsystem` ("compiler", "runtime", ...), creating it
// on first use with the process-wide level.
spdlog::logger& Logger(std::string_view subsystem);

// Sets the level of every logger, present and future: trace, debug, info,
// warn, error, critical, off.
absl::Status SetLogLevel(std::string_view level);

}  // namespace ge

#define GE_LOG_TRACE(subsystem, ...) ::ge::Logger(subsystem).trace(__VA_ARGS__)
#define GE_LOG_DEBUG(subsystem, ...) ::ge::Logger(subsystem).debug(__VA_ARGS__)
#define GE_LOG_INFO(subsystem, ...) ::ge::Logger(subsystem).info(__VA_ARGS__)
#define GE_LOG_WARN(subsystem, ...) ::ge::Logger(subsystem).warn(__VA_ARGS__)
#define GE_LOG_ERROR(subsystem, ...) ::ge::Logger(subsystem).error(__VA_ARGS__)
