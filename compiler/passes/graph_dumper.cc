// Graph dumps as text form and DOT files.
#include "compiler/passes/graph_dumper.h"

#include <filesystem>
#include <fstream>

#include "absl/strings/str_format.h"
#include "base/ir/dot.h"
#include "base/ir/text_format.h"
#include "base/status.h"

namespace ge::compiler {
namespace {

std::string SafeFileName(std::string_view name) {
  std::string out(name);
  for (char& c : out) {
    if (!isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-' && c != '.') c = '_';
  }
  return out;
}

absl::Status WriteFile(const std::filesystem::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  out.close();
  if (!out) return absl::UnavailableError(StrCat("cannot write graph dump ", path.string()));
  return absl::OkStatus();
}

}  // namespace

GraphDumper::GraphDumper(int level, std::string directory) : level_(level), directory_(std::move(directory)) {}

absl::Status GraphDumper::Before(const ir::Graph& graph, std::string_view step) {
  if (level_ < 2) return absl::OkStatus();
  return Write(graph, step, "before");
}

absl::Status GraphDumper::After(const ir::Graph& graph, std::string_view step) {
  if (level_ < 1) return absl::OkStatus();
  return Write(graph, step, "after");
}

absl::Status GraphDumper::Write(const ir::Graph& graph, std::string_view step, std::string_view when) {
  std::error_code ec;
  std::filesystem::create_directories(directory_, ec);
  if (ec) return absl::UnavailableError(StrCat("cannot create dump directory ", directory_, ": ", ec.message()));
  std::string stem = absl::StrFormat("%s.%03d.%s.%s", SafeFileName(graph.name()), sequence_++,
                                     SafeFileName(step), std::string(when));
  std::filesystem::path base = std::filesystem::path(directory_) / stem;
  GE_RETURN_IF_ERROR(WriteFile(base.string() + ".txt", ir::PrintGraph(graph)));
  return WriteFile(base.string() + ".dot", ir::ToDot(graph, ir::DotOptions()));
}

}  // namespace ge::compiler
