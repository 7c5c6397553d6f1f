// The one CPU-feature detection of the engines (engine SDK).
//
// Engines that compile loops for several vector ISAs (host_cpu's GEMM,
// cpu_vector's and cpu_fused's AVX2/AVX-512 tables) pick the table from
// HostVectorIsa(), so that every engine agrees on what "AVX2" and
// "AVX-512" mean: the tiers are the flags their objects are compiled with
// (-mavx2 -mfma -mf16c; plus -mavx512f -mavx512bw -mavx512vl -mavx512dq).
// cpu_dense does not detect anything itself: oneDNN dispatches on its own
// detection, and cpu_dense asks oneDNN which ISA it will use (bf16).
// The cache key's CPU features (runtime/model) are the model format's, not
// an engine's choice, and stay there.
#pragma once

#include <cstdint>
#include <string_view>

namespace ge::engine::sdk {

struct CpuFeatures {
  bool avx2 = false;
  bool fma = false;
  bool f16c = false;
  bool avx512f = false;
  bool avx512bw = false;
  bool avx512vl = false;
  bool avx512dq = false;
};

// The running CPU's features (detected once, with __builtin_cpu_supports).
const CpuFeatures& HostCpuFeatures();

enum class VectorIsa : uint8_t { kBase, kAvx2, kAvx512 };
std::string_view VectorIsaName(VectorIsa isa);  // "base", "avx2", "avx512"

// The widest tier `features` run: kAvx2 needs AVX2, FMA and F16C; kAvx512
// needs kAvx2 plus AVX-512 F, BW, VL and DQ.
VectorIsa BestVectorIsa(const CpuFeatures& features);

// `isa` capped by an override ("avx2" or "base"; empty, null or anything
// else leaves it), never raised: an override cannot select loops the CPU
// cannot run.
VectorIsa CapVectorIsa(VectorIsa isa, const char* cap);

// BestVectorIsa(HostCpuFeatures()).
VectorIsa HostVectorIsa();

}  // namespace ge::engine::sdk
