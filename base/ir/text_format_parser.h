// The text form's recursive-descent parser (internal to base/ir). Values
// and types are parsed in text_format_values.cc, graph blocks and the
// subgraph tree in text_format_parser.cc.
#pragma once

#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "base/ir/graph.h"
#include "base/ir/text_format_lexer.h"
#include "base/status.h"

namespace ge::ir::text_internal {

// Where a pending edge goes and what the text said about it.
struct PendingInput {
  Node* node;
  int index;
  std::string producer;
  int port;
  std::optional<ValueType> type;
  Pos pos;
  Node* resolved = nullptr;  // the producer, once looked up
};
struct PendingControl {
  Node* node;
  std::string producer;
  Pos pos;
};
struct GraphHeader {
  std::unique_ptr<Graph> graph;
  Pos pos;
  bool has_parent = false;
  std::string parent_graph;
  std::optional<std::string> parent_node;
};

class Parser {
 public:
  explicit Parser(std::string_view text) : lexer_(text) {}

  absl::StatusOr<std::unique_ptr<Graph>> ParseFile();
  absl::StatusOr<AttrValue> ParseValue();
  absl::StatusOr<ValueType> ParseType(int depth = 0);
  absl::Status ExpectEnd() {
    if (Peek().kind == Tok::kEnd) return absl::OkStatus();
    return Expected(Peek(), "end of input");
  }

 private:
  // ---- Tokens ----
  const Token& Peek(size_t k = 0) {
    while (ahead_.size() <= k) ahead_.push_back(lexer_.Next());
    return ahead_[k];
  }
  Token Take() {
    Peek();
    Token t = std::move(ahead_.front());
    ahead_.pop_front();
    return t;
  }
  bool IsPunct(const Token& t, char c) const { return t.kind == Tok::kPunct && t.text[0] == c; }
  bool IsKeyword(const Token& t, std::string_view word) const {
    return t.kind == Tok::kWord && t.text == word;
  }
  absl::Status Expected(const Token& got, std::string_view what) const {
    if (got.kind == Tok::kError) return InvalidArgument(got.text);
    return InvalidArgument(got.pos.line, ":", got.pos.col, ": expected ", what, ", got ",
                           Describe(got));
  }
  static absl::Status ErrorAt(Pos pos, std::string_view message) {
    return InvalidArgument(pos.line, ":", pos.col, ": ", message);
  }
  absl::Status ExpectPunct(char c, std::string_view context) {
    if (IsPunct(Peek(), c)) {
      Take();
      return absl::OkStatus();
    }
    return Expected(Peek(), StrCat("'", std::string_view(&c, 1), "' ", context));
  }
  absl::StatusOr<std::string> ParseName(std::string_view what) {
    if (Peek().kind != Tok::kWord && Peek().kind != Tok::kString) return Expected(Peek(), what);
    return Take().text;
  }
  absl::StatusOr<int64_t> ParseInt(std::string_view what);

  // ---- Values ----
  absl::StatusOr<AttrValue> ParseScalarValue();
  absl::StatusOr<AttrValue> ParseList();
  absl::StatusOr<Shape> ParseShape();
  absl::StatusOr<TensorDesc> ParseTensorDesc();
  absl::StatusOr<Tensor> ParseTensor();
  absl::Status ParseElement(const Tensor& t, int64_t i);
  template <typename F>
  absl::StatusOr<F> ParseFloating(DataType dtype);
  absl::StatusOr<uint16_t> ParseHalf(DataType dtype);
  absl::Status ParseAttrEntry(AttrMap* attrs);

  // ---- Graphs ----
  absl::Status ParseGraphBlock();
  absl::Status ParseNode(Graph* graph);
  absl::Status ParseInputs(Node* node);
  absl::Status ParseOutputs(std::vector<IoDesc>* outputs);
  absl::Status ResolveEdges(Graph* graph);
  absl::StatusOr<std::unique_ptr<Graph>> LinkTree();

  Lexer lexer_;
  std::deque<Token> ahead_;
  std::vector<GraphHeader> graphs_;
  std::vector<PendingInput> inputs_;
  std::vector<PendingControl> controls_;
  std::vector<Node*> implied_outputs_;
};

}  // namespace ge::ir::text_internal
