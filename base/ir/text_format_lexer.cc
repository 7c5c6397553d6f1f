// The text form's lexer. Words are maximal runs of [A-Za-z0-9_./+-] that
// stop before `->`, so `a->b` never lexes as one word; strings decode their
// escapes here so the parser sees bytes.
#include "base/ir/text_format_lexer.h"

#include "base/ir/text_format_internal.h"
#include "base/strings.h"

namespace ge::ir::text_internal {
namespace {

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

std::string Describe(const Token& t) {
  switch (t.kind) {
    case Tok::kEnd:
      return "end of input";
    case Tok::kString:
      return StrCat("string ", QuoteString(t.text));
    default:
      return StrCat("'", t.text, "'");
  }
}

Token Lexer::Next() {
  SkipSpaceAndComments();
  Token t;
  t.pos = pos_;
  if (at_ >= src_.size()) return t;
  const char c = src_[at_];
  if (c == '-' && at_ + 1 < src_.size() && src_[at_ + 1] == '>') {
    Advance(2);
    t.kind = Tok::kArrow;
    t.text = "->";
  } else if (IsWordChar(c)) {
    size_t end = at_;
    while (end < src_.size() && IsWordChar(src_[end]) &&
           !(src_[end] == '-' && end + 1 < src_.size() && src_[end + 1] == '>')) {
      ++end;
    }
    t.kind = Tok::kWord;
    t.text = std::string(src_.substr(at_, end - at_));
    Advance(end - at_);
  } else if (c == '"') {
    LexString(&t);
  } else if (std::string_view("(){}[]<>,:=^@?").find(c) != std::string_view::npos) {
    t.kind = Tok::kPunct;
    t.text = std::string(1, c);
    Advance(1);
  } else {
    t.kind = Tok::kError;
    t.text = StrCat(t.pos.line, ":", t.pos.col, ": unexpected character ",
                    QuoteString(std::string_view(&src_[at_], 1)));
  }
  return t;
}

void Lexer::Advance(size_t n) {
  for (size_t i = 0; i < n; ++i, ++at_) {
    if (src_[at_] == '\n') {
      ++pos_.line;
      pos_.col = 1;
    } else {
      ++pos_.col;
    }
  }
}

void Lexer::SkipSpaceAndComments() {
  while (at_ < src_.size()) {
    const char c = src_[at_];
    if (c == '#') {
      while (at_ < src_.size() && src_[at_] != '\n') Advance(1);
    } else if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      Advance(1);
    } else {
      return;
    }
  }
}

void Lexer::LexString(Token* t) {
  Advance(1);
  t->kind = Tok::kString;
  while (true) {
    if (at_ >= src_.size() || src_[at_] == '\n') {
      t->kind = Tok::kError;
      t->text = StrCat(t->pos.line, ":", t->pos.col, ": unterminated string");
      return;
    }
    const char c = src_[at_];
    if (c == '"') {
      Advance(1);
      return;
    }
    if (c != '\\') {
      t->text += c;
      Advance(1);
      continue;
    }
    const Pos escape = pos_;
    const char e = at_ + 1 < src_.size() ? src_[at_ + 1] : '\0';
    int hi = -1, lo = -1;
    if (e == 'x' && at_ + 3 < src_.size()) {
      hi = HexValue(src_[at_ + 2]);
      lo = HexValue(src_[at_ + 3]);
    }
    if (e == '"' || e == '\\') {
      t->text += e;
    } else if (e == 'n' || e == 't' || e == 'r') {
      t->text += e == 'n' ? '\n' : e == 't' ? '\t' : '\r';
    } else if (hi >= 0 && lo >= 0) {
      t->text += static_cast<char>(hi * 16 + lo);
      Advance(2);
    } else {
      t->kind = Tok::kError;
      t->text = StrCat(escape.line, ":", escape.col,
                       ": bad escape in string (expected \\\" \\\\ \\n \\t \\r or \\xHH)");
      return;
    }
    Advance(2);
  }
}

bool IsIntWord(const Token& t) {
  if (t.kind != Tok::kWord || t.text.empty()) return false;
  size_t i = t.text[0] == '-' ? 1 : 0;
  if (i == t.text.size()) return false;
  for (; i < t.text.size(); ++i) {
    if (t.text[i] < '0' || t.text[i] > '9') return false;
  }
  return true;
}

bool IsNanWord(const Token& t) {
  return t.kind == Tok::kWord && (t.text == "nan" || t.text == "-nan");
}

bool IsFloatWord(const Token& t) {
  if (t.kind != Tok::kWord || IsIntWord(t)) return false;
  if (IsNanWord(t) || t.text == "inf" || t.text == "-inf") return true;
  const char c = t.text[0];
  return (c >= '0' && c <= '9') || ((c == '-' || c == '.') && t.text.size() > 1);
}

}  // namespace ge::ir::text_internal
