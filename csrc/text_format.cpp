#include "text_format.hpp"

#include <cstring>
#include <vector>

namespace gthinker {

namespace {

/// Appends the decimal digits of x >= 0.
inline void put_int(std::vector<char>& out, int64_t x) {
  char tmp[24];
  int k = 0;
  do {
    tmp[k++] = static_cast<char>('0' + x % 10);
    x /= 10;
  } while (x > 0);
  while (k > 0) out.push_back(tmp[--k]);
}

/// Runs piece(b, e, out) over [0, n) in pieces, one buffer each, joined in order.
template <typename F>
OwnedArray<char> join_pieces(int64_t n, int64_t grain, F piece, Parallel& par) {
  const int64_t np = n == 0 ? 0 : (n + grain - 1) / grain;
  std::vector<std::vector<char>> parts(static_cast<size_t>(np));
  par.for_chunks(np, 1, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i)
      piece(i * grain, std::min(n, (i + 1) * grain), parts[static_cast<size_t>(i)]);
  });
  size_t total = 0;
  for (const auto& p : parts) total += p.size();
  OwnedArray<char> out(total);
  std::vector<size_t> at(parts.size() + 1, 0);
  for (size_t i = 0; i < parts.size(); ++i) at[i + 1] = at[i] + parts[i].size();
  par.for_chunks(np, 1, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i)
      if (!parts[i].empty()) std::memcpy(out.data() + at[i], parts[i].data(), parts[i].size());
  });
  return out;
}

}  // namespace

OwnedArray<char> format_edges(const EdgeLines& how, int64_t row_begin, int64_t row_end,
                              Parallel& par) {
  const int64_t rows = row_end - row_begin;
  return join_pieces(rows, 16384, [&](int64_t b, int64_t e, std::vector<char>& out) {
    out.reserve(static_cast<size_t>(how.indptr[row_begin + e] - how.indptr[row_begin + b]) * 12);
    for (int64_t r = row_begin + b; r < row_begin + e; ++r) {
      const int64_t iu = (how.ids ? how.ids[r] : r) + how.add;
      for (int64_t k = how.indptr[r]; k < how.indptr[r + 1]; ++k) {
        const int64_t v = how.indices[k];
        if (how.upper ? v <= r : v >= r) continue;
        out.insert(out.end(), how.prefix.begin(), how.prefix.end());
        put_int(out, iu);
        out.push_back(how.sep);
        put_int(out, (how.ids ? how.ids[v] : v) + how.add);
        out.push_back('\n');
      }
    }
  }, par);
}

OwnedArray<char> format_rows(const int64_t* mat, int64_t rows, int64_t cols,
                             const std::string& prefix, char sep, Parallel& par) {
  return join_pieces(rows, 65536, [&](int64_t b, int64_t e, std::vector<char>& out) {
    out.reserve(static_cast<size_t>(e - b) * static_cast<size_t>(cols) * 8);
    for (int64_t r = b; r < e; ++r) {
      out.insert(out.end(), prefix.begin(), prefix.end());
      for (int64_t c = 0; c < cols; ++c) {
        put_int(out, mat[r * cols + c]);
        out.push_back(c + 1 < cols ? sep : '\n');
      }
    }
  }, par);
}

}  // namespace gthinker
