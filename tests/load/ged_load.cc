// ged_load: drives a running daemon with N concurrent clients for a given
// time and reports throughput, error counts and latency percentiles (the
// Reliability issue's load tool; Triton's perf_analyzer is the model).
//
// Every client loops over one "life": CreateSession, AddGraph (a small
// MatMul + Add + Relu graph, so runs do real work), CompileGraph, a few
// RunGraph calls, DestroySession. With --mix, a client may instead stop
// before DestroySession and leave the session to a later life, or run
// against a session it already has; the mix is drawn from a seeded PRNG, so
// a run is repeatable. Replies are checked: a RunGraph output must equal
// relu(x W + b) for the input sent.
//
// --mode runs measures round trips instead: each client makes one session
// and calls RunGraph back to back, on the built-in graph (--graph mlp or
// tiny, a Relu of f32[1,16]) or an ONNX model (--model FILE, random float
// inputs made once). bench/daemon_bench.sh uses it.
//
// --adversaries K makes K more clients a hostile tenant (--adversary-token)
// that sends the attacks of adversary.h at random, reading at the canary
// file (--canary); --graph-key gives the regular clients' graphs a
// ge.graph_key for the adversary to hijack. The regular clients then count
// a RESOURCE_EXHAUSTED as unexpected too: another tenant must never fill
// their queue (the tenant-isolation issue's load figure).
//
// Output: one JSON object on stdout (per-RPC counts, errors by code,
// latency percentiles in ms, calls per second; with adversaries, their
// attacks by outcome, surprises and leaks), plus a progress line on
// stderr every --progress seconds. Exit 0 when no unexpected error happened
// (RESOURCE_EXHAUSTED from a full run queue is back-pressure, counted but
// expected without adversaries) and no attack surprised or leaked, 1
// otherwise.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <mutex>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/types/span.h"
#include "base/ir/proto_convert.h"
#include "base/ir/graph.h"
#include "base/status.h"
#include "client/cpp/client.h"
#include "proto/value_convert.h"
#include "tests/load/adversary.h"

