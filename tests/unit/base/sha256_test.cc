// SHA-256: known vectors, the incremental hasher equal to one shot, and
// framed fields that never collide by regrouping.
#include "base/sha256.h"

#include "gtest/gtest.h"

namespace ge {
namespace {

TEST(Sha256Test, KnownVectorsAndHex) {
  EXPECT_EQ(ToHex(Sha256("abc")), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  Sha256Hasher hasher;
  hasher.Update("a");
  hasher.Update("bc");
  EXPECT_EQ(hasher.Finish(), Sha256("abc"));
}

TEST(Sha256Test, FramedFieldsDoNotCollideWhenRegrouped) {
  Sha256Hasher a, b, c;
  a.AddString("ab");
  a.AddString("c");
  b.AddString("a");
  b.AddString("bc");
  c.AddInt(1);
  EXPECT_NE(a.Finish(), b.Finish());
  Sha256Hasher d;
  d.AddInt(2);
  EXPECT_NE(c.Finish(), d.Finish());
}

}  // namespace
}  // namespace ge
