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

absl::StatusOr<EntryMeta> CheckEntry(const EntryBlobs& entry, std::string_view key) {
  GE_ASSIGN_OR_RETURN(ParsedMeta parsed, Parse(entry.meta, key));
  auto check = [](std::string_view file, std::string_view data, int64_t bytes,
                  const std::string& digest) -> absl::Status {
    if (static_cast<int64_t>(data.size()) != bytes) {
      return absl::DataLossError(StrCat(file, " has ", data.size(), " bytes; the record says ", bytes));
    }
    if (HexCrc(data) != digest) return absl::DataLossError(StrCat(file, "'s checksum does not match the record"));
    return absl::OkStatus();
  };
  GE_RETURN_IF_ERROR(check(kGemFile, entry.gem, parsed.meta.gem_bytes, parsed.gem_crc32c));
  GE_RETURN_IF_ERROR(check(kWeightsFile, entry.weights_view(), parsed.meta.weights_bytes, parsed.weights_crc32c));
  return parsed.meta;
}

}  // namespace ge::cache