namespace ge::load {
namespace {

constexpr int kDim = 64;

using Clock = std::chrono::steady_clock;

// y = relu(x W + b) with W = 1/64 everywhere and b = 0.5: y[i][j] =
// relu(mean of row i of x + 0.5). Weights are Const nodes built through
// the IR (the text form has no tensor literals).
absl::StatusOr<v1::GraphDef> LoadGraph() {
  ir::Graph graph("load");
  const ir::ValueType act = ir::ValueType::Tensor(DataType::kFloat, Shape{-1, kDim});
  const ir::ValueType wt = ir::ValueType::Tensor(DataType::kFloat, Shape{kDim, kDim});
  const ir::ValueType bt = ir::ValueType::Tensor(DataType::kFloat, Shape{kDim});
  const auto node = [&](const char* name, const char* type, std::vector<ir::ValueType> in,
                        std::vector<ir::ValueType> out) -> absl::StatusOr<ir::Node*> {
    ir::OpDesc op(name, type);
    for (auto& t : in) op.AddInput({"", t});
    for (auto& t : out) op.AddOutput({"", t});
    return graph.AddNode(std::move(op));
  };
  GE_ASSIGN_OR_RETURN(ir::Node * x, node("x", "Data", {}, {act}));
  x->mutable_op_desc().SetAttr("index", int64_t{0});
  GE_ASSIGN_OR_RETURN(ir::Node * w, node("w", "Const", {}, {wt}));
  w->mutable_op_desc().SetAttr("value", Tensor::FromVector<float>(std::vector<float>(kDim * kDim, 1.0f / kDim),
                                                                   Shape{kDim, kDim}));
  GE_ASSIGN_OR_RETURN(ir::Node * b, node("b", "Const", {}, {bt}));
  b->mutable_op_desc().SetAttr("value", Tensor::FromVector<float>(std::vector<float>(kDim, 0.5f), Shape{kDim}));
  GE_ASSIGN_OR_RETURN(ir::Node * mm, node("mm", "MatMul", {act, wt}, {act}));
  GE_ASSIGN_OR_RETURN(ir::Node * add, node("add", "Add", {act, bt}, {act}));
  GE_ASSIGN_OR_RETURN(ir::Node * relu, node("relu", "Relu", {act}, {act}));
  GE_ASSIGN_OR_RETURN(ir::Node * out, node("out", "NetOutput", {act}, {}));
  GE_RETURN_IF_ERROR(graph.AddEdge(x, 0, mm, 0));
  GE_RETURN_IF_ERROR(graph.AddEdge(w, 0, mm, 1));
  GE_RETURN_IF_ERROR(graph.AddEdge(mm, 0, add, 0));
  GE_RETURN_IF_ERROR(graph.AddEdge(b, 0, add, 1));
  GE_RETURN_IF_ERROR(graph.AddEdge(add, 0, relu, 0));
  GE_RETURN_IF_ERROR(graph.AddEdge(relu, 0, out, 0));
  v1::GraphDef def;
  GE_RETURN_IF_ERROR(ir::GraphToProto(graph, &def));
  return def;
}

struct Flags {
  std::string address;
  std::string token;
  int clients = 8;
  double duration = 10;
  double progress = 5;
  int runs_per_session = 8;
  int batch = 4;
  bool mix = true;
  uint64_t seed = 1;
  std::string mode = "lives";  // lives | runs
  std::string graph = "mlp";   // mlp | tiny (built in)
  std::string model;           // an .onnx file instead of the built-in graph
  std::string graph_key;       // ge.graph_key of the regular clients' graph
  int adversaries = 0;         // hostile clients, besides --clients
  std::string adversary_token;
  std::string canary;  // a file the adversaries try to read
};

// The request that adds the graph under test.
struct Workload {
  v1::AddGraphRequest add;  // session_id filled per session
  bool check_outputs = false;  // the mlp's closed form
};

// x: f32[1,16] -> Relu -> y: the smallest useful round trip.
absl::StatusOr<v1::GraphDef> TinyGraph() {
  ir::Graph graph("tiny");
  const ir::ValueType t = ir::ValueType::Tensor(DataType::kFloat, Shape{1, 16});
  ir::OpDesc data("x", "Data");
  data.AddOutput({"", t});
  data.SetAttr("index", int64_t{0});
  GE_ASSIGN_OR_RETURN(ir::Node * x, graph.AddNode(std::move(data)));
  ir::OpDesc relu("relu", "Relu");
  relu.AddInput({"", t});
  relu.AddOutput({"", t});
  GE_ASSIGN_OR_RETURN(ir::Node * r, graph.AddNode(std::move(relu)));
  ir::OpDesc net("out", "NetOutput");
  net.AddInput({"", t});
  GE_ASSIGN_OR_RETURN(ir::Node * out, graph.AddNode(std::move(net)));
  GE_RETURN_IF_ERROR(graph.AddEdge(x, 0, r, 0));
  GE_RETURN_IF_ERROR(graph.AddEdge(r, 0, out, 0));
  v1::GraphDef def;
  GE_RETURN_IF_ERROR(ir::GraphToProto(graph, &def));
  return def;
}

// Per-RPC latencies and error codes, merged from every client at the end.
struct Stats {
  std::map<std::string, std::vector<double>> latency_ms;       // ok calls
  std::map<std::string, std::map<std::string, int64_t>> errors;  // rpc -> code name -> count
  int64_t wrong_outputs = 0;

