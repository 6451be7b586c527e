#include "core/size_parse.h"

#include <charconv>
#include <cmath>

#include "core/error.h"

namespace scalelab {

std::uint64_t parse_size(std::string_view text, std::string_view what) {
  const std::string shown(text);
  if (text.empty()) throw_usage(std::string(what) + ": empty size; give a byte count such as 8, 64K, 128M or 1G");
  double value = 0.0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || value < 0 || !std::isfinite(value)) {
    throw_usage(std::string(what) + ": '" + shown + "' is not a size; give a byte count such as 8, 64K, 128M or 1G");
  }
  std::string_view suffix(ptr, static_cast<std::size_t>(text.data() + text.size() - ptr));
  double mult = 1.0;
  if (suffix == "" || suffix == "B" || suffix == "b") mult = 1.0;
  else if (suffix == "K" || suffix == "k" || suffix == "KiB" || suffix == "KB") mult = 1024.0;
  else if (suffix == "M" || suffix == "m" || suffix == "MiB" || suffix == "MB") mult = 1024.0 * 1024.0;
  else if (suffix == "G" || suffix == "g" || suffix == "GiB" || suffix == "GB") mult = 1024.0 * 1024.0 * 1024.0;
  else if (suffix == "T" || suffix == "t" || suffix == "TiB" || suffix == "TB") mult = 1024.0 * 1024.0 * 1024.0 * 1024.0;
  else throw_usage(std::string(what) + ": unknown size suffix in '" + shown + "'; use K, M, G or T (powers of 1024)");
  // A byte count with a fraction of a byte is a slip (a suffixed size such as 1.1G rounds to the
  // nearest byte, as a size given in larger units is meant to).
  if (mult == 1.0 && value != std::floor(value)) {
    throw_usage(std::string(what) + ": '" + shown + "' is not a whole number of bytes; give e.g. " +
                std::to_string(static_cast<std::uint64_t>(std::floor(value))) + " or " +
                std::to_string(static_cast<std::uint64_t>(std::ceil(value))));
  }
  const double bytes = value * mult;
  // 2^63 and above is past llround's range (its result would be meaningless, not an error).
  if (bytes >= 9223372036854775808.0) throw_usage(std::string(what) + ": '" + shown + "' is too large; give less than 8388608T");
  return static_cast<std::uint64_t>(std::llround(bytes));
}

std::int64_t parse_int(std::string_view text, std::string_view what) {
  std::int64_t v = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || ptr != text.data() + text.size()) {
    throw_usage(std::string(what) + ": '" + std::string(text) + "' is not an integer");
  }
  return v;
}

std::string format_size(std::uint64_t bytes) {
  constexpr std::uint64_t KiB = 1024, MiB = KiB * 1024, GiB = MiB * 1024;
  if (bytes >= GiB && bytes % GiB == 0) return std::to_string(bytes / GiB) + " GiB";
  if (bytes >= MiB && bytes % MiB == 0) return std::to_string(bytes / MiB) + " MiB";
  if (bytes >= KiB && bytes % KiB == 0) return std::to_string(bytes / KiB) + " KiB";
  return std::to_string(bytes) + " B";
}

}  // namespace scalelab
