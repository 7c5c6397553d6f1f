// SHA-256 through OpenSSL's EVP interface (uses the CPU's SHA extensions
// when present).
#include "base/sha256.h"

#include <openssl/evp.h>

#include <vector>

#include "base/status.h"
#include "base/thread_pool.h"

namespace ge {

Sha256Digest Sha256(std::string_view data) {
  Sha256Digest digest{};
  unsigned int size = 0;
  GE_CHECK(EVP_Digest(data.data(), data.size(), digest.data(), &size, EVP_sha256(), nullptr) == 1);
  return digest;
}

std::string ToHex(const uint8_t* data, size_t size) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(size * 2);
  for (size_t i = 0; i < size; ++i) {
    out.push_back(kDigits[data[i] >> 4]);
    out.push_back(kDigits[data[i] & 15]);
  }
  return out;
}

Sha256Hasher::Sha256Hasher() : context_(EVP_MD_CTX_new()) {
  GE_CHECK(context_ != nullptr);
  GE_CHECK(EVP_DigestInit_ex(static_cast<EVP_MD_CTX*>(context_), EVP_sha256(), nullptr) == 1);
}

Sha256Hasher::~Sha256Hasher() { EVP_MD_CTX_free(static_cast<EVP_MD_CTX*>(context_)); }

void Sha256Hasher::Update(const void* data, size_t size) {
  GE_CHECK(EVP_DigestUpdate(static_cast<EVP_MD_CTX*>(context_), data, size) == 1);
}

void Sha256Hasher::AddInt(int64_t value) {
  uint8_t bytes[8];
  const uint64_t u = static_cast<uint64_t>(value);
  for (int i = 0; i < 8; ++i) bytes[i] = static_cast<uint8_t>(u >> (8 * i));
  Update(bytes, sizeof(bytes));
}

void Sha256Hasher::AddString(std::string_view data) {
  AddInt(static_cast<int64_t>(data.size()));
  Update(data);
}

Sha256Digest Sha256Hasher::Finish() {
  Sha256Digest digest{};
  unsigned int size = 0;
  GE_CHECK(EVP_DigestFinal_ex(static_cast<EVP_MD_CTX*>(context_), digest.data(), &size) == 1);
  return digest;
}

Sha256Digest ModelBytesDigest(std::string_view bytes, ThreadPool* pool) {
  constexpr size_t kChunk = size_t{8} << 20;
  const int64_t chunks = static_cast<int64_t>((bytes.size() + kChunk - 1) / kChunk);
  std::vector<Sha256Digest> digests(static_cast<size_t>(chunks));
  auto hash_range = [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      digests[static_cast<size_t>(i)] = Sha256(bytes.substr(static_cast<size_t>(i) * kChunk, kChunk));
    }
  };
  if (pool != nullptr && pool->num_threads() > 0 && chunks > 1) {
    pool->ParallelFor(chunks, 1, hash_range);
  } else {
    hash_range(0, chunks);
  }
  Sha256Hasher hasher;
  hasher.AddString("model bytes");
  hasher.AddInt(static_cast<int64_t>(bytes.size()));
  for (const Sha256Digest& d : digests) hasher.AddDigest(d);
  return hasher.Finish();
}

}  // namespace ge
