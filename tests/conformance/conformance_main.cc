// onnx_conformance: runs every ONNX backend `node` and `simple` test through
// ged's whole path (import -> compile with the default engine placement ->
// execute) and compares with the suite's reference outputs.
//
// Prints "FAIL <test>: <reason>" per failing test and a closing
// "N passed, N failed" line. Tests listed in known_failures.txt (name, then
// the reason) may fail; any other failure, and any listed test that now
// passes (so the list stays true), makes the exit code 1. Exit code 77
// (ctest's skip) when there is no generated test data.
//
// Usage: onnx_conformance [--data DIR] [--known-failures FILE]
//                         [--filter SUBSTRING] [--docs FILE] [--verbose]
//                         [--no-fork]
// Each test runs in a forked child with a time limit, so that a crash or a
// hang fails that test only; --no-fork runs them in process (debuggers).
// The defaults come from ctest's environment (GED_BINARY_DIR,
// GED_SOURCE_DIR). --docs rewrites the table of failures between the
// markers in FILE (docs/conformance.md) from this run's results.
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "absl/strings/str_format.h"
#include "absl/strings/str_replace.h"
#include "base/status.h"
#include "base/strings.h"
#include "tests/conformance/backend_case.h"

namespace ge::conformance {
namespace {

struct Args {
  std::string data, known_failures, filter, docs;
  bool verbose = false;
  bool isolate = true;  // each test in a forked child: a crash or hang fails only that test
};

constexpr int kTestTimeoutSeconds = 20;

std::string Env(const char* name) {
  const char* v = std::getenv(name);
  return v == nullptr ? std::string() : std::string(v);
}

absl::StatusOr<Args> ParseArgs(int argc, char** argv) {
  Args args;
  if (!Env("GED_BINARY_DIR").empty()) args.data = Env("GED_BINARY_DIR") + "/testdata/onnx_node/backend";
  if (!Env("GED_SOURCE_DIR").empty()) {
    args.known_failures = Env("GED_SOURCE_DIR") + "/tests/conformance/known_failures.txt";
  }
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (flag == "--verbose" || flag == "--no-fork") {
      (flag == "--verbose" ? args.verbose : args.isolate) = flag == "--verbose";
      continue;
    }
    if (i + 1 >= argc) return InvalidArgument("flag ", flag, " needs a value");
    const std::string value = argv[++i];
    if (flag == "--data") args.data = value;
    else if (flag == "--known-failures") args.known_failures = value;
    else if (flag == "--filter") args.filter = value;
    else if (flag == "--docs") args.docs = value;
    else return InvalidArgument("unknown flag ", flag);
  }
  if (args.data.empty()) return InvalidArgument("no --data and no GED_BINARY_DIR");
  return args;
}

// name -> reason; '#' starts a comment line.
absl::StatusOr<std::map<std::string, std::string>> ReadKnownFailures(const std::string& path) {
  std::map<std::string, std::string> known;
  if (path.empty()) return known;
  std::ifstream in(path);
  if (!in) return NotFound("cannot open known failures list ", path);
  std::string line;
  for (int line_no = 1; std::getline(in, line); ++line_no) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream s(line);
    std::string name, reason;
    s >> name;
    std::getline(s >> std::ws, reason);
    if (reason.empty()) return InvalidArgument(path, ":", line_no, ": ", name, " has no reason");
    if (!known.emplace(name, reason).second) return InvalidArgument(path, ":", line_no, ": ", name, " listed twice");
  }
  return known;
}

std::string OneLine(std::string_view text) {
  return absl::StrReplaceAll(AbslView(text), {{"\n", " | "}, {"\r", ""}});
}

// Tests left out of issue 21's pass rate: their reference values are
// random draws (Bernoulli, training-mode Dropout), or they are Gradient and
// ai.onnx.preview.training tests. They still run and are still listed.
bool OutsideTheRate(std::string_view name) {
  for (std::string_view prefix : {"test_bernoulli", "test_training_dropout", "test_gradient_", "test_adagrad",
                                  "test_adam", "test_momentum", "test_nesterov_momentum"}) {
    if (name.substr(0, prefix.size()) == prefix) return true;
  }
  return false;
}

