// The readable text form of a graph tree: printed for dumps and parsed for
// tests ("text in, text out": a pass test parses a graph, runs the pass and
// compares the printed result with the expected text).
//
//   # comment to the end of the line
//   graph main {
//     attr _dynamic_shape_partitioned = false
//     x = Data() {index = 0} -> (f32[1,3,224,224]@NCHW as "input.1")
//     w = Const() {value = tensor<f32[2]>[1.5, 2]} -> (f32[2])
//     y = Add(x:0, w:0) -> (f32[1,3,224,2])
//     c = If(p:0, x:0 : ?) ^y subgraphs(then_0, else_0) -> (f32[-1])
//     out = NetOutput(c:0, _)
//   }
//   graph then_0 parent(main, c) { ... }
//
// Grammar (whitespace and `#` comments are free between tokens):
//   file     := graph+                      the first graph is the root
//   graph    := 'graph' NAME ['parent' '(' NAME ',' (NAME | '_') ')'] '{'
//                 ('attr' NAME '=' value)* node* '}'
//   node     := NAME '=' NAME '(' [input (',' input)*] ')' ('^' NAME)*
//                 [attrs] ['subgraphs' '(' NAME (',' NAME)* ')']
//                 ['->' '(' [output (',' output)*] ')']
//   input    := ('_' | NAME [':' INT]) [':' type] ['as' NAME]
//   output   := type ['as' NAME]
//   attrs    := '{' [NAME '=' value (',' NAME '=' value)*] '}'
//   type     := 'seq' '<' type '>' | 'opt' '<' type '>' | tensor_type
//   tensor_type := (DTYPE | '?') [shape] ['@' FORMAT]
//   shape    := '[' [dim (',' dim)*] ']' | '[' '?' ']'      dim: INT >= -1
//   value    := INT | FLOAT | STRING | 'true' | 'false' | '@' NAME
//             | 'shape' shape | tensor | '[' value (',' value)* ']'
//             | ('ints'|'floats'|'strings'|'bools'|'tensors'|'graphs'|'shapes') '[' ']'
//   tensor   := 'tensor' '<' tensor_type '>' ( '[' [elem (',' elem)*] ']' | 'splat' '(' elem ')' )
//             | 'tensor' '<' '?' '>'                         the undefined tensor
// NAME is a bare word of [A-Za-z0-9_./-] or a double-quoted string with C
// escapes (\" \\ \n \t \r \xHH); names that are empty, use other bytes, or
// read as a keyword (`_`, `attr`, `as`) are printed quoted.
//
// Meanings and defaults:
//   * `x:0` is output 0 of node x (`x` alone means `x:0`); `_` an absent
//     optional input; `^y` a control edge from y. References may point to
//     nodes defined later in the same graph.
//   * An input's `: type` is printed only when it differs from its
//     producer's output type (for `_`: when it is not the undefined type);
//     without it the input's type is copied from the producer.
//   * `?` alone is the undefined type ValueType(); `?[2,3]` a tensor whose
//     dtype is not known yet. Formats other than ND print as `@NCHW`.
//   * Without `-> (...)` a node has as many outputs as its highest consumed
//     port + 1 (none when nothing consumes it), all of the undefined type
//     and unnamed: "types to be inferred". The printer omits the arrow
//     exactly when that rule rebuilds the node's outputs.
//   * Ints print as integers; floats always carry '.', 'e', 'inf' or 'nan'
//     so that `1.0` is a float attribute and `1` an int. Floats print in the
//     shortest form that reads back bit-exactly; NaNs other than the default
//     quiet NaN print their bits, e.g. `nan(0x7fc00001)`.
//   * Tensor elements are listed flat in row-major order; complex elements
//     as `(re, im)`; strings quoted; bools `true`/`false`. A tensor whose
//     elements are all identical (and more than one) prints as `splat(v)`.
//   * Attributes print sorted by name; nodes in insertion order; subgraphs
//     after the root in the root's subgraph order, each naming its parent
//     graph and node (`_` when it has no parent node).
//
// The round trip is exact: Print(Parse(Print(g))) == Print(g), and
// GraphsEqual(Parse(Print(g)), g). What the text cannot carry: the order of
// a port's consumer list and of control outputs (rebuilt from the inputs),
// node ids, and dangling cross-graph edges (print the producer's bare name).
//
// Parse errors are InvalidArgument "line:column: expected ..., got ...".
// Parsing builds the structure the Graph API allows (unique names, ports in
// range, one producer per input) but does not verify it: a graph that
// VerifyGraph rejects may still be written, which is how verifier and pass
// tests describe broken graphs.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "base/ir/graph.h"

namespace ge::ir {

struct PrintOptions {
  // Tensors with more elements print at most this many followed by `...`;
  // such text is for reading only and does not parse. -1 prints everything.
  int64_t max_tensor_elements = -1;
};

// The graph (and, for a root, its subgraphs) in the text form.
std::string PrintGraph(const Graph& graph);
std::string PrintGraph(const Graph& graph, const PrintOptions& options);
// Parses the text form into a new root graph with its subgraphs.
absl::StatusOr<std::unique_ptr<Graph>> ParseGraph(std::string_view text);

// Pieces of the form, for messages and other printers.
std::string PrintValueType(const ValueType& type);
std::string PrintAttrValue(const AttrValue& value, const PrintOptions& options = {});
// One node's line without indentation or newline.
std::string PrintNode(const Node& node, const PrintOptions& options = {});
// Parses a value or a type alone (e.g. "[1, 2]", "tensor<i64[2]>[1, 2]").
absl::StatusOr<AttrValue> ParseAttrValue(std::string_view text);
absl::StatusOr<ValueType> ParseValueType(std::string_view text);

// A bare word when `name` may be printed bare, else a quoted string.
std::string QuoteNameIfNeeded(std::string_view name);

}  // namespace ge::ir
