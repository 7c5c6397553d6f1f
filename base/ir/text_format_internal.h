// Pieces shared by the text form's printer (text_format.cc) and parser
// (text_format_parser.cc). Not part of the public API.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "base/dtype.h"

namespace ge::ir::text_internal {

// Characters of a bare word: names and numbers. '+' is accepted by the
// lexer (for exponents like 1e+20) though names containing it print quoted.
inline bool IsWordChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '.' || c == '/' || c == '-' || c == '+';
}
inline bool IsBareNameChar(char c) { return c != '+' && IsWordChar(c); }

// The default quiet NaN of each floating dtype, printed as plain `nan`.
inline constexpr uint32_t kQuietNanF32 = 0x7fc00000u;
inline constexpr uint64_t kQuietNanF64 = 0x7ff8000000000000ull;
inline constexpr uint16_t kQuietNanF16 = 0x7e00u;
inline constexpr uint16_t kQuietNanBF16 = 0x7fc0u;

// A quoted string with C escapes; bytes outside printable ASCII as \xHH.
std::string QuoteString(std::string_view bytes);

// Floats and doubles in the shortest form that reads back to the same bits.
// `force_float_syntax` appends ".0" when the result would read as an int.
std::string FormatFloat(float value, bool force_float_syntax);
std::string FormatDouble(double value);
// A 16-bit float given by its bits and dtype (f16 or bf16).
std::string FormatHalf(uint16_t bits, DataType dtype);

}  // namespace ge::ir::text_internal