  void Merge(const Stats& o) {
    for (const auto& [rpc, v] : o.latency_ms) latency_ms[rpc].insert(latency_ms[rpc].end(), v.begin(), v.end());
    for (const auto& [rpc, codes] : o.errors) {
      for (const auto& [code, n] : codes) errors[rpc][code] += n;
    }
    wrong_outputs += o.wrong_outputs;
  }
};

const char* CodeName(grpc::StatusCode code) {
  switch (code) {
    case grpc::StatusCode::OK: return "OK";
    case grpc::StatusCode::CANCELLED: return "CANCELLED";
    case grpc::StatusCode::INVALID_ARGUMENT: return "INVALID_ARGUMENT";
    case grpc::StatusCode::DEADLINE_EXCEEDED: return "DEADLINE_EXCEEDED";
    case grpc::StatusCode::NOT_FOUND: return "NOT_FOUND";
    case grpc::StatusCode::ALREADY_EXISTS: return "ALREADY_EXISTS";
    case grpc::StatusCode::PERMISSION_DENIED: return "PERMISSION_DENIED";
    case grpc::StatusCode::RESOURCE_EXHAUSTED: return "RESOURCE_EXHAUSTED";
    case grpc::StatusCode::FAILED_PRECONDITION: return "FAILED_PRECONDITION";
    case grpc::StatusCode::UNAVAILABLE: return "UNAVAILABLE";
    case grpc::StatusCode::INTERNAL: return "INTERNAL";
    case grpc::StatusCode::UNIMPLEMENTED: return "UNIMPLEMENTED";
    default: return "OTHER";
  }
}

class LoadClient {
 public:
  LoadClient(const Flags& flags, const Workload& work, int index, std::atomic<int64_t>* calls)
      : flags_(flags), work_(work), rng_(flags.seed * 1000003 + index), calls_(calls) {
    client::ClientOptions options;
    options.address = flags.address;
    options.token = flags.token;
    options.max_retries = 0;
    client_ = std::make_unique<client::Client>(options);
  }

  void Run(Clock::time_point end) {
    if (flags_.mode == "runs") {
      // One session, then RunGraph back to back: round-trip latency.
      std::string session;
      if (!NewSession(&session)) return;
      while (Clock::now() < end) RunOnce(session);
      Timed("DestroySession", [&] { return client_->DestroySession(session); });
      return;
    }
    while (Clock::now() < end) Life(end);
    for (const std::string& s : kept_) Timed("DestroySession", [&] { return client_->DestroySession(s); });
  }

  Stats& stats() { return stats_; }

 private:
  template <typename F>
  grpc::Status Timed(const std::string& rpc, F call) {
    const auto start = Clock::now();
    grpc::Status s = call();
    const double ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
    calls_->fetch_add(1);
    if (s.ok()) {
      stats_.latency_ms[rpc].push_back(ms);
    } else {
      stats_.errors[rpc][CodeName(s.error_code())] += 1;
    }
    return s;
  }

  void Life(Clock::time_point end) {
    std::string session;
    // With --mix, reuse a kept session a third of the time.
    if (flags_.mix && !kept_.empty() && rng_() % 3 == 0) {
      session = kept_.back();
      kept_.pop_back();
    } else if (!NewSession(&session)) {
      return;
    }
    const int runs = 1 + static_cast<int>(rng_() % (2 * flags_.runs_per_session));
    for (int i = 0; i < runs && Clock::now() < end; ++i) RunOnce(session);
    if (flags_.mix && rng_() % 4 == 0 && kept_.size() < 4) {
      kept_.push_back(session);  // left for a later life
    } else {
      Timed("DestroySession", [&] { return client_->DestroySession(session); });
    }
  }

  // CreateSession, AddGraph, CompileGraph; false when one failed (the
  // session, if made, is destroyed). Remembers the graph's input types.
  bool NewSession(std::string* session) {
    if (!Timed("CreateSession", [&] { return client_->CreateSession({}, session); }).ok()) return false;
    v1::AddGraphRequest add = work_.add;
    add.set_session_id(*session);
    v1::AddGraphResponse added;
    v1::CompileGraphResponse compiled;
    if (!Timed("AddGraph", [&] { return client_->AddGraph(add, &added); }).ok() ||
        !Timed("CompileGraph", [&] { return client_->CompileGraph(*session, 1, &compiled); }).ok()) {
      Timed("DestroySession", [&] { return client_->DestroySession(*session); });
      return false;
    }
    inputs_.assign(compiled.inputs().begin(), compiled.inputs().end());
    return true;
  }

