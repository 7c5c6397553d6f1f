// .npy parsing and serialization. The header is a Python dict literal; only
// the three keys numpy writes are accepted, parsed without evaluating
// anything.
#include "base/io/npy.h"

#include <algorithm>
#include <cstring>
#include <fstream>
#include <sstream>

#include "absl/strings/numbers.h"
#include "absl/strings/str_join.h"
#include "base/status.h"
#include "base/strings.h"

namespace ge::io {
namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicLen = 6;

struct Descr {
  DataType dtype = DataType::kUndefined;
  bool big_endian = false;
  size_t item_size = 0;
  enum class Kind { kNumeric, kUnicode, kBytes } kind = Kind::kNumeric;
};

absl::StatusOr<Descr> ParseDescr(std::string_view d, std::string_view source) {
  if (d.size() >= 2 && d[1] == 'O') {
    return InvalidArgument(source, ": .npy holds Python objects (pickled); save a numeric or string array instead");
  }
  if (d.size() < 3) return InvalidArgument(source, ": bad .npy dtype '", d, "'");
  Descr out;
  const char order = d[0];
  if (order != '<' && order != '>' && order != '|' && order != '=') {
    return InvalidArgument(source, ": bad byte order in .npy dtype '", d, "'");
  }
  out.big_endian = order == '>';
  const char kind = d[1];
  size_t size = 0;
  if (!absl::SimpleAtoi(AbslView(d.substr(2)), &size) || size == 0 || size > (1u << 20)) {
    return InvalidArgument(source, ": bad item size in .npy dtype '", d, "'");
  }
  out.item_size = size;
  auto pick = [&](DataType t) -> absl::StatusOr<Descr> {
    if (DataTypeSize(t) != size) return InvalidArgument(source, ": unsupported .npy dtype '", d, "'");
    out.dtype = t;
    return out;
  };
  switch (kind) {
    case 'b': return pick(DataType::kBool);
    case 'i':
      return pick(size == 1 ? DataType::kInt8 : size == 2 ? DataType::kInt16 : size == 4 ? DataType::kInt32 : DataType::kInt64);
    case 'u':
      return pick(size == 1 ? DataType::kUint8 : size == 2 ? DataType::kUint16 : size == 4 ? DataType::kUint32 : DataType::kUint64);
    case 'f':
      return pick(size == 2 ? DataType::kFloat16 : size == 4 ? DataType::kFloat : DataType::kDouble);
    case 'c': return pick(size == 8 ? DataType::kComplex64 : DataType::kComplex128);
    case 'U':
      out.kind = Descr::Kind::kUnicode;
      out.dtype = DataType::kString;
      out.item_size = size * 4;
      return out;
    case 'S':
      out.kind = Descr::Kind::kBytes;
      out.dtype = DataType::kString;
      return out;
    default:
      return InvalidArgument(source, ": unsupported .npy dtype '", d, "'");
  }
}

// Finds `'key':` in the header dict and returns the text after it.
absl::StatusOr<std::string_view> ValueOf(std::string_view header, std::string_view key, std::string_view source) {
  for (char quote : {'\'', '"'}) {
    std::string needle = StrCat(std::string(1, quote), key, std::string(1, quote));
    size_t at = header.find(needle);
    if (at == std::string_view::npos) continue;
    size_t colon = header.find(':', at + needle.size());
    if (colon == std::string_view::npos) break;
    std::string_view rest = header.substr(colon + 1);
    while (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
    return rest;
  }
  return InvalidArgument(source, ": .npy header lacks '", key, "'");
}

struct Header {
  Descr descr;
  bool fortran = false;
  Shape shape;
};

absl::StatusOr<Header> ParseHeader(std::string_view header, std::string_view source) {
  Header h;
  GE_ASSIGN_OR_RETURN(std::string_view descr, ValueOf(header, "descr", source));
  if (descr.empty() || (descr[0] != '\'' && descr[0] != '"')) {
    return InvalidArgument(source, ": .npy descr is not a simple dtype string (structured arrays are not supported)");
  }
  size_t end = descr.find(descr[0], 1);
  if (end == std::string_view::npos) return InvalidArgument(source, ": unterminated .npy descr");
  GE_ASSIGN_OR_RETURN(h.descr, ParseDescr(descr.substr(1, end - 1), source));
  GE_ASSIGN_OR_RETURN(std::string_view fortran, ValueOf(header, "fortran_order", source));
  if (fortran.substr(0, 4) == "True") {
    h.fortran = true;
  } else if (fortran.substr(0, 5) != "False") {
    return InvalidArgument(source, ": bad .npy fortran_order");
  }
  GE_ASSIGN_OR_RETURN(std::string_view shape, ValueOf(header, "shape", source));
  if (shape.empty() || shape[0] != '(') return InvalidArgument(source, ": bad .npy shape");
  size_t close = shape.find(')');
  if (close == std::string_view::npos) return InvalidArgument(source, ": bad .npy shape");
  std::string_view dims = shape.substr(1, close - 1);
  while (!dims.empty()) {
    size_t comma = dims.find(',');
    std::string_view piece = dims.substr(0, comma);
    while (!piece.empty() && piece.front() == ' ') piece.remove_prefix(1);
    while (!piece.empty() && (piece.back() == ' ' || piece.back() == 'L')) piece.remove_suffix(1);
    if (!piece.empty()) {
      int64_t d;
      if (!absl::SimpleAtoi(AbslView(piece), &d) || d < 0) return InvalidArgument(source, ": bad .npy dim '", piece, "'");
      h.shape.push_back(d);
    }
    if (comma == std::string_view::npos) break;
    dims.remove_prefix(comma + 1);
  }
  return h;
}

void AppendUtf8(uint32_t cp, std::string& out) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xc0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3f));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xe0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
    out += static_cast<char>(0x80 | (cp & 0x3f));
  } else {
    out += static_cast<char>(0xf0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3f));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
    out += static_cast<char>(0x80 | (cp & 0x3f));
  }
}

