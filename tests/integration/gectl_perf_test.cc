// gectl perf against a real ged serving a Triton-layout repository over
// KServe v2 gRPC: concurrency and request-rate rows with their JSON, the
// batch size and --shape for models that batch or have dynamic dims, and
// the errors a user can make (each exits 1 with one line naming it).
#include <algorithm>
#include <filesystem>
#include <fstream>

#include "gtest/gtest.h"
#include "onnx/onnx_pb.h"
#include "tests/integration/daemon_process.h"
#include "tests/integration/process.h"
#include "tests/testing/onnx_builder.h"
#include "yaml-cpp/yaml.h"

namespace ge {
namespace {

namespace fs = std::filesystem;

// X f32[batch, width] -> Relu -> Y; width -1 makes the second dim dynamic.
onnx::ModelProto ReluModel(int64_t width) {
  return onnx_builder::UnaryModel("Relu", "relu", {-1, width > 0 ? width : -1}, {"batch", "width"});
}

class GectlPerfTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new std::string(testing::MakeTempDir("gectl-perf"));
    const fs::path repo = fs::path(*dir_) / "repo";
    const auto add = [&repo](const std::string& name, int64_t width, const std::string& config) {
      fs::create_directories(repo / name / "1");
      std::ofstream(repo / name / "1" / "model.onnx", std::ios::binary) << ReluModel(width).SerializeAsString();
      std::ofstream(repo / name / "config.pbtxt") << "name: \"" << name << "\"\n" << config;
    };
    add("relu_batched", 4, "max_batch_size: 8\ndynamic_batching { max_queue_delay_microseconds: 1000 }\n");
    add("relu_wide", -1, "max_batch_size: 4\n");
    daemon_ = testing::DaemonProcess::Start({"--model-repository", repo.string()}).release();
  }
  static void TearDownTestSuite() {
    delete daemon_;
    fs::remove_all(*dir_);
    delete dir_;
  }

  // With -u the daemon's gRPC address unless `args` gives its own.
  static testing::ProcessResult Perf(std::vector<std::string> args) {
    if (std::find(args.begin(), args.end(), "-u") == args.end()) {
      args.insert(args.begin(), {"-u", daemon_->grpc_address()});
    }
    args.insert(args.begin(), {testing::BinaryDir() + "/bin/gectl", "perf"});
    return testing::RunProcess(args, 120);
  }
  static std::string Path(const std::string& name) { return (fs::path(*dir_) / name).string(); }
  static void ExpectUserError(const testing::ProcessResult& r, const std::string& needle) {
    EXPECT_EQ(r.signal, 0) << r.err;
    EXPECT_EQ(r.exit_code, 1) << r.err;
    EXPECT_NE(r.err.find(needle), std::string::npos) << "stderr lacks '" << needle << "': " << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  }

  static std::string* dir_;
  static testing::DaemonProcess* daemon_;
};

std::string* GectlPerfTest::dir_ = nullptr;
testing::DaemonProcess* GectlPerfTest::daemon_ = nullptr;

TEST_F(GectlPerfTest, ConcurrencyRowsAndTheirJson) {
  ASSERT_NE(daemon_, nullptr);
  auto r = Perf(
      {"-m", "relu_batched", "--concurrency-range", "1:3:2", "-p", "200", "-r", "4", "-b", "2", "-f", Path("c.json")});
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  EXPECT_NE(r.out.find("over grpc, batch 2"), std::string::npos) << r.out;
  YAML::Node json = YAML::LoadFile(Path("c.json"));
  EXPECT_EQ(json["model"].as<std::string>(), "relu_batched");
  EXPECT_EQ(json["mode"].as<std::string>(), "concurrency");
  EXPECT_EQ(json["batch_size"].as<int>(), 2);
  ASSERT_EQ(json["rows"].size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    const YAML::Node row = json["rows"][i];
    EXPECT_EQ(row["concurrency"].as<int>(), i == 0 ? 1 : 3);
    EXPECT_GT(row["requests"].as<int64_t>(), 0);
    EXPECT_EQ(row["errors"].as<int64_t>(), 0);
    EXPECT_GT(row["throughput_infer_per_sec"].as<double>(), 0);
    EXPECT_LE(row["p50_us"].as<double>(), row["p99_us"].as<double>());
    EXPECT_GE(row["windows"].as<int>(), 1);
    EXPECT_LE(row["windows"].as<int>(), 4);
    // ged's ModelStatistics over the level: every window's rows, of which
    // the merged windows' requests are a part.
    const YAML::Node server = row["server"];
    ASSERT_TRUE(server.IsMap()) << r.out;
    EXPECT_GE(server["inference_count"].as<int64_t>(), 2 * row["requests"].as<int64_t>());
    EXPECT_GE(server["execution_count"].as<int64_t>(), 1);
    EXPECT_LE(server["execution_count"].as<int64_t>(), server["inference_count"].as<int64_t>() / 2);
    EXPECT_GT(server["compute_infer_us_per_batch"].as<double>(), 0);
  }
  EXPECT_NE(r.out.find("server: "), std::string::npos) << r.out;
}

