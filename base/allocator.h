// Host memory allocation behind an interface the device HAL implements.
#pragma once

#include <cstddef>
#include <string_view>

namespace ge {

// Alignment of every buffer ged allocates: a cache line, and enough for
// AVX-512 loads and oneDNN's preferences.
inline constexpr size_t kTensorAlignment = 64;

class Allocator {
 public:
  virtual ~Allocator() = default;
  // Returns nullptr when the memory is not available.
  virtual void* Allocate(size_t bytes, size_t alignment) = 0;
  virtual void Free(void* ptr, size_t bytes) = 0;
  virtual std::string_view name() const = 0;
};

// The process-wide aligned host allocator (never null, never destroyed).
Allocator* HostAllocator();

}  // namespace ge
