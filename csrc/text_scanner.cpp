#include "text_scanner.hpp"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <limits>
#include <utility>

namespace gthinker {

namespace {

constexpr char kIsolatedPrefix[] = "# isolated vertices:";
constexpr size_t kIsolatedPrefixLen = sizeof(kIsolatedPrefix) - 1;
constexpr uint64_t kInt64Max = static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
/// The smallest piece a block is cut into (its threads' share of a block is cut in 4).
constexpr size_t kMinPiece = size_t{64} << 10;
/// The smallest span one thread reads of a block (read_at).
constexpr size_t kMinReadSpan = size_t{1} << 20;

// The scanning loops below read data that ends with '\n' (Piece::end[-1]): every loop
// that stops at a byte that is not a space, a digit or a token character stops there
// at the latest, so none of them tests for the end of the data.

/// Field separators: spaces, tabs and commas (Network Repository's "u,v" lines), and
/// \v \f \r.
inline bool is_space(char c) {
  return c == ' ' || c == ',' || (static_cast<unsigned char>(c) - 9u <= 4u && c != '\n');
}

inline bool is_digit(char c) { return static_cast<unsigned char>(c) - static_cast<unsigned>('0') <= 9u; }

inline const char* skip_spaces(const char* p) {
  while (is_space(*p)) ++p;
  return p;
}

/// The non-negative integer of the digits from p (p[0] is one); returns past them.
/// Sets overflow when it does not fit in int64 (value is then not 0).
inline const char* parse_digits(const char* p, uint64_t& value, bool& overflow) {
  const char* s = p;
  uint64_t v = 0;
  while (is_digit(*p)) v = v * 10 + static_cast<uint64_t>(*p++ - '0');
  overflow = false;
  if (p - s > 18) {  // 19 digits or more may not fit: again, exactly
    v = 0;
    for (const char* q = s; q < p; ++q) {
      if (__builtin_mul_overflow(v, uint64_t{10}, &v) ||
          __builtin_add_overflow(v, static_cast<uint64_t>(*q - '0'), &v) || v > kInt64Max) {
        overflow = true;
        v = 1;
        break;
      }
    }
  }
  value = v;
  return p;
}

// Eight bytes at a time (SWAR): a line's numbers are read a word at a time, not a
// byte at a time (a loop over the digits of R-MAT 18's text cost 8 instructions a
// digit; callgrind).

inline uint64_t load8(const char* p) {
  uint64_t x;
  std::memcpy(&x, p, 8);
  return x;  // little-endian: p[0] in the lowest byte
}

/// A byte of the result is not 0 where that byte of x is not an ASCII digit.
inline uint64_t non_digits(uint64_t x) {
  return ((x & 0xF0F0F0F0F0F0F0F0ULL) ^ 0x3030303030303030ULL) |
         (((x & 0x0F0F0F0F0F0F0F0FULL) + 0x0606060606060606ULL) & 0xF0F0F0F0F0F0F0F0ULL);
}

/// The number written by the first n (1..8) bytes of x, all digits: they are moved
/// to the top with zeros before them, then combined in three multiplications.
inline uint64_t digits_value(uint64_t x, int n) {
  uint64_t v = (x - 0x3030303030303030ULL) << (8 * (8 - n));  // a borrow only runs upwards
  v = v * 10 + (v >> 8);  // pairs
  return ((v & 0x000000FF000000FFULL) * 0x000F424000000064ULL +
          ((v >> 16) & 0x000000FF000000FFULL) * 0x0000271000000001ULL) >> 32;  // then all 8
}

constexpr uint64_t kPow10[9] = {1, 10, 100, 1000, 10000, 100000, 1000000, 10000000, 100000000};

/// The digits from p read a word at a time (16 bytes from p must be readable): how
/// many (1..15; 0 when p[0] is not a digit or there are 16 or more) and their value.
inline int word_number(const char* p, uint64_t& value) {
  const uint64_t x = load8(p);
  const uint64_t nd = non_digits(x);
  if (nd) {
    const int n = __builtin_ctzll(nd) >> 3;
    if (n) value = digits_value(x, n);
    return n;
  }
  const uint64_t y = load8(p + 8);
  const uint64_t nd2 = non_digits(y);
  if (!nd2) return 0;
  const int n = __builtin_ctzll(nd2) >> 3;
  value = digits_value(x, 8) * kPow10[n] + (n ? digits_value(y, n) : 0);
  return 8 + n;
}

/// The ids of a '# isolated vertices:' line from p (past the prefix) to its '\n';
/// false with the bad token's index when one is not a non-negative int64.
bool read_isolated(const char* p, std::vector<int64_t>& out, int32_t& bad) {
  for (int32_t k = 0;; ++k) {
    p = skip_spaces(p);
    if (*p == '\n') return true;
    uint64_t val = 0;
    bool overflow = false;
    const char* s = p;
    if (is_digit(*p)) p = parse_digits(p, val, overflow);
    if (p == s || overflow || !(*p == '\n' || is_space(*p))) {
      bad = k;
      return false;
    }
    out.push_back(static_cast<int64_t>(val));
  }
}

/// Whether the token from p to its end is a number (a weight or a timestamp):
/// digits with any of "+-.eE", at least one digit.
bool numeric_token(const char* p, const char** after) {
  bool digit = false, ok = true;
  while (*p != '\n' && !is_space(*p)) {
    const char c = *p++;
    if (is_digit(c)) digit = true;
    else if (c != '+' && c != '-' && c != '.' && c != 'e' && c != 'E') ok = false;
  }
  *after = p;
  return ok && digit;
}

}  // namespace

void TextScanner::Piece::reset(const char* b, const char* e) {
  begin = b;
  end = e;
  used = 0;
  tags.clear();
  linenos.clear();
  isolated.clear();
  top = lines = first_record = 0;
  err = isolated_err = ScanError{};
}

/// The fields of a plain line at p, "n<sep>n...\n" with NF numbers of at most 15
/// digits each, one space, tab or comma between them, then '\n' (or "\r\n") or
/// numbers after a separator (weights, timestamps), read a word at a time (16 * NF + 16
/// bytes from p must lie before the end of the data). On success p is moved past the
/// line's '\n'; any other line is left to the byte-by-byte reading (comments, more
/// spaces, errors).
template <int NF>
inline bool plain_line(const char*& p, int64_t* fields) {
  const char* q = p;
  for (int k = 0; k < NF; ++k) {
    uint64_t v;
    const int n = word_number(q, v);
    if (n == 0) return false;
    fields[k] = static_cast<int64_t>(v);
    q += n;
    q += *q == '\r' && q[1] == '\n';  // a line that ends in "\r\n" (SNAP's email-Enron)
    if (*q == '\n') {
      if (k + 1 < NF) return false;
      p = q + 1;
      return true;
    }
    if (*q != ' ' && *q != '\t' && *q != ',') return false;
    ++q;
  }
  for (;;) {  // numbers after the fields
    q = skip_spaces(q);
    if (*q == '\n') break;
    if (!numeric_token(q, &q)) return false;
  }
  p = q + 1;
  return true;
}

TextScanner::LineKind TextScanner::read_line(const char*& p, int64_t line, Piece& out,
                                             int64_t* fields, int& tag) const {
  auto fail = [&](int32_t kind, int32_t field) {
    out.err = {kind, line, field};
    return kError;
  };
  const char* start = p;
  p = skip_spaces(p);
  const char c = *p;
  if (c == '\n') {  // a blank line
    ++p;
    return kSkip;
  }
  if (c == '#' || c == '%') {
    const char* eol = static_cast<const char*>(std::memchr(p, '\n', static_cast<size_t>(out.end - p)));
    if (spec_.isolated && out.used == 0 && p == start && out.isolated_err.kind == 0 &&
        static_cast<size_t>(eol - p) >= kIsolatedPrefixLen &&
        std::memcmp(p, kIsolatedPrefix, kIsolatedPrefixLen) == 0) {
      int32_t bad = 0;
      if (!read_isolated(p + kIsolatedPrefixLen, out.isolated, bad))
        out.isolated_err = {kScanIsolated, line, bad};
    }
    p = eol + 1;
    return kSkip;
  }
  tag = 0;
  if (spec_.tagged) {
    tag = static_cast<unsigned char>(c);
    ++p;
    if (!(is_space(*p) || *p == '\n') || spec_.required[tag] < 0) return fail(kScanBadTag, 0);
  }
  const int need = spec_.required[tag];
  int f = 0;
  for (; f < need; ++f) {
    p = skip_spaces(p);
    if (*p == '\n') break;
    const bool neg = *p == '-';
    p += neg;
    if (!is_digit(*p)) return fail(kScanNonInt, f);
    uint64_t val;
    bool overflow;
    p = parse_digits(p, val, overflow);
    if (!(*p == '\n' || is_space(*p))) return fail(kScanNonInt, f);
    if (neg && val != 0) return fail(kScanNegative, f);
    if (overflow) return fail(kScanOverflow, f);
    fields[f] = static_cast<int64_t>(val);
  }
  if (f < need) return fail(kScanFewFields, f);
  for (int32_t tok = f;; ++tok) {  // what follows must be numbers (weights, timestamps)
    p = skip_spaces(p);
    if (*p == '\n') break;
    if (!numeric_token(p, &p)) return fail(kScanExtra, tok);
  }
  ++p;  // past the '\n'
  for (int k = need; k < spec_.nfields; ++k) fields[k] = 0;
  return kRecord;
}

template <int NF>
void TextScanner::scan_piece(Piece& out) const {
  const int nf = NF ? NF : spec_.nfields;
  const bool keep_meta = spec_.keep_meta;
  const char* p = out.begin;
  const char* const end = out.end;
  // the records go through locals (a store through an int64_t* might change any
  // member of `out` as far as the compiler knows)
  int64_t* w = out.vals.data();
  int64_t* room = w + out.vals.size();
  int64_t line = 0, top = 0, first = 0;
  int64_t fields[8];
  for (; p < end; ++line) {
    int tag = 0;
    if (!(NF && end - p >= 16 * NF + 16 && plain_line<NF>(p, fields))) {
      out.used = static_cast<size_t>(w - out.vals.data());
      const LineKind kind = read_line(p, line + 1, out, fields, tag);
      if (kind == kSkip) continue;
      if (kind == kError) break;
    }
    if (room - w < nf) {
      const size_t used = static_cast<size_t>(w - out.vals.data());
      out.vals.resize(std::max<size_t>(out.vals.size() * 2, size_t{1} << 12));  // not zeroed
      w = out.vals.data() + used;
      room = out.vals.data() + out.vals.size();
    }
    for (int k = 0; k < nf; ++k) {
      w[k] = fields[k];
      top = std::max(top, fields[k]);
    }
    w += nf;
    if (keep_meta) {
      out.tags.push_back(static_cast<uint8_t>(tag));
      out.linenos.push_back(line + 1);
    }
    if (first == 0) first = line + 1;
  }
  out.used = static_cast<size_t>(w - out.vals.data());
  out.lines = out.err.kind ? out.err.line : line;
  out.top = top;
  out.first_record = first;
}

size_t TextScanner::cut(const char* data, size_t len, int threads) {
  size_t whole = len;  // the bytes up to the last newline
  while (whole > 0 && data[whole - 1] != '\n') --whole;
  const size_t target = std::max(kMinPiece, len / (static_cast<size_t>(threads) * 4));
  size_t np = 0;
  auto add = [&](const char* b, const char* e) {
    if (np == pieces_.size()) pieces_.emplace_back();
    pieces_[np++].reset(b, e);
  };
  for (size_t at = 0; at < whole;) {
    size_t c = at + target;
    if (c >= whole) {
      c = whole;
    } else {
      const void* nl = std::memchr(data + c, '\n', whole - c);
      c = static_cast<size_t>(static_cast<const char*>(nl) - data) + 1;
    }
    add(data + at, data + c);
    at = c;
  }
  if (whole < len) {  // the last line lacks its newline: scanned from a copy that has one
    tail_.assign(data + whole, len - whole);
    tail_.push_back('\n');
    add(tail_.data(), tail_.data() + tail_.size());
  }
  return np;
}

bool TextScanner::scan(const char* data, size_t len, Parallel& par) {
  if (error_.kind != kScanOk) return false;
  if (len == 0) return true;
  const size_t np = cut(data, len, par.threads());
  const bool pairs = !spec_.tagged && spec_.nfields == 2 && spec_.required[0] == 2;
  par.for_chunks(static_cast<int64_t>(np), 1, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      Piece& piece = pieces_[static_cast<size_t>(i)];
      if (pairs)
        scan_piece<2>(piece);  // edge lists: their plain lines read a word at a time
      else
        scan_piece<0>(piece);
    }
  });
  return merge(np, par);
}