TEST_F(GectlPerfTest, OverHttpWithTheBinaryDataExtension) {
  ASSERT_NE(daemon_, nullptr);
  ASSERT_FALSE(daemon_->http_address().empty());
  auto r = Perf({"-i", "http", "-u", daemon_->http_address(), "-m", "relu_batched", "-b", "2", "--concurrency-range",
                 "2", "-p", "200", "-r", "3", "-f", Path("h.json")});
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  EXPECT_NE(r.out.find("over http, batch 2"), std::string::npos) << r.out;
  YAML::Node json = YAML::LoadFile(Path("h.json"));
  EXPECT_EQ(json["protocol"].as<std::string>(), "http");
  ASSERT_EQ(json["rows"].size(), 1u);
  const YAML::Node row = json["rows"][0];
  EXPECT_GT(row["requests"].as<int64_t>(), 0);
  EXPECT_EQ(row["errors"].as<int64_t>(), 0);
  ASSERT_TRUE(row["server"].IsMap()) << r.out;  // GET .../stats
  EXPECT_GE(row["server"]["inference_count"].as<int64_t>(), 2 * row["requests"].as<int64_t>());
  // HTTP errors keep their KServe meaning: 404 is NOT_FOUND, exit code 1.
  ExpectUserError(Perf({"-i", "http", "-u", daemon_->http_address(), "-m", "nosuch"}), "nosuch");
  ExpectUserError(Perf({"-i", "http", "-u", daemon_->http_address(), "-m", "relu_batched", "--tls-ca", "x.pem"}),
                  "TLS flags apply to -i grpc only");
}

TEST_F(GectlPerfTest, RequestRateRows) {
  ASSERT_NE(daemon_, nullptr);
  auto r = Perf({"--model-name", "relu_batched", "--request-rate-range", "20:40:20", "-p", "300", "-r", "3", "-f",
                 Path("r.json")});
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  YAML::Node json = YAML::LoadFile(Path("r.json"));
  EXPECT_EQ(json["mode"].as<std::string>(), "request_rate");
  ASSERT_EQ(json["rows"].size(), 2u);
  EXPECT_DOUBLE_EQ(json["rows"][1]["request_rate"].as<double>(), 40);
  for (const YAML::Node& row : json["rows"]) {
    EXPECT_GT(row["requests"].as<int64_t>(), 0);
    EXPECT_EQ(row["errors"].as<int64_t>(), 0);
    // Never more than the schedule allows over the merged windows (+1 each).
    EXPECT_LE(row["requests"].as<double>(), row["request_rate"].as<double>() * row["seconds"].as<double>() + 3);
  }
}

TEST_F(GectlPerfTest, DynamicDimsComeFromShape) {
  ASSERT_NE(daemon_, nullptr);
  auto r = Perf({"-m", "relu_wide", "--shape", "X:6", "-b", "3", "-p", "200", "-r", "3"});
  EXPECT_EQ(r.exit_code, 0) << r.err << r.out;
  ExpectUserError(Perf({"-m", "relu_wide", "-p", "200"}), "--shape X");
  ExpectUserError(Perf({"-m", "relu_wide", "--shape", "X:6,2", "-p", "200"}), "has 2 dims");
  ExpectUserError(Perf({"-m", "relu_wide", "--shape", "Z:6", "-p", "200"}), "not an input");
}

TEST_F(GectlPerfTest, UserErrorsExitOneNamingTheCause) {
  ASSERT_NE(daemon_, nullptr);
  ExpectUserError(Perf({"-m", "nosuch"}), "nosuch");
  ExpectUserError(Perf({"-m", "relu_batched", "-b", "9"}), "max_batch_size 8");
  ExpectUserError(Perf({"-m", "relu_batched", "-i", "ftp"}), "neither grpc nor http");
  ExpectUserError(Perf({"-m", "relu_batched", "--concurrency-range", "4:2"}), "below the start");
  ExpectUserError(Perf({"-m", "relu_batched", "--concurrency-range", "1", "--request-rate-range", "5"}), "not both");
  // No server there: UNAVAILABLE, exit code 2 as for every daemon command.
  auto r = Perf({"-m", "relu_batched", "-i", "http", "-u", "127.0.0.1:1"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("cannot connect to 127.0.0.1:1"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace ge
