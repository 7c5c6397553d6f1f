// Cache namespaces (issue 19 item 3): a tenant's entries are its own (in the
// key and in the layout), a ge.graph_key never crosses tenants, tenants read
// the operator's namespace but never write it, a key outside the caller's
// reach is missing with the words of a key nobody stored, and the directory
// is 0700 and refused when another user owns it. In direct mode (keys from
// the source bytes) a tenant's direct key never reaches another tenant's
// entry, even when a direct entry naming it is planted in its namespace.
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>

#include "base/ir/text_format.h"
#include "gtest/gtest.h"
#include "runtime/cache/cache_key.h"
#include "runtime/cache/model_cache.h"
#include "session/compile_cache.h"
#include "session/session.h"
#include "tests/testing/engines_test.h"

namespace ge::cache {
namespace {

namespace fs = std::filesystem;

// Two graphs with one signature and different results: y = x and y = -x.
constexpr char kIdentity[] = R"(graph main {
    x = Data() {index = 0} -> (f32[2])
    i = Identity(x:0) -> (f32[2])
    out = NetOutput(i:0)
  })";
constexpr char kNeg[] = R"(graph main {
    x = Data() {index = 0} -> (f32[2])
    n = Neg(x:0) -> (f32[2])
    out = NetOutput(n:0)
  })";

