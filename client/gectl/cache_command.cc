// gectl cache ls | stat | verify | gc: the compiled-model cache of this host
// (the directory of --cache-dir, else the default).
#include <ctime>
#include <iomanip>
#include <iostream>

#include "absl/strings/numbers.h"
#include "base/status.h"
#include "client/gectl/commands.h"
#include "client/gectl/local_runtime.h"

namespace ge::gectl {
namespace {

std::string FormatTime(int64_t unix_seconds) {
  if (unix_seconds <= 0) return "-";
  std::time_t t = static_cast<std::time_t>(unix_seconds);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char text[32];
  std::strftime(text, sizeof(text), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return text;
}

absl::StatusOr<std::unique_ptr<cache::ModelCache>> OpenCache() {
  const CacheSettings& settings = GetCacheSettings();
  if (settings.disabled) return InvalidArgument("--no-cache: there is no cache to work on");
  cache::ModelCacheOptions options;
  options.dir = settings.dir.empty() ? cache::DefaultCacheDir() : settings.dir;
  options.max_bytes = 0;  // gc decides
  return cache::ModelCache::Open(options);
}

absl::Status List(cache::ModelCache& cache) {
  GE_ASSIGN_OR_RETURN(std::vector<cache::EntryInfo> entries, cache.List());
  std::cout << std::left << std::setw(66) << "KEY" << std::setw(8) << "KIND" << std::setw(14) << "BYTES"
            << std::setw(22) << "LAST USED" << std::setw(22) << "CREATED"
            << "GED" << std::endl;
  for (const cache::EntryInfo& e : entries) {
    std::cout << std::setw(66) << e.key << std::setw(8) << (e.direct ? "direct" : "model") << std::setw(14) << e.bytes
              << std::setw(22) << FormatTime(e.last_used_unix) << std::setw(22) << FormatTime(e.created_unix)
              << (e.ged_version.empty() ? "-" : e.ged_version) << std::endl;
  }
  return absl::OkStatus();
}

absl::Status Stat(cache::ModelCache& cache) {
  GE_ASSIGN_OR_RETURN(std::vector<cache::EntryInfo> entries, cache.List());
  int64_t bytes = 0;
  for (const cache::EntryInfo& e : entries) bytes += e.bytes;
  const CacheSettings& settings = GetCacheSettings();
  std::cout << "directory: " << cache.dir() << "\nentries: " << entries.size() << "\nbytes: " << bytes
            << "\nmax_bytes: " << settings.max_bytes
            << "\nremote: " << (settings.remote.empty() ? "none" : settings.remote) << std::endl;
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<int64_t> ParseByteSize(const std::string& text) {
  int64_t scale = 1;
  std::string digits = text;
  if (!digits.empty()) {
    switch (digits.back()) {
      case 'K': case 'k': scale = int64_t{1} << 10; break;
      case 'M': case 'm': scale = int64_t{1} << 20; break;
      case 'G': case 'g': scale = int64_t{1} << 30; break;
      case 'T': case 't': scale = int64_t{1} << 40; break;
      default: break;
    }
    if (scale != 1) digits.pop_back();
  }
  int64_t value = 0;
  if (!absl::SimpleAtoi(digits, &value) || value < 0 || value > (int64_t{1} << 62) / scale) {
    return InvalidArgument("bad size '", text, "': expected bytes, optionally with K, M, G or T");
  }
  return value * scale;
}

int CacheCommand(const CacheFlags& flags) {
  absl::StatusOr<std::unique_ptr<cache::ModelCache>> cache = OpenCache();
  if (!cache.ok()) return ReportError(cache.status());
  absl::Status s;
  if (flags.action == "ls") {
    s = List(**cache);
  } else if (flags.action == "stat") {
    s = Stat(**cache);
  } else if (flags.action == "verify") {
    absl::StatusOr<std::unique_ptr<LocalRuntime>> rt = LocalRuntime::Create(1);
    if (!rt.ok()) return ReportError(rt.status());
    const cache::VerifyReport report = (*cache)->Verify(&(*rt)->engines());
    for (const std::string& line : report.moved_aside) std::cout << "moved aside: " << line << std::endl;
    std::cout << report.entries << " entries verified, " << report.direct_entries << " direct-mode entries, "
              << report.other_hosts << " intact but built for other engines, CPUs or ged versions, "
              << report.moved_aside.size() << " corrupt, " << report.temps_removed
              << " stale temporary entries removed, " << report.old_format
              << " entries of earlier cache formats ignored (gc removes them)" << std::endl;
    return report.moved_aside.empty() ? 0 : 1;
  } else if (flags.action == "gc") {
    int64_t max_bytes = GetCacheSettings().max_bytes;
    if (!flags.max_size.empty()) {
      absl::StatusOr<int64_t> parsed = ParseByteSize(flags.max_size);
      if (!parsed.ok()) return ReportError(parsed.status());
      max_bytes = *parsed;
    }
    absl::StatusOr<cache::GcReport> report = (*cache)->Collect(max_bytes);
    if (!report.ok()) return ReportError(report.status());
    std::cout << "removed " << report->entries_removed << " entries (" << report->bytes_removed << " bytes), "
              << report->temps_removed << " stale temporary entries, " << report->corrupt_removed
              << " entries moved aside as corrupt, " << report->old_format_removed
              << " entries of earlier cache formats and " << report->dangling_removed
              << " direct-mode entries whose model was gone; " << report->bytes_left << " bytes left" << std::endl;
  } else {
    s = InvalidArgument("unknown cache action '", flags.action, "': expected ls, stat, verify or gc");
  }
  return s.ok() ? 0 : ReportError(s);
}

}  // namespace ge::gectl
