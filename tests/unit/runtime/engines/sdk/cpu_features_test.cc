// The engine SDK's one CPU-feature detection: the tiers every engine's ISA
// tables are chosen by, the override that caps them, and agreement of the
// engines that ask it.
#include "runtime/engines/sdk/cpu_features.h"

#include "gtest/gtest.h"

namespace ge::engine::sdk {
namespace {

CpuFeatures Avx2() {
  CpuFeatures f;
  f.avx2 = f.fma = f.f16c = true;
  return f;
}

CpuFeatures Avx512() {
  CpuFeatures f = Avx2();
  f.avx512f = f.avx512bw = f.avx512vl = f.avx512dq = true;
  return f;
}

TEST(CpuFeaturesTest, TiersNeedEveryFlagTheirObjectsAreCompiledWith) {
  EXPECT_EQ(BestVectorIsa(CpuFeatures{}), VectorIsa::kBase);
  EXPECT_EQ(BestVectorIsa(Avx2()), VectorIsa::kAvx2);
  EXPECT_EQ(BestVectorIsa(Avx512()), VectorIsa::kAvx512);
  for (bool CpuFeatures::*flag : {&CpuFeatures::avx2, &CpuFeatures::fma, &CpuFeatures::f16c}) {
    CpuFeatures f = Avx512();
    f.*flag = false;
    EXPECT_EQ(BestVectorIsa(f), VectorIsa::kBase);  // AVX-512 without the AVX2 tier runs neither build
  }
  for (bool CpuFeatures::*flag :
       {&CpuFeatures::avx512f, &CpuFeatures::avx512bw, &CpuFeatures::avx512vl, &CpuFeatures::avx512dq}) {
    CpuFeatures f = Avx512();
    f.*flag = false;
    EXPECT_EQ(BestVectorIsa(f), VectorIsa::kAvx2);
  }
}

TEST(CpuFeaturesTest, AnOverrideCapsButNeverRaises) {
  EXPECT_EQ(CapVectorIsa(VectorIsa::kAvx512, "avx2"), VectorIsa::kAvx2);
  EXPECT_EQ(CapVectorIsa(VectorIsa::kAvx512, "base"), VectorIsa::kBase);
  EXPECT_EQ(CapVectorIsa(VectorIsa::kAvx2, "avx2"), VectorIsa::kAvx2);
  EXPECT_EQ(CapVectorIsa(VectorIsa::kBase, "avx2"), VectorIsa::kBase);
  EXPECT_EQ(CapVectorIsa(VectorIsa::kAvx512, nullptr), VectorIsa::kAvx512);
  EXPECT_EQ(CapVectorIsa(VectorIsa::kAvx512, ""), VectorIsa::kAvx512);
  EXPECT_EQ(CapVectorIsa(VectorIsa::kAvx2, "avx512"), VectorIsa::kAvx2);
}

TEST(CpuFeaturesTest, HostDetectionIsStableAndMatchesTheCompiler) {
  const CpuFeatures& f = HostCpuFeatures();
  EXPECT_EQ(&f, &HostCpuFeatures());  // detected once
  EXPECT_EQ(HostVectorIsa(), BestVectorIsa(f));
  __builtin_cpu_init();
  EXPECT_EQ(f.avx2, __builtin_cpu_supports("avx2") != 0);
  EXPECT_EQ(f.avx512f, __builtin_cpu_supports("avx512f") != 0);
  EXPECT_EQ(VectorIsaName(VectorIsa::kAvx512), "avx512");
  EXPECT_EQ(VectorIsaName(HostVectorIsa()).empty(), false);
}

}  // namespace
}  // namespace ge::engine::sdk
