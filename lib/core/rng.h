// Reproducible random numbers: every random choice in scalelab comes from an Rng built from an
// explicit seed (and a stream id, e.g. the rank or the epoch), never from the time of day.
#pragma once
#include <cstdint>
#include <random>

namespace scalelab {

class Rng {
 public:
  explicit Rng(std::uint64_t seed, std::uint64_t stream = 0) : engine_(mix(seed, stream)) {}
  [[nodiscard]] std::uint64_t next_u64() { return engine_(); }
  [[nodiscard]] float uniform(float lo = 0.0f, float hi = 1.0f) {
    return std::uniform_real_distribution<float>(lo, hi)(engine_);
  }
  [[nodiscard]] float normal(float mean = 0.0f, float stddev = 1.0f) {
    return std::normal_distribution<float>(mean, stddev)(engine_);
  }
  // Uniform integer in [0, n).
  [[nodiscard]] std::uint64_t below(std::uint64_t n) {
    return std::uniform_int_distribution<std::uint64_t>(0, n - 1)(engine_);
  }
  std::mt19937_64& engine() { return engine_; }

 private:
  // splitmix64 of (seed, stream): nearby seeds give unrelated streams.
  static std::uint64_t mix(std::uint64_t seed, std::uint64_t stream) {
    std::uint64_t z = seed + 0x9E3779B97F4A7C15ull * (stream + 1);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  std::mt19937_64 engine_;
};

}  // namespace scalelab