// Decodes UTF-8 to code points. A byte that does not start a well-formed
// sequence (a stray continuation byte, a truncated or overlong sequence, a
// surrogate or a value past U+10FFFF) becomes U+FFFD and decoding resumes
// at the next byte, so every result is a Unicode scalar value.
std::vector<uint32_t> DecodeUtf8(const std::string& s) {
  std::vector<uint32_t> out;
  for (size_t i = 0; i < s.size();) {
    const unsigned char c = s[i];
    const int len = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
    bool ok = len != 0 && i + len <= s.size();
    uint32_t cp = len == 1 ? c : c & (0x7f >> len);
    for (int k = 1; ok && k < len; ++k) {
      const unsigned char next = s[i + k];
      ok = (next & 0xc0) == 0x80;
      cp = (cp << 6) | (next & 0x3f);
    }
    static constexpr uint32_t kMinOfLength[] = {0, 0, 0x80, 0x800, 0x10000};
    ok = ok && cp >= kMinOfLength[len] && cp <= 0x10ffff && (cp < 0xd800 || cp > 0xdfff);
    out.push_back(ok ? cp : 0xfffd);
    i += ok ? len : 1;
  }
  return out;
}

void SwapBytes(char* data, size_t count, size_t item) {
  for (size_t i = 0; i < count; ++i) std::reverse(data + i * item, data + (i + 1) * item);
}