bool TextScanner::merge(size_t np, Parallel& par) {
  // in file order: the first error wins; isolated lines only before the first record
  std::vector<int64_t> base(np + 1);
  base[0] = lines_;
  for (size_t i = 0; i < np; ++i) {
    Piece& piece = pieces_[i];
    if (first_record_ == 0) {
      const bool iso_first = piece.isolated_err.kind &&
                             (!piece.err.kind || piece.isolated_err.line < piece.err.line);
      if (iso_first) {
        error_ = piece.isolated_err;
        error_.line += base[i];
        return false;
      }
      isolated.append(piece.isolated.data(), piece.isolated.size());
    }
    if (piece.err.kind) {
      error_ = piece.err;
      error_.line += base[i];
      lines_ = error_.line;
      return false;
    }
    if (first_record_ == 0 && piece.first_record) first_record_ = base[i] + piece.first_record;
    base[i + 1] = base[i] + piece.lines;
  }
  lines_ = base[np];
  // append the records in order, each piece copied by one thread
  const size_t nf = static_cast<size_t>(spec_.nfields);
  std::vector<size_t> at(np + 1);
  at[0] = count_;
  for (size_t i = 0; i < np; ++i) {
    at[i + 1] = at[i] + pieces_[i].used / nf;
    top_ = std::max(top_, pieces_[i].top);
  }
  if (narrowed_ && top_ > INT32_MAX) widen(par);
  if (narrowed_)
    vals32.resize(at[np] * nf);
  else
    vals.resize(at[np] * nf);
  if (spec_.keep_meta) {
    tags.resize(at[np]);
    linenos.resize(at[np]);
  }
  par.for_chunks(static_cast<int64_t>(np), 1, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      const Piece& piece = pieces_[static_cast<size_t>(i)];
      const int64_t* src = piece.vals.data();
      if (narrowed_)
        std::copy(src, src + piece.used, vals32.data() + at[i] * nf);
      else if (piece.used)
        std::memcpy(vals.data() + at[i] * nf, src, piece.used * sizeof(int64_t));
      if (spec_.keep_meta) {
        std::copy(piece.tags.begin(), piece.tags.end(), tags.data() + at[i]);
        for (size_t k = 0; k < piece.linenos.size(); ++k)
          linenos[at[i] + k] = piece.linenos[k] + base[static_cast<size_t>(i)];
      }
    }
  });
  count_ = at[np];
  return true;
}

