// The adversarial tier's harness: the daemon and its configuration, the
// canaries, bob's setup, the leak scanner and bob's runner
// (adversarial_harness.h says what each case checks).
#include "tests/adversarial/adversarial_harness.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <random>
#include <sstream>
#include <unordered_map>

#include "base/ir/proto_convert.h"
#include "base/ir/text_format.h"
#include "onnx/onnx_pb.h"
#include "server/tenants.h"
#include "tests/integration/process.h"

namespace ge::adversarial {
namespace {

constexpr size_t kWindow = 8;

// Bob's graph 1: y = x . W + bob_secret, with x f32[2,4]. Every value is a
// small dyadic fraction, so the float results are exact in any order.
std::vector<float> VictimWeights() {
  std::vector<float> w(16);
  for (size_t i = 0; i < w.size(); ++i) w[i] = 1000.5f + 1.25f * static_cast<float>(i);
  return w;
}
std::vector<float> VictimKeyedWeights() {
  std::vector<float> w(16);
  for (size_t i = 0; i < w.size(); ++i) w[i] = -2000.75f + 2.5f * static_cast<float>(i);
  return w;
}
const std::vector<float> kVictimVariable = {3141.5f, -2718.25f, 1414.125f, 1732.0625f};
const std::vector<float> kVictimInput = {0.5f, -1.0f, 2.0f, 0.25f, -0.5f, 1.5f, 0.0f, 3.0f};

std::string FloatList(const std::vector<float>& values) {
  std::ostringstream out;
  out.precision(9);
  for (size_t i = 0; i < values.size(); ++i) out << (i ? ", " : "") << values[i];
  return out.str();
}

std::string Bytes(const std::vector<float>& values) {
  return std::string(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(float));
}

std::vector<float> ExpectedVictimOutput() {
  const std::vector<float> w = VictimWeights();
  std::vector<float> y(8);
  for (int r = 0; r < 2; ++r) {
    for (int c = 0; c < 4; ++c) {
      float sum = 0;
      for (int k = 0; k < 4; ++k) sum += kVictimInput[r * 4 + k] * w[k * 4 + c];
      y[r * 4 + c] = sum + kVictimVariable[c];
    }
  }
  return y;
}

std::string RandomHexSecret() {
  std::random_device rd;
  std::string out;
  const char* digits = "0123456789abcdef";
  for (int i = 0; i < 64; ++i) out += digits[rd() % 16];
  return out;
}

std::string TokenHash(const char* token) { return server::ToHex(server::Sha256(token).data(), 32); }

std::string DescribeStatus(const grpc::Status& s) {
  return "code " + std::to_string(static_cast<int>(s.error_code())) + ": " + s.error_message();
}

// The repository the daemon serves: kRepositoryModel, sum = a + b over
// FP32 [-1, 4], batching up to 8 rows.
void WriteRepository(const std::string& root) {
  const std::string dir = root + "/" + kRepositoryModel;
  std::filesystem::create_directories(dir + "/1");
  onnx::ModelProto model;
  model.set_ir_version(8);
  model.add_opset_import()->set_version(17);
  onnx::GraphProto* g = model.mutable_graph();
  g->set_name(kRepositoryModel);
  auto value_info = [](onnx::ValueInfoProto* v, const std::string& name) {
    v->set_name(name);
    auto* t = v->mutable_type()->mutable_tensor_type();
    t->set_elem_type(onnx::TensorProto::FLOAT);
    t->mutable_shape()->add_dim()->set_dim_param("n");
    t->mutable_shape()->add_dim()->set_dim_value(4);
  };
  value_info(g->add_input(), "a");
  value_info(g->add_input(), "b");
  value_info(g->add_output(), "sum");
  onnx::NodeProto* add = g->add_node();
  add->set_op_type("Add");
  add->add_input("a");
  add->add_input("b");
  add->add_output("sum");
  std::ofstream(dir + "/1/model.onnx", std::ios::binary) << model.SerializeAsString();
  std::ofstream(dir + "/config.pbtxt") << "max_batch_size: 8\n"
                                          "dynamic_batching { max_queue_delay_microseconds: 2000 }\n";
}

}  // namespace

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

v1::GraphDef ParseGraphDef(const std::string& text) {
  v1::GraphDef def;
  auto g = ir::ParseGraph(text);
  EXPECT_TRUE(g.ok()) << g.status();
  if (g.ok()) {
    EXPECT_TRUE(ir::GraphToProto(**g, &def).ok());
  }
  return def;
}

v1::Value FloatValue(const std::vector<float>& values, const std::vector<int64_t>& dims) {
  v1::Value v;
  v1::Tensor* t = v.mutable_tensor();
  t->set_dtype(v1::DT_FLOAT);
  for (int64_t d : dims) t->add_dims(d);
  t->set_raw_data(Bytes(values));
  return v;
}

v1::Value Int64Value(const std::vector<int64_t>& values, const std::vector<int64_t>& dims) {
  v1::Value v;
  v1::Tensor* t = v.mutable_tensor();
  t->set_dtype(v1::DT_INT64);
  for (int64_t d : dims) t->add_dims(d);
  t->set_raw_data(std::string(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(int64_t)));
  return v;
}

std::string SessionWithGraph(client::Client& c, const v1::GraphDef& def, uint32_t graph_id,
                             const std::map<std::string, std::string>& options) {
  std::string session;
  grpc::Status s = c.CreateSession({}, &session);
  EXPECT_TRUE(s.ok()) << s.error_message();
  if (!s.ok()) return "";
  v1::AddGraphRequest add;
  add.set_session_id(session);
  add.set_graph_id(graph_id);
  *add.mutable_graph_def() = def;
  for (const auto& [k, v] : options) (*add.mutable_options()->mutable_entries())[k] = v;
  v1::AddGraphResponse added;
  s = c.AddGraph(add, &added);
  EXPECT_TRUE(s.ok()) << s.error_message();
  return s.ok() ? session : "";
}

std::unique_ptr<Harness> Harness::Start(bool omit_carol) {
  auto h = std::unique_ptr<Harness>(new Harness());
  h->dir_ = testing::MakeTempDir("ged-adversarial");
  h->canary_secret_ = RandomHexSecret();
  h->config_secret_ = RandomHexSecret();
  h->canary_path_ = h->dir_ + "/canary.txt";
  std::ofstream(h->canary_path_) << "canary " << h->canary_secret_ << "\n";
  h->config_path_ = h->dir_ + "/ged.yaml";
  h->secrets_ = {h->canary_secret_, h->config_secret_, Bytes(VictimWeights()), Bytes(kVictimVariable),
                 Bytes(VictimKeyedWeights())};
  std::filesystem::create_directories(h->dir_ + "/weights");
  WriteRepository(h->dir_ + "/models");
  // Does this ged know the contract's keys? --print-config parses and
  // validates the file without serving.
  std::ofstream(h->config_path_) << h->Config(/*contract=*/true, omit_carol);
  const testing::ProcessResult probe =
      testing::RunProcess({testing::BinaryDir() + "/bin/ged", "--config", h->config_path_, "--print-config"}, 60);
  h->contract_config_ = probe.exit_code == 0;
  if (!h->contract_config_) {
    std::cerr << "adversarial harness: ged refuses the contract configuration keys, running with the base "
                 "configuration: "
              << probe.err << "\n";
  }
  if (!h->Launch(omit_carol)) return nullptr;
  return h;
}

Harness::~Harness() {
  daemon_.reset();
  if (!dir_.empty()) std::filesystem::remove_all(dir_);
}

std::string Harness::Config(bool contract, bool omit_carol) const {
  std::ostringstream y;
  y << "# canary " << config_secret_ << "\n";
  y << "cache_dir: " << dir_ << "/cache\n";
  y << "shared_memory: true\n";
  y << "max_message_bytes: " << kMaxMessageBytes << "\n";
  if (contract) {
    y << "max_tensor_bytes: " << kMaxTensorBytes << "\n"
      << "max_outputs: " << kMaxOutputs << "\n"
      << "max_graphs_per_session: " << kMaxGraphsPerSession << "\n"
      << "max_graph_nodes: " << kMaxGraphNodes << "\n"
      << "max_inter_op_threads: " << kMaxInterOpThreads << "\n"
      << "max_loop_iterations: " << kMaxLoopIterations << "\n"
      << "memory_budget_bytes: " << kMemoryBudgetBytes << "\n"
      << "weights_root: " << dir_ << "/weights\n"
      << "unix_socket: " << dir_ << "/ged.sock\n"
      << "model_repository: " << dir_ << "/models\n"
      << "http_listen: 127.0.0.1:0\n"
      << "max_json_elements: " << kMaxJsonElements << "\n";
  }
  y << "tenants:\n";
  y << "  - {name: alice, token_sha256: " << TokenHash(kAliceToken) << ", max_sessions: 32, max_concurrent_runs: 64";
  if (contract) y << ", max_queued_calls: " << kAliceMaxQueuedCalls << ", max_memory_bytes: " << kAliceMaxMemoryBytes;
  y << "}\n";
  y << "  - {name: bob, token_sha256: " << TokenHash(kBobToken) << "}\n";
  if (!omit_carol) y << "  - {name: carol, token_sha256: " << TokenHash(kCarolToken) << "}\n";
  return y.str();
}

bool Harness::Launch(bool omit_carol) {
  std::ofstream(config_path_, std::ios::trunc) << Config(contract_config_, omit_carol);
  std::filesystem::remove(dir_ + "/ged.sock");
#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
  // A daemon that a case makes allocate without bound (today's
  // ExecuteOp num_outputs 2e9) fails at 8 GiB instead of taking the shared
  // machine down; the limit is inherited by the spawned ged only.
  rlimit saved{};
  getrlimit(RLIMIT_AS, &saved);
  rlimit limited = saved;
  limited.rlim_cur = std::min<rlim_t>(saved.rlim_max, rlim_t{8} << 30);
  setrlimit(RLIMIT_AS, &limited);
#endif
  daemon_ = testing::DaemonProcess::Start({"--config", config_path_, "--log-level", "warn"});
#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
  setrlimit(RLIMIT_AS, &saved);
#endif
  if (daemon_ == nullptr) return false;
  alice_ = ClientWithToken(kAliceToken);
  bob_ = ClientWithToken(kBobToken);
  carol_ = ClientWithToken(kCarolToken);
  return SetUpVictim();
}

bool Harness::Restart(bool omit_carol) {
  daemon_.reset();
  return Launch(omit_carol);
}

bool Harness::Alive() {
  if (daemon_ == nullptr) return false;
  client::ClientOptions options;
  options.address = daemon_->grpc_address();
  options.token = kBobToken;
  options.max_retries = 0;
  options.timeout_seconds = 20;
  client::Client probe(options);
  v1::GetStatusResponse status;
  return probe.GetStatus(&status).ok();
}

bool Harness::EnsureUp() { return Alive() || Restart(); }

std::unique_ptr<client::Client> Harness::ClientWithToken(const std::string& token) {
  client::ClientOptions options;
  options.address = daemon_->grpc_address();
  options.token = token;
  options.max_retries = 1;
  options.timeout_seconds = 60;
  return std::make_unique<client::Client>(options);
}

std::unique_ptr<client::Client> Harness::LocalClient(const std::string& token) {
  client::ClientOptions options;
  options.address = local_address();
  options.token = token;
  options.max_retries = 1;
  options.timeout_seconds = 60;
  return std::make_unique<client::Client>(options);
}

std::unique_ptr<inference::GRPCInferenceService::Stub> Harness::KServeStub() {
  grpc::ChannelArguments args;
  args.SetMaxSendMessageSize(-1);
  args.SetMaxReceiveMessageSize(-1);
  args.SetInt("adversarial.kserve", 1);
  return inference::GRPCInferenceService::NewStub(
      grpc::CreateCustomChannel(daemon_->grpc_address(), grpc::InsecureChannelCredentials(), args));
}

std::unique_ptr<v1::GraphEngine::Stub> Harness::RawStub() {
  grpc::ChannelArguments args;
  args.SetMaxSendMessageSize(-1);
  args.SetMaxReceiveMessageSize(-1);
  // A channel of its own (not shared with the clients' subchannels).
  args.SetInt("adversarial.raw", 1);
  return v1::GraphEngine::NewStub(
      grpc::CreateCustomChannel(daemon_->grpc_address(), grpc::InsecureChannelCredentials(), args));
}

std::string Harness::local_address() const {
  return contract_config_ ? "unix:" + dir_ + "/ged.sock" : daemon_->grpc_address();
}

bool Harness::SetUpVictim() {
  const std::string graph =
      "graph victim {\n"
      "  x = Data() {index = 0} -> (f32[2,4])\n"
      "  w = Const() {value = tensor<f32[4,4]>[" +
      FloatList(VictimWeights()) +
      "]} -> (f32[4,4])\n"
      "  m = MatMul(x:0, w:0) -> (f32[2,4])\n"
      "  bob_secret = Variable() {dtype = 1, shape = shape[4], value = tensor<f32[4]>[" +
      FloatList(kVictimVariable) +
      "]} -> (f32[4])\n"
      "  y = Add(m:0, bob_secret:0) -> (f32[2,4])\n"
      "  out = NetOutput(y:0)\n}\n";
  victim_session_ = SessionWithGraph(*bob_, ParseGraphDef(graph), kVictimGraph);
  if (victim_session_.empty()) return false;
  v1::CompileGraphResponse compiled;
  grpc::Status s = bob_->CompileGraph(victim_session_, kVictimGraph, &compiled);
  EXPECT_TRUE(s.ok()) << "bob's setup: " << s.error_message();
  if (!s.ok()) return false;

  const std::string keyed =
      "graph victim_keyed {\n"
      "  x = Data() {index = 0} -> (f32[2,4])\n"
      "  w = Const() {value = tensor<f32[4,4]>[" +
      FloatList(VictimKeyedWeights()) +
      "]} -> (f32[4,4])\n"
      "  y = MatMul(x:0, w:0) -> (f32[2,4])\n"
      "  out = NetOutput(y:0)\n}\n";
  v1::AddGraphRequest add;
  add.set_session_id(victim_session_);
  add.set_graph_id(kVictimKeyedGraph);
  *add.mutable_graph_def() = ParseGraphDef(keyed);
  (*add.mutable_options()->mutable_entries())["ge.graph_key"] = kSharedGraphKey;
  v1::AddGraphResponse added;
  s = bob_->AddGraph(add, &added);
  EXPECT_TRUE(s.ok()) << "bob's setup: " << s.error_message();
  if (!s.ok()) return false;
  s = bob_->CompileGraph(victim_session_, kVictimKeyedGraph, &compiled);
  EXPECT_TRUE(s.ok()) << "bob's setup: " << s.error_message();
  if (!s.ok()) return false;
  victim_cache_key_ = compiled.cache_key();
  EXPECT_FALSE(victim_cache_key_.empty()) << "bob's setup: the daemon has no cache";
  std::string error;
  const bool right = VictimRunIsRight("at setup", &error);
  EXPECT_TRUE(right) << error;
  return right;
}

bool Harness::VictimRunIsRight(const std::string& when, std::string* error) {
  v1::RunGraphRequest request;
  request.set_session_id(victim_session_);
  request.set_graph_id(kVictimGraph);
  *request.add_inputs() = FloatValue(kVictimInput, {2, 4});
  v1::RunGraphResponse response;
  const grpc::Status s = bob_->RunGraph(request, &response, 120);
  std::string problem;
  if (!s.ok()) {
    problem = "bob's run " + when + " failed: " + DescribeStatus(s);
  } else if (response.outputs_size() != 1 || response.outputs(0).tensor().raw_data() != Bytes(ExpectedVictimOutput())) {
    problem = "bob's run " + when + " returned a wrong answer";
  }
  if (error != nullptr) *error = problem;
  return problem.empty();
}

void Harness::ExpectVictimVariableIntact() {
  v1::Value value;
  grpc::Status s = bob_->GetVariable(victim_session_, "bob_secret", &value);
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_EQ(value.tensor().raw_data(), Bytes(kVictimVariable)) << "bob's variable was changed";
}

bool Harness::StatusAnswers() { return Alive(); }

void Harness::ScanForLeaks(const std::string& bytes, const std::string& what) {
  scanned_ += static_cast<int64_t>(bytes.size());
  if (bytes.size() < kWindow) return;
  static const char* kNames[] = {"the canary file's secret", "the daemon configuration's secret",
                                 "bob's weights (graph 1)", "bob's variable", "bob's weights (graph 2)"};
  std::unordered_map<uint64_t, int> owner;
  for (size_t k = 0; k < secrets_.size(); ++k) {
    const std::string& s = secrets_[k];
    for (size_t i = 0; i + kWindow <= s.size(); ++i) {
      uint64_t w;
      std::memcpy(&w, s.data() + i, kWindow);
      owner.emplace(w, static_cast<int>(k));
    }
  }
  for (size_t i = 0; i + kWindow <= bytes.size(); ++i) {
    uint64_t w;
    std::memcpy(&w, bytes.data() + i, kWindow);
    auto it = owner.find(w);
    if (it != owner.end()) {
      ADD_FAILURE() << "(b) leak: " << what << " holds bytes of " << kNames[it->second] << " at offset " << i;
      return;
    }
  }
}

void Harness::ScanStatus(const grpc::Status& status, const std::string& what) {
  ScanForLeaks(status.error_message(), what + " (error message)");
  ScanForLeaks(status.error_details(), what + " (error details)");
}

void Harness::ScanMessage(const google::protobuf::Message& message, const std::string& what) {
  ScanForLeaks(message.SerializeAsString(), what + " (response)");
}

VictimRunner::VictimRunner(Harness& h) : h_(h) {
  thread_ = std::thread([this] {
    std::unique_lock<std::mutex> lock(mu_);
    // One run at least, then one every few milliseconds until Stop (a wait
    // on the stop flag, not a sleep).
    do {
      lock.unlock();
      std::string error;
      const bool right = h_.VictimRunIsRight("during the case", &error);
      lock.lock();
      ++runs_;
      if (!right && first_error_.empty()) first_error_ = error;
    } while (!cv_.wait_for(lock, std::chrono::milliseconds(5), [this] { return stop_; }));
  });
}

VictimRunner::~VictimRunner() {
  if (thread_.joinable()) Stop(nullptr);
}

int VictimRunner::Stop(std::string* errors) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
  if (errors != nullptr) *errors = first_error_;
  return runs_;
}

