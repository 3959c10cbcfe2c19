// ResultWriter: streams emitted results (e.g. cliques) to one text file.
//
// Each worker formats lines into its own buffer (no lock) and hands full
// buffers to the writer, which appends them under one mutex: results are
// never all held in memory at once. The file is unbuffered: every write is a
// buffer of whole lines handed straight to the OS, so a process that dies
// between writes (even by SIGKILL) leaves a file of whole lines.
#pragma once

#include <charconv>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>

namespace gthinker {

class ResultWriter {
 public:
  /// Opens `path` for writing (truncates). Throws std::runtime_error on failure.
  explicit ResultWriter(const std::string& path) : file_(std::fopen(path.c_str(), "wb"), &std::fclose) {
    if (!file_) throw std::runtime_error("cannot open output file '" + path + "' for writing");
    std::setvbuf(file_.get(), nullptr, _IONBF, 0);
  }

  /// Appends `text` to the file. Thread-safe.
  void write(const std::string& text) {
    if (text.empty()) return;
    std::lock_guard<std::mutex> lock(mu_);
    if (std::fwrite(text.data(), 1, text.size(), file_.get()) != text.size()) failed_ = true;
  }

  /// Flushes to the OS; false if any write failed (e.g. disk full).
  bool finish() {
    std::lock_guard<std::mutex> lock(mu_);
    if (std::fflush(file_.get()) != 0) failed_ = true;
    return !failed_;
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
  bool failed_ = false;
};

}  // namespace gthinker
