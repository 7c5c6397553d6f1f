// Tenant authentication: SHA-256 against known vectors, bearer parsing,
// the open default tenant, random ids.
#include "server/tenants.h"

#include "gtest/gtest.h"

namespace ge::server {
namespace {

std::string HexOf(const Sha256Digest& d) { return ToHex(d.data(), d.size()); }

TEST(TenantsTest, Sha256KnownVectors) {
  EXPECT_EQ(HexOf(Sha256("")), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(HexOf(Sha256("abc")), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST(TenantsTest, ConstantTimeEquals) {
  Sha256Digest a = Sha256("x"), b = Sha256("x"), c = Sha256("y");
  EXPECT_TRUE(ConstantTimeEquals(a, b));
  EXPECT_FALSE(ConstantTimeEquals(a, c));
}

TEST(TenantsTest, BearerTokenFindsItsTenant) {
  TenantRegistry r({{"alice", HexOf(Sha256("tok-a")), 1, 1}, {"bob", HexOf(Sha256("tok-b")), 1, 1}});
  EXPECT_FALSE(r.open());
  auto a = r.Authenticate("Bearer tok-a");
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ((*a)->name, "alice");
  auto b = r.Authenticate("Bearer tok-b");
  ASSERT_TRUE(b.ok());
  EXPECT_EQ((*b)->name, "bob");
}

TEST(TenantsTest, BadTokensAreUnauthenticatedWithoutEchoingThem) {
  TenantRegistry r({{"alice", HexOf(Sha256("tok-a")), 1, 1}});
  for (const char* header : {"", "tok-a", "Bearer ", "Bearer wrong-token", "Basic tok-a"}) {
    auto t = r.Authenticate(header);
    EXPECT_EQ(t.status().code(), absl::StatusCode::kUnauthenticated) << header;
    EXPECT_EQ(t.status().message().find("wrong-token"), absl::string_view::npos);
  }
}

TEST(TenantsTest, NoTenantsMeansTheOpenDefaultTenant) {
  TenantRegistry r({});
  EXPECT_TRUE(r.open());
  auto t = r.Authenticate("");
  ASSERT_TRUE(t.ok());
  EXPECT_EQ((*t)->name, "default");
}

TEST(TenantsTest, RandomHexIsFreshEachTime) {
  const std::string a = RandomHex(16), b = RandomHex(16);
  EXPECT_EQ(a.size(), 32u);
  EXPECT_NE(a, b);
  EXPECT_EQ(a.find_first_not_of("0123456789abcdef"), std::string::npos);
}

}  // namespace
}  // namespace ge::server
