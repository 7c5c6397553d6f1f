// SessionManager: unguessable ids, tenant isolation, quotas, idle expiry,
// and sessions kept alive by their users.
#include "server/session_manager.h"

#include <thread>

#include "gtest/gtest.h"
#include "tests/testing/engines_test.h"

namespace ge::server {
namespace {

class SessionManagerTest : public ge::testing::EnginesTest {
 protected:
  SessionManager MakeManager() {
    return SessionManager(
        [](const OptionMap& options, ManagedSession& entry) -> absl::Status {
          entry.session = std::make_unique<session::Session>(*engines_, options, nullptr);
          return absl::OkStatus();
        },
        /*num_devices=*/2);
  }

  TenantRegistry tenants_{{{"alice", std::string(64, 'a'), 2, 1}, {"bob", std::string(64, 'b'), 2, 1}}};
  Tenant* alice_ = tenants_.tenants()[0].get();
  Tenant* bob_ = tenants_.tenants()[1].get();
};


TEST_F(SessionManagerTest, IdsAreRandomHexAndDevicesRoundRobin) {
  SessionManager m = MakeManager();
  auto a = m.Create(alice_, {});
  auto b = m.Create(alice_, {});
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ((*a)->id.size(), 32u);
  EXPECT_NE((*a)->id, (*b)->id);
  EXPECT_NE((*a)->device, (*b)->device);
  EXPECT_EQ(m.size(), 2u);
}

TEST_F(SessionManagerTest, OtherTenantIsDeniedUnknownIsNotFound) {
  SessionManager m = MakeManager();
  auto a = m.Create(alice_, {});
  ASSERT_TRUE(a.ok());
  EXPECT_TRUE(m.Get(alice_, (*a)->id).ok());
  EXPECT_EQ(m.Get(bob_, (*a)->id).status().code(), absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(m.Destroy(bob_, (*a)->id).code(), absl::StatusCode::kPermissionDenied);
  absl::Status s = m.Get(alice_, "0123").status();
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound);
  EXPECT_NE(s.message().find("'0123'"), absl::string_view::npos);
  EXPECT_EQ(m.List(alice_).size(), 1u);
  EXPECT_TRUE(m.List(bob_).empty());
  EXPECT_EQ(m.List(nullptr).size(), 1u);
}

TEST_F(SessionManagerTest, SessionQuotaIsReturnedOnDestroy) {
  SessionManager m = MakeManager();
  auto a = m.Create(alice_, {});
  ASSERT_TRUE(a.ok());
  const std::string id = (*a)->id;
  a = absl::StatusOr<std::shared_ptr<ManagedSession>>();  // drop our reference
  ASSERT_TRUE(m.Create(alice_, {}).ok());
  auto third = m.Create(alice_, {});
  EXPECT_EQ(third.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_NE(third.status().message().find("alice"), absl::string_view::npos);
  EXPECT_TRUE(m.Create(bob_, {}).ok()) << "quotas are per tenant";
  ASSERT_TRUE(m.Destroy(alice_, id).ok());
  EXPECT_TRUE(m.Create(alice_, {}).ok());
}

TEST_F(SessionManagerTest, IdleSessionsExpireUnlessInUse) {
  SessionManager m = MakeManager();
  auto idle = m.Create(alice_, {});
  auto busy = m.Create(bob_, {});
  ASSERT_TRUE(idle.ok() && busy.ok());
  (*busy)->active_calls = 1;
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ(m.ExpireIdle(std::chrono::milliseconds(10)), 1);
  EXPECT_EQ(m.Get(alice_, (*idle)->id).status().code(), absl::StatusCode::kNotFound);
  EXPECT_TRUE(m.Get(bob_, (*busy)->id).ok());
  // A destroyed session stays usable by whoever still holds it.
  EXPECT_NE((*idle)->session, nullptr);
}

// A session nobody runs returns its cached output blocks once idle for
// ge.exec.output_cache_idle_trim_ms (the daemon's Tick calls this).
TEST_F(SessionManagerTest, IdleSessionsReturnTheirCachedOutputBuffers) {
  SessionManager m = MakeManager();
  auto quick = m.Create(alice_, {{"ge.exec.output_cache_idle_trim_ms", "5"}});
  auto never = m.Create(bob_, {{"ge.exec.output_cache_idle_trim_ms", "0"}});
  ASSERT_TRUE(quick.ok() && never.ok());
  for (const auto& s : {*quick, *never}) {
    device::CachingAllocator& cache = s->session->output_cache();
    cache.Free(cache.Allocate(4096, 64), 4096);
    ASSERT_GE(cache.stats().bytes_cached, 4096);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  EXPECT_GE(m.TrimIdleCaches(), 4096u);
  EXPECT_EQ((*quick)->session->output_cache().stats().bytes_cached, 0);
  EXPECT_GE((*never)->session->output_cache().stats().bytes_cached, 4096) << "0 keeps the blocks";
}

}  // namespace
}  // namespace ge::server
