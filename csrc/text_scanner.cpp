#include "text_scanner.hpp"

#include <algorithm>
#include <cstring>
#include <limits>
#include <utility>

namespace gthinker {

namespace {

constexpr char kIsolatedPrefix[] = "# isolated vertices:";
constexpr size_t kIsolatedPrefixLen = sizeof(kIsolatedPrefix) - 1;
constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();

/// Field separators: spaces, tabs and commas (Network Repository's "u,v" lines).
inline bool is_space(char c) {
  return c == ' ' || c == '\t' || c == ',' || c == '\r' || c == '\v' || c == '\f';
}

inline const char* skip_spaces(const char* p, const char* end) {
  while (p < end && is_space(*p)) ++p;
  return p;
}

inline const char* line_end(const char* p, const char* end) {
  const void* nl = std::memchr(p, '\n', static_cast<size_t>(end - p));
  return nl ? static_cast<const char*>(nl) : end;
}

}  // namespace

/// One piece of a block, scanned by one thread; lines numbered from 1 in the piece.
struct TextScanner::Piece {
  std::vector<int64_t> vals;
  std::vector<uint8_t> tags;
  std::vector<int64_t> linenos;
  std::vector<int64_t> isolated;  // ids of isolated-vertex lines before the piece's first record
  int64_t top = 0;  // the largest value
  int64_t lines = 0;
  int64_t first_record = 0;
  ScanError err;       // the piece's first bad line
  ScanError isolated_err;  // its first bad isolated-vertex line (before its first record)
};

namespace {

/// The ids of a '# isolated vertices:' line from p (past the prefix) to end;
/// false with the bad token's index when one is not a non-negative int64.
bool read_isolated(const char* p, const char* end, std::vector<int64_t>& out, int32_t& bad) {
  int32_t k = 0;
  for (;;) {
    p = skip_spaces(p, end);
    if (p >= end) return true;
    int64_t val = 0;
    const char* s = p;
    bool overflow = false;
    while (p < end && *p >= '0' && *p <= '9') {
      const int d = *p - '0';
      if (val > (kInt64Max - d) / 10) overflow = true; else val = val * 10 + d;
      ++p;
    }
    if (p == s || overflow || !(p >= end || is_space(*p))) {
      bad = k;
      return false;
    }
    out.push_back(val);
    ++k;
  }
}

/// Whether the token from p to its end is a number (a weight or a timestamp):
/// digits with any of "+-.eE", at least one digit.
bool numeric_token(const char* p, const char* end, const char** after) {
  bool digit = false, ok = true;
  while (p < end && *p != '\n' && !is_space(*p)) {
    const char c = *p++;
    if (c >= '0' && c <= '9') digit = true;
    else if (c != '+' && c != '-' && c != '.' && c != 'e' && c != 'E') ok = false;
  }
  *after = p;
  return ok && digit;
}

}  // namespace

void TextScanner::scan_piece(const char* p, const char* end, Piece& out) const {
  const int nf = spec_.nfields;
  int64_t line = 0;
  int64_t field_vals[8];
  auto fail = [&](int32_t kind, int32_t field) { out.err = {kind, line, field}; };
  while (p < end) {
    ++line;
    const char* start = p;
    p = skip_spaces(p, end);
    if (p >= end) break;
    const char c = *p;
    if (c == '\n') {
      ++p;
      continue;
    }
    const char* eol = line_end(p, end);
    if (c == '#' || c == '%') {
      if (spec_.isolated && out.first_record == 0 && p == start &&
          static_cast<size_t>(eol - p) >= kIsolatedPrefixLen &&
          std::memcmp(p, kIsolatedPrefix, kIsolatedPrefixLen) == 0 && out.isolated_err.kind == 0) {
        int32_t bad = 0;
        if (!read_isolated(p + kIsolatedPrefixLen, eol, out.isolated, bad))
          out.isolated_err = {kScanIsolated, line, bad};
      }
      p = eol < end ? eol + 1 : end;
      continue;
    }
    int tag = 0;
    if (spec_.tagged) {
      tag = static_cast<unsigned char>(c);
      ++p;
      if ((p < end && !(is_space(*p) || *p == '\n')) || spec_.required[tag] < 0)
        return fail(kScanBadTag, 0);
    }
    const int need = spec_.required[tag];
    int f = 0;
    while (f < need) {
      p = skip_spaces(p, end);
      if (p >= end || *p == '\n') break;
      bool neg = false;
      if (*p == '-') {
        neg = true;
        ++p;
      }
      const char* s = p;
      int64_t val = 0;
      bool overflow = false;
      while (p < end && *p >= '0' && *p <= '9') {
        const int d = *p - '0';
        if (val > (kInt64Max - d) / 10) overflow = true; else val = val * 10 + d;
        ++p;
      }
      if (p == s || !(p >= end || *p == '\n' || is_space(*p))) return fail(kScanNonInt, f);
      if (neg && val != 0) return fail(kScanNegative, f);
      if (overflow) return fail(kScanOverflow, f);
      field_vals[f++] = val;
    }
    if (f < need) return fail(kScanFewFields, f);
    for (int32_t tok = f;; ++tok) {  // what follows must be numbers (weights, timestamps)
      p = skip_spaces(p, end);
      if (p >= end || *p == '\n') break;
      if (!numeric_token(p, end, &p)) return fail(kScanExtra, tok);
    }
    for (int k = 0; k < nf; ++k) {
      out.vals.push_back(k < need ? field_vals[k] : 0);
      out.top = std::max(out.top, out.vals.back());
    }
    if (spec_.keep_meta) {
      out.tags.push_back(static_cast<uint8_t>(tag));
      out.linenos.push_back(line);
    }
    if (out.first_record == 0) out.first_record = line;
    p = eol < end ? eol + 1 : end;
  }
  out.lines = line;
}

bool TextScanner::scan(const char* data, size_t len, Parallel& par) {
  if (error_.kind != kScanOk) return false;
  if (len == 0) return true;
  // pieces of whole lines, a few per thread
  const size_t target = std::max<size_t>(size_t{1} << 20, len / (static_cast<size_t>(par.threads()) * 4));
  std::vector<size_t> cuts{0};
  while (cuts.back() < len) {
    size_t c = cuts.back() + target;
    if (c >= len) {
      c = len;
    } else {
      const void* nl = std::memchr(data + c, '\n', len - c);
      c = nl ? static_cast<size_t>(static_cast<const char*>(nl) - data) + 1 : len;
    }
    cuts.push_back(c);
  }
  const int64_t np = static_cast<int64_t>(cuts.size()) - 1;
  std::vector<Piece> pieces(static_cast<size_t>(np));
  par.for_chunks(np, 1, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      Piece& piece = pieces[static_cast<size_t>(i)];
      piece.vals.reserve((cuts[i + 1] - cuts[i]) / 6);
      scan_piece(data + cuts[i], data + cuts[i + 1], piece);
    }
  });
  // merge in file order: the first error wins; isolated lines only before the first record
  std::vector<int64_t> base(static_cast<size_t>(np) + 1);
  base[0] = lines_;
  for (int64_t i = 0; i < np; ++i) {
    Piece& piece = pieces[static_cast<size_t>(i)];
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
  std::vector<size_t> at(static_cast<size_t>(np) + 1);
  at[0] = count_;
  const size_t nf = static_cast<size_t>(spec_.nfields);
  for (int64_t i = 0; i < np; ++i) at[i + 1] = at[i] + pieces[i].vals.size() / nf;
  for (const Piece& piece : pieces)
    if (narrowed_ && piece.top > INT32_MAX) widen(par);
  if (narrowed_)
    vals32.resize(at[np] * nf);
  else
    vals.resize(at[np] * nf);
  if (spec_.keep_meta) {
    tags.resize(at[np]);
    linenos.resize(at[np]);
  }
  par.for_chunks(np, 1, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      Piece& piece = pieces[static_cast<size_t>(i)];
      if (narrowed_)
        std::copy(piece.vals.begin(), piece.vals.end(), vals32.data() + at[i] * nf);
      else if (!piece.vals.empty())
        std::memcpy(vals.data() + at[i] * nf, piece.vals.data(), piece.vals.size() * sizeof(int64_t));
      if (spec_.keep_meta) {
        std::copy(piece.tags.begin(), piece.tags.end(), tags.data() + at[i]);
        for (size_t k = 0; k < piece.linenos.size(); ++k)
          linenos[at[i] + k] = piece.linenos[k] + base[i];
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

}  // namespace gthinker
