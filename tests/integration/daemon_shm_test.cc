// Shared-memory I/O of the daemon (docs/api.md, "Shared memory"), with ged
// started as a process and driven by the C++ client: off by default (every
// shared-memory call is FAILED_PRECONDITION), and with `shared_memory: true`
// inputs read from and outputs written to a registered POSIX region, regions
// private to their tenant, and references checked against the region.
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>

#include "base/ir/proto_convert.h"
#include "base/ir/text_format.h"
#include "client/cpp/client.h"
#include "gtest/gtest.h"
#include "server/tenants.h"
#include "tests/integration/daemon_process.h"
#include "tests/integration/process.h"

namespace ge {
namespace {

using testing::DaemonProcess;

constexpr size_t kRegionBytes = 8192;

// y = relu(x) + x, x: f32[2,3]
v1::GraphDef ReluAdd() {
  auto g = ir::ParseGraph(R"(graph relu_add {
    x = Data() {index = 0} -> (f32[2,3])
    r = Relu(x:0) -> (f32[2,3])
    y = Add(r:0, x:0) -> (f32[2,3])
    out = NetOutput(y:0)
  })");
  EXPECT_TRUE(g.ok()) << g.status();
  v1::GraphDef def;
  EXPECT_TRUE(ir::GraphToProto(**g, &def).ok());
  return def;
}

// `address` empty: the daemon's TCP address.
client::Client MakeClient(const DaemonProcess& d, const std::string& token = "", const std::string& address = "") {
  client::ClientOptions options;
  options.address = address.empty() ? d.grpc_address() : address;
  options.token = token;
  options.max_retries = 1;
  return client::Client(options);
}

std::string SessionWithGraph(client::Client& c) {
  std::string session;
  EXPECT_TRUE(c.CreateSession({}, &session).ok());
  v1::AddGraphRequest add;
  add.set_session_id(session);
  add.set_graph_id(1);
  *add.mutable_graph_def() = ReluAdd();
  v1::AddGraphResponse added;
  grpc::Status s = c.AddGraph(add, &added);
  EXPECT_TRUE(s.ok()) << s.error_message();
  return session;
}

// A POSIX shared-memory object of kRegionBytes, mapped here, unlinked at the end.
class SharedObject {
 public:
  SharedObject() : key_("/ged-test-" + std::to_string(getpid()) + "-" + std::to_string(next_++)) {
    fd_ = shm_open(key_.c_str(), O_RDWR | O_CREAT | O_EXCL, 0600);
    EXPECT_GE(fd_, 0) << key_;
    EXPECT_EQ(ftruncate(fd_, kRegionBytes), 0);
    data_ = static_cast<char*>(mmap(nullptr, kRegionBytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd_, 0));
    EXPECT_NE(data_, MAP_FAILED);
  }
  ~SharedObject() {
    munmap(data_, kRegionBytes);
    close(fd_);
    shm_unlink(key_.c_str());
  }
  const std::string& key() const { return key_; }
  float* floats(size_t offset) { return reinterpret_cast<float*>(data_ + offset); }