  void RunOnce(const std::string& session) {
    v1::RunGraphRequest request;
    request.set_session_id(session);
    request.set_graph_id(1);
    std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
    std::vector<float> x;
    int64_t rows = 1;
    if (work_.check_outputs) {
      rows = 1 + static_cast<int64_t>(rng_() % flags_.batch);
      x.resize(static_cast<size_t>(rows * kDim));
      for (float& v : x) v = dist(rng_);
      if (!rpc::ValueToProto(Value(Tensor::FromVector<float>(x, Shape{rows, kDim})), request.add_inputs()).ok()) return;
    } else {
      // Random float inputs of the compiled types, unknown dims as 1 (made
      // once per client: the round trip is what is measured).
      if (fixed_inputs_.empty()) {
        for (const v1::GraphIoInfo& io : inputs_) {
          std::vector<int64_t> dims;
          int64_t n = 1;
          for (int64_t d : io.type().tensor().shape().dims()) {
            dims.push_back(d > 0 ? d : 1);
            n *= dims.back();
          }
          std::vector<float> data(static_cast<size_t>(n));
          for (float& v : data) v = dist(rng_);
          v1::Value value;
          if (!rpc::ValueToProto(Value(Tensor::FromVector<float>(data, Shape(absl::MakeConstSpan(dims)))), &value).ok()) {
            return;
          }
          fixed_inputs_.push_back(std::move(value));
        }
      }
      for (const v1::Value& v : fixed_inputs_) *request.add_inputs() = v;
    }
    v1::RunGraphResponse response;
    if (!Timed("RunGraph", [&] { return client_->RunGraph(request, &response); }).ok()) return;
    if (work_.check_outputs ? !Check(x, rows, response) : response.outputs_size() == 0) stats_.wrong_outputs += 1;
  }

  static bool Check(const std::vector<float>& x, int64_t rows, const v1::RunGraphResponse& response) {
    if (response.outputs_size() != 1) return false;
    const v1::Tensor& t = response.outputs(0).tensor();
    if (t.dims_size() != 2 || t.dims(0) != rows || t.dims(1) != kDim) return false;
    if (t.raw_data().size() != static_cast<size_t>(rows * kDim) * sizeof(float)) return false;
    const float* y = reinterpret_cast<const float*>(t.raw_data().data());
    for (int64_t i = 0; i < rows; ++i) {
      double mean = 0;
      for (int j = 0; j < kDim; ++j) mean += x[static_cast<size_t>(i * kDim + j)];
      const double want = std::max(0.0, mean / kDim + 0.5);
      for (int j = 0; j < kDim; ++j) {
        if (std::abs(y[i * kDim + j] - want) > 1e-4) return false;
      }
    }
    return true;
  }

