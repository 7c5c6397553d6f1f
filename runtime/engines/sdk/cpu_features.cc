// CPU-feature detection for the engines (cpu_features.h).
#include "runtime/engines/sdk/cpu_features.h"

#include <cpuid.h>

#include <algorithm>
#include <cstring>

namespace ge::engine::sdk {

const CpuFeatures& HostCpuFeatures() {
  static const CpuFeatures features = [] {
    __builtin_cpu_init();
    CpuFeatures f;
    f.avx2 = __builtin_cpu_supports("avx2");
    f.fma = __builtin_cpu_supports("fma");
    // F16C by cpuid (leaf 1, ECX bit 29): clang 14's __builtin_cpu_supports
    // does not know the name.
    unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
    f.f16c = __get_cpuid(1, &eax, &ebx, &ecx, &edx) != 0 && (ecx & bit_F16C) != 0;
    f.avx512f = __builtin_cpu_supports("avx512f");
    f.avx512bw = __builtin_cpu_supports("avx512bw");
    f.avx512vl = __builtin_cpu_supports("avx512vl");
    f.avx512dq = __builtin_cpu_supports("avx512dq");
    return f;
  }();
  return features;
}

std::string_view VectorIsaName(VectorIsa isa) {
  switch (isa) {
    case VectorIsa::kBase: return "base";
    case VectorIsa::kAvx2: return "avx2";
    case VectorIsa::kAvx512: return "avx512";
  }
  return "base";
}

VectorIsa BestVectorIsa(const CpuFeatures& f) {
  if (!(f.avx2 && f.fma && f.f16c)) return VectorIsa::kBase;
  if (f.avx512f && f.avx512bw && f.avx512vl && f.avx512dq) return VectorIsa::kAvx512;
  return VectorIsa::kAvx2;
}

VectorIsa CapVectorIsa(VectorIsa isa, const char* cap) {
  if (cap == nullptr) return isa;
  if (std::strcmp(cap, "avx2") == 0) return std::min(isa, VectorIsa::kAvx2);
  if (std::strcmp(cap, "base") == 0) return VectorIsa::kBase;
  return isa;
}

VectorIsa HostVectorIsa() { return BestVectorIsa(HostCpuFeatures()); }

}  // namespace ge::engine::sdk
