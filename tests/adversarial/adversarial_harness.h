// The hostile-client test tier's harness (docs/security.md, "Attack
// classes"): a real ged on 127.0.0.1 (ephemeral port) with three tenants —
// alice the attacker, bob the victim, carol a second attacker without a
// memory quota — a canary file holding a random secret, and the daemon's own
// configuration file as a second canary (it carries another secret in a
// comment). At setup bob adds and compiles a small graph with known weights
// and a variable (graph 1) and a second graph under ge.graph_key
// "shared-model" (graph 2), so every case can check that bob's answer is
// still right and that none of bob's bytes reached alice.
//
// Every case (the AdversarialTest fixture) checks four things:
//   (a) the status code of the contract table (ExpectRefused: the code, and
//       the words the message must name — a config key, attribute, option);
//   (b) nothing leaked: ScanForLeaks looks for any 8-byte window of the
//       canary secrets, of bob's weights and of bob's variable in every
//       response and error message alice gets (a case must scan at least one
//       byte, so the check cannot pass by looking at nothing);
//   (c) the daemon is still up (GetStatus as bob succeeds);
//   (d) bob's graph returns the right answer while the case runs (a runner
//       thread repeats bob's run until the case ends, waiting on a condition
//       variable between runs, never sleeping) and right after it.
// A case that kills the daemon fails (c) and (d); the next case starts a new
// daemon (SetUp), so one crash does not fail the whole file.
//
// With the contract's keys the daemon also serves a model repository
// (kRepositoryModel: sum = a + b, FP32 [-1, 4], dynamic batching up to 8)
// over KServe v2 gRPC and HTTP (http_address()), with max_json_elements
// kMaxJsonElements.
//
// The contract's new config keys (max_tensor_bytes, max_outputs,
// tenants[].max_memory_bytes, unix_socket, ...) are offered first; a ged that
// does not know them yet (its --print-config refuses the file) runs with the
// base configuration, and contract_config() is false: the cases that need a
// configured limit then fail saying which key ged lacks.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "client/cpp/client.h"
#include "ge/kserve/grpc_service.grpc.pb.h"
#include "ge/v1/service.grpc.pb.h"
#include "gtest/gtest.h"
#include "tests/integration/daemon_process.h"

namespace ge::adversarial {

inline constexpr char kAliceToken[] = "alice-attacker-token-7f3a";
inline constexpr char kBobToken[] = "bob-victim-token-c41d";
inline constexpr char kCarolToken[] = "carol-second-attacker-token-9e02";
inline constexpr uint32_t kVictimGraph = 1;
inline constexpr uint32_t kVictimKeyedGraph = 2;
inline constexpr char kSharedGraphKey[] = "shared-model";

// The limits the contract configuration sets (when ged accepts it).
inline constexpr int64_t kMaxMessageBytes = 16 << 20;
inline constexpr int64_t kMaxTensorBytes = int64_t{1} << 30;
inline constexpr int64_t kMaxOutputs = 1024;
inline constexpr int64_t kMaxGraphsPerSession = 64;
inline constexpr int64_t kMaxGraphNodes = 100000;
inline constexpr int64_t kMaxInterOpThreads = 64;
inline constexpr int64_t kMaxLoopIterations = 10000;
inline constexpr int64_t kAliceMaxQueuedCalls = 4;
inline constexpr int64_t kAliceMaxMemoryBytes = 16 << 20;
inline constexpr int64_t kMemoryBudgetBytes = 512 << 20;
inline constexpr int64_t kMaxJsonElements = 100000;
inline constexpr char kRepositoryModel[] = "batchy";

class Harness {
 public:
  // Starts the daemon and bob's setup; nullptr (with a gtest failure) when
  // either fails. `omit_carol`: the configuration leaves tenant carol out
  // (the removed-tenant case restarts with it).
  static std::unique_ptr<Harness> Start(bool omit_carol = false);
  ~Harness();

  // Stops the daemon (SIGKILL) and starts it again on the same directory,
  // cache and configuration (carol left out when `omit_carol`); bob's setup
  // runs again. False (with a gtest failure) when it does not come up.
  bool Restart(bool omit_carol = false);
  // Restarts when the daemon no longer answers.
  bool EnsureUp();
  bool Alive();

  client::Client& alice() { return *alice_; }
  client::Client& bob() { return *bob_; }
  client::Client& carol() { return *carol_; }
  // A client with this exact token ("" sends no authorization entry).
  std::unique_ptr<client::Client> ClientWithToken(const std::string& token);
  // The same on local_address() (shared-memory clients).
  std::unique_ptr<client::Client> LocalClient(const std::string& token);
  // A raw stub on a channel of its own (calls carry only the metadata the
  // caller adds).
  std::unique_ptr<v1::GraphEngine::Stub> RawStub();
  // A KServe v2 gRPC stub on a channel of its own.
  std::unique_ptr<inference::GRPCInferenceService::Stub> KServeStub();
  // The KServe HTTP address ("" when ged does not serve it).
  std::string http_address() const { return daemon_ != nullptr ? daemon_->http_address() : ""; }
  // The address shared-memory clients use: unix:PATH when ged serves the
  // contract's unix_socket, else the TCP address.
  std::string local_address() const;

