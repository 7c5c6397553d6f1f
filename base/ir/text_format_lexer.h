// The text form's lexer (internal to text_format_parser.cc): words, quoted
// strings with C escapes, punctuation and `->`, with line:column positions.
// Whitespace and `#` comments to the end of the line separate tokens.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace ge::ir::text_internal {

enum class Tok { kEnd, kWord, kString, kPunct, kArrow, kError };

struct Pos {
  int line = 1;
  int col = 1;
};

struct Token {
  Tok kind = Tok::kEnd;
  std::string text;  // the word, the decoded string, the punctuation, or the error
  Pos pos;
};

// "end of input", "string \"...\"" or "'text'", for messages.
std::string Describe(const Token& t);

class Lexer {
 public:
  explicit Lexer(std::string_view src) : src_(src) {}
  // The next token; kEnd at the end, kError (text = "line:col: message")
  // for a bad character or string.
  Token Next();
  size_t remaining() const { return src_.size() - at_; }

 private:
  void Advance(size_t n);
  void SkipSpaceAndComments();
  void LexString(Token* t);

  std::string_view src_;
  size_t at_ = 0;
  Pos pos_;
};

// Word classes: an optionally negative run of digits; nan / -nan; a word that
// reads as a float (digits with '.', 'e', inf, nan).
bool IsIntWord(const Token& t);
bool IsNanWord(const Token& t);
bool IsFloatWord(const Token& t);

}  // namespace ge::ir::text_internal
