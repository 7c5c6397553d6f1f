// Per-subsystem spdlog loggers writing to one shared stderr sink.
#include "base/logging.h"

#include <map>
#include <mutex>
#include <string>

#include "spdlog/sinks/stdout_color_sinks.h"

namespace ge {
namespace {

struct LoggerTable {
  std::mutex mu;
  std::map<std::string, std::shared_ptr<spdlog::logger>, std::less<>> loggers;
  spdlog::sink_ptr sink = std::make_shared<spdlog::sinks::stderr_color_sink_mt>();
  spdlog::level::level_enum level = spdlog::level::warn;
};

LoggerTable& Table() {
  static LoggerTable* table = new LoggerTable();  // never destroyed: used at exit
  return *table;
}

}  // namespace

spdlog::logger& Logger(std::string_view subsystem) {
  LoggerTable& table = Table();
  std::lock_guard<std::mutex> lock(table.mu);
  auto it = table.loggers.find(subsystem);
  if (it != table.loggers.end()) return *it->second;
  auto logger = std::make_shared<spdlog::logger>(std::string(subsystem), table.sink);
  logger->set_level(table.level);
  logger->set_pattern("[%Y-%m-%d %H:%M:%S.%e] [%n] [%l] %v");
  auto& ref = *logger;
  table.loggers.emplace(std::string(subsystem), std::move(logger));
  return ref;
}

absl::Status SetLogLevel(std::string_view level) {
  auto parsed = spdlog::level::from_str(std::string(level));
  if (parsed == spdlog::level::off && level != "off") {
    return absl::InvalidArgumentError(
        "unknown log level '" + std::string(level) +
        "' (expected trace, debug, info, warn, error, critical or off)");
  }
  LoggerTable& table = Table();
  std::lock_guard<std::mutex> lock(table.mu);
  table.level = parsed;
  for (auto& [name, logger] : table.loggers) logger->set_level(parsed);
  return absl::OkStatus();
}

}  // namespace ge
