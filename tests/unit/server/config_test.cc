// ServerConfig: YAML keys over defaults, errors naming the key, the
// --devices form, validation rules and the --print-config round trip.
#include "server/config.h"

#include <fstream>

#include "gtest/gtest.h"

namespace ge::server {
namespace {

TEST(ConfigTest, DefaultsAreValidAndLoopback) {
  ServerConfig c = DefaultConfig();
  EXPECT_EQ(c.listen, "127.0.0.1:50051");
  EXPECT_EQ(c.metrics_listen, "127.0.0.1:9464");
  ASSERT_EQ(c.devices.size(), 1u);
  EXPECT_EQ(c.devices[0].name, "cpu:0");
  EXPECT_EQ(c.devices[0].threads, 0);
  EXPECT_FALSE(c.cache_dir.empty());
  EXPECT_TRUE(ValidateConfig(c).ok());
}

TEST(ConfigTest, YamlOverridesDefaults) {
  ServerConfig c = DefaultConfig();
  ASSERT_TRUE(ApplyYaml(R"(
listen: 127.0.0.1:6000
session_idle_timeout_seconds: 5
devices:
  - {name: cpu:0, threads: 2, workers: 1, queue_capacity: 3}
  - {name: cpu:1}
tenants:
  - {name: alice, token_sha256: 2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824, max_sessions: 2}
)", "test.yaml", c).ok());
  EXPECT_EQ(c.listen, "127.0.0.1:6000");
  EXPECT_EQ(c.session_idle_timeout_seconds, 5);
  ASSERT_EQ(c.devices.size(), 2u);
  EXPECT_EQ(c.devices[0].threads, 2);
  EXPECT_EQ(c.devices[0].queue_capacity, 3);
  EXPECT_EQ(c.devices[1].name, "cpu:1");
  ASSERT_EQ(c.tenants.size(), 1u);
  EXPECT_EQ(c.tenants[0].max_sessions, 2);
  EXPECT_TRUE(ValidateConfig(c).ok());
}

TEST(ConfigTest, UnknownKeyAndBadValueNameTheKey) {
  ServerConfig c = DefaultConfig();
  absl::Status s = ApplyYaml("listn: x\n", "my.yaml", c);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("my.yaml: unknown configuration key 'listn'"), absl::string_view::npos) << s;
  s = ApplyYaml("shutdown_timeout_seconds: soon\n", "my.yaml", c);
  EXPECT_NE(s.message().find("'shutdown_timeout_seconds'"), absl::string_view::npos) << s;
  s = ApplyYaml("devices:\n  - {name: cpu:0, cores: 2}\n", "my.yaml", c);
  EXPECT_NE(s.message().find("devices.cores"), absl::string_view::npos) << s;
}

TEST(ConfigTest, CacheKeys) {
  ServerConfig c = DefaultConfig();
  EXPECT_FALSE(c.cache_dir.empty());
  EXPECT_TRUE(c.cache_remote.empty());  // the remote tier is off by default
  ASSERT_TRUE(ApplyYaml("cache_dir: /tmp/ged-cache\ncache_max_bytes: 1024\ncache_remote: redis://10.0.0.1:6379\n",
                        "test.yaml", c).ok());
  EXPECT_EQ(c.cache_dir, "/tmp/ged-cache");
  EXPECT_EQ(c.cache_max_bytes, 1024);
  EXPECT_EQ(c.cache_remote, "redis://10.0.0.1:6379");
  // The remote tier needs the operator's key (its entries are signed).
  absl::Status no_key = ValidateConfig(c);
  EXPECT_EQ(no_key.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(no_key.message().find("cache_remote_key_file"), absl::string_view::npos) << no_key;
  const std::string key_file = ::testing::TempDir() + "/config_test_cache.key";
  std::ofstream(key_file) << "an operator key of 32 bytes ....\n";
  ASSERT_TRUE(ApplyYaml("cache_remote_key_file: " + key_file + "\n", "test.yaml", c).ok());
  EXPECT_EQ(c.cache_remote_key_file, key_file);
  EXPECT_TRUE(ValidateConfig(c).ok());
  std::ofstream(key_file) << "short";  // a key too short to be one
  EXPECT_FALSE(ValidateConfig(c).ok());
  std::ofstream(key_file) << "an operator key of 32 bytes ....\n";
  EXPECT_NE(ConfigToYaml(c).find("cache_remote: redis://10.0.0.1:6379"), std::string::npos);
  c.cache_remote = "redis://host:port";
  EXPECT_FALSE(ValidateConfig(c).ok());
  c.cache_remote.clear();
  c.cache_max_bytes = -1;
  EXPECT_FALSE(ValidateConfig(c).ok());
}

TEST(ConfigTest, DevicesFlag) {
  auto d = ParseDevicesFlag("cpu:0,cpu:1=4");
  ASSERT_TRUE(d.ok()) << d.status();
  ASSERT_EQ(d->size(), 2u);
  EXPECT_EQ((*d)[1].name, "cpu:1");
  EXPECT_EQ((*d)[1].threads, 4);
  EXPECT_FALSE(ParseDevicesFlag("cpu:0=many").ok());
  EXPECT_FALSE(ParseDevicesFlag("").ok());
}

TEST(ConfigTest, WithoutTenantsOnlyLoopback) {
  ServerConfig c = DefaultConfig();
  c.listen = "0.0.0.0:50051";
  absl::Status s = ValidateConfig(c);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("not loopback"), absl::string_view::npos) << s;
  c.tenants.push_back({"a", std::string(64, 'a'), 1, 1});
  // Tokens would cross the network in cleartext: TLS, or the operator's
  // explicit allow_insecure_transport.
  s = ValidateConfig(c);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("allow_insecure_transport"), absl::string_view::npos) << s;
  c.allow_insecure_transport = true;
  EXPECT_TRUE(ValidateConfig(c).ok());
  c.allow_insecure_transport = false;
  c.tls_cert_file = "/etc/ged/cert.pem";
  c.tls_key_file = "/etc/ged/key.pem";
  EXPECT_TRUE(ValidateConfig(c).ok());
  c.tenants[0].token_sha256 = "secret";
  EXPECT_FALSE(ValidateConfig(c).ok());
}

TEST(ConfigTest, BoundsHaveSafeDefaults) {
  const ServerConfig c = DefaultConfig();
  EXPECT_EQ(c.max_message_bytes, 268435456);
  EXPECT_EQ(c.max_tensor_bytes, 1073741824);
  EXPECT_EQ(c.max_outputs, 1024);
  EXPECT_EQ(c.max_graphs_per_session, 256);
  EXPECT_EQ(c.max_graph_nodes, 1000000);
  EXPECT_EQ(c.max_inter_op_threads, 256);
  EXPECT_EQ(c.max_loop_iterations, 10000000);
  EXPECT_EQ(c.compile_timeout_seconds, 600);
  EXPECT_FALSE(c.allow_insecure_transport);
  EXPECT_TRUE(c.unix_socket.empty());
  EXPECT_EQ(TenantConfig().max_queued_calls, 32);
  EXPECT_TRUE(ValidateConfig(c).ok());
}

TEST(ConfigTest, BoundsAreReadAndValidatedByName) {
  ServerConfig c = DefaultConfig();
  ASSERT_TRUE(ApplyYaml("max_tensor_bytes: 4096\nmax_outputs: 8\nmax_graphs_per_session: 3\n"
                        "max_graph_nodes: 100\nmax_inter_op_threads: 4\nmax_loop_iterations: 50\n"
                        "compile_timeout_seconds: 2.5\nunix_socket: /run/ged/ged.sock\n"
                        "allow_insecure_transport: true\n"
                        "tenants: [{name: a, token_sha256: " +
                            std::string(64, 'a') + ", max_queued_calls: 5}]\n",
                        "t.yaml", c)
                  .ok());
  EXPECT_EQ(c.max_tensor_bytes, 4096);
  EXPECT_EQ(c.max_outputs, 8);
  EXPECT_EQ(c.max_graphs_per_session, 3);
  EXPECT_EQ(c.max_graph_nodes, 100);
  EXPECT_EQ(c.max_inter_op_threads, 4);
  EXPECT_EQ(c.max_loop_iterations, 50);
  EXPECT_EQ(c.compile_timeout_seconds, 2.5);
  EXPECT_EQ(c.unix_socket, "/run/ged/ged.sock");
  EXPECT_TRUE(c.allow_insecure_transport);
  EXPECT_EQ(c.tenants[0].max_queued_calls, 5);
  EXPECT_TRUE(ValidateConfig(c).ok());
  ServerConfig back = DefaultConfig();
  ASSERT_TRUE(ApplyYaml(ConfigToYaml(c), "printed", back).ok());
  EXPECT_EQ(ConfigToYaml(back), ConfigToYaml(c));

  const auto refused = [](ServerConfig bad, std::string_view key) {
    absl::Status s = ValidateConfig(bad);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << key;
    EXPECT_NE(std::string(s.message()).find(key), std::string::npos) << s;
  };
  ServerConfig bad = c;
  bad.max_tensor_bytes = 0;
  refused(bad, "max_tensor_bytes");
  bad = c;
  bad.max_outputs = -1;
  refused(bad, "max_outputs");
  bad = c;
  bad.max_graphs_per_session = 0;
  refused(bad, "max_graphs_per_session");
  bad = c;
  bad.max_graph_nodes = 0;
  refused(bad, "max_graph_nodes");
  bad = c;
  bad.max_inter_op_threads = -1;
  refused(bad, "max_inter_op_threads");
  bad = c;
  bad.max_loop_iterations = 0;
  refused(bad, "max_loop_iterations");
  bad = c;
  bad.compile_timeout_seconds = 0;
  refused(bad, "compile_timeout_seconds");
  bad = c;
  bad.tenants[0].max_queued_calls = 0;
  refused(bad, "max_queued_calls");
  bad = c;
  bad.unix_socket = "relative.sock";
  refused(bad, "unix_socket");
  bad = c;
  bad.max_message_bytes = int64_t{4} << 30;
  refused(bad, "max_message_bytes");
  EXPECT_FALSE(ApplyYaml("max_outputs: many\n", "t.yaml", bad).ok());
}

TEST(ConfigTest, BadAddressesAndDevices) {
  ServerConfig c = DefaultConfig();
  c.listen = "127.0.0.1";
  EXPECT_FALSE(ValidateConfig(c).ok());
  c = DefaultConfig();
  c.metrics_listen = "127.0.0.1:99999";
  EXPECT_FALSE(ValidateConfig(c).ok());
  c = DefaultConfig();
  c.devices.push_back(c.devices[0]);
  EXPECT_NE(ValidateConfig(c).message().find("twice"), absl::string_view::npos);
  c = DefaultConfig();
  c.devices[0].name = "gpu:0";
  EXPECT_FALSE(ValidateConfig(c).ok());
}

TEST(ConfigTest, SplitHostPortHandlesIpv6AndPortZero) {
  std::string host;
  int port = -1;
  ASSERT_TRUE(SplitHostPort("[::1]:0", &host, &port).ok());
  EXPECT_EQ(host, "::1");
  EXPECT_EQ(port, 0);
  EXPECT_TRUE(IsLoopbackHost(host));
  EXPECT_FALSE(IsLoopbackHost("10.0.0.1"));
}

TEST(ConfigTest, PrintedConfigReadsBack) {
  ServerConfig c = DefaultConfig();
  c.listen = "127.0.0.1:7000";
  c.devices = {DeviceConfig{"cpu:0", 3, 2, 9}};
  c.tenants.push_back({"bob", std::string(64, 'b'), 5, 6});
  c.shared_memory = true;
  ServerConfig back = DefaultConfig();
  ASSERT_TRUE(ApplyYaml(ConfigToYaml(c), "printed", back).ok()) << ConfigToYaml(c);
  EXPECT_EQ(ConfigToYaml(back), ConfigToYaml(c));
  EXPECT_EQ(back.devices[0].queue_capacity, 9);
  EXPECT_EQ(back.tenants[0].max_concurrent_runs, 6);
  EXPECT_TRUE(back.shared_memory);
  EXPECT_FALSE(DefaultConfig().shared_memory);  // off unless enabled, as in Triton
}

TEST(ConfigTest, MemoryKeysParseValidateAndReadBack) {
  ServerConfig c = DefaultConfig();
  ASSERT_TRUE(ApplyYaml("memory_budget_bytes: 1073741824\n"
                        "tenants:\n"
                        "  - {name: a, token_sha256: " +
                            std::string(64, 'a') + ", max_memory_bytes: 8388608}\n",
                        "m.yaml", c)
                  .ok());
  EXPECT_EQ(c.memory_budget_bytes, 1073741824);
  EXPECT_EQ(c.tenants[0].max_memory_bytes, 8388608);
  EXPECT_EQ(DefaultConfig().memory_budget_bytes, 0);  // 80% of the host's limit
  ServerConfig back = DefaultConfig();
  ASSERT_TRUE(ApplyYaml(ConfigToYaml(c), "printed", back).ok());
  EXPECT_EQ(back.tenants[0].max_memory_bytes, 8388608);
  EXPECT_EQ(back.memory_budget_bytes, 1073741824);
  c.tenants[0].max_memory_bytes = -1;
  EXPECT_NE(ValidateConfig(c).message().find("max_memory_bytes"), std::string::npos);
  c.tenants[0].max_memory_bytes = 0;
  c.memory_budget_bytes = -5;
  EXPECT_NE(ValidateConfig(c).message().find("memory_budget_bytes"), std::string::npos);
}

TEST(ConfigTest, ModelRepositoryKeys) {
  ServerConfig c = DefaultConfig();
  ASSERT_TRUE(ApplyYaml("model_repository: /srv/models\nmodel_control_mode: explicit\n"
                        "load_model: [a, b]\nrepository_poll_secs: 2\nserving_max_queue_size: 10\n"
                        "tenants: [{name: ops, token_sha256: " +
                            std::string(64, 'b') + ", admin: true, models: [a]}]\n",
                        "s.yaml", c)
                  .ok());
  EXPECT_EQ(c.model_repository, "/srv/models");
  EXPECT_EQ(c.load_model, (std::vector<std::string>{"a", "b"}));
  EXPECT_TRUE(c.tenants[0].admin);
  EXPECT_EQ(c.tenants[0].models, std::vector<std::string>{"a"});
  EXPECT_TRUE(ValidateConfig(c).ok());
  ServerConfig back = DefaultConfig();
  ASSERT_TRUE(ApplyYaml(ConfigToYaml(c), "printed", back).ok()) << ConfigToYaml(c);
  EXPECT_EQ(ConfigToYaml(back), ConfigToYaml(c));
  ServerConfig bad = c;
  bad.model_control_mode = "sometimes";
  EXPECT_NE(ValidateConfig(bad).message().find("model_control_mode"), std::string::npos);
  bad = c;
  bad.model_control_mode = "none";  // load_model needs explicit
  EXPECT_NE(ValidateConfig(bad).message().find("load_model"), std::string::npos);
  bad = c;
  bad.repository_poll_secs = 0;
  EXPECT_NE(ValidateConfig(bad).message().find("repository_poll_secs"), std::string::npos);
}

TEST(ConfigTest, HttpListenDefaultsToPort8000WithARepositoryOnly) {
  ServerConfig c = DefaultConfig();
  EXPECT_EQ(EffectiveHttpListen(c), "");
  c.model_repository = "/srv/models";
  EXPECT_EQ(EffectiveHttpListen(c), "127.0.0.1:8000");
  ASSERT_TRUE(ApplyYaml("http_listen: 127.0.0.1:0\nhttp_threads: 4\nmax_json_elements: 1000\n", "h.yaml", c).ok());
  EXPECT_EQ(EffectiveHttpListen(c), "127.0.0.1:0");
  EXPECT_EQ(c.http_threads, 4);
  EXPECT_EQ(c.max_json_elements, 1000);
  EXPECT_TRUE(ValidateConfig(c).ok());
  ServerConfig back = DefaultConfig();
  ASSERT_TRUE(ApplyYaml(ConfigToYaml(c), "printed", back).ok());
  EXPECT_EQ(ConfigToYaml(back), ConfigToYaml(c));
  c.http_listen = "off";
  EXPECT_EQ(EffectiveHttpListen(c), "");
  // Without a repository, only when given.
  ServerConfig given = DefaultConfig();
  given.http_listen = "127.0.0.1:8080";
  EXPECT_EQ(EffectiveHttpListen(given), "127.0.0.1:8080");
  // Off loopback: tenants, and no TLS means allow_insecure_transport.
  ServerConfig open = DefaultConfig();
  open.http_listen = "0.0.0.0:8000";
  EXPECT_NE(ValidateConfig(open).message().find("without tenants"), std::string::npos);
  open.tenants.push_back(TenantConfig{"t", std::string(64, 'a')});
  EXPECT_NE(ValidateConfig(open).message().find("allow_insecure_transport"), std::string::npos);
  open.allow_insecure_transport = true;
  EXPECT_TRUE(ValidateConfig(open).ok()) << ValidateConfig(open);
  ServerConfig bad = DefaultConfig();
  bad.max_json_elements = 0;
  EXPECT_NE(ValidateConfig(bad).message().find("max_json_elements"), std::string::npos);
  bad = DefaultConfig();
  bad.http_listen = "nowhere";
  EXPECT_FALSE(ValidateConfig(bad).ok());
}

}  // namespace
}  // namespace ge::server
