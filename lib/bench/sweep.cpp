// Size sweep, per-collective buffer shapes and bus-bandwidth factors (sweep.h).
#include "bench/sweep.h"

#include <string>

#include "core/error.h"
#include "core/size_parse.h"

namespace scalelab::bench {

using collectives::Collective;

std::string sweep_end_note(const SweepSpec& spec, const std::vector<std::uint64_t>& sizes) {
  if (sizes.empty() || sizes.back() >= spec.max_bytes) return "";
  const std::uint64_t last = sizes.back();
  const bool by_factor = spec.step_factor > 1;
  const std::uint64_t next = by_factor ? last * spec.step_factor : last + spec.step_bytes;
  if (next <= last) return "";
  return "# sizes stop at " + format_size(last) + ": the next (" + format_size(next) + ") would pass -e " +
         format_size(spec.max_bytes);
}

std::vector<std::uint64_t> size_sweep(const SweepSpec& spec, std::size_t type_size) {
  if (spec.min_bytes > spec.max_bytes) {
    throw_parameter(ErrorKind::usage, "min_bytes",
                    std::to_string(spec.min_bytes) + " is greater than the largest size " +
                        std::to_string(spec.max_bytes) + "; start at or below it");
  }
  if (spec.step_factor == 0) {
    throw_parameter(ErrorKind::usage, "step_factor", "0: give a factor of 2 or more (or 1 to step by a fixed number of bytes)");
  }
  const bool by_factor = spec.step_factor > 1;
  if (spec.min_bytes < spec.max_bytes) {
    if (by_factor && spec.min_bytes == 0) {
      throw_parameter(ErrorKind::usage, "min_bytes",
                      "0 multiplied by a step factor never grows; start at " + std::to_string(type_size) + " or more");
    }
    if (!by_factor && spec.step_bytes == 0) {
      throw_parameter(ErrorKind::usage, "step_bytes",
                      "0 never advances from the smallest size to the largest; give a step above 0, or a factor of 2");
    }
  }
  // Counted before any is stored: -i 4 up to -e 1T would be 2.7e11 sizes.
  std::uint64_t count = 1;
  if (spec.min_bytes < spec.max_bytes) {
    if (by_factor) {
      for (std::uint64_t s = spec.min_bytes; s <= spec.max_bytes / spec.step_factor; s *= spec.step_factor) ++count;
    } else {
      count = (spec.max_bytes - spec.min_bytes) / spec.step_bytes + 1;
    }
  }
  if (count > kMaxSweepSizes) {
    throw_parameter(ErrorKind::usage, "step_bytes",
                    std::to_string(spec.step_bytes) + " from " + format_size(spec.min_bytes) + " to " +
                        format_size(spec.max_bytes) + " gives " + std::to_string(count) + " sizes, more than " +
                        std::to_string(kMaxSweepSizes) + "; step by more bytes, or by a factor of 2");
  }
  std::vector<std::uint64_t> sizes;
  for (std::uint64_t s = spec.min_bytes; s <= spec.max_bytes;) {
    if (s % type_size != 0) {
      throw_usage("size " + std::to_string(s) + " (from -b/-e/-i) is not a multiple of the " +
                  std::to_string(type_size) + "-byte data type; choose sizes that are");
    }
    sizes.push_back(s);
    const std::uint64_t next = by_factor ? s * spec.step_factor : s + spec.step_bytes;
    if (next <= s) break;  // -b == -e with no step, or overflow
    s = next;
  }
  return sizes;
}

CaseShape case_shape(Collective c, std::uint64_t size_bytes, std::size_t type_size, int nranks) {
  const auto n = static_cast<std::uint64_t>(nranks);
  CaseShape s;
  const std::uint64_t elems = size_bytes / type_size;
  switch (c) {
    case Collective::allreduce:
    case Collective::broadcast:
      s.call_count = elems;
      s.send_elems = s.recv_elems = elems;
      s.count = elems;
      break;
    case Collective::allgather:
      s.call_count = elems / n;
      s.send_elems = s.call_count;
      s.recv_elems = s.call_count * n;
      s.count = s.recv_elems;
      break;
    case Collective::reduce_scatter:
      s.call_count = elems / n;
      s.send_elems = s.call_count * n;
      s.recv_elems = s.call_count;
      s.count = s.send_elems;
      break;
  }
  s.size_bytes = s.count * type_size;
  return s;
}

bool has_reduction(Collective c) { return c == Collective::allreduce || c == Collective::reduce_scatter; }
bool has_root(Collective c) { return c == Collective::broadcast; }

}  // namespace scalelab::bench