// Converts a Fortran-order buffer of `t`'s shape into C order in place.
absl::Status FortranToC(Tensor& t) {
  const auto& dims = t.shape().dims();
  if (dims.size() < 2 || t.NumElements() == 0) return absl::OkStatus();
  GE_ASSIGN_OR_RETURN(Tensor c, Tensor::Allocate(t.dtype(), t.shape()));
  const size_t item = t.dtype() == DataType::kString ? sizeof(std::string) : DataTypeSize(t.dtype());
  const int64_t n = t.NumElements();
  std::vector<int64_t> idx(dims.size(), 0);
  for (int64_t f = 0; f < n; ++f) {
    // f enumerates Fortran order: first dim fastest.
    int64_t c_off = 0;
    for (size_t d = 0; d < dims.size(); ++d) c_off = c_off * dims[d] + idx[d];
    if (t.dtype() == DataType::kString) {
      c.data<std::string>()[c_off] = t.data<std::string>()[f];
    } else {
      std::memcpy(static_cast<char*>(c.raw_data()) + c_off * item, static_cast<char*>(t.raw_data()) + f * item, item);
    }
    for (size_t d = 0; d < dims.size(); ++d) {
      if (++idx[d] < dims[d]) break;
      idx[d] = 0;
    }
  }
  t = c;
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<Tensor> ParseNpy(std::string_view bytes, std::string_view source) {
  if (bytes.size() < kMagicLen + 4 || bytes.substr(0, kMagicLen) != std::string_view(kMagic, kMagicLen)) {
    return InvalidArgument(source, ": not a .npy file (bad magic)");
  }
  const uint8_t major = static_cast<uint8_t>(bytes[6]);
  size_t header_len;
  size_t offset;
  if (major == 1) {
    header_len = static_cast<uint8_t>(bytes[8]) | (static_cast<uint8_t>(bytes[9]) << 8);
    offset = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12) return InvalidArgument(source, ": truncated .npy header");
    header_len = 0;
    for (int i = 3; i >= 0; --i) header_len = (header_len << 8) | static_cast<uint8_t>(bytes[8 + i]);
    offset = 12;
  } else {
    return InvalidArgument(source, ": unsupported .npy format version ", static_cast<int>(major));
  }
  if (header_len > bytes.size() - offset) return InvalidArgument(source, ": truncated .npy header");
  GE_ASSIGN_OR_RETURN(Header h, ParseHeader(bytes.substr(offset, header_len), source));
  offset += header_len;
  auto count_or = h.shape.NumElements();
  if (!count_or.ok()) return Annotate(count_or.status(), source);
  const int64_t count = *count_or;
  if (static_cast<uint64_t>(count) > (bytes.size() - offset) / std::max<size_t>(1, h.descr.item_size) + (count == 0)) {
    return InvalidArgument(source, ": .npy data is shorter than its shape ", h.shape.ToString(), " needs");
  }
  const size_t data_bytes = static_cast<size_t>(count) * h.descr.item_size;
  if (bytes.size() - offset < data_bytes) {
    return InvalidArgument(source, ": .npy data is shorter than its shape ", h.shape.ToString(), " needs");
  }
  GE_ASSIGN_OR_RETURN(Tensor t, Tensor::Allocate(h.descr.dtype, h.shape));
  const char* data = bytes.data() + offset;
  if (h.descr.kind == Descr::Kind::kNumeric) {
    // A bool byte other than 0 or 1 is undefined behaviour when read as a
    // C++ bool (numpy itself only writes 0 and 1).
    for (size_t i = 0; h.descr.dtype == DataType::kBool && i < data_bytes; ++i) {
      const auto byte = static_cast<uint8_t>(data[i]);
      if (byte > 1) {
        return InvalidArgument(source, ": .npy bool element ", i, " is byte ", static_cast<int>(byte),
                               ", not 0 or 1");
      }
    }
    std::memcpy(t.raw_data(), data, data_bytes);
    if (h.descr.big_endian && h.descr.item_size > 1) {
      const size_t part = h.descr.dtype == DataType::kComplex64 || h.descr.dtype == DataType::kComplex128
                              ? h.descr.item_size / 2 : h.descr.item_size;
      SwapBytes(static_cast<char*>(t.raw_data()), data_bytes / part, part);
    }
  } else {
    for (int64_t i = 0; i < count; ++i) {
      const char* item = data + i * h.descr.item_size;
      std::string& s = t.data<std::string>()[i];
      if (h.descr.kind == Descr::Kind::kBytes) {
        s.assign(item, strnlen(item, h.descr.item_size));
        continue;
      }
      for (size_t k = 0; k < h.descr.item_size / 4; ++k) {
        uint8_t b[4];
        std::memcpy(b, item + k * 4, 4);
        uint32_t cp = h.descr.big_endian ? (b[0] << 24 | b[1] << 16 | b[2] << 8 | b[3])
                                         : (b[3] << 24 | b[2] << 16 | b[1] << 8 | b[0]);
        if (cp == 0) break;
        // numpy's '<U' is UCS-4; anything else has no UTF-8 form.
        if (cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) {
          return InvalidArgument(source, ": .npy string element ", i, " holds ", absl::Hex(cp),
                                 " (hex), which is not a Unicode code point");
        }
        AppendUtf8(cp, s);
      }
    }
  }
  if (h.fortran) GE_RETURN_IF_ERROR(FortranToC(t));
  return t;
}

