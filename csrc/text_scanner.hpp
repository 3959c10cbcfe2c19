// The text scanner behind every text graph reader: lines of integer fields
// (an optional one-byte tag first), '#' and '%' comments, blank lines, spaces,
// tabs, commas and '\r'. A caller feeds it blocks of whole lines in file order; each
// block is split at line ends into pieces that the threads scan at once, and
// their records are appended in file order. The first bad line stops it with
// its kind, 1-based line number and field.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "owned_array.hpp"
#include "parallel.hpp"

namespace gthinker {

/// What went wrong on a line (0: nothing). Kept in step with graph_files.py.
enum ScanErrorKind : int32_t {
  kScanOk = 0,
  kScanNonInt = 1,     // a field that is not an integer
  kScanNegative = 2,   // a negative integer
  kScanOverflow = 3,   // an integer past int64
  kScanFewFields = 4,  // fewer fields than the line's kind needs
  kScanBadTag = 5,     // an unknown line tag
  kScanExtra = 6,      // a token after the fields that is not a number
  kScanIsolated = 7,   // a '# isolated vertices:' line with a token that is not an id
};

struct ScanSpec {
  int nfields = 2;             // integer fields stored per record
  int8_t required[256] = {};   // fields a record of each tag byte needs (0: untagged); -1: unknown
  bool tagged = false;         // each record starts with a one-character tag
  bool keep_meta = false;      // keep each record's tag and line number
  bool isolated = false;       // read '# isolated vertices: id ...' lines before the first record
  bool narrow = false;         // keep the values as int32 while every one fits (half the memory)
};

struct ScanError {
  int32_t kind = kScanOk;
  int64_t line = 0;   // 1-based, in the whole input
  int32_t field = 0;  // 0-based field (token after the tag) of the line
};

class TextScanner {
 public:
  explicit TextScanner(const ScanSpec& spec) : spec_(spec) {}

  /// Scans data[0, len): whole lines (only the final block's last line may lack
  /// its newline). Returns false at the first bad line (see error()); after
  /// that, nothing more is scanned.
  bool scan(const char* data, size_t len, Parallel& par);

  int64_t lines() const { return lines_; }
  int64_t records() const { return static_cast<int64_t>(count_); }
  const ScanError& error() const { return error_; }
  /// Line of the first record (0: none yet).
  int64_t first_record_line() const { return first_record_; }
  /// Whether the records are in vals32 (with spec.narrow, while every value fits).
  bool narrowed() const { return narrowed_; }

  OwnedArray<int64_t> vals;     // records x nfields
  OwnedArray<int32_t> vals32;   // the same, narrowed
  OwnedArray<uint8_t> tags;     // with keep_meta
  OwnedArray<int64_t> linenos;  // with keep_meta
  OwnedArray<int64_t> isolated; // ids of the leading '# isolated vertices:' lines

 private:
  struct Piece;
  void scan_piece(const char* p, const char* end, Piece& out) const;
  /// The records so far from vals32 to vals (a value past int32 came).
  void widen(Parallel& par);

  ScanSpec spec_;
  bool narrowed_ = spec_.narrow;
  ScanError error_;
  int64_t lines_ = 0;
  int64_t first_record_ = 0;
  size_t count_ = 0;
};

}  // namespace gthinker