  const std::string& dir() const { return dir_; }
  const std::string& canary_path() const { return canary_path_; }
  const std::string& config_path() const { return config_path_; }
  const std::string& canary_secret() const { return canary_secret_; }
  bool contract_config() const { return contract_config_; }
  testing::DaemonProcess& daemon() { return *daemon_; }

  const std::string& victim_session() const { return victim_session_; }
  const std::string& victim_cache_key() const { return victim_cache_key_; }
  // Bob's weight bytes (graph 1's Const, graph 2's Const), for cases that
  // look for them.
  const std::string& victim_weights() const { return secrets_[2]; }

  // Fails the test (naming `what`) when `bytes` holds any 8-byte window of a
  // secret; counts the bytes looked at.
  void ScanForLeaks(const std::string& bytes, const std::string& what);
  void ScanStatus(const grpc::Status& status, const std::string& what);
  void ScanMessage(const google::protobuf::Message& message, const std::string& what);
  int64_t scanned_bytes() const { return scanned_; }
  void ResetScanned() { scanned_ = 0; }

  // Bob's graph 1 on his input: OK and the known answer (a failure naming
  // `when` otherwise). Thread-safe.
  bool VictimRunIsRight(const std::string& when, std::string* error = nullptr);
  // Bob's variable `bob_secret` still holds its initial value.
  void ExpectVictimVariableIntact();
  // GetStatus as bob succeeds.
  bool StatusAnswers();

 private:
  Harness() = default;
  bool Launch(bool omit_carol);
  bool SetUpVictim();
  std::string Config(bool contract, bool omit_carol) const;

  std::string dir_;
  std::string canary_path_;
  std::string config_path_;
  std::string canary_secret_;
  std::string config_secret_;
  std::vector<std::string> secrets_;  // canary, config, bob's weights, bob's variable
  bool contract_config_ = false;
  std::unique_ptr<testing::DaemonProcess> daemon_;
  std::unique_ptr<client::Client> alice_, bob_, carol_;
  std::string victim_session_;
  std::string victim_cache_key_;
  std::atomic<int64_t> scanned_{0};
};

// Bob's runs repeated on a thread while a case runs: Stop() waits for it and
// returns how many ran; every one must have been right.
class VictimRunner {
 public:
  explicit VictimRunner(Harness& h);
  ~VictimRunner();
  // Number of runs; `errors` gets the first wrong one's description.
  int Stop(std::string* errors);

 private:
  Harness& h_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  int runs_ = 0;
  std::string first_error_;
  std::thread thread_;
};

// (a): `status` has `code` and its message contains every one of `names`
// (any one of the alternatives separated by '|' inside a name).
::testing::AssertionResult Refused(const grpc::Status& status, grpc::StatusCode code,
                                   const std::vector<std::string>& names = {});
// As Refused, with any of `codes`.
::testing::AssertionResult RefusedWithAnyOf(const grpc::Status& status, const std::vector<grpc::StatusCode>& codes,
                                            const std::vector<std::string>& names = {});

// One daemon per test file, shared by its cases; SetUp restarts it when a
// case killed it, starts bob's runner; TearDown checks (b) was looked at,
// (c) and (d).
class AdversarialTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite();
  static void TearDownTestSuite();
  void SetUp() override;
  void TearDown() override;

  Harness& h() { return *harness_; }
  // ScanStatus + ScanMessage of a call's result as alice sees it.
  void Scan(const grpc::Status& status, const google::protobuf::Message& response, const std::string& what);
  // Fails the case when ged does not have the contract's configuration keys
  // (the case's limit would not be configured).
  bool NeedsContractConfig(const std::string& keys);

  static std::unique_ptr<Harness> harness_;
  std::unique_ptr<VictimRunner> runner_;
  bool missing_config_ = false;  // NeedsContractConfig failed: nothing was sent
};

// A POSIX shared-memory object of `bytes`, mapped here; Truncate shrinks
// it under the daemon (ftruncate). Unlinked at the end.
class SharedObject {
 public:
  explicit SharedObject(size_t bytes);
  ~SharedObject();
  const std::string& key() const { return key_; }
  float* floats(size_t offset) { return reinterpret_cast<float*>(data_ + offset); }
  bool Truncate(size_t bytes);

 private:
  std::string key_;
  size_t bytes_ = 0;
  int fd_ = -1;
  char* data_ = nullptr;
};

// Small builders shared by the case files.
v1::GraphDef ParseGraphDef(const std::string& text);
v1::Value FloatValue(const std::vector<float>& values, const std::vector<int64_t>& dims);
v1::Value Int64Value(const std::vector<int64_t>& values, const std::vector<int64_t>& dims);
// A new session of `c` with `def` as graph `graph_id`; "" (and a failure)
// when either call fails.
std::string SessionWithGraph(client::Client& c, const v1::GraphDef& def, uint32_t graph_id = 1,
                             const std::map<std::string, std::string>& options = {});
std::string ReadFile(const std::string& path);

}  // namespace ge::adversarial
