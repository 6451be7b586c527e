// Atomic file replacement: the bytes go to a temporary file beside the target, with a name no
// other process picks (core/output_path.h, unique_temp_name), which is fsync'ed and renamed over
// the target, then the folder is fsync'ed. A reader (or a crash, or kill -9) sees the previous
// file or the new one, never half of one; two writers of one target never share a temporary.
// The temporary is removed whenever the write does not complete (an error, a full disk, an
// exception between writes): the destructor cleans up unless commit() succeeded. A symbolic link
// is followed (its target is replaced, the link kept); a device, FIFO or socket at the path is an
// input error, never replaced. Temporaries that writers killed mid-write left beside the target
// are removed by the next write of it, once their process is gone and they are an hour old.
//
//   AtomicFile f("results.json", "json");   // errors name the parameter "json"
//   f.write(text.data(), text.size());
//   f.commit();                              // now results.json holds text
//
//   write_file_atomically("out.dat", text, "");  // the same in one call; "" names no parameter
#pragma once
#include <cstddef>
#include <string>

namespace scalelab {

class AtomicFile {
 public:
  // Creates the temporary; an input error naming `parameter` (when not empty) and the target
  // when it cannot be created.
  AtomicFile(std::string target, std::string parameter);
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  // Appends n bytes; a runtime error (the temporary removed) when the disk refuses them.
  void write(const void* data, std::size_t n);
  // fsync and close the temporary, without replacing the target yet: several files can then be
  // made durable first and renamed into place back to back. After an error the temporary is gone.
  void prepare();
  // prepare (when not done), rename over the target, fsync the folder. After an error the
  // temporary is gone.
  void commit();
  [[nodiscard]] const std::string& temp_path() const { return temp_; }

 private:
  [[noreturn]] void fail(bool input, const std::string& what);
  void discard();
  std::string target_;
  std::string parameter_;
  std::string temp_;
  int fd_ = -1;
  bool committed_ = false;
};

// AtomicFile in one call: `text` replaces `path`.
void write_file_atomically(const std::string& path, const std::string& text, const std::string& parameter);

}  // namespace scalelab
