// Cache entry metadata: writing and checking the record.
#include "runtime/cache/cache_entry.h"

#include <ctime>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "base/crc32c.h"
#include "base/sha256.h"
#include "base/status.h"
#include "base/version.h"

namespace ge::cache {
namespace {

constexpr char kMagic[] = "ged-cache-entry 1";

std::string HexDigest(std::string_view data) { return ToHex(Sha256(data)); }

std::string HexCrc(std::string_view data) {
  static constexpr char kDigits[] = "0123456789abcdef";
  const uint32_t crc = Crc32c(data.data(), data.size());
  std::string out(8, '0');
  for (int i = 0; i < 8; ++i) out[i] = kDigits[(crc >> (28 - 4 * i)) & 15];
  return out;
}

}  // namespace

EntryBlobs MakeEntry(std::string_view key, runtime::GemBytes bytes) {
  EntryBlobs entry;
  std::string body = StrCat(kMagic, "\nkey ", key, "\nged_version ", GED_VERSION_STRING, "\ncreated ",
                            static_cast<int64_t>(std::time(nullptr)), "\ngem_bytes ", bytes.gem.size(),
                            "\ngem_crc32c ", HexCrc(bytes.gem), "\nweights_bytes ", bytes.weights.size(),
                            "\nweights_crc32c ", HexCrc(bytes.weights), "\n");
  entry.meta = StrCat(body, "meta_sha256 ", HexDigest(body), "\n");
  entry.gem = std::move(bytes.gem);
  entry.weights = std::move(bytes.weights);
  return entry;
}

namespace {

struct ParsedMeta {
  EntryMeta meta;
  std::string gem_crc32c;
  std::string weights_crc32c;
};

absl::StatusOr<ParsedMeta> Parse(std::string_view text, std::string_view key) {
  const size_t last = text.rfind("meta_sha256 ");
  if (text.substr(0, sizeof(kMagic) - 1) != kMagic || last == std::string_view::npos) {
    return absl::DataLossError("the metadata record is not a ged cache entry record (truncated?)");
  }
  const std::string_view body = text.substr(0, last);
  const std::string_view digest = StdView(absl::StripSuffix(AbslView(text.substr(last + 12)), "\n"));
  if (HexDigest(body) != digest) return absl::DataLossError("the metadata record's checksum does not match");
  ParsedMeta parsed;
  bool ok = true;
  for (absl::string_view piece : absl::StrSplit(AbslView(body), '\n', absl::SkipEmpty())) {
    const std::string_view line = StdView(piece);
    const size_t space = line.find(' ');
    if (space == std::string_view::npos) continue;
    const std::string_view name = line.substr(0, space), value = line.substr(space + 1);
    if (name == "key") parsed.meta.key = std::string(value);
    else if (name == "ged_version") parsed.meta.ged_version = std::string(value);
    else if (name == "created") ok = ok && absl::SimpleAtoi(AbslView(value), &parsed.meta.created_unix);
    else if (name == "gem_bytes") ok = ok && absl::SimpleAtoi(AbslView(value), &parsed.meta.gem_bytes);
    else if (name == "weights_bytes") ok = ok && absl::SimpleAtoi(AbslView(value), &parsed.meta.weights_bytes);
    else if (name == "gem_crc32c") parsed.gem_crc32c = std::string(value);
    else if (name == "weights_crc32c") parsed.weights_crc32c = std::string(value);
  }
  if (!ok || parsed.gem_crc32c.size() != 8 || parsed.weights_crc32c.size() != 8) {
    return absl::DataLossError("the metadata record has a malformed line");
  }
  if (parsed.meta.key != key) {
    return absl::DataLossError(StrCat("the metadata record names key ", parsed.meta.key, ", not ", key));
  }
  return parsed;
}

}  // namespace

absl::StatusOr<EntryMeta> ParseMeta(std::string_view meta, std::string_view key) {
  GE_ASSIGN_OR_RETURN(ParsedMeta parsed, Parse(meta, key));
  return parsed.meta;
}

absl::StatusOr<EntryMeta> CheckEntry(const EntryBlobs& entry, std::string_view key, bool checksums) {
  GE_ASSIGN_OR_RETURN(ParsedMeta parsed, Parse(entry.meta, key));
  auto check = [checksums](std::string_view file, std::string_view data, int64_t bytes,
                           const std::string& digest) -> absl::Status {
    if (static_cast<int64_t>(data.size()) != bytes) {
      return absl::DataLossError(StrCat(file, " has ", data.size(), " bytes; the record says ", bytes));
    }
    if (checksums && HexCrc(data) != digest)
      return absl::DataLossError(StrCat(file, "'s checksum does not match the record"));
    return absl::OkStatus();
  };
  GE_RETURN_IF_ERROR(check(kGemFile, entry.gem_view(), parsed.meta.gem_bytes, parsed.gem_crc32c));
  GE_RETURN_IF_ERROR(check(kWeightsFile, entry.weights_view(), parsed.meta.weights_bytes, parsed.weights_crc32c));
  return parsed.meta;
}

std::string VerifiedRecord(std::string_view key, const EntryBlobs& entry) {
  auto line = [](std::string_view file, const FileStamp& s) {
    return StrCat(file, " ", s.dev, " ", s.ino, " ", s.size, " ", s.mtime_ns, " ", s.ctime_ns, "\n");
  };
  const std::string body = StrCat("ged-cache-verified 1\nkey ", key, "\nmeta_sha256 ", HexDigest(entry.meta), "\n",
                                  line(kGemFile, entry.gem_stamp), line(kWeightsFile, entry.weights_stamp));
  return StrCat(body, "record_sha256 ", HexDigest(body), "\n");
}

}  // namespace ge::cache