SharedObject::SharedObject(size_t bytes) : bytes_(bytes) {
  static std::atomic<int> next{0};
  key_ = "/ged-adversarial-" + std::to_string(getpid()) + "-" + std::to_string(next++);
  fd_ = shm_open(key_.c_str(), O_RDWR | O_CREAT | O_EXCL, 0600);
  EXPECT_GE(fd_, 0) << key_;
  EXPECT_EQ(ftruncate(fd_, static_cast<off_t>(bytes)), 0);
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd_, 0);
  EXPECT_NE(p, MAP_FAILED);
  data_ = p == MAP_FAILED ? nullptr : static_cast<char*>(p);
}

SharedObject::~SharedObject() {
  if (data_ != nullptr) munmap(data_, bytes_);
  if (fd_ >= 0) close(fd_);
  shm_unlink(key_.c_str());
}

bool SharedObject::Truncate(size_t bytes) {
  // This process's mapping stays as large as it was; touching it past the
  // new end would fault here, so the test writes before truncating.
  return ftruncate(fd_, static_cast<off_t>(bytes)) == 0;
}

namespace {

::testing::AssertionResult CheckNames(const grpc::Status& status, const std::vector<std::string>& names) {
  for (const std::string& name : names) {
    bool found = false;
    for (size_t start = 0;;) {
      const size_t bar = name.find('|', start);
      const std::string alt = name.substr(start, bar == std::string::npos ? std::string::npos : bar - start);
      if (status.error_message().find(alt) != std::string::npos) found = true;
      if (bar == std::string::npos) break;
      start = bar + 1;
    }
    if (!found) {
      return ::testing::AssertionFailure()
             << "(a) the message does not name '" << name << "': " << status.error_message();
    }
  }
  return ::testing::AssertionSuccess();
}

}  // namespace