  const Flags& flags_;
  const Workload& work_;
  std::vector<v1::GraphIoInfo> inputs_;
  std::vector<v1::Value> fixed_inputs_;
  std::mt19937_64 rng_;
  std::atomic<int64_t>* calls_;
  std::unique_ptr<client::Client> client_;
  std::vector<std::string> kept_;
  Stats stats_;
};

double Percentile(std::vector<double>& v, double p) {
  if (v.empty()) return 0;
  const size_t k = std::min(v.size() - 1, static_cast<size_t>(std::ceil(p / 100.0 * v.size())) - (p > 0 ? 1 : 0));
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(k), v.end());
  return v[k];
}

int Main(int argc, char** argv) {
  Flags flags;
  CLI::App app{"ged_load: drive a ged daemon with concurrent clients and report throughput and latency"};
  app.add_option("--address", flags.address, "Daemon address (default $GED_ADDRESS, else 127.0.0.1:50051)");
  app.add_option("--token", flags.token, "Bearer token");
  app.add_option("--clients", flags.clients, "Concurrent clients (threads, one channel each)")->check(CLI::Range(1, 1024));
  app.add_option("--duration", flags.duration, "Seconds to run")->check(CLI::PositiveNumber);
  app.add_option("--progress", flags.progress, "Seconds between progress lines on stderr (0: none)");
  app.add_option("--runs-per-session", flags.runs_per_session, "Mean RunGraph calls per session life")
      ->check(CLI::Range(1, 10000));
  app.add_option("--batch", flags.batch, "Largest batch (rows) of a run")->check(CLI::Range(1, 4096));
  app.add_flag("!--no-mix", flags.mix, "Every life creates and destroys its own session");
  app.add_option("--seed", flags.seed, "PRNG seed");
  app.add_option("--mode", flags.mode, "lives: session lifecycles with runs; runs: one session per client, RunGraph only")
      ->check(CLI::IsMember({"lives", "runs"}));
  app.add_option("--graph", flags.graph, "Built-in graph: mlp (64-wide MatMul+Add+Relu, outputs checked) or tiny (Relu of f32[1,16])")
      ->check(CLI::IsMember({"mlp", "tiny"}));
  app.add_option("--model", flags.model, "An .onnx model instead of the built-in graph (float inputs, unknown dims as 1)");
  app.add_option("--graph-key", flags.graph_key, "ge.graph_key of the regular clients' graph");
  app.add_option("--adversaries", flags.adversaries, "Hostile clients besides --clients (another tenant)")
      ->check(CLI::Range(0, 1024));
  app.add_option("--adversary-token", flags.adversary_token, "The hostile tenant's bearer token");
  app.add_option("--canary", flags.canary, "A file the adversaries try to read (its bytes must never come back)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  if (flags.address.empty()) flags.address = client::DefaultAddress();
  std::string canary_secret;
  if (flags.adversaries > 0) {
    std::ifstream in(flags.canary, std::ios::binary);
    std::ostringstream bytes;
    bytes << in.rdbuf();
    canary_secret = bytes.str();
    if (flags.adversary_token.empty() || canary_secret.size() < 8) {
      std::fprintf(stderr, "ged_load: --adversaries needs --adversary-token and a --canary file of 8 bytes or more\n");
      return 2;
    }
  }
  Workload work;
  work.add.set_graph_id(1);
  if (!flags.graph_key.empty()) (*work.add.mutable_options()->mutable_entries())["ge.graph_key"] = flags.graph_key;
  if (!flags.model.empty()) {
    std::ifstream in(flags.model, std::ios::binary);
    std::ostringstream bytes;
    bytes << in.rdbuf();
    if (!in || bytes.str().empty()) {
      std::fprintf(stderr, "ged_load: cannot read %s\n", flags.model.c_str());
      return 2;
    }
    work.add.set_onnx_model(bytes.str());
  } else {
    absl::StatusOr<v1::GraphDef> graph = flags.graph == "tiny" ? TinyGraph() : LoadGraph();
    if (!graph.ok()) {
      std::fprintf(stderr, "ged_load: %s\n", std::string(graph.status().message()).c_str());
      return 2;
    }
    *work.add.mutable_graph_def() = *std::move(graph);
    work.check_outputs = flags.graph == "mlp";
  }

  std::atomic<int64_t> calls{0};
  std::vector<std::unique_ptr<LoadClient>> clients;
  for (int i = 0; i < flags.clients; ++i) clients.push_back(std::make_unique<LoadClient>(flags, work, i, &calls));
  const auto start = Clock::now();
  const auto end = start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(flags.duration));
  std::vector<std::unique_ptr<Adversary>> adversaries;
  for (int i = 0; i < flags.adversaries; ++i) {
    AdversaryOptions o;
    o.address = flags.address;
    o.token = flags.adversary_token;
    o.canary_path = flags.canary;
    o.canary_secret = canary_secret;
    o.victim_graph_key = flags.graph_key;
    o.seed = flags.seed * 7919 + static_cast<uint64_t>(i);
    adversaries.push_back(std::make_unique<Adversary>(std::move(o)));
  }
  std::vector<std::thread> threads;
  for (auto& c : clients) threads.emplace_back([&c, end] { c->Run(end); });
  for (auto& a : adversaries) threads.emplace_back([&a, end] { a->Run(end); });
  if (flags.progress > 0) {
    auto next = start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(flags.progress));
    while (next < end) {
      std::this_thread::sleep_until(next);
      const double t = std::chrono::duration<double>(Clock::now() - start).count();
      std::fprintf(stderr, "ged_load: %.0f s, %lld calls\n", t, static_cast<long long>(calls.load()));
      next += std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(flags.progress));
    }
  }
  for (auto& t : threads) t.join();
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();

  Stats all;
  for (auto& c : clients) all.Merge(c->stats());
  int64_t unexpected = all.wrong_outputs;
  std::string json = "{\"clients\": " + std::to_string(flags.clients) + ", \"seconds\": " + std::to_string(seconds) +
                     ", \"calls\": " + std::to_string(calls.load()) +
                     ", \"calls_per_second\": " + std::to_string(calls.load() / seconds) + ", \"rpcs\": {";
  bool first = true;
  for (auto& [rpc, v] : all.latency_ms) {
    json += std::string(first ? "" : ", ") + "\"" + rpc + "\": {\"ok\": " + std::to_string(v.size());
    json += ", \"p50_ms\": " + std::to_string(Percentile(v, 50)) + ", \"p90_ms\": " + std::to_string(Percentile(v, 90)) +
            ", \"p99_ms\": " + std::to_string(Percentile(v, 99)) + ", \"max_ms\": " + std::to_string(Percentile(v, 100)) +
            "}";
    first = false;
  }
  json += "}, \"errors\": {";
  first = true;
  for (const auto& [rpc, codes] : all.errors) {
    for (const auto& [code, n] : codes) {
      json += std::string(first ? "" : ", ") + "\"" + rpc + " " + code + "\": " + std::to_string(n);
      if (code != "RESOURCE_EXHAUSTED" || flags.adversaries > 0) unexpected += n;
      first = false;
    }
  }
  json += "}, \"wrong_outputs\": " + std::to_string(all.wrong_outputs) +
          ", \"unexpected_errors\": " + std::to_string(unexpected);
  AdversaryStats hostile;
  for (auto& a : adversaries) hostile.Merge(a->stats());
  if (!adversaries.empty()) {
    json += ", \"adversaries\": " + std::to_string(adversaries.size()) + ", \"attacks\": {";
    first = true;
    int64_t attacks = 0;
    for (const auto& [attack, codes] : hostile.outcomes) {
      json += std::string(first ? "" : ", ") + "\"" + attack + "\": {";
      bool first_code = true;
      for (const auto& [code, n] : codes) {
        json += std::string(first_code ? "" : ", ") + "\"" + code + "\": " + std::to_string(n);
        attacks += n;
        first_code = false;
      }
      json += "}";
      first = false;
    }
    json += "}, \"attacks_total\": " + std::to_string(attacks) +
            ", \"surprises\": " + std::to_string(hostile.surprises) + ", \"leaks\": " + std::to_string(hostile.leaks);
    for (const std::string& sample : hostile.samples) std::fprintf(stderr, "ged_load: adversary: %s\n", sample.c_str());
  }
  json += "}";
  std::printf("%s\n", json.c_str());
  return unexpected == 0 && hostile.surprises == 0 && hostile.leaks == 0 ? 0 : 1;
}

}  // namespace
}  // namespace ge::load

int main(int argc, char** argv) { return ge::load::Main(argc, argv); }
