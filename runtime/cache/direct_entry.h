// A direct-mode entry of the compiled-model cache (ccache's manifest): what
// a direct key (cache_key.h, DirectCacheKey) leads to without importing the
// model.
//
// It names the content entry that holds the compiled model (its namespace
// and content key: the key computed from the imported graph, kept so that
// the hit is checked against it: the content entry's record must name that
// key) and the files the model read when it was imported (an operator
// model's ONNX external data and FileConstant files), each with its
// identity: path, size, modification and status-change times (ns), inode
// and device. A hit needs every file to have the identity recorded; a file
// that changed, moved or went away makes the direct entry stale (a miss,
// and the next compile replaces it). A file modified moments before it was
// recorded (within kRacySeconds: its times cannot show a change made within
// the same clock tick) also has its content's SHA-256 recorded, checked on
// every hit (as ccache does with such "racy" files).
//
// The record is text: a magic line, the direct key, the content namespace
// and key, one line per file (its path last, so it may hold spaces), and
// last the SHA-256 of the lines above it (as cache_entry.h's record).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace ge::cache {

inline constexpr char kDirectFile[] = "direct";
inline constexpr int64_t kRacySeconds = 2;

struct FileIdentity {
  std::string path;  // absolute, as the compiled model names it
  int64_t size = 0;
  int64_t mtime_ns = 0;
  int64_t ctime_ns = 0;
  uint64_t inode = 0;
  uint64_t device = 0;
  std::string sha256;  // the content's digest (hex) of a racy file; empty otherwise
  bool operator==(const FileIdentity&) const = default;
};

// The identity of `path` now (stat follows links: the file read is the
// target), with its content digest when it is racy (see above). NotFound
// when it does not exist.
absl::StatusOr<FileIdentity> IdentifyFile(const std::string& path);

struct DirectEntry {
  std::string content_ns;
  std::string content_key;
  std::vector<FileIdentity> files;
};

// The record of `entry` under direct key `key`.
std::string DirectRecord(std::string_view key, const DirectEntry& entry);

// Parses and checks a record (its digest, that it names `key`, a valid
// namespace and content key). DataLoss when it does not hold.
absl::StatusOr<DirectEntry> ParseDirectRecord(std::string_view record, std::string_view key);

// OK when every file of `entry` still has its recorded identity; otherwise
// FailedPrecondition naming the first that differs.
absl::Status CheckDirectFiles(const DirectEntry& entry);

}  // namespace ge::cache
