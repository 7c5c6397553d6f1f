// Transport security of the daemon: TLS, mutual TLS, and the reflection
// service that is off unless enabled. Certificates are made for the test
// by tests/testing/make_test_certs.sh (a CA, a server certificate for
// 127.0.0.1, a client certificate, and a second CA that ged does not trust).
#include <filesystem>
#include <fstream>

#include "client/cpp/client.h"
#include "grpcpp/generic/generic_stub.h"
#include "gtest/gtest.h"
#include "tests/integration/daemon_process.h"
#include "tests/integration/process.h"

namespace ge {
namespace {

using testing::DaemonProcess;

class DaemonTlsTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new std::string(testing::MakeTempDir("ged-tls"));
    const auto r = testing::RunProcess({"/bin/sh", testing::SourceDir() + "/tests/testing/make_test_certs.sh", *dir_,
                                        "IP:127.0.0.1,DNS:localhost"},
                                       60);
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  static void TearDownTestSuite() {
    std::filesystem::remove_all(*dir_);
    delete dir_;
  }
  static std::string File(const std::string& name) { return *dir_ + "/" + name; }

  static std::unique_ptr<DaemonProcess> StartWith(const std::string& yaml) {
    const std::string path = File("ged-" + std::to_string(++configs_) + ".yaml");
    std::ofstream(path) << yaml;
    return DaemonProcess::Start({"--config", path});
  }
  static std::string TlsYaml(bool mutual) {
    std::string yaml = "tls_cert_file: " + File("server.pem") + "\ntls_key_file: " + File("server.key") + "\n";
    if (mutual) yaml += "tls_client_ca_file: " + File("ca.pem") + "\n";
    return yaml;
  }

  static grpc::Status Status(const DaemonProcess& d, client::ClientOptions options) {
    options.address = d.grpc_address();
    options.max_retries = 0;
    options.timeout_seconds = 10;
    client::Client c(options);
    v1::GetStatusResponse status;
    return c.GetStatus(&status);
  }
  static client::ClientOptions Tls(const std::string& cert = "") {
    client::ClientOptions o;
    o.tls_ca_file = File("ca.pem");
    if (!cert.empty()) {
      o.tls_cert_file = File(cert + ".pem");
      o.tls_key_file = File(cert + ".key");
    }
    return o;
  }

  static std::string* dir_;
  static int configs_;
};

std::string* DaemonTlsTest::dir_ = nullptr;
int DaemonTlsTest::configs_ = 0;

TEST_F(DaemonTlsTest, TlsServesVerifyingClientsOnly) {
  auto d = StartWith(TlsYaml(false));
  ASSERT_NE(d, nullptr);
  EXPECT_TRUE(Status(*d, Tls()).ok());
  // A plaintext client, or one that does not trust the daemon's CA, gets nowhere.
  EXPECT_EQ(Status(*d, {}).error_code(), grpc::StatusCode::UNAVAILABLE);
  client::ClientOptions wrong_ca;
  wrong_ca.tls_ca_file = File("other_ca.pem");
  EXPECT_EQ(Status(*d, wrong_ca).error_code(), grpc::StatusCode::UNAVAILABLE);
  // A name the certificate does not carry is refused too.
  client::ClientOptions wrong_name = Tls();
  wrong_name.tls_server_name = "ged.example.com";
  EXPECT_EQ(Status(*d, wrong_name).error_code(), grpc::StatusCode::UNAVAILABLE);
}

TEST_F(DaemonTlsTest, MutualTlsRequiresAClientCertificateFromItsCa) {
  auto d = StartWith(TlsYaml(true));
  ASSERT_NE(d, nullptr);
  EXPECT_TRUE(Status(*d, Tls("client")).ok());
  EXPECT_EQ(Status(*d, Tls()).error_code(), grpc::StatusCode::UNAVAILABLE);
  EXPECT_EQ(Status(*d, Tls("stranger")).error_code(), grpc::StatusCode::UNAVAILABLE);
}

TEST_F(DaemonTlsTest, ClientAndDaemonNameAnUnreadableTlsFile) {
  client::ClientOptions missing = Tls();
  missing.tls_ca_file = File("nope.pem");
  client::Client c(missing);
  v1::GetStatusResponse status;
  const grpc::Status s = c.GetStatus(&status);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(s.error_message().find("nope.pem"), std::string::npos) << s.error_message();

  const std::string path = File("bad.yaml");
  std::ofstream(path) << "tls_cert_file: " << File("nope.pem") << "\ntls_key_file: " << File("server.key") << "\n";
  const auto r = testing::RunProcess({testing::BinaryDir() + "/bin/ged", "--config", path, "--listen",
                                      "127.0.0.1:0", "--metrics-listen", "127.0.0.1:0"},
                                     30);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("nope.pem"), std::string::npos) << r.err;
}

// grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo with
// list_services, spoken as raw bytes (no reflection stubs are installed).
grpc::Status ListServices(const DaemonProcess& d, std::string* reply) {
  auto channel = grpc::CreateChannel(d.grpc_address(), grpc::InsecureChannelCredentials());
  grpc::GenericStub stub(channel);
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  grpc::CompletionQueue cq;
  auto call = stub.PrepareCall(&ctx, "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo", &cq);
  void* tag = nullptr;
  bool ok = false;
  call->StartCall(reinterpret_cast<void*>(1));
  cq.Next(&tag, &ok);
  const std::string request("\x3a\x00", 2);  // field 7 (list_services) = ""
  grpc::Slice slice(request);
  grpc::ByteBuffer out(&slice, 1);
  call->Write(out, reinterpret_cast<void*>(2));
  cq.Next(&tag, &ok);
  call->WritesDone(reinterpret_cast<void*>(3));
  cq.Next(&tag, &ok);
  grpc::ByteBuffer in;
  call->Read(&in, reinterpret_cast<void*>(4));
  cq.Next(&tag, &ok);
  if (ok) {
    std::vector<grpc::Slice> slices;
    (void)in.Dump(&slices);
    for (const auto& s : slices) reply->append(reinterpret_cast<const char*>(s.begin()), s.size());
  }
  grpc::Status status;
  call->Finish(&status, reinterpret_cast<void*>(5));
  cq.Next(&tag, &ok);
  cq.Shutdown();
  while (cq.Next(&tag, &ok)) {
  }
  return status;
}

TEST_F(DaemonTlsTest, ReflectionIsOffUnlessEnabled) {
  {
    auto d = StartWith("{}\n");
    ASSERT_NE(d, nullptr);
    std::string reply;
    EXPECT_EQ(ListServices(*d, &reply).error_code(), grpc::StatusCode::UNIMPLEMENTED);
  }
  auto d = StartWith("reflection: true\n");
  ASSERT_NE(d, nullptr);
  std::string reply;
  const grpc::Status s = ListServices(*d, &reply);
  EXPECT_TRUE(s.ok()) << s.error_message();
  EXPECT_NE(reply.find("ge.v1.GraphEngine"), std::string::npos);
}

}  // namespace
}  // namespace ge