struct Failure {
  std::string name, kind, reason;
};

// Rewrites the lines between the table markers of `path`.
absl::Status WriteDocsTable(const std::string& path, const std::vector<Failure>& failures,
                            const std::map<std::string, std::string>& known, const std::string& summary) {
  std::ifstream in(path);
  if (!in) return NotFound("cannot open ", path);
  std::stringstream buffer;
  buffer << in.rdbuf();
  const std::string text = buffer.str();
  const std::string begin = "<!-- conformance-table:begin -->", end = "<!-- conformance-table:end -->";
  const size_t b = text.find(begin), e = text.find(end);
  if (b == std::string::npos || e == std::string::npos || e < b) return InvalidArgument(path, " has no table markers");
  std::string table = StrCat(begin, "\n", summary, "\n\n",
                             "| test | kind | reason |\n|---|---|---|\n");
  for (const Failure& f : failures) {
    auto it = known.find(f.name);
    std::string reason = it != known.end() ? it->second : "(not listed) " + f.reason;
    StrAppend(&table, "| `", f.name, "` | ", f.kind, " | ", absl::StrReplaceAll(reason, {{"|", "\\|"}}), " |\n");
  }
  std::ofstream out(path);
  out << text.substr(0, b) << table << text.substr(e);
  return out ? absl::OkStatus() : Internal("cannot write ", path);
}

// Runs the test in a forked child (the engines are loaded and the pool has
// no worker threads, so the child's copy is usable) that reports its status
// through a pipe: a crash or a hang then fails this test only.
absl::Status RunIsolated(const BackendTest& test, const engine::EngineRegistry& engines, ThreadPool* pool) {
  int fds[2];
  if (pipe(fds) != 0) return Internal("pipe failed");
  std::cout.flush();
  const pid_t pid = fork();
  if (pid < 0) return Internal("fork failed");
  if (pid == 0) {
    close(fds[0]);
    const absl::Status status = RunBackendTest(test, engines, pool);
    const std::string message = status.ok() ? "" : "E" + std::string(status.message());
    const char* p = message.data();
    for (size_t left = message.size(); left > 0;) {
      const ssize_t n = write(fds[1], p, left);
      if (n <= 0) break;
      p += n;
      left -= static_cast<size_t>(n);
    }
    _exit(0);
  }
  close(fds[1]);
  std::string message;
  char buffer[4096];
  bool timed_out = false;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(kTestTimeoutSeconds);
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    pollfd pfd{fds[0], POLLIN, 0};
    if (left.count() <= 0 || poll(&pfd, 1, static_cast<int>(left.count())) == 0) {
      timed_out = true;
      kill(pid, SIGKILL);
      break;
    }
    const ssize_t n = read(fds[0], buffer, sizeof(buffer));
    if (n <= 0) break;
    message.append(buffer, static_cast<size_t>(n));
  }
  close(fds[0]);
  int wstatus = 0;
  waitpid(pid, &wstatus, 0);
  if (timed_out) return absl::DeadlineExceededError(StrCat("timed out after ", kTestTimeoutSeconds, " s"));
  if (WIFSIGNALED(wstatus)) return Internal("crashed with signal ", WTERMSIG(wstatus), " (", strsignal(WTERMSIG(wstatus)), ")");
  if (!WIFEXITED(wstatus) || WEXITSTATUS(wstatus) != 0) return Internal("child exited with status ", WEXITSTATUS(wstatus));
  return message.empty() ? absl::OkStatus() : absl::UnknownError(message.substr(1));
}

