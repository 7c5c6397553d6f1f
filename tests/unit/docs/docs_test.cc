// The docs agree with the code: every option of the option table is a row of
// docs/options.md with its default (and every row an option), every metric
// the daemon registers is a row of docs/metrics.md with its type (and every
// row a metric), and every project path the docs cite exists. A newcomer
// reads the docs before the code; this keeps them from drifting apart.
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "base/options.h"
#include "gtest/gtest.h"
#include "server/metrics.h"
#include "server/prometheus.h"

namespace ge {
namespace {

namespace fs = std::filesystem;

fs::path SourceDir() {
  const char* dir = std::getenv("GED_SOURCE_DIR");
  return dir != nullptr ? fs::path(dir) : fs::current_path();
}

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// The cells of a markdown table row ("| a | b |" -> {"a", "b"}); empty for
// other lines. Cells are trimmed; `\|` inside a cell stays in it.
std::vector<std::string> Cells(const std::string& line) {
  std::vector<std::string> cells;
  if (line.size() < 2 || line[0] != '|') return cells;
  std::string cell;
  for (size_t i = 1; i < line.size(); ++i) {
    if (line[i] == '\\' && i + 1 < line.size() && line[i + 1] == '|') {
      cell += '|';
      ++i;
    } else if (line[i] == '|') {
      const size_t b = cell.find_first_not_of(' '), e = cell.find_last_not_of(' ');
      cells.push_back(b == std::string::npos ? "" : cell.substr(b, e - b + 1));
      cell.clear();
    } else {
      cell += line[i];
    }
  }
  return cells;
}

// "`x`" -> "x"; other text unchanged.
std::string Unquote(const std::string& cell) {
  if (cell.size() >= 2 && cell.front() == '`' && cell.back() == '`') return cell.substr(1, cell.size() - 2);
  return cell;
}

TEST(DocsTest, OptionsTableMatchesDocsOptionsMd) {
  std::map<std::string, std::string> documented;  // key -> default cell
  for (const std::string& line : Lines(ReadFile(SourceDir() / "docs/options.md"))) {
    const std::vector<std::string> cells = Cells(line);
    if (cells.size() < 2 || cells[0].rfind("`ge.", 0) != 0) continue;
    // Engine options (read by an engine at Initialize, not by the option
    // table) say so in their meaning.
    if (cells.back().rfind("Engine option", 0) == 0) continue;
    documented[Unquote(cells[0])] = cells[1];
  }
  ASSERT_FALSE(documented.empty()) << "docs/options.md has no option rows";
  for (const OptionSpec& spec : AllOptionSpecs()) {
    const std::string key(spec.key);
    auto it = documented.find(key);
    if (it == documented.end()) {
      ADD_FAILURE() << "option " << key << " (base/options.cc) has no row in docs/options.md";
      continue;
    }
    const std::string expected = spec.default_value.empty() ? "empty" : "`" + std::string(spec.default_value) + "`";
    EXPECT_EQ(it->second, expected) << "default of " << key << " in docs/options.md";
    documented.erase(it);
  }
  for (const auto& [key, cell] : documented) {
    ADD_FAILURE() << "docs/options.md documents " << key << ", which base/options.cc does not define";
  }
}

TEST(DocsTest, MetricsMatchDocsMetricsMd) {
  server::prometheus::Registry registry;
  server::ServerMetrics metrics(registry);
  std::map<std::string, std::string> registered;  // name -> type
  static const std::regex kType(R"(^# TYPE (\S+) (\S+)$)");
  for (const std::string& line : Lines(registry.Render())) {
    std::smatch m;
    if (std::regex_match(line, m, kType)) registered[m[1]] = m[2];
  }
  ASSERT_FALSE(registered.empty());
  std::map<std::string, std::string> documented;
  for (const std::string& line : Lines(ReadFile(SourceDir() / "docs/metrics.md"))) {
    const std::vector<std::string> cells = Cells(line);
    if (cells.size() < 2 || cells[0].rfind("`ged_", 0) != 0) continue;
    documented[Unquote(cells[0])] = cells[1];
  }
  for (const auto& [name, type] : registered) {
    auto it = documented.find(name);
    if (it == documented.end()) {
      ADD_FAILURE() << "metric " << name << " (server/metrics.cc) has no row in docs/metrics.md";
      continue;
    }
    EXPECT_EQ(it->second, type) << "type of " << name << " in docs/metrics.md";
    documented.erase(it);
  }
  for (const auto& [name, type] : documented) {
    ADD_FAILURE() << "docs/metrics.md documents " << name << ", which the daemon does not register";
  }
}

// A cited path exists as a file or directory, or names a source stem
// (`compiler/build/var_mem_assign`) or a binary built from one
// (`bench/ops_bench`).
bool Exists(const fs::path& root, const std::string& path) {
  std::error_code ec;
  if (fs::exists(root / path, ec)) return true;
  for (const char* ext : {".h", ".cc", ".py", ".sh"}) {
    if (fs::exists(root / (path + ext), ec)) return true;
  }
  return false;
}

TEST(DocsTest, EveryCitedProjectPathExists) {
  const fs::path root = SourceDir();
  static const std::set<std::string> kTops = {"base",     "compiler", "runtime", "session", "server",
                                              "client",   "tests",    "docs",    "scripts", "bench",
                                              "examples", "deploy",   "fuzz",    "proto",   "cmake"};
  std::vector<fs::path> docs = {root / "README.md"};
  for (const auto& entry : fs::recursive_directory_iterator(root / "docs")) {
    if (entry.path().extension() == ".md") docs.push_back(entry.path());
  }
  ASSERT_GT(docs.size(), 5u);
  static const std::regex kCited(R"(`([^`\s]+)`|\]\(([^)\s]+)\))");
  static const std::regex kLineSuffix(R"(:\d+(-\d+)?$)");
  int checked = 0;
  for (const fs::path& doc : docs) {
    const std::vector<std::string> lines = Lines(ReadFile(doc));
    for (size_t n = 0; n < lines.size(); ++n) {
      for (auto it = std::sregex_iterator(lines[n].begin(), lines[n].end(), kCited); it != std::sregex_iterator();
           ++it) {
        std::string path = (*it)[1].matched ? (*it)[1].str() : (*it)[2].str();
        path = path.substr(0, path.find('#'));
        if ((*it)[2].matched && path.find("://") == std::string::npos && !path.empty() &&
            kTops.count(path.substr(0, path.find('/'))) == 0) {
          // A relative link: resolve it against the document's folder.
          path = fs::relative((doc.parent_path() / path).lexically_normal(), root).string();
        }
        const size_t slash = path.find('/');
        if (slash == std::string::npos || kTops.count(path.substr(0, slash)) == 0) continue;
        path = std::regex_replace(path, kLineSuffix, "");
        while (!path.empty() && std::string(".,;:)").find(path.back()) != std::string::npos) path.pop_back();
        if (path.find_first_of("*<>{}$") != std::string::npos) continue;  // patterns and placeholders
        ++checked;
        EXPECT_TRUE(Exists(root, path)) << fs::relative(doc, root).string() << ":" << n + 1 << " cites " << path
                                        << ", which does not exist";
      }
    }
  }
  EXPECT_GT(checked, 50) << "the scan found too few cited paths to be looking at the docs";
}

}  // namespace
}  // namespace ge
