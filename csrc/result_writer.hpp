// ResultWriter: streams emitted results (e.g. cliques) to one text file.
//
// Each worker formats lines into its own buffer (no lock) and hands full
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
