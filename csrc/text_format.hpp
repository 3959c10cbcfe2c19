// Text output of graphs on all cores: edge lines of CSR rows and rows of
// integers, formatted by the threads into pieces that are joined in order.
#pragma once

#include <cstdint>
#include <string>

#include "owned_array.hpp"
#include "parallel.hpp"

namespace gthinker {

/// How edge lines look: "<prefix><id u + add><sep><id v + add>\n" for each edge
/// (u, v) of rows [row_begin, row_end) with v > u (upper) or v < u (not upper).
/// ids: each vertex's id (null: the vertex number itself).
struct EdgeLines {
  const int64_t* indptr = nullptr;
  const int32_t* indices = nullptr;
  const int64_t* ids = nullptr;
  int64_t add = 0;
  bool upper = true;
  std::string prefix;
  char sep = '\t';
};

OwnedArray<char> format_edges(const EdgeLines& how, int64_t row_begin, int64_t row_end,
                              Parallel& par);

/// "<prefix>f0<sep>f1...\n" for each row of a rows x cols matrix of non-negative ints.
OwnedArray<char> format_rows(const int64_t* mat, int64_t rows, int64_t cols,
                             const std::string& prefix, char sep, Parallel& par);

}  // namespace gthinker
