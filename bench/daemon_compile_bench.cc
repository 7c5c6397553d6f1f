// daemon_compile_bench: what a client waits for to have a model compiled by
// a running ged: the client library's AddOnnxFile (reading the file, then
// the model's digest first and its bytes only when the daemon asks) then
// CompileGraph, timed from the client, in a fresh session per round. With
// the daemon's cache warm, each round is a direct-mode hit (docs/perf.md,
// "Cache direct mode"); the first round of an empty cache is the cold
// compile. `--bytes` sends the bytes every time (the path before digests).
// Prints one line per round and the median.
// Usage: daemon_compile_bench HOST:PORT MODEL.onnx [ROUNDS, default 5] [--bytes]
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include "client/cpp/client.h"

namespace {

double Since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::cerr << "usage: daemon_compile_bench HOST:PORT MODEL.onnx [ROUNDS]" << std::endl;
    return 2;
  }
  const int rounds = argc > 3 ? std::max(1, std::atoi(argv[3])) : 5;
  const bool bytes_only = argc > 4 && std::string(argv[4]) == "--bytes";
  ge::client::ClientOptions options;
  options.address = argv[1];
  options.max_retries = 1;
  if (bytes_only) options.digest_first_bytes = 0;
  ge::client::Client client(options);
  std::vector<double> totals;
  for (int i = 0; i < rounds; ++i) {
    std::string session;
    grpc::Status s = client.CreateSession({}, &session);
    if (!s.ok()) {
      std::cerr << "CreateSession: " << s.error_message() << std::endl;
      return 1;
    }
    const auto start = std::chrono::steady_clock::now();
    ge::v1::AddGraphResponse added;
    s = client.AddOnnxFile(session, 1, argv[2], {}, &added);
    const double add_seconds = Since(start);
    ge::v1::CompileGraphResponse compiled;
    if (s.ok()) s = client.CompileGraph(session, 1, &compiled);
    const double total = Since(start);
    if (!s.ok()) {
      std::cerr << "AddGraph/CompileGraph: " << s.error_message() << std::endl;
      return 1;
    }
    totals.push_back(total);
    std::cout << "round " << i << ": AddGraph " << add_seconds << " s, CompileGraph " << total - add_seconds
              << " s, total " << total << " s, cache " << (compiled.cache_hit() ? "hit" : "miss") << std::endl;
    (void)client.DestroySession(session);
  }
  std::sort(totals.begin(), totals.end());
  std::cout << "median total " << totals[totals.size() / 2] << " s over " << rounds << " rounds" << std::endl;
  return 0;
}
