// CRC-32C (Castagnoli), the checksum of large blobs that must be checked on
// every read (compiled-model cache entries): the SSE4.2 instruction where
// the CPU has it (chosen at run time), a table otherwise. Detects
// corruption, not tampering; use base/sha256.h where that matters.
#pragma once

#include <cstddef>
#include <cstdint>

namespace ge {

// Extends `crc` (0 to start) with `size` bytes.
uint32_t Crc32c(const void* data, size_t size, uint32_t crc = 0);

}  // namespace ge