absl::StatusOr<Tensor> ReadNpyFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return NotFound("cannot open ", path);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return ParseNpy(buffer.str(), path);
}

absl::StatusOr<std::string> SerializeNpy(const Tensor& input) {
  Tensor tensor = input;
  if (tensor.dtype() == DataType::kBFloat16) {
    GE_ASSIGN_OR_RETURN(Tensor wide, Tensor::Allocate(DataType::kFloat, tensor.shape()));
    for (int64_t i = 0; i < tensor.NumElements(); ++i) {
      wide.data<float>()[i] = static_cast<float>(tensor.data<BFloat16>()[i]);
    }
    tensor = wide;
  }
  std::string descr;
  size_t width = 0;
  std::vector<std::vector<uint32_t>> decoded;
  switch (tensor.dtype()) {
    case DataType::kBool: descr = "|b1"; break;
    case DataType::kInt8: descr = "|i1"; break;
    case DataType::kUint8: descr = "|u1"; break;
    case DataType::kString: {
      for (int64_t i = 0; i < tensor.NumElements(); ++i) {
        decoded.push_back(DecodeUtf8(tensor.data<std::string>()[i]));
        width = std::max(width, decoded.back().size());
      }
      width = std::max<size_t>(width, 1);
      descr = StrCat("<U", width);
      break;
    }
    case DataType::kUndefined:
      return InvalidArgument("cannot save an undefined tensor as .npy");
    default: {
      const char kind = IsFloatingPoint(tensor.dtype()) ? 'f'
                        : (tensor.dtype() == DataType::kComplex64 || tensor.dtype() == DataType::kComplex128) ? 'c'
                        : IsSignedInteger(tensor.dtype()) ? 'i' : 'u';
      descr = StrCat("<", std::string(1, kind), DataTypeSize(tensor.dtype()));
    }
  }
  std::vector<std::string> dims;
  for (int64_t d : tensor.shape().dims()) dims.push_back(std::to_string(d));
  std::string shape = dims.size() == 1 ? StrCat("(", dims[0], ",)") : StrCat("(", absl::StrJoin(dims, ", "), ")");
  std::string header = StrCat("{'descr': '", descr, "', 'fortran_order': False, 'shape': ", shape, ", }");
  // Pad so that the data starts 64-byte aligned, ending the header with '\n'.
  const size_t unpadded = kMagicLen + 2 + 2 + header.size() + 1;
  header.append((64 - unpadded % 64) % 64, ' ');
  header += '\n';
  std::string out(kMagic, kMagicLen);
  out += '\x01';
  out += '\x00';
  out += static_cast<char>(header.size() & 0xff);
  out += static_cast<char>((header.size() >> 8) & 0xff);
  out += header;
  if (tensor.dtype() == DataType::kString) {
    for (const auto& cps : decoded) {
      for (size_t k = 0; k < width; ++k) {
        uint32_t cp = k < cps.size() ? cps[k] : 0;
        char b[4] = {static_cast<char>(cp & 0xff), static_cast<char>((cp >> 8) & 0xff),
                     static_cast<char>((cp >> 16) & 0xff), static_cast<char>((cp >> 24) & 0xff)};
        out.append(b, 4);
      }
    }
  } else {
    out.append(static_cast<const char*>(tensor.raw_data()), tensor.SizeInBytes());
  }
  return out;
}

absl::Status WriteNpyFile(const std::string& path, const Tensor& tensor) {
  GE_ASSIGN_OR_RETURN(std::string bytes, SerializeNpy(tensor));
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) return absl::UnavailableError(StrCat("cannot write ", path));
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  out.close();
  if (!out) return absl::UnavailableError(StrCat("cannot write ", path));
  return absl::OkStatus();
}

}  // namespace ge::io
