// The compiled-model cache across processes (issue: "A compiled-model cache
// shared across processes and hosts"): gectl compiles SIGKILLed at random
// moments leave a cache that `gectl cache verify` passes and whose models
// still run correctly; two compiles of one model at once both succeed with
// identical results; a full file system is a warning, not a failure; two
// processes on different directories share entries through one
// redis-server; the daemon compiles through the cache, hands out keys that
// LoadModel takes, and counts hits and misses in its metrics.
#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <algorithm>
#include <random>
#include <thread>

#include "base/sha256.h"
#include "client/cpp/client.h"
#include "gtest/gtest.h"
#include "tests/integration/daemon_process.h"
#include "tests/integration/process.h"
#include "tests/testing/redis_server.h"

namespace ge {
namespace {

namespace fs = std::filesystem;
using testing::RunProcess;

std::string Gectl() { return testing::BinaryDir() + "/bin/gectl"; }
std::string Model() { return testing::SourceDir() + "/examples/models/sample_cnn.onnx"; }

// Starts argv with stdout discarded and stderr to `stderr_file` (default
// discarded); `file_size_limit` > 0 caps the files it may write
// (RLIMIT_FSIZE, with SIGXFSZ ignored so writes fail with EFBIG instead of
// killing it).
pid_t Spawn(const std::vector<std::string>& argv, int64_t file_size_limit = 0,
            const std::string& stderr_file = "/dev/null") {
  const pid_t pid = fork();
  if (pid != 0) return pid;
  const int null = open("/dev/null", O_WRONLY);
  const int err = open(stderr_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  dup2(null, 1);
  dup2(err, 2);
  if (file_size_limit > 0) {
    signal(SIGXFSZ, SIG_IGN);
    struct rlimit limit = {static_cast<rlim_t>(file_size_limit), static_cast<rlim_t>(file_size_limit)};
    setrlimit(RLIMIT_FSIZE, &limit);
  }
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  execv(args[0], args.data());
  _exit(127);
}

int WaitExit(pid_t pid) {
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

class CacheTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = testing::MakeTempDir("ged-cache"); }
  void TearDown() override { fs::remove_all(dir_); }
  std::string dir_;
};

// The outputs of `model` with `option`, as .npy bytes, run through `cache`
// ("" for --no-cache).
std::string RunOutputs(const std::string& model, const std::string& option, const std::string& cache,
                       const std::string& out_dir) {
  std::vector<std::string> argv = {Gectl(), "run", model, "--output-dir", out_dir};
  if (!option.empty()) argv.insert(argv.end(), {"--option", option});
  if (cache.empty()) {
    argv.push_back("--no-cache");
  } else {
    argv.insert(argv.end(), {"--cache-dir", cache});
  }
  testing::ProcessResult r = RunProcess(argv, 60);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  std::string all;
  for (const auto& f : fs::directory_iterator(out_dir)) all += ReadFile(f.path().string());
  fs::remove_all(out_dir);
  return all;
}

TEST_F(CacheTest, RandomlyKilledCompilesLeaveAVerifiableCacheWhoseModelsRun) {
  const std::string cache = dir_ + "/cache";
  // How long one compile takes here, so kills land across its whole life.
  const auto start = std::chrono::steady_clock::now();
  testing::ProcessResult first =
      RunProcess({Gectl(), "compile", Model(), "-o", dir_ + "/first.gem", "--cache-dir", dir_ + "/probe"}, 60);
  ASSERT_EQ(first.exit_code, 0) << first.err;
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::mt19937 random(12345);
  std::uniform_real_distribution<double> when(0.2 * seconds, 1.2 * seconds);
  constexpr int kKills = 100;
  constexpr int kKeys = 12;  // options that give distinct keys, so writers race and entries accumulate
  int exited = 0;
  for (int i = 0; i < kKills; i += 2) {
    // Two writers of one key at once, both killed at independent moments.
    const std::string option = "ge.host_scheduling_max_threshold=" + std::to_string((i / 2) % kKeys);
    pid_t a = Spawn({Gectl(), "compile", Model(), "-o", dir_ + "/a.gem", "--cache-dir", cache, "--option", option});
    pid_t b = Spawn({Gectl(), "compile", Model(), "-o", dir_ + "/b.gem", "--cache-dir", cache, "--option", option});
    const double ta = when(random), tb = when(random);
    std::this_thread::sleep_for(std::chrono::duration<double>(std::min(ta, tb)));
    kill(ta <= tb ? a : b, SIGKILL);
    std::this_thread::sleep_for(std::chrono::duration<double>(std::abs(ta - tb)));
    kill(ta <= tb ? b : a, SIGKILL);
    exited += (WaitExit(a) == 0) + (WaitExit(b) == 0);
  }
  RecordProperty("finished_before_kill", exited);
  EXPECT_LT(exited, kKills) << "no compile was killed: the kill window is too late";
  testing::ProcessResult verify = RunProcess({Gectl(), "cache", "verify", "--cache-dir", cache}, 60);
  EXPECT_EQ(verify.exit_code, 0) << verify.out << verify.err;
  EXPECT_EQ(verify.out.find("moved aside"), std::string::npos) << verify.out;
  for (const auto& f : fs::recursive_directory_iterator(cache)) {
    EXPECT_NE(f.path().filename().string().rfind(".tmp-", 0), 0u) << "left behind: " << f.path();
  }
  // Every model compiles (or loads) and runs as without the cache.
  for (int k = 0; k < kKeys; k += 3) {
    const std::string option = "ge.host_scheduling_max_threshold=" + std::to_string(k);
    const std::string expected = RunOutputs(Model(), option, "", dir_ + "/expected");
    ASSERT_FALSE(expected.empty());
    EXPECT_EQ(RunOutputs(Model(), option, cache, dir_ + "/cached"), expected) << option;
  }
  testing::ProcessResult again = RunProcess({Gectl(), "cache", "verify", "--cache-dir", cache}, 60);
  EXPECT_EQ(again.exit_code, 0) << again.out << again.err;
}

TEST_F(CacheTest, TwoCompilesOfOneModelAtOnceBothSucceedIdentically) {
  const std::string cache = dir_ + "/cache";
  pid_t a = Spawn({Gectl(), "compile", Model(), "-o", dir_ + "/a.gem", "--cache-dir", cache});
  pid_t b = Spawn({Gectl(), "compile", Model(), "-o", dir_ + "/b.gem", "--cache-dir", cache});
  EXPECT_EQ(WaitExit(a), 0);
  EXPECT_EQ(WaitExit(b), 0);
  const std::string out_a = RunOutputs(dir_ + "/a.gem", "", cache, dir_ + "/out_a");
  ASSERT_FALSE(out_a.empty());
  EXPECT_EQ(RunOutputs(dir_ + "/b.gem", "", cache, dir_ + "/out_b"), out_a);
  EXPECT_EQ(RunOutputs(Model(), "", "", dir_ + "/out_ref"), out_a);
  testing::ProcessResult ls = RunProcess({Gectl(), "cache", "ls", "--cache-dir", cache}, 60);
  ASSERT_EQ(ls.exit_code, 0) << ls.err;
  // A header, one model entry and the one direct-mode entry leading to it.
  EXPECT_EQ(std::count(ls.out.begin(), ls.out.end(), '\n'), 3) << ls.out;
  EXPECT_NE(ls.out.find(" model "), std::string::npos) << ls.out;
  EXPECT_NE(ls.out.find(" direct "), std::string::npos) << ls.out;
  EXPECT_EQ(RunProcess({Gectl(), "cache", "verify", "--cache-dir", cache}, 60).exit_code, 0);
}

// Direct mode: a second `gectl compile -o` of the same file neither imports
// nor compiles nor serializes (the output is the entry's export, the same
// bytes), and `gectl cache verify` counts entries of earlier formats.
TEST_F(CacheTest, ADirectHitWritesTheSameOutputAndVerifyCountsEarlierFormats) {
  const std::string cache = dir_ + "/cache";
  testing::ProcessResult miss =
      RunProcess({Gectl(), "compile", Model(), "-o", dir_ + "/a.gem", "--cache-dir", cache, "--timings"});
  ASSERT_EQ(miss.exit_code, 0) << miss.err;
  EXPECT_NE(miss.out.find("cache: miss "), std::string::npos) << miss.out;
  testing::ProcessResult hit =
      RunProcess({Gectl(), "compile", Model(), "-o", dir_ + "/b.gem", "--cache-dir", cache, "--timings"});
  ASSERT_EQ(hit.exit_code, 0) << hit.err;
  EXPECT_NE(hit.out.find(" (direct)"), std::string::npos) << hit.out;
  EXPECT_NE(hit.out.find("import 0 s"), std::string::npos) << hit.out;
  // The same summary of the model on the first line, and the same file.
  auto summary = [](const std::string& out) {
    const std::string first = out.substr(0, out.find('\n'));
    return first.substr(std::min(first.size(), first.find(": ")));
  };
  EXPECT_EQ(summary(miss.out), summary(hit.out)) << miss.out << hit.out;
  EXPECT_FALSE(summary(hit.out).empty()) << hit.out;
  EXPECT_EQ(ReadFile(dir_ + "/a.gem"), ReadFile(dir_ + "/b.gem"));
  EXPECT_EQ(RunOutputs(dir_ + "/b.gem", "", "", dir_ + "/out_b"), RunOutputs(Model(), "", "", dir_ + "/out_ref"));
  // An entry of the layout before direct mode is ignored and counted.
  const std::string old = cache + "/v2/ns/operator/ab/" + std::string(64, 'a');
  fs::create_directories(old);
  std::ofstream(old + "/meta") << "an entry of an earlier format";
  testing::ProcessResult verify = RunProcess({Gectl(), "cache", "verify", "--cache-dir", cache}, 60);
  EXPECT_EQ(verify.exit_code, 0) << verify.out << verify.err;
  EXPECT_NE(verify.out.find("1 entries verified, 1 direct-mode entries"), std::string::npos) << verify.out;
  EXPECT_NE(verify.out.find("1 entries of earlier cache formats ignored"), std::string::npos) << verify.out;
  testing::ProcessResult gc = RunProcess({Gectl(), "cache", "gc", "--cache-dir", cache}, 60);
  EXPECT_NE(gc.out.find("1 entries of earlier cache formats"), std::string::npos) << gc.out;
  EXPECT_FALSE(fs::exists(cache + "/v2"));
}

// The daemon's AddGraph of ONNX bytes it has compiled before (same
// namespace, same options) imports nothing: CompileGraph reports the hit,
// and the metrics count one import for two AddGraphs. (sample_cnn has a
// dynamic batch: with per-shape plans, the default, a hit imports the
// source after all to plan from it, docs/design/jit.md; this test runs its
// dynamic form.)
TEST_F(CacheTest, DaemonAddGraphAndCompileGraphHitWithoutImporting) {
  auto d = testing::DaemonProcess::Start({"--cache-dir", dir_ + "/cache"});
  ASSERT_NE(d, nullptr);
  client::ClientOptions options;
  options.address = d->grpc_address();
  options.max_retries = 1;
  client::Client c(options);
  std::string key;
  for (int round = 0; round < 2; ++round) {
    std::string session;
    ASSERT_TRUE(c.CreateSession({}, &session).ok());
    v1::AddGraphResponse added;
    ASSERT_TRUE(c.AddOnnxFile(session, 1, Model(), {{"ge.jitCompile", "0"}}, &added).ok());
    EXPECT_EQ(added.inputs_size(), 1);
    v1::CompileGraphResponse compiled;
    grpc::Status s = c.CompileGraph(session, 1, &compiled);
    ASSERT_TRUE(s.ok()) << s.error_message();
    EXPECT_EQ(compiled.cache_hit(), round == 1);
    if (round == 0) key = compiled.cache_key();
    EXPECT_EQ(compiled.cache_key(), key);  // the content key, as LoadModel takes it
    ASSERT_TRUE(c.DestroySession(session).ok());
  }
  testing::HttpResult metrics = testing::HttpGet(d->metrics_address(), "/metrics");
  ASSERT_EQ(metrics.status, 200);
  for (const char* line :
       {"ged_model_imports_total 1\n", "ged_cache_direct_hits_total 1\n", "ged_cache_direct_misses_total 1\n"}) {
    EXPECT_NE(metrics.body.find(line), std::string::npos) << line << "\n" << metrics.body;
  }
  d->Signal(SIGTERM);
  EXPECT_EQ(d->Wait(30), 0) << d->log();
}

// AddGraph by digest: the model's bytes are not sent when the caller's
// namespace holds the model compiled from them. Unknown to the daemon, the
// digest adds nothing and asks for the bytes; another tenant's digest
// lookup never reaches alice's model; a digest of the wrong size is
// INVALID_ARGUMENT. The client library sends digests first (here for every
// size) and the bytes when asked.
TEST_F(CacheTest, AddGraphByDigestAddsOnlyAModelTheCallerCompiled) {
  const std::string config = dir_ + "/ged.yaml";
  std::ofstream(config) << "cache_dir: " << dir_ << "/cache\ntenants:\n"
                        << "  - {name: alice, token_sha256: " << ToHex(Sha256("alice-token")) << "}\n"
                        << "  - {name: bob, token_sha256: " << ToHex(Sha256("bob-token")) << "}\n";
  auto d = testing::DaemonProcess::Start({"--config", config});
  ASSERT_NE(d, nullptr);
  auto make_client = [&](const std::string& token) {
    client::ClientOptions options;
    options.address = d->grpc_address();
    options.token = token;
    options.max_retries = 1;
    options.digest_first_bytes = 1;
    return std::make_unique<client::Client>(options);
  };
  auto alice = make_client("alice-token");
  auto bob = make_client("bob-token");
  const std::string bytes = ReadFile(Model());
  const Sha256Digest digest = ModelBytesDigest(bytes);
  auto by_digest = [&](client::Client& c, const std::string& session, const std::string& sent,
                       v1::AddGraphResponse* added) {
    v1::AddGraphRequest request;
    request.set_session_id(session);
    request.set_graph_id(1);
    request.set_onnx_model_digest(sent);
    return c.AddGraph(request, added);
  };
  const std::string sent(reinterpret_cast<const char*>(digest.data()), digest.size());

  std::string session;
  ASSERT_TRUE(alice->CreateSession({}, &session).ok());
  v1::AddGraphResponse added;
  ASSERT_TRUE(by_digest(*alice, session, sent, &added).ok());
  EXPECT_TRUE(added.bytes_needed());
  EXPECT_EQ(added.inputs_size(), 0);
  // Nothing was added: the same graph id is free.
  ASSERT_TRUE(alice->AddOnnxFile(session, 1, Model(), {}, &added).ok());
  EXPECT_FALSE(added.bytes_needed());
  EXPECT_EQ(added.inputs_size(), 1);
  v1::CompileGraphResponse compiled;
  ASSERT_TRUE(alice->CompileGraph(session, 1, &compiled).ok());
  EXPECT_FALSE(compiled.cache_hit());

  // A new session of alice's: by digest alone, a hit.
  std::string second;
  ASSERT_TRUE(alice->CreateSession({}, &second).ok());
  ASSERT_TRUE(by_digest(*alice, second, sent, &added).ok());
  EXPECT_FALSE(added.bytes_needed());
  EXPECT_EQ(added.inputs_size(), 1);
  ASSERT_TRUE(alice->CompileGraph(second, 1, &compiled).ok());
  EXPECT_TRUE(compiled.cache_hit());

  // Bob knows the digest, not the model: his namespace has none.
  std::string bobs;
  ASSERT_TRUE(bob->CreateSession({}, &bobs).ok());
  ASSERT_TRUE(by_digest(*bob, bobs, sent, &added).ok());
  EXPECT_TRUE(added.bytes_needed());
  EXPECT_EQ(by_digest(*bob, bobs, sent.substr(1), &added).error_code(), grpc::StatusCode::INVALID_ARGUMENT);

  testing::HttpResult metrics = testing::HttpGet(d->metrics_address(), "/metrics");
  ASSERT_EQ(metrics.status, 200);
  EXPECT_NE(metrics.body.find("ged_model_imports_total 1\n"), std::string::npos) << metrics.body;
  d->Signal(SIGTERM);
  EXPECT_EQ(d->Wait(30), 0) << d->log();
}

TEST_F(CacheTest, SecondCompileIsAHitAndVerifyReportsCorruption) {
  const std::string cache = dir_ + "/cache";
  testing::ProcessResult miss = RunProcess({Gectl(), "compile", Model(), "-o", dir_ + "/m.gem", "--cache-dir", cache});
  ASSERT_EQ(miss.exit_code, 0) << miss.err;
  EXPECT_NE(miss.out.find("cache: miss "), std::string::npos) << miss.out;
  testing::ProcessResult hit = RunProcess({Gectl(), "--cache-dir", cache, "compile", Model(), "-o", dir_ + "/m.gem"});
  ASSERT_EQ(hit.exit_code, 0) << hit.err;
  EXPECT_NE(hit.out.find("cache: hit "), std::string::npos) << hit.out;
  testing::ProcessResult none = RunProcess({Gectl(), "compile", Model(), "-o", dir_ + "/m.gem", "--no-cache"});
  ASSERT_EQ(none.exit_code, 0) << none.err;
  EXPECT_EQ(none.out.find("cache:"), std::string::npos) << none.out;
  // Damage the entry's weights: verify moves it aside and exits 1, then 0.
  for (const auto& f : fs::recursive_directory_iterator(cache + "/v3")) {
    if (f.path().filename() == "model.gem.weights") std::ofstream(f.path(), std::ios::app) << "junk";
  }
  testing::ProcessResult bad = RunProcess({Gectl(), "cache", "verify", "--cache-dir", cache}, 60);
  EXPECT_EQ(bad.exit_code, 1) << bad.out;
  EXPECT_NE(bad.out.find("moved aside: "), std::string::npos) << bad.out;
  EXPECT_EQ(RunProcess({Gectl(), "cache", "verify", "--cache-dir", cache}, 60).exit_code, 0);
  testing::ProcessResult gc = RunProcess({Gectl(), "cache", "gc", "--max-size", "0", "--cache-dir", cache}, 60);
  EXPECT_EQ(gc.exit_code, 0) << gc.err;
  EXPECT_NE(gc.out.find("0 bytes left"), std::string::npos) << gc.out;
}

TEST_F(CacheTest, FullFileSystemWarnsAndTheModelStillRuns) {
  const std::string cache = dir_ + "/cache";
  ASSERT_EQ(RunProcess({Gectl(), "cache", "stat", "--cache-dir", cache}, 60).exit_code, 0);  // creates it
  // A compile under a 4 KiB file size limit: the entry cannot be written.
  // (sample_cnn has a dynamic batch: with per-shape plans, the default, a
  // run compiles no whole graph and stores nothing, docs/design/jit.md.)
  pid_t p = Spawn(
      {Gectl(), "run", Model(), "--option", "ge.jitCompile=0", "--cache-dir", cache, "--output-dir", dir_ + "/out"},
      4096, dir_ + "/stderr.txt");
  EXPECT_EQ(WaitExit(p), 0);
  EXPECT_TRUE(fs::exists(dir_ + "/out"));
  const std::string warning = ReadFile(dir_ + "/stderr.txt");
  EXPECT_NE(warning.find("compiled but not cached"), std::string::npos) << warning;
  EXPECT_NE(warning.find("File too large"), std::string::npos) << warning;
  testing::ProcessResult ls = RunProcess({Gectl(), "cache", "ls", "--cache-dir", cache}, 60);
  EXPECT_EQ(std::count(ls.out.begin(), ls.out.end(), '\n'), 1) << ls.out;  // header only: nothing stored
  // The warning names the problem (seen on stderr without the rlimit trick:
  // a read-only directory).
  // Every directory of the layout (v3/ns/<namespace>/<bucket>) read-only.
  std::vector<fs::path> dirs = {cache + "/v3"};
  for (const auto& f : fs::recursive_directory_iterator(cache + "/v3")) {
    if (f.is_directory()) dirs.push_back(f.path());
  }
  for (const fs::path& d : dirs) fs::permissions(d, fs::perms::owner_read | fs::perms::owner_exec);
  testing::ProcessResult warned = RunProcess({Gectl(), "run", Model(), "--cache-dir", cache}, 60);
  for (const fs::path& d : dirs) fs::permissions(d, fs::perms::owner_all);
  EXPECT_EQ(warned.exit_code, 0) << warned.err;
  if (geteuid() != 0) {  // root writes anyway
    EXPECT_NE(warned.err.find("compiled but not cached"), std::string::npos) << warned.err;
  }
}

TEST_F(CacheTest, TwoProcessesOnDifferentDirectoriesShareEntriesThroughRedis) {
  if (!testing::RedisServer::Available()) GTEST_SKIP() << "redis-server is not installed";
  testing::RedisServer redis;
  ASSERT_TRUE(redis.ready());
  // The remote tier needs the operator's key: its entries are signed.
  testing::ProcessResult keyless = RunProcess({Gectl(), "compile", Model(), "-o", dir_ + "/a.gem", "--cache-dir",
                                               dir_ + "/host_a", "--cache-remote", redis.address()});
  EXPECT_EQ(keyless.exit_code, 1) << keyless.err;
  EXPECT_NE(keyless.err.find("--cache-remote-key-file"), std::string::npos) << keyless.err;
  const std::string key = dir_ + "/remote.key";
  std::ofstream(key) << "the operator's key, 32 bytes ...\n";
  testing::ProcessResult a =
      RunProcess({Gectl(), "compile", Model(), "-o", dir_ + "/a.gem", "--cache-dir", dir_ + "/host_a", "--cache-remote",
                  redis.address(), "--cache-remote-key-file", key});
  ASSERT_EQ(a.exit_code, 0) << a.err;
  EXPECT_NE(a.out.find("cache: miss "), std::string::npos) << a.out;
  testing::ProcessResult b =
      RunProcess({Gectl(), "compile", Model(), "-o", dir_ + "/b.gem", "--cache-dir", dir_ + "/host_b", "--cache-remote",
                  redis.address(), "--cache-remote-key-file", key});
  ASSERT_EQ(b.exit_code, 0) << b.err;
  EXPECT_NE(b.out.find("cache: hit "), std::string::npos) << b.out;
  // The remote hit was written to host_b's directory: a hit without Redis.
  testing::ProcessResult local = RunProcess({Gectl(), "compile", Model(), "-o", dir_ + "/c.gem", "--cache-dir",
                                             dir_ + "/host_b"});
  EXPECT_NE(local.out.find("cache: hit "), std::string::npos) << local.out;
  EXPECT_EQ(RunOutputs(dir_ + "/b.gem", "", "", dir_ + "/out_b"), RunOutputs(Model(), "", "", dir_ + "/out_ref"));
}

TEST_F(CacheTest, DaemonCompilesThroughTheCacheAndLoadsModelsByKey) {
  const std::string cache = dir_ + "/cache";
  // gectl fills the cache; the daemon (same directory) hits it.
  ASSERT_EQ(RunProcess({Gectl(), "compile", Model(), "-o", dir_ + "/m.gem", "--cache-dir", cache}).exit_code, 0);
  auto d = testing::DaemonProcess::Start({"--cache-dir", cache});
  ASSERT_NE(d, nullptr);
  client::ClientOptions options;
  options.address = d->grpc_address();
  options.max_retries = 1;
  client::Client c(options);
  std::string session;
  ASSERT_TRUE(c.CreateSession({}, &session).ok());
  v1::AddGraphResponse added;
  ASSERT_TRUE(c.AddOnnxFile(session, 1, Model(), {}, &added).ok());
  v1::CompileGraphResponse compiled;
  grpc::Status s = c.CompileGraph(session, 1, &compiled);
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_EQ(compiled.cache_key().size(), 64u);
  EXPECT_TRUE(compiled.cache_hit());
  v1::LoadModelRequest load;
  load.set_session_id(session);
  load.set_cache_key(compiled.cache_key());
  v1::LoadModelResponse loaded;
  s = c.LoadModel(load, &loaded);
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_EQ(loaded.inputs_size(), added.inputs_size());
  load.set_cache_key(std::string(64, '0'));
  EXPECT_EQ(c.LoadModel(load, &loaded).error_code(), grpc::StatusCode::NOT_FOUND);
  testing::HttpResult metrics = testing::HttpGet(d->metrics_address(), "/metrics");
  ASSERT_EQ(metrics.status, 200);
  for (const char* line : {"ged_cache_hits_total 2", "ged_cache_misses_total 1", "ged_cache_evictions_total 0"}) {
    EXPECT_NE(metrics.body.find(line), std::string::npos) << line << "\n" << metrics.body;
  }
  EXPECT_EQ(metrics.body.find("ged_cache_bytes 0\n"), std::string::npos) << metrics.body;
  d->Signal(SIGTERM);
  EXPECT_EQ(d->Wait(30), 0) << d->log();
}

}  // namespace
}  // namespace ge
