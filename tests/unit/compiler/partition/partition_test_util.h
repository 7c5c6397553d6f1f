// Helpers shared by the partitioning tests: parsing and printing graphs,
// and a graph comparison that ignores node order.
#pragma once

#include <algorithm>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/ir/graph.h"
#include "base/ir/text_format.h"
#include "base/ir/verifier.h"
#include "gtest/gtest.h"

namespace ge::partition::testing {

inline std::unique_ptr<ir::Graph> MustParse(std::string_view text) {
  auto g = ir::ParseGraph(text);
  EXPECT_TRUE(g.ok()) << g.status() << "\n" << text;
  return g.ok() ? *std::move(g) : nullptr;
}

// Strips the common leading indentation of a raw string literal and its
// first newline, so that expected text can be indented like the test.
inline std::string Dedent(std::string_view text) {
  if (!text.empty() && text.front() == '\n') text.remove_prefix(1);
  size_t indent = std::string_view::npos;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(pos, end - pos);
    const size_t first = line.find_first_not_of(' ');
    if (first != std::string_view::npos) indent = std::min(indent, first);
    pos = end + 1;
  }
  std::string out;
  pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(pos, end - pos);
    if (line.find_first_not_of(' ') != std::string_view::npos) out.append(line.substr(indent));
    if (end < text.size()) out += '\n';
    pos = end + 1;
  }
  // Trailing whitespace-only line of the raw literal.
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

// One line per node "graph/name = Type(producer:port, ...) ^control..."
// sorted, so that two graphs compare equal when they have the same nodes
// and edges whatever the node order.
inline std::string CanonicalForm(const ir::Graph& g) {
  std::vector<std::string> lines;
  auto add = [&](const ir::Graph& graph) {
    graph.ForEachNode([&](ir::Node* n) {
      std::string line = graph.name() + "/" + n->name() + " = " + n->type() + "(";
      for (int i = 0; i < n->num_inputs(); ++i) {
        const ir::OutPort p = n->input(i);
        line += (i ? ", " : "") + (p.node ? p.node->name() + ":" + std::to_string(p.index) : std::string("_"));
      }
      line += ")";
      for (const auto& [k, v] : n->op_desc().attrs()) line += " " + k + "=" + ir::PrintAttrValue(v);
      for (const ir::IoDesc& o : n->op_desc().outputs()) line += " -> " + o.type.ToString();
      std::vector<std::string> control;
      for (const ir::Node* c : n->control_inputs()) control.push_back(c->name());
      std::sort(control.begin(), control.end());
      for (const std::string& c : control) line += " ctl:" + c;
      lines.push_back(line);
    });
  };
  add(g);
  for (const ir::Graph* sub : g.subgraphs()) add(*sub);
  std::sort(lines.begin(), lines.end());
  std::string out;
  for (const std::string& l : lines) out += l + "\n";
  return out;
}

}  // namespace ge::partition::testing
