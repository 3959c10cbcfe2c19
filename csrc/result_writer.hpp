// ResultWriter: streams emitted results (e.g. cliques) to one file, as text lines
// (one result a line, ids separated by spaces) or as binary records (the result's
// length, then its ids, all int64 in the machine's byte order: what
// gthinker.stream reads from a pipe without parsing text).
//
// Each worker formats results into its own buffer (no lock) and hands full
// buffers to the writer, which appends them under one mutex: results are
// never all held in memory at once. The file is unbuffered: every write is a
// buffer of whole lines handed straight to the OS. The first failed write is
// kept with its errno (a closed pipe is EPIPE, a full disk ENOSPC), so the job
// can stop at once and say which. Whole-file-or-nothing is the caller's part:
// gthinker.outputs hands the writer a temporary file and renames it at the end.
#pragma once

#include <cerrno>
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>

namespace gthinker {

class ResultWriter {
 public:
  /// The formats of JobConfig::output_format.
  static constexpr int64_t kText = 0;
  static constexpr int64_t kBinary = 1;

  /// Opens `path` for writing (truncates). Throws std::runtime_error on failure.
  explicit ResultWriter(const std::string& path) : file_(std::fopen(path.c_str(), "wb"), &std::fclose) {
    if (!file_)
      throw std::runtime_error("cannot open output file '" + path + "' for writing: " +
                               std::strerror(errno));
    std::setvbuf(file_.get(), nullptr, _IONBF, 0);
  }

  /// Appends `text` to the file. Thread-safe. False once a write has failed
  /// (later writes are skipped).
  bool write(const std::string& text) {
    std::lock_guard<std::mutex> lock(mu_);
    if (error_ != 0) return false;
    if (text.empty()) return true;
    errno = 0;
    if (std::fwrite(text.data(), 1, text.size(), file_.get()) != text.size())
      error_ = errno != 0 ? errno : EIO;
    return error_ == 0;
  }

  /// Flushes to the OS; false if any write failed.
  bool finish() {
    std::lock_guard<std::mutex> lock(mu_);
    errno = 0;
    if (error_ == 0 && std::fflush(file_.get()) != 0) error_ = errno != 0 ? errno : EIO;
    return error_ == 0;
  }

  /// The errno of the first failed write (0: none).
  int error() {
    std::lock_guard<std::mutex> lock(mu_);
    return error_;
  }

  /// Appends one result to `buf` in `format` (kText or kBinary): ids[vals[i]] (or
  /// vals[i] without ids).
  static void format(int64_t format, const int32_t* vals, int64_t len, const int64_t* ids,
                     std::string& buf) {
    if (format == kBinary) {
      format_record(vals, len, ids, buf);
    } else {
      format_line(vals, len, ids, buf);
    }
  }

  /// Formats one binary record into `buf`: its length, then ids[vals[i]], int64 each.
  static void format_record(const int32_t* vals, int64_t len, const int64_t* ids,
                            std::string& buf) {
    const size_t at = buf.size();
    buf.resize(at + sizeof(int64_t) * static_cast<size_t>(len + 1));
    auto* out = reinterpret_cast<char*>(buf.data()) + at;
    std::memcpy(out, &len, sizeof(int64_t));
    for (int64_t i = 0; i < len; ++i) {
      const int64_t id = ids ? ids[vals[i]] : vals[i];
      std::memcpy(out + sizeof(int64_t) * static_cast<size_t>(i + 1), &id, sizeof(int64_t));
    }
  }

  /// Formats one line of ids into `buf`: ids[vals[i]] separated by spaces.
  static void format_line(const int32_t* vals, int64_t len, const int64_t* ids, std::string& buf) {
    char tmp[24];
    for (int64_t i = 0; i < len; ++i) {
      int64_t id = ids ? ids[vals[i]] : vals[i];
      auto res = std::to_chars(tmp, tmp + sizeof(tmp), id);
      if (i) buf.push_back(' ');
      buf.append(tmp, res.ptr);
    }
    buf.push_back('\n');
  }

 private:
  std::unique_ptr<FILE, int (*)(FILE*)> file_;
  std::mutex mu_;
  int error_ = 0;
};

}  // namespace gthinker