namespace ge::cache {
namespace {

constexpr std::string_view kMacPrefix = "mac ";

// The bytes an entry's mac covers, framed so that no two different entries
// give the same stream.
Sha256Digest EntryMac(std::string_view mac_key, std::string_view ns, std::string_view key, std::string_view meta,
                      const EntryBlobs& entry) {
  std::string framed;
  auto add = [&framed](std::string_view part) {
    const uint64_t n = part.size();
    for (int i = 0; i < 8; ++i) framed.push_back(static_cast<char>((n >> (8 * i)) & 0xff));
    framed.append(part);
  };
  add("ged cache entry mac v1");
  add(ns);
  add(key);
  add(meta);
  add(entry.gem_view());
  add(entry.weights_view());
  return HmacSha256(mac_key, framed);
}

}  // namespace

Sha256Digest HmacSha256(std::string_view key, std::string_view data) {
  constexpr size_t kBlock = 64;
  std::string block(kBlock, '\0');
  if (key.size() > kBlock) {
    const Sha256Digest hashed = Sha256(key);
    std::copy(hashed.begin(), hashed.end(), block.begin());
  } else {
    std::copy(key.begin(), key.end(), block.begin());
  }
  std::string inner_pad(kBlock, '\0'), outer_pad(kBlock, '\0');
  for (size_t i = 0; i < kBlock; ++i) {
    inner_pad[i] = static_cast<char>(block[i] ^ 0x36);
    outer_pad[i] = static_cast<char>(block[i] ^ 0x5c);
  }
  Sha256Hasher inner;
  inner.Update(inner_pad);
  inner.Update(data);
  const Sha256Digest inner_digest = inner.Finish();
  Sha256Hasher outer;
  outer.Update(outer_pad);
  outer.AddDigest(inner_digest);
  return outer.Finish();
}

std::string SignedRemoteMeta(std::string_view mac_key, std::string_view ns, std::string_view key,
                             const EntryBlobs& entry) {
  return StrCat(kMacPrefix, ToHex(EntryMac(mac_key, ns, key, entry.meta, entry)), "\n", entry.meta);
}

absl::Status VerifyRemoteEntry(std::string_view mac_key, std::string_view ns, std::string_view key, EntryBlobs& entry) {
  const size_t newline = entry.meta.find('\n');
  if (entry.meta.rfind(kMacPrefix, 0) != 0 || newline == std::string::npos) {
    return absl::PermissionDeniedError(
        StrCat("remote cache entry ", key, " carries no mac (written without cache_remote_key_file?)"));
  }
  const std::string given = entry.meta.substr(kMacPrefix.size(), newline - kMacPrefix.size());
  std::string meta = entry.meta.substr(newline + 1);
  const std::string expected = ToHex(EntryMac(mac_key, ns, key, meta, entry));
  // Compared without an early exit.
  unsigned diff = given.size() != expected.size() ? 1u : 0u;
  for (size_t i = 0; i < expected.size() && i < given.size(); ++i) {
    diff |= static_cast<unsigned>(given[i] ^ expected[i]);
  }
  if (diff != 0) {
    return absl::PermissionDeniedError(StrCat("remote cache entry ", key, " has a bad mac (another key, or tampered)"));
  }
  entry.meta = std::move(meta);
  return absl::OkStatus();
}

}  // namespace ge::cache