::testing::AssertionResult Refused(const grpc::Status& status, grpc::StatusCode code,
                                   const std::vector<std::string>& names) {
  return RefusedWithAnyOf(status, {code}, names);
}

::testing::AssertionResult RefusedWithAnyOf(const grpc::Status& status, const std::vector<grpc::StatusCode>& codes,
                                            const std::vector<std::string>& names) {
  if (std::find(codes.begin(), codes.end(), status.error_code()) == codes.end()) {
    auto failure = ::testing::AssertionFailure();
    failure << "(a) expected code";
    for (grpc::StatusCode c : codes) failure << " " << static_cast<int>(c);
    return failure << ", got " << DescribeStatus(status);
  }
  return CheckNames(status, names);
}

std::unique_ptr<Harness> AdversarialTest::harness_;

void AdversarialTest::SetUpTestSuite() {
  if (harness_ == nullptr) harness_ = Harness::Start();
}

void AdversarialTest::TearDownTestSuite() { harness_.reset(); }

void AdversarialTest::SetUp() {
  ASSERT_NE(harness_, nullptr) << "the daemon did not start";
  ASSERT_TRUE(harness_->EnsureUp()) << "the daemon did not come back after the previous case";
  harness_->ResetScanned();
  runner_ = std::make_unique<VictimRunner>(*harness_);
}