class CacheNamespaceTest : public ge::testing::EnginesTest {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("cache_namespace_test_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    ModelCacheOptions options;
    options.dir = dir_.string();
    auto cache = ModelCache::Open(options);
    ASSERT_TRUE(cache.ok()) << cache.status();
    cache_ = *std::move(cache);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Compiles `text` in `scope` (options `options`) and runs it on [1, 2].
  struct Compiled {
    session::CacheUse use;
    std::vector<float> out;
  };
  Compiled CompileAndRun(const char* text, const session::CacheScope& scope, const OptionMap& options = {}) {
    session::Session session(*engines_, {}, nullptr);
    session.set_cache_scope(scope);
    auto graph = ir::ParseGraph(text);
    EXPECT_TRUE(graph.ok()) << graph.status();
    EXPECT_TRUE(session.AddGraph(0, std::move(*graph), options).ok());
    auto out = session.RunGraph(0, {Tensor::FromVector<float>({1, 2}, Shape{2})});
    EXPECT_TRUE(out.ok()) << out.status();
    Compiled c;
    c.use = *session.GetCacheUse(0);
    if (out.ok()) c.out.assign((*out)[0].tensor().data<float>(), (*out)[0].tensor().data<float>() + 2);
    return c;
  }
  session::CacheScope Tenant(const std::string& name) { return session::CacheScope::ForTenant(cache_.get(), name); }

  // Direct mode: `text` as a client's source bytes, imported by parsing
  // them; `imports` counts the imports.
  static session::GraphSource TextSource(const char* text, int* imports) {
    session::GraphSource source;
    source.direct.format = "text";
    source.direct.provenance = "client";
    source.bytes = text;
    source.import = [text, imports]() -> absl::StatusOr<session::ImportedGraph> {
      ++*imports;
      auto graph = ir::ParseGraph(text);
      if (!graph.ok()) return graph.status();
      return session::ImportedGraph{*std::move(graph), {}};
    };
    return source;
  }
  Compiled AddSourceAndRun(const char* text, const session::CacheScope& scope, int* imports) {
    session::Session session(*engines_, {}, nullptr);
    session.set_cache_scope(scope);
    EXPECT_TRUE(session.AddGraph(0, TextSource(text, imports)).ok());
    auto out = session.RunGraph(0, {Tensor::FromVector<float>({1, 2}, Shape{2})});
    EXPECT_TRUE(out.ok()) << out.status();
    Compiled c;
    c.use = *session.GetCacheUse(0);
    if (out.ok()) c.out.assign((*out)[0].tensor().data<float>(), (*out)[0].tensor().data<float>() + 2);
    return c;
  }
  // The direct key a session without a pool computes for `text` in `ns`.
  std::string DirectKeyOf(const char* text, const std::string& ns) {
    DirectSource source;
    source.format = "text";
    source.provenance = "client";
    source.bytes = ModelBytesDigest(text);
    KeyContext context{engines_, 1};
    context.cache_namespace = ns;
    return DirectCacheKey(source, {}, context);
  }

  fs::path dir_;
  std::unique_ptr<ModelCache> cache_;
};

TEST_F(CacheNamespaceTest, TenantNamespacesAreSafePathComponentsAndDistinct) {
  EXPECT_EQ(TenantNamespace("alice"), "t-alice");
  EXPECT_EQ(TenantNamespace("../x"), "t-%2E%2E%2Fx");
  EXPECT_NE(TenantNamespace("a.b"), TenantNamespace("a_b"));
  EXPECT_TRUE(IsValidNamespace(TenantNamespace("../../etc")));
  EXPECT_FALSE(IsValidNamespace("../x"));
  EXPECT_FALSE(IsValidNamespace(""));
  EXPECT_TRUE(IsValidNamespace(kOperatorNamespace));
}

TEST_F(CacheNamespaceTest, OneGraphKeyNeverCrossesTenants) {
  const OptionMap key = {{"ge.graph_key", "shared-name"}};
  Compiled a = CompileAndRun(kIdentity, Tenant("a"), key);
  EXPECT_FALSE(a.use.hit);
  EXPECT_EQ(a.out, (std::vector<float>{1, 2}));
  // Tenant b names its own (different) graph alike: no hit, its own model.
  Compiled b = CompileAndRun(kNeg, Tenant("b"), key);
  EXPECT_FALSE(b.use.hit);
  EXPECT_NE(b.use.key, a.use.key);
  EXPECT_EQ(b.out, (std::vector<float>{-1, -2}));
  // Each tenant hits its own entry afterwards.
  Compiled a2 = CompileAndRun(kNeg, Tenant("a"), key);
  EXPECT_TRUE(a2.use.hit);
  EXPECT_EQ(a2.out, (std::vector<float>{1, 2}));  // a's promise: its name, its model
  Compiled b2 = CompileAndRun(kIdentity, Tenant("b"), key);
  EXPECT_TRUE(b2.use.hit);
  EXPECT_EQ(b2.out, (std::vector<float>{-1, -2}));
  // The layout keeps them apart too.
  EXPECT_TRUE(fs::exists(dir_ / kCacheLayoutDir / "ns" / "t-a" / a.use.key.substr(0, 2) / a.use.key));
  EXPECT_TRUE(fs::exists(dir_ / kCacheLayoutDir / "ns" / "t-b" / b.use.key.substr(0, 2) / b.use.key));
  // A user key never reads the operator's namespace either.
  Compiled op = CompileAndRun(kNeg, session::CacheScope{cache_.get()}, key);
  EXPECT_FALSE(op.use.hit);
  Compiled c = CompileAndRun(kIdentity, Tenant("c"), key);
  EXPECT_FALSE(c.use.hit);
  EXPECT_EQ(c.out, (std::vector<float>{1, 2}));
}

TEST_F(CacheNamespaceTest, TenantsReadTheOperatorsNamespaceButNeverWriteIt) {
  // A tenant's compile is stored in its namespace only.
  Compiled t = CompileAndRun(kNeg, Tenant("a"));
  EXPECT_FALSE(t.use.hit);
  EXPECT_FALSE(fs::exists(dir_ / kCacheLayoutDir / "ns" / kOperatorNamespace));
  // The operator compiles a graph: another tenant's same graph hits it.
  Compiled op = CompileAndRun(kIdentity, session::CacheScope{cache_.get()});
  EXPECT_FALSE(op.use.hit);
  Compiled b = CompileAndRun(kIdentity, Tenant("b"));
  EXPECT_TRUE(b.use.hit);
  EXPECT_EQ(b.out, (std::vector<float>{1, 2}));
  // ... but the operator never reads a tenant's entry.
  Compiled op2 = CompileAndRun(kNeg, session::CacheScope{cache_.get()});
  EXPECT_FALSE(op2.use.hit);
}

TEST_F(CacheNamespaceTest, AKeyOutsideTheCallersReachIsMissingWithTheSameWords) {
  Compiled a = CompileAndRun(kIdentity, Tenant("a"));
  auto own = session::LoadCachedModel(Tenant("a"), a.use.key, *engines_);
  EXPECT_TRUE(own.ok()) << own.status();
  auto other = session::LoadCachedModel(Tenant("b"), a.use.key, *engines_);
  const std::string absent_key(64, 'e');
  auto absent = session::LoadCachedModel(Tenant("b"), absent_key, *engines_);
  ASSERT_EQ(other.status().code(), absl::StatusCode::kNotFound);
  ASSERT_EQ(absent.status().code(), absl::StatusCode::kNotFound);
  std::string other_text(other.status().message()), absent_text(absent.status().message());
  other_text.replace(other_text.find(a.use.key), a.use.key.size(), "KEY");
  absent_text.replace(absent_text.find(absent_key), absent_key.size(), "KEY");
  EXPECT_EQ(other_text, absent_text);
  // Through a session too (LoadModel by key).
  session::Session session(*engines_, {}, nullptr);
  session.set_cache_scope(Tenant("b"));
  EXPECT_EQ(session.AddCachedModel(1, a.use.key).code(), absl::StatusCode::kNotFound);
}

TEST_F(CacheNamespaceTest, TheDirectoryIsPrivateAndAnotherOwnersIsRefused) {
  struct stat st;
  ASSERT_EQ(stat(dir_.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  ModelCacheOptions options;
  options.dir = dir_.string();
  options.owner_uid = static_cast<int64_t>(geteuid()) + 1;  // as if another user owned it
  auto refused = ModelCache::Open(options);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(refused.status().message().find("belongs to uid"), std::string::npos) << refused.status();
  // A symlink to a directory is refused as well.
  const fs::path link = dir_.string() + "_link";
  fs::remove(link);
  fs::create_directory_symlink(dir_, link);
  options.dir = link.string();
  options.owner_uid = -1;
  EXPECT_FALSE(ModelCache::Open(options).ok());
  fs::remove(link);
}

TEST_F(CacheNamespaceTest, EntriesOfFormerLayoutsAreIgnoredCountedAndCollected) {
  Compiled op = CompileAndRun(kIdentity, session::CacheScope{cache_.get()});
  // Entries of the same key in the layouts before this format (v1: before
  // namespaces; v2: before direct mode) are not read.
  const fs::path current = dir_ / kCacheLayoutDir / "ns" / kOperatorNamespace / op.use.key.substr(0, 2) / op.use.key;
  const fs::path v2 = dir_ / "v2" / "ns" / kOperatorNamespace / op.use.key.substr(0, 2) / op.use.key;
  const fs::path v1 = dir_ / "v1" / op.use.key.substr(0, 2) / op.use.key;
  fs::create_directories(v2.parent_path());
  fs::create_directories(v1.parent_path());
  fs::copy(current, v1, fs::copy_options::recursive);
  fs::rename(current, v2);
  ModelCacheOptions options;
  options.dir = dir_.string();
  auto reopened = ModelCache::Open(options);
  ASSERT_TRUE(reopened.ok());
  EXPECT_EQ((*reopened)->Lookup(op.use.key, *engines_).status().code(), absl::StatusCode::kNotFound);
  auto listed = (*reopened)->List();
  ASSERT_TRUE(listed.ok());
  EXPECT_TRUE(listed->empty());
  const VerifyReport report = (*reopened)->Verify(engines_);
  EXPECT_EQ(report.old_format, 2);
  EXPECT_EQ(report.entries, 0);
  EXPECT_TRUE(report.moved_aside.empty());
  auto gc = (*reopened)->Collect(int64_t{1} << 40);
  ASSERT_TRUE(gc.ok());
  EXPECT_EQ(gc->old_format_removed, 2);
  EXPECT_FALSE(fs::exists(dir_ / "v2"));
  EXPECT_FALSE(fs::exists(dir_ / "v1"));
  EXPECT_EQ((*reopened)->Verify(engines_).old_format, 0);
}

TEST_F(CacheNamespaceTest, DirectKeysNeverReachAnotherTenantsEntries) {
  int imports = 0;
  Compiled a = AddSourceAndRun(kNeg, Tenant("a"), &imports);
  EXPECT_FALSE(a.use.hit);
  EXPECT_EQ(imports, 1);
  EXPECT_EQ(a.out, (std::vector<float>{-1, -2}));
  // Tenant a's second AddGraph of the same bytes: a hit without an import.
  Compiled a2 = AddSourceAndRun(kNeg, Tenant("a"), &imports);
  EXPECT_TRUE(a2.use.direct_hit);
  EXPECT_EQ(imports, 1);
  EXPECT_EQ(a2.use.direct_key, a.use.direct_key);
  // Tenant b sends the same bytes: its own key, an import, its own model.
  Compiled b = AddSourceAndRun(kNeg, Tenant("b"), &imports);
  EXPECT_FALSE(b.use.hit);
  EXPECT_FALSE(b.use.direct_hit);
  EXPECT_EQ(imports, 2);
  EXPECT_NE(b.use.direct_key, a.use.direct_key);
  EXPECT_TRUE(fs::exists(dir_ / kCacheLayoutDir / "ns" / "t-b" / b.use.direct_key.substr(0, 2) / b.use.direct_key));
  // A direct entry in b's namespace naming a's model (planted: no code path
  // writes one) is refused: b imports and runs its own graph.
  const std::string planted = DirectKeyOf(kIdentity, TenantNamespace("b"));
  ASSERT_TRUE(
      cache_->StoreDirectIn(TenantNamespace("b"), planted, DirectEntry{TenantNamespace("a"), a.use.key, {}}).ok());
  Compiled b2 = AddSourceAndRun(kIdentity, Tenant("b"), &imports);
  EXPECT_EQ(b2.use.direct_key, planted);
  EXPECT_FALSE(b2.use.direct_hit);
  EXPECT_EQ(imports, 3);
  EXPECT_EQ(b2.out, (std::vector<float>{1, 2}));
  // The operator never reads a tenant's direct entries either.
  Compiled op = AddSourceAndRun(kNeg, session::CacheScope{cache_.get()}, &imports);
  EXPECT_FALSE(op.use.hit);
  EXPECT_EQ(imports, 4);
}

TEST_F(CacheNamespaceTest, ATenantsDirectEntryMayNameTheOperatorsModel) {
  int imports = 0;
  Compiled op = AddSourceAndRun(kIdentity, session::CacheScope{cache_.get()}, &imports);
  EXPECT_FALSE(op.use.hit);
  // The tenant's first AddGraph imports (its key is its own) and hits the
  // operator's model by content; its direct entry then leads there.
  Compiled c = AddSourceAndRun(kIdentity, Tenant("c"), &imports);
  EXPECT_TRUE(c.use.hit);
  EXPECT_FALSE(c.use.direct_hit);
  EXPECT_EQ(imports, 2);
  Compiled c2 = AddSourceAndRun(kIdentity, Tenant("c"), &imports);
  EXPECT_TRUE(c2.use.direct_hit);
  EXPECT_EQ(imports, 2);
  EXPECT_EQ(c2.out, (std::vector<float>{1, 2}));
  auto entry = cache_->LookupDirectIn(TenantNamespace("c"), c2.use.direct_key);
  ASSERT_TRUE(entry.ok()) << entry.status();
  EXPECT_EQ(entry->content_ns, kOperatorNamespace);
  // The tenant wrote nothing in the operator's namespace: its one direct
  // entry there is the operator's own.
  for (const auto& f : fs::recursive_directory_iterator(dir_ / kCacheLayoutDir / "ns" / kOperatorNamespace)) {
    if (f.path().filename() == kDirectFile) {
      EXPECT_EQ(f.path().parent_path().filename(), op.use.direct_key);
    }
  }
}

}  // namespace
}  // namespace ge::cache
