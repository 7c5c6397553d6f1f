// SHA-256 (OpenSSL libcrypto): one-shot digests and an incremental hasher.
//
// Used for tenant token hashes (server/tenants), compiled-model cache keys
// and entry checksums (runtime/cache), and the digest of a model's bytes
// (ModelBytesDigest) that the cache's direct mode and clients share. Digests are 32 bytes; ToHex
// gives the lowercase hex form (64 digits) used in file names and configs.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace ge {

class ThreadPool;

using Sha256Digest = std::array<uint8_t, 32>;

Sha256Digest Sha256(std::string_view data);
std::string ToHex(const uint8_t* data, size_t size);
inline std::string ToHex(const Sha256Digest& digest) { return ToHex(digest.data(), digest.size()); }

// Feeds bytes in pieces. Fields of a structured value must be framed (use
// AddString / AddInt, which length-prefix or fix the width) so that two
// different field sequences never hash the same byte stream.
class Sha256Hasher {
 public:
  Sha256Hasher();
  ~Sha256Hasher();
  Sha256Hasher(const Sha256Hasher&) = delete;
  Sha256Hasher& operator=(const Sha256Hasher&) = delete;

  void Update(const void* data, size_t size);
  void Update(std::string_view data) { Update(data.data(), data.size()); }
  // The length (8 bytes, little endian) then the bytes.
  void AddString(std::string_view data);
  // 8 bytes, little endian.
  void AddInt(int64_t value);
  void AddDigest(const Sha256Digest& digest) { Update(digest.data(), digest.size()); }
  // The digest; the hasher must not be used afterwards.
  Sha256Digest Finish();

 private:
  void* context_;  // EVP_MD_CTX
};

// The digest of a model's source bytes, as the cache's direct mode keys it
// and as a client sends it instead of the bytes (AddGraphRequest's
// onnx_model_digest): SHA-256 over AddString("model bytes"), AddInt(the
// size) and the SHA-256 of each consecutive 8 MiB chunk. The chunks are
// hashed in parallel on `pool` when given; the digest is the same either way.
Sha256Digest ModelBytesDigest(std::string_view bytes, ThreadPool* pool = nullptr);

}  // namespace ge
