// Adversary: a hostile tenant for ged_load's mixed runs (the tenant-isolation
// issue's load figure, docs/reliability.md "Load with adversaries").
//
// An adversary loops until its deadline, each time drawing one attack from a
// fixed catalogue with a seeded PRNG: file-system reach (FileConstant by
// path, by location under a client-set _model_dir, path-naming options),
// size and count bounds (two billion outputs, overflowing dims, a tensor or
// a graph beyond the tenant's memory quota, thousands of inter-op threads,
// graphs beyond the per-session cap), malformed graphs (a dim of -5), a
// hostile LoadModel, sessions of other tenants by guessed ids, calls with no
// or a wrong token, a flood of queued runs, and the graph_key hijack (its
// own graph compiled under the key the regular tenant uses). Each attack
// names the codes the contract of docs/security.md allows for it; any other
// code — above all OK where a refusal is due — is a surprise, and any byte
// window of the canary secret in a reply or an error message is a leak.
// The hijack is answered only if the adversary gets its own model back
// (cache_hit false and its own result); the regular clients' closed-form
// checks catch the reverse direction.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "client/cpp/client.h"

namespace ge::load {

struct AdversaryOptions {
  std::string address;
  std::string token;             // the hostile tenant's own token
  std::string canary_path;       // a file the daemon can read and nobody may see
  std::string canary_secret;     // its contents (the leak scan looks for them)
  std::string victim_graph_key;  // the regular tenant's ge.graph_key ("" skips the hijack)
  uint64_t seed = 1;
};

struct AdversaryStats {
  // attack -> code name -> count.
  std::map<std::string, std::map<std::string, int64_t>> outcomes;
  int64_t surprises = 0;             // a code outside the attack's allowed set
  int64_t leaks = 0;                 // canary bytes in a reply or an error message
  std::vector<std::string> samples;  // the first few surprises and leaks, described

  void Merge(const AdversaryStats& o);
};

class Adversary {
 public:
  explicit Adversary(AdversaryOptions options);
  ~Adversary();

  void Run(std::chrono::steady_clock::time_point end);
  const AdversaryStats& stats() const { return stats_; }
  // The number of attacks in the catalogue.
  static size_t CatalogueSize();

 private:
  struct Outcome;
  Outcome Attack(size_t kind);
  void Record(const std::string& attack, const Outcome& outcome);

  AdversaryOptions options_;
  std::mt19937_64 rng_;
  std::unique_ptr<client::Client> client_;
  std::unique_ptr<client::Client> anonymous_;  // no token
  std::unique_ptr<client::Client> wrong_token_;
  AdversaryStats stats_;
};

}  // namespace ge::load