int Run(int argc, char** argv) {
  auto args = ParseArgs(argc, argv);
  if (!args.ok()) return std::cerr << args.status() << "\n", 2;
  auto tests = ListBackendTests(args->data);
  if (!tests.ok()) return std::cerr << tests.status() << " (run the onnx_node_test_data fixture)\n", 77;
  auto known = ReadKnownFailures(args->known_failures);
  if (!known.ok()) return std::cerr << known.status() << "\n", 2;
  auto engines = engine::CreateEngineRegistry({}, {});
  if (!engines.ok()) return std::cerr << engines.status() << "\n", 2;
  // One worker thread when tests run in process; none when they run in
  // forked children (a fork copies only the forking thread).
  ThreadPool pool(args->isolate ? 0 : 1, "conformance");

  int passed = 0, unexpected = 0;
  std::map<std::string, std::pair<int, int>> by_kind;  // kind -> (passed, run)
  std::map<std::string, std::pair<int, int>> rated;    // the same without OutsideTheRate
  std::vector<Failure> failures;
  std::vector<std::string> fixed;
  std::set<std::string> seen;
  for (const BackendTest& test : *tests) {
    seen.insert(test.name);
    if (!args->filter.empty() && test.name.find(args->filter) == std::string::npos) continue;
    ++by_kind[test.kind].second;
    const bool counted = !OutsideTheRate(test.name);
    if (counted) ++rated[test.kind].second;
    const auto start = std::chrono::steady_clock::now();
    const absl::Status status =
        args->isolate ? RunIsolated(test, **engines, &pool) : RunBackendTest(test, **engines, &pool);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (seconds > 2) std::cout << "SLOW " << test.name << ": " << seconds << " s\n";
    const bool is_known = known->count(test.name) > 0;
    if (status.ok()) {
      ++passed;
      ++by_kind[test.kind].first;
      if (counted) ++rated[test.kind].first;
      if (args->verbose) std::cout << "PASS " << test.name << "\n";
      // A random-draw test may match numpy's draws by chance (Bernoulli of 10
      // values: about 2% of seeds): not a fix.
      if (is_known && !OutsideTheRate(test.name)) fixed.push_back(test.name);
      continue;
    }
    failures.push_back({test.name, test.kind, OneLine(StdView(status.message()))});
    std::cout << "FAIL " << test.name << ": " << failures.back().reason << (is_known ? "" : " [not in known failures]")
              << "\n";
    if (!is_known) ++unexpected;
  }
  for (const std::string& name : fixed) {
    std::cout << "FIXED " << name << ": passes but is listed in known_failures.txt; remove it\n";
  }
  for (const auto& [name, reason] : *known) {
    if (!seen.count(name)) std::cout << "STALE " << name << ": listed in known_failures.txt but no such test\n";
  }
  std::string summary;
  for (const auto& [kind, counts] : by_kind) {
    StrAppend(&summary, summary.empty() ? "" : "; ", kind, ": ", counts.first, " of ", counts.second, " pass (",
              absl::StrFormat("%.1f", 100.0 * counts.first / std::max(1, counts.second)), "%)");
  }
  std::string rate;
  for (const auto& [kind, counts] : rated) {
    StrAppend(&rate, rate.empty() ? "" : "; ", kind, ": ", counts.first, " of ", counts.second, " (",
              absl::StrFormat("%.1f", 100.0 * counts.first / std::max(1, counts.second)), "%)");
  }
  StrAppend(&summary,
            "\n\nWithout the tests whose reference values are random draws (Bernoulli, training-mode "
            "Dropout) and the Gradient and ai.onnx.preview.training tests: ",
            rate);
  std::cout << summary << "\n";
  if (!args->docs.empty()) {
    absl::Status s = WriteDocsTable(args->docs, failures, *known, summary);
    if (!s.ok()) std::cerr << s << "\n";
  }
  std::cout << unexpected << " unexpected failures, " << fixed.size() << " listed tests now passing\n";
  std::cout << passed << " passed, " << failures.size() << " failed\n";
  return unexpected > 0 || !fixed.empty() ? 1 : 0;
}

}  // namespace
}  // namespace ge::conformance

int main(int argc, char** argv) { return ge::conformance::Run(argc, argv); }