void AdversarialTest::TearDown() {
  if (harness_ == nullptr || runner_ == nullptr) return;
  std::string error;
  const int runs = runner_->Stop(&error);
  runner_.reset();
  EXPECT_GE(runs, 1) << "(d) bob's runner did not run";
  EXPECT_TRUE(error.empty()) << "(d) " << error;
  EXPECT_TRUE(harness_->StatusAnswers()) << "(c) the daemon does not answer GetStatus after the case:\n"
                                         << harness_->daemon().log();
  std::string after;
  EXPECT_TRUE(harness_->VictimRunIsRight("right after the case", &after)) << "(d) " << after;
  if (!missing_config_) {
    EXPECT_GT(harness_->scanned_bytes(), 0) << "(b) the case looked at no response bytes";
  }
  // The attackers' sessions go, so that cases do not add up to a quota.
  for (client::Client* c : {&harness_->alice(), &harness_->carol()}) {
    v1::ListSessionsResponse listed;
    if (!c->ListSessions(&listed).ok()) continue;
    for (const auto& info : listed.sessions()) c->DestroySession(info.session_id());
  }
}

void AdversarialTest::Scan(const grpc::Status& status, const google::protobuf::Message& response,
                           const std::string& what) {
  h().ScanStatus(status, what);
  h().ScanMessage(response, what);
}

bool AdversarialTest::NeedsContractConfig(const std::string& keys) {
  if (h().contract_config()) return true;
  missing_config_ = true;
  ADD_FAILURE() << "this ged does not accept the contract's configuration keys (" << keys
                << "), so the limit this case tests is not configured";
  return false;
}

}  // namespace ge::adversarial
