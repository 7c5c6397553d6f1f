// One compiled-model cache entry in memory: its three files and the
// metadata record that makes it checkable.
//
// The metadata record (`meta`) is a few text lines: a magic line, the key,
// the ged version, the creation time, then the size and CRC-32C of
// `model.gem` and of `model.gem.weights` (CRC-32C runs at memory speed, so
// checking a 100 MB entry on every hit costs ~15 ms), and last the SHA-256
// of the lines above it. A reader trusts an entry only when all three
// checksums match; any mismatch, truncation or unparsable line makes the
// entry corrupt.
//
// Verified once per file identity: after the CRCs of an entry read from
// disk matched, the reader may keep a second record (`verified`) naming the
// meta record (its SHA-256) and both files' stamps (device, inode, size,
// modification and status-change times, cache_files.h). A later reader
// whose files have exactly those stamps and whose record is that one checks
// the record and the sizes but not the CRCs. The CRCs catch torn and
// partial writes and any write after publication; what a stamp cannot show
// is a change that leaves the times alone (media corruption under the file
// system), which `gectl cache verify` still finds: it always reads
// everything (docs/security.md).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "base/sha256.h"
#include "base/tensor.h"
#include "runtime/cache/cache_files.h"
#include "runtime/model/gem.h"

namespace ge::cache {

inline constexpr char kGemFile[] = "model.gem";
inline constexpr char kWeightsFile[] = "model.gem.weights";
inline constexpr char kMetaFile[] = "meta";
inline constexpr char kVerifiedFile[] = "verified";
// An entry's export (model_cache.h): its .gem with inline weights, and the
// record checking it.
inline constexpr char kExportFile[] = "export.gem";
inline constexpr char kExportMetaFile[] = "export.meta";

struct EntryBlobs {
  std::string meta;
  std::string gem;                         // entries made here or fetched remotely
  std::string weights;                     // entries made here or fetched remotely
  std::shared_ptr<Buffer> mapped_gem;      // entries read from disk: the file, mapped
  std::shared_ptr<Buffer> mapped_weights;  // entries read from disk: the file, mapped
  // Entries read from disk: the mapped files' stamps, and the `verified`
  // record found beside them ("" when none).
  FileStamp gem_stamp, weights_stamp;
  std::string verified;
  std::string_view gem_view() const { return View(mapped_gem, gem); }
  std::string_view weights_view() const { return View(mapped_weights, weights); }
  int64_t size() const { return static_cast<int64_t>(meta.size() + gem_view().size() + weights_view().size()); }

 private:
  static std::string_view View(const std::shared_ptr<Buffer>& mapped, const std::string& held) {
    return mapped ? std::string_view(static_cast<const char*>(mapped->data()), mapped->size()) : std::string_view(held);
  }
};

struct EntryMeta {
  std::string key;
  std::string ged_version;
  int64_t created_unix = 0;
  int64_t gem_bytes = 0;
  int64_t weights_bytes = 0;
};

// The blobs of a new entry for `key` (computes the metadata record).
EntryBlobs MakeEntry(std::string_view key, runtime::GemBytes bytes);

// Parses and checks the record alone (its own digest, the key).
absl::StatusOr<EntryMeta> ParseMeta(std::string_view meta, std::string_view key);

// Checks the whole entry: the record, then both files' sizes and digests
// (only their sizes with `checksums` false). DataLoss naming what does not
// match.
absl::StatusOr<EntryMeta> CheckEntry(const EntryBlobs& entry, std::string_view key, bool checksums = true);

// The `verified` record of an entry read from disk (see above): what
// entry.verified must equal for its CRCs to be taken as checked.
std::string VerifiedRecord(std::string_view key, const EntryBlobs& entry);

// HMAC-SHA256 (RFC 2104) of `data` under `key`.
Sha256Digest HmacSha256(std::string_view key, std::string_view data);

// Entries of the remote tier are authenticated: the operator's key signs
// the namespace, the key and all three blobs (HMAC-SHA256), and the
// signature travels as a first line "mac <hex>" of the remote record. A
// reader without the key cannot forge an entry, and one namespace's entry
// cannot be replayed under another namespace or key.
//
// The record to send for `entry`: its meta prefixed by the mac line.
std::string SignedRemoteMeta(std::string_view mac_key, std::string_view ns, std::string_view key,
                             const EntryBlobs& entry);
// Checks and strips the mac line of a remote entry's meta (in place).
// PermissionDenied when it is missing or does not match.
absl::Status VerifyRemoteEntry(std::string_view mac_key, std::string_view ns, std::string_view key, EntryBlobs& entry);

}  // namespace ge::cache
