// Checks of a path the user named before it is read or written, so that a folder given where a
// file belongs is one clear input error naming the path, instead of the C++ library's
// "basic_filebuf::underflow error reading the file: Is a directory" or a failed rename, and a
// FIFO is refused instead of blocking the read for ever.
//
//   check_input_file(path, "machine file");        // before std::ifstream in(path)
// (Output paths are checked by core/output_path.h.)
#pragma once
#include <string>

namespace scalelab {

// Throws an input error, about `parameter` when one is named, when `path` is a folder ("<path>: is
// a directory, not a <what>; give the file's path") or a device, FIFO or socket ("<path>: is not a
// regular file (a device, FIFO or socket); give the <what>'s path"). A missing path is left to the
// caller (its message says what to do).
void check_input_file(const std::string& path, const std::string& what, const std::string& parameter = "");

// Whether `path` exists and, links followed, is not a regular file nor a folder: a device, FIFO
// or socket, which scalelab neither reads as a file (a FIFO blocks, /dev/zero never ends) nor
// replaces with one (as root, `--json /dev/null` would replace /dev/null itself).
[[nodiscard]] bool is_special_file(const std::string& path);
// The words errors use for such a path ("<path>: is not a regular file ...; <fix>").
inline constexpr const char* kSpecialFileWords = "is not a regular file (a device, FIFO or socket)";

}  // namespace scalelab