 private:
  static inline int next_ = 0;
  std::string key_;
  int fd_ = -1;
  char* data_ = nullptr;
};

// A run of graph 1 whose input is 6 floats at `offset` of `region` and whose
// output goes to `out_offset` of it.
v1::RunGraphRequest ShmRun(const std::string& session, const std::string& region, uint64_t offset,
                           uint64_t out_offset) {
  v1::RunGraphRequest r;
  r.set_session_id(session);
  r.set_graph_id(1);
  v1::Tensor* t = r.add_inputs()->mutable_tensor();
  t->set_dtype(v1::DT_FLOAT);
  t->add_dims(2);
  t->add_dims(3);
  t->mutable_shared_memory()->set_region(region);
  t->mutable_shared_memory()->set_offset(offset);
  t->mutable_shared_memory()->set_byte_size(24);
  v1::SharedMemoryRef& out = (*r.mutable_output_shared_memory())[0];
  out.set_region(region);
  out.set_offset(out_offset);
  out.set_byte_size(64);
  return r;
}

TEST(DaemonSharedMemoryTest, OffByDefault) {
  auto d = DaemonProcess::Start({});
  ASSERT_NE(d, nullptr);
  client::Client c = MakeClient(*d);
  v1::GetStatusResponse status;
  ASSERT_TRUE(c.GetStatus(&status).ok());
  EXPECT_FALSE(status.shared_memory());
  SharedObject object;
  grpc::Status s = c.RegisterSharedMemory("r", object.key(), 0, kRegionBytes);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_NE(s.error_message().find("--shared-memory"), std::string::npos) << s.error_message();
  const std::string session = SessionWithGraph(c);
  v1::RunGraphResponse response;
  s = c.RunGraph(ShmRun(session, "r", 0, 64), &response);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_NE(s.error_message().find("input 0 (x)"), std::string::npos) << s.error_message();
  d->Signal(SIGTERM);
  EXPECT_EQ(d->Wait(30), 0) << d->log();
}

TEST(DaemonSharedMemoryTest, RunsThroughARegisteredRegionOfItsTenant) {
  const std::string dir = ge::testing::MakeTempDir("ged-shm");
  const std::string config = dir + "/ged.yaml";
  const std::string socket = dir + "/ged.sock";
  std::ofstream(config) << "shared_memory: true\nunix_socket: " << socket << "\ntenants:\n"
                        << "  - {name: alice, token_sha256: " << server::ToHex(server::Sha256("alice-token").data(), 32)
                        << "}\n  - {name: bob, token_sha256: " << server::ToHex(server::Sha256("bob-token").data(), 32)
                        << "}\n";
  auto d = DaemonProcess::Start({"--config", config});
  ASSERT_NE(d, nullptr);
  // Shared memory is for clients on the unix socket (ged's own uid).
  client::Client alice = MakeClient(*d, "alice-token", "unix:" + socket);
  client::Client bob = MakeClient(*d, "bob-token", "unix:" + socket);
  v1::GetStatusResponse status;
  ASSERT_TRUE(alice.GetStatus(&status).ok());
  EXPECT_TRUE(status.shared_memory());

  SharedObject object;
  ASSERT_TRUE(alice.RegisterSharedMemory("io", object.key(), 0, kRegionBytes).ok());
  EXPECT_EQ(alice.RegisterSharedMemory("io", object.key(), 0, kRegionBytes).error_code(),
            grpc::StatusCode::ALREADY_EXISTS);
  EXPECT_EQ(alice.RegisterSharedMemory("far", object.key(), 4096, kRegionBytes).error_code(),
            grpc::StatusCode::OUT_OF_RANGE);
  const std::string session = SessionWithGraph(alice);
  const float x[6] = {-1, 2, -3, 4, -5, 6};
  std::memcpy(object.floats(128), x, sizeof(x));
  v1::RunGraphResponse response;
  grpc::Status s = alice.RunGraph(ShmRun(session, "io", 128, 1024), &response);
  ASSERT_TRUE(s.ok()) << s.error_message();
  ASSERT_EQ(response.outputs_size(), 1);
  const v1::Tensor& y = response.outputs(0).tensor();
  EXPECT_TRUE(y.raw_data().empty());
  EXPECT_EQ(y.shared_memory().region(), "io");
  EXPECT_EQ(y.shared_memory().offset(), 1024u);
  EXPECT_EQ(y.shared_memory().byte_size(), 24u);
  EXPECT_EQ(std::vector<int64_t>(y.dims().begin(), y.dims().end()), (std::vector<int64_t>{2, 3}));
  for (int i = 0; i < 6; ++i) EXPECT_EQ(object.floats(1024)[i], (x[i] > 0 ? 2 * x[i] : x[i])) << i;

  // An output whose slot is too small comes back in the message.
  v1::RunGraphRequest small = ShmRun(session, "io", 128, 2048);
  (*small.mutable_output_shared_memory())[0].set_byte_size(8);
  ASSERT_TRUE(alice.RunGraph(small, &response).ok());
  EXPECT_FALSE(response.outputs(0).tensor().has_shared_memory());
  EXPECT_EQ(response.outputs(0).tensor().raw_data().size(), 24u);
  // References are checked against the region and the graph.
  EXPECT_EQ(alice.RunGraph(ShmRun(session, "io", kRegionBytes - 8, 0), &response).error_code(),
            grpc::StatusCode::OUT_OF_RANGE);
  v1::RunGraphRequest bad_output = ShmRun(session, "io", 0, 0);
  (*bad_output.mutable_output_shared_memory())[3].set_region("io");
  s = alice.RunGraph(bad_output, &response);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(s.error_message().find("names output 3"), std::string::npos) << s.error_message();

  // The region is alice's: bob neither sees nor uses it.
  v1::SharedMemoryStatusResponse regions;
  ASSERT_TRUE(bob.SharedMemoryStatus("", &regions).ok());
  EXPECT_EQ(regions.regions_size(), 0);
  const std::string bobs = SessionWithGraph(bob);
  s = bob.RunGraph(ShmRun(bobs, "io", 128, 1024), &response);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_NE(s.error_message().find("shared memory io is not registered"), std::string::npos) << s.error_message();
  ASSERT_TRUE(alice.SharedMemoryStatus("", &regions).ok());
  ASSERT_EQ(regions.regions_size(), 1);
  EXPECT_EQ(regions.regions(0).key(), object.key());
  EXPECT_EQ(regions.regions(0).byte_size(), kRegionBytes);

  ASSERT_TRUE(alice.UnregisterSharedMemory("").ok());
  EXPECT_EQ(alice.RunGraph(ShmRun(session, "io", 128, 1024), &response).error_code(), grpc::StatusCode::NOT_FOUND);
  d->Signal(SIGTERM);
  EXPECT_EQ(d->Wait(30), 0) << d->log();
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace ge

namespace ge {
namespace {

std::string SocketConfig(const std::string& dir) {
  const std::string config = dir + "/ged.yaml";
  std::ofstream(config) << "shared_memory: true\nunix_socket: " << dir << "/ged.sock\n";
  return config;
}

// Regions come only from unix-socket peers: a TCP caller is refused, the
// socket is its owner's only (mode 0600), and unauthenticated calls on the
// socket still need a token when tenants are configured.
TEST(DaemonSharedMemoryTest, RegionsOnlyFromTheUnixSocket) {
  const std::string dir = ge::testing::MakeTempDir("ged-shm-peer");
  auto d = DaemonProcess::Start({"--config", SocketConfig(dir)});
  ASSERT_NE(d, nullptr);
  struct stat st;
  ASSERT_EQ(stat((dir + "/ged.sock").c_str(), &st), 0);
  EXPECT_TRUE(S_ISSOCK(st.st_mode));
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  SharedObject object;
  client::Client tcp = MakeClient(*d);
  grpc::Status s = tcp.RegisterSharedMemory("io", object.key(), 0, kRegionBytes);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::PERMISSION_DENIED) << s.error_message();
  EXPECT_NE(s.error_message().find("unix socket"), std::string::npos) << s.error_message();
  client::Client local = MakeClient(*d, "", "unix:" + dir + "/ged.sock");
  EXPECT_TRUE(local.RegisterSharedMemory("io", object.key(), 0, kRegionBytes).ok());
  d->Signal(SIGTERM);
  EXPECT_EQ(d->Wait(30), 0) << d->log();
  EXPECT_FALSE(std::filesystem::exists(dir + "/ged.sock"));  // removed at exit
  std::filesystem::remove_all(dir);
}

// A client that truncates its object between registration and a run fails
// that call alone with OUT_OF_RANGE naming the region; ged goes on serving.
TEST(DaemonSharedMemoryTest, ATruncatedObjectFailsItsCallNotTheDaemon) {
  const std::string dir = ge::testing::MakeTempDir("ged-shm-shrink");
  auto d = DaemonProcess::Start({"--config", SocketConfig(dir)});
  ASSERT_NE(d, nullptr);
  client::Client c = MakeClient(*d, "", "unix:" + dir + "/ged.sock");
  SharedObject object;
  ASSERT_TRUE(c.RegisterSharedMemory("io", object.key(), 0, kRegionBytes).ok());
  const std::string session = SessionWithGraph(c);
  const int fd = shm_open(object.key().c_str(), O_RDWR, 0);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(ftruncate(fd, 64), 0);
  v1::RunGraphResponse response;
  grpc::Status s = c.RunGraph(ShmRun(session, "io", 128, 1024), &response);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::OUT_OF_RANGE) << s.error_message();
  EXPECT_NE(s.error_message().find("shared memory io"), std::string::npos) << s.error_message();
  ASSERT_EQ(ftruncate(fd, kRegionBytes), 0);
  close(fd);
  s = c.RunGraph(ShmRun(session, "io", 128, 1024), &response);
  EXPECT_TRUE(s.ok()) << s.error_message();
  d->Signal(SIGTERM);
  EXPECT_EQ(d->Wait(30), 0) << d->log();
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace ge
