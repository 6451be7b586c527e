// Units as distinct types: Bytes, Seconds and GBps cannot be mixed up by accident.
// GB means 1e9 bytes everywhere in scalelab (as in nccl-tests). Use:
//   Bytes b{64 << 20};  Seconds t{1.5e-3};  GBps bw = b / t;  Seconds back = b / bw;
#pragma once
#include <compare>
#include <cstdint>

namespace scalelab {

// A byte count. Whole bytes; `as_double()` for arithmetic in the cost model.
struct Bytes {
  std::uint64_t value = 0;
  constexpr Bytes() = default;
  constexpr explicit Bytes(std::uint64_t v) : value(v) {}
  [[nodiscard]] constexpr double as_double() const { return static_cast<double>(value); }
  constexpr auto operator<=>(const Bytes&) const = default;
  constexpr Bytes operator+(Bytes o) const { return Bytes{value + o.value}; }
  constexpr Bytes operator-(Bytes o) const { return Bytes{value - o.value}; }
  constexpr Bytes operator*(std::uint64_t k) const { return Bytes{value * k}; }
  constexpr Bytes operator/(std::uint64_t k) const { return Bytes{value / k}; }
};

// A duration in seconds (double). Helpers give microseconds for tables.
struct Seconds {
  double value = 0.0;
  constexpr Seconds() = default;
  constexpr explicit Seconds(double v) : value(v) {}
  [[nodiscard]] constexpr double us() const { return value * 1e6; }
  [[nodiscard]] constexpr double ms() const { return value * 1e3; }
  constexpr auto operator<=>(const Seconds&) const = default;
  constexpr Seconds operator+(Seconds o) const { return Seconds{value + o.value}; }
  constexpr Seconds operator-(Seconds o) const { return Seconds{value - o.value}; }
  constexpr Seconds operator*(double k) const { return Seconds{value * k}; }
  constexpr Seconds operator/(double k) const { return Seconds{value / k}; }
  constexpr Seconds& operator+=(Seconds o) { value += o.value; return *this; }
  static constexpr Seconds from_us(double us) { return Seconds{us * 1e-6}; }
};

// A bandwidth in GB/s, GB = 1e9 bytes.
struct GBps {
  double value = 0.0;
  constexpr GBps() = default;
  constexpr explicit GBps(double v) : value(v) {}
  [[nodiscard]] constexpr double bytes_per_second() const { return value * 1e9; }
  constexpr auto operator<=>(const GBps&) const = default;
  constexpr GBps operator*(double k) const { return GBps{value * k}; }
  constexpr GBps operator/(double k) const { return GBps{value / k}; }
};

constexpr GBps operator/(Bytes b, Seconds t) { return GBps{b.as_double() / t.value / 1e9}; }
constexpr Seconds operator/(Bytes b, GBps bw) { return Seconds{b.as_double() / bw.bytes_per_second()}; }

}  // namespace scalelab
