#include "topo/gpu_arch.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <utility>

namespace scalelab::topo {

namespace {

constexpr std::array<std::pair<GpuArch, std::string_view>, 9> kNames{{
    {GpuArch::pascal, "pascal"},
    {GpuArch::volta, "volta"},
    {GpuArch::turing, "turing"},
    {GpuArch::ampere, "ampere"},
    {GpuArch::ada, "ada"},
    {GpuArch::hopper, "hopper"},
    {GpuArch::blackwell, "blackwell"},
    {GpuArch::cdna2, "cdna2"},
    {GpuArch::cdna3, "cdna3"},
}};

// Product-name fragments, upper case, checked in order (the more specific first: "GH200" before
// "H200", "RTX 6000 ADA" before "RTX 6000"). Each is a whole word or the start of one, so that
// "A10" does not match "A100" (see word_at).
constexpr std::array<std::pair<std::string_view, GpuArch>, 40> kProducts{{
    {"GB200", GpuArch::blackwell}, {"GB300", GpuArch::blackwell}, {"B200", GpuArch::blackwell},
    {"B300", GpuArch::blackwell}, {"B100", GpuArch::blackwell}, {"RTX 50", GpuArch::blackwell},
    {"RTX PRO 6000", GpuArch::blackwell},
    {"GH200", GpuArch::hopper}, {"H200", GpuArch::hopper}, {"H100", GpuArch::hopper}, {"H800", GpuArch::hopper},
    {"H20", GpuArch::hopper},
    {"RTX 6000 ADA", GpuArch::ada}, {"RTX 40", GpuArch::ada}, {"L40", GpuArch::ada}, {"L4", GpuArch::ada},
    {"L20", GpuArch::ada},
    {"A100", GpuArch::ampere}, {"A800", GpuArch::ampere}, {"A40", GpuArch::ampere}, {"A30", GpuArch::ampere},
    {"A10", GpuArch::ampere}, {"A16", GpuArch::ampere}, {"A6000", GpuArch::ampere}, {"A5000", GpuArch::ampere},
    {"A4000", GpuArch::ampere}, {"RTX 30", GpuArch::ampere},
    {"RTX 20", GpuArch::turing}, {"T4", GpuArch::turing}, {"QUADRO RTX", GpuArch::turing}, {"TITAN RTX", GpuArch::turing},
    {"V100", GpuArch::volta}, {"TITAN V", GpuArch::volta},
    {"P100", GpuArch::pascal}, {"P40", GpuArch::pascal}, {"GTX 10", GpuArch::pascal},
    {"MI300", GpuArch::cdna3}, {"MI325", GpuArch::cdna3},
    {"MI250", GpuArch::cdna2}, {"MI210", GpuArch::cdna2},
}};

// `word` occurs in `text` at a position where no letter or digit precedes it, and, when it ends in
// a digit, no digit follows it ("A10" in "A10G" yes, in "A100" no; "RTX 40" in "RTX 4090" yes).
bool word_at(const std::string& text, std::string_view word) {
  for (std::size_t at = text.find(word); at != std::string::npos; at = text.find(word, at + 1)) {
    const bool start_ok = at == 0 || !std::isalnum(static_cast<unsigned char>(text[at - 1]));
    const std::size_t end = at + word.size();
    const bool ends_in_digit = std::isdigit(static_cast<unsigned char>(word.back())) != 0;
    const bool is_series = (word.starts_with("RTX ") && word.size() == 6) || word == "GTX 10";  // "RTX 40" + "90"
    const bool end_ok = is_series || !ends_in_digit || end == text.size() ||
                        !std::isdigit(static_cast<unsigned char>(text[end]));
    if (start_ok && end_ok) return true;
  }
  return false;
}

}  // namespace

std::string_view name_of(GpuArch a) {
  for (const auto& [arch, name] : kNames) {
    if (arch == a) return name;
  }
  return "?";
}

std::optional<GpuArch> parse_gpu_arch(std::string_view name) {
  for (const auto& [arch, n] : kNames) {
    if (n == name) return arch;
  }
  return std::nullopt;
}

std::string gpu_arch_names() {
  std::string out;
  for (const auto& [arch, name] : kNames) out += (out.empty() ? "" : ", ") + std::string(name);
  return out;
}

GpuArch arch_from_compute_capability(int major, int minor) {
  if (major >= 10) return GpuArch::blackwell;
  if (major == 9) return GpuArch::hopper;
  if (major == 8) return minor == 9 ? GpuArch::ada : GpuArch::ampere;
  if (major == 7) return minor >= 5 ? GpuArch::turing : GpuArch::volta;
  return GpuArch::pascal;
}

std::optional<GpuArch> arch_from_model_name(std::string_view model) {
  std::string upper(model);
  std::transform(upper.begin(), upper.end(), upper.begin(), [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  std::replace(upper.begin(), upper.end(), '-', ' ');
  std::replace(upper.begin(), upper.end(), '_', ' ');
  for (const auto& [word, arch] : kProducts) {
    if (word_at(upper, word)) return arch;
  }
  return std::nullopt;
}

}  // namespace scalelab::topo