void TextScanner::widen(Parallel& par) {
  const int64_t n = static_cast<int64_t>(vals32.size());
  vals.resize(static_cast<size_t>(n));
  par.for_chunks(n, int64_t{1} << 20, [&](int64_t b, int64_t e) {
    std::copy(vals32.data() + b, vals32.data() + e, vals.data() + b);
  });
  vals32.clear();
  narrowed_ = false;
}

int64_t read_at(int fd, int64_t offset, char* buf, size_t len, Parallel& par) {
  const size_t span = std::max(kMinReadSpan, (len + static_cast<size_t>(par.threads()) - 1) /
                                                 static_cast<size_t>(par.threads()));
  const int64_t spans = static_cast<int64_t>((len + span - 1) / span);
  std::vector<size_t> got(static_cast<size_t>(spans), 0);
  std::atomic<int> error{0};
  par.for_chunks(spans, 1, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      const size_t from = static_cast<size_t>(i) * span, to = std::min(len, from + span);
      size_t done = 0;
      while (from + done < to) {
        const ssize_t r = ::pread(fd, buf + from + done, to - from - done,
                                  static_cast<off_t>(offset + static_cast<int64_t>(from + done)));
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) error.store(errno);
        if (r <= 0) break;
        done += static_cast<size_t>(r);
      }
      got[static_cast<size_t>(i)] = done;
    }
  });
  if (error.load()) return -error.load();
  size_t total = 0;
  for (int64_t i = 0; i < spans; ++i) {  // up to the first short span (the end of the file)
    total += got[static_cast<size_t>(i)];
    if (got[static_cast<size_t>(i)] < std::min(len, static_cast<size_t>(i + 1) * span) -
                                          static_cast<size_t>(i) * span)
      break;
  }
  return static_cast<int64_t>(total);
}

}  // namespace gthinker
