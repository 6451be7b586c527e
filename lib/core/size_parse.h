// Byte sizes as people type them (nccl-tests style): "8", "64K", "128M", "2G" (K/M/G are
// powers of 1024), and the reverse for tables. Bad text is a usage error naming the flag.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>

namespace scalelab {

// Parses a size; `what` names the flag in the error ("-b/--minbytes").
std::uint64_t parse_size(std::string_view text, std::string_view what);
// Parses a positive integer; `what` names the flag in the error.
std::int64_t parse_int(std::string_view text, std::string_view what);
// "64 MiB", "512 KiB", "100 B": exact binary units where they divide, else bytes.
std::string format_size(std::uint64_t bytes);

}  // namespace scalelab
