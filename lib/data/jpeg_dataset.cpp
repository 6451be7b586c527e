// The packed JPEG data set: index parsing and writing, making one from Fashion-MNIST, opening one
// (see jpeg_dataset.h and docs/jpeg-dataset.md).
#include "data/jpeg_dataset.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "core/atomic_file.h"
#include "core/error.h"
#include "data/jpeg_codec.h"

namespace scalelab::data {
namespace fs = std::filesystem;
namespace {

constexpr std::array<char, 8> kMagic{'S', 'L', 'J', 'P', 'G', 'I', 'D', 'X'};
constexpr std::uint32_t kMaxSide = 16384;
constexpr std::uint32_t kMaxClasses = 65536;

std::uint32_t get32(const std::uint8_t* p) {
  return static_cast<std::uint32_t>(p[0]) | static_cast<std::uint32_t>(p[1]) << 8 |
         static_cast<std::uint32_t>(p[2]) << 16 | static_cast<std::uint32_t>(p[3]) << 24;
}
std::uint64_t get64(const std::uint8_t* p) { return get32(p) | static_cast<std::uint64_t>(get32(p + 4)) << 32; }
void put32(std::vector<std::uint8_t>& out, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
}
void put64(std::vector<std::uint8_t>& out, std::uint64_t v) {
  put32(out, static_cast<std::uint32_t>(v));
  put32(out, static_cast<std::uint32_t>(v >> 32));
}

[[noreturn]] void bad_index(const std::string& path, const std::string& what) {
  throw_input(path + ": " + what + "; remake the data set with `scalelab data make-jpeg`");
}

// A small deterministic generator (splitmix64) for the colour and texture.
std::uint64_t mix(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}
double unit(std::uint64_t x) { return static_cast<double>(mix(x) >> 11) * 0x1.0p-53; }

std::vector<std::uint8_t> read_all(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) throw_input(p.string() + ": cannot be read; check its permissions");
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

}  // namespace

JpegIndex parse_jpeg_index(std::span<const std::uint8_t> bytes, const std::string& path) {
  if (bytes.size() < kJpegIndexHeaderBytes) {
    bad_index(path, std::to_string(bytes.size()) + " bytes, shorter than the " + std::to_string(kJpegIndexHeaderBytes) +
                        "-byte header");
  }
  if (std::memcmp(bytes.data(), kMagic.data(), kMagic.size()) != 0) bad_index(path, "not a JPEG data set index (no SLJPGIDX magic)");
  const std::uint8_t* h = bytes.data() + 8;
  const std::uint32_t version = get32(h);
  if (version != kJpegIndexVersion) {
    bad_index(path, "format version " + std::to_string(version) + ", this scalelab reads version " +
                        std::to_string(kJpegIndexVersion));
  }
  JpegIndex index;
  const std::uint32_t count = get32(h + 4);
  index.width = get32(h + 8);
  index.height = get32(h + 12);
  index.channels = get32(h + 16);
  index.classes = get32(h + 20);
  if (index.width == 0 || index.height == 0 || index.width > kMaxSide || index.height > kMaxSide) {
    bad_index(path, "image size " + std::to_string(index.width) + "x" + std::to_string(index.height) +
                        " (each side 1.." + std::to_string(kMaxSide) + ")");
  }
  if (index.channels != 1 && index.channels != 3) bad_index(path, std::to_string(index.channels) + " channels (1 or 3)");
  if (index.classes == 0 || index.classes > kMaxClasses) {
    bad_index(path, std::to_string(index.classes) + " classes (1.." + std::to_string(kMaxClasses) + ")");
  }
  const std::uint64_t expected = kJpegIndexHeaderBytes + static_cast<std::uint64_t>(count) * kJpegIndexEntryBytes;
  if (bytes.size() != expected) {
    bad_index(path, std::to_string(bytes.size()) + " bytes, but " + std::to_string(count) + " entries take " +
                        std::to_string(expected) + (bytes.size() < expected ? " (truncated)" : " (trailing bytes)"));
  }
  index.entries.resize(count);
  for (std::uint32_t i = 0; i < count; ++i) {
    const std::uint8_t* e = bytes.data() + kJpegIndexHeaderBytes + static_cast<std::size_t>(i) * kJpegIndexEntryBytes;
    JpegEntry& entry = index.entries[i];
    entry.offset = get64(e);
    entry.size = get32(e + 8);
    entry.label = get32(e + 12);
    if (entry.size == 0) bad_index(path, "entry " + std::to_string(i) + " is empty (size 0)");
    if (entry.offset > UINT64_MAX - entry.size) bad_index(path, "entry " + std::to_string(i) + "'s offset overflows");
    if (entry.label >= index.classes) {
      bad_index(path, "entry " + std::to_string(i) + " has label " + std::to_string(entry.label) + ", but there are " +
                          std::to_string(index.classes) + " classes");
    }
  }
  return index;
}

std::vector<std::uint8_t> serialize_jpeg_index(const JpegIndex& index) {
  std::vector<std::uint8_t> out(kMagic.begin(), kMagic.end());
  out.reserve(kJpegIndexHeaderBytes + index.entries.size() * kJpegIndexEntryBytes);
  put32(out, kJpegIndexVersion);
  put32(out, static_cast<std::uint32_t>(index.entries.size()));
  put32(out, index.width);
  put32(out, index.height);
  put32(out, index.channels);
  put32(out, index.classes);
  for (const JpegEntry& e : index.entries) {
    put64(out, e.offset);
    put32(out, e.size);
    put32(out, e.label);
  }
  return out;
}

void check_jpeg_entries(const JpegIndex& index, std::uint64_t images_bytes, const std::string& images_path) {
  std::uint64_t end = 0;
  for (std::size_t i = 0; i < index.entries.size(); ++i) {
    const JpegEntry& e = index.entries[i];
    if (e.offset + e.size > images_bytes) {
      throw_input(images_path + ": " + std::to_string(images_bytes) + " bytes, but sample " + std::to_string(i) +
                  " of the index runs to byte " + std::to_string(e.offset + e.size) +
                  " (truncated); remake the data set with `scalelab data make-jpeg`");
    }
    end = std::max<std::uint64_t>(end, e.offset + e.size);
  }
  // make-jpeg writes the samples end to end: bytes past the last one are another make's images
  // beside this index (a remake cut short between its renames).
  if (!index.entries.empty() && end != images_bytes) {
    throw_input(images_path + ": " + std::to_string(images_bytes) + " bytes, but its index ends at byte " + std::to_string(end) +
                ": the images and the index are from different makes; remake the data set with `scalelab data make-jpeg`");
  }
}

std::vector<std::uint8_t> jpeg_source_pixels(const InMemoryDataset& from, std::size_t i, const MakeJpegOptions& o) {
  const ImageShape s = from.shape();
  const int n = o.size;
  const int channels = o.colour ? 3 : 1;
  const std::uint8_t* src = from.pixels().data() + i * s.elements();
  std::vector<std::uint8_t> out(static_cast<std::size_t>(n) * static_cast<std::size_t>(n) * static_cast<std::size_t>(channels));
  // A per-class tint (a hue), varied a little per image, and a fine texture: the colour version.
  const std::uint32_t label = from.labels()[i];
  const std::uint64_t key = mix(o.seed ^ (static_cast<std::uint64_t>(i) * 0x100000001b3ULL));
  std::array<double, 3> tint{1, 1, 1};
  std::array<double, 3> ground{0, 0, 0};
  if (o.colour) {
    for (int c = 0; c < 3; ++c) {
      tint[c] = 0.55 + 0.45 * std::cos(0.63 * label + 2.09 * c) + 0.1 * (unit(key + static_cast<std::uint64_t>(c)) - 0.5);
      ground[c] = 40 * unit(key + 10 + static_cast<std::uint64_t>(c));
    }
  }
  const double sx = static_cast<double>(s.width) / n;
  const double sy = static_cast<double>(s.height) / n;
  for (int y = 0; y < n; ++y) {
    // Bilinear interpolation at pixel centres, clamped at the edges.
    const double fy = std::clamp((y + 0.5) * sy - 0.5, 0.0, static_cast<double>(s.height - 1));
    const int y0 = static_cast<int>(fy);
    const int y1 = std::min(y0 + 1, s.height - 1);
    const double wy = fy - y0;
    for (int x = 0; x < n; ++x) {
      const double fx = std::clamp((x + 0.5) * sx - 0.5, 0.0, static_cast<double>(s.width - 1));
      const int x0 = static_cast<int>(fx);
      const int x1 = std::min(x0 + 1, s.width - 1);
      const double wx = fx - x0;
      const auto at = [&](int yy, int xx) { return static_cast<double>(src[yy * s.width + xx]); };
      const double v = (1 - wy) * ((1 - wx) * at(y0, x0) + wx * at(y0, x1)) + wy * ((1 - wx) * at(y1, x0) + wx * at(y1, x1));
      const std::size_t p = (static_cast<std::size_t>(y) * static_cast<std::size_t>(n) + static_cast<std::size_t>(x)) *
                            static_cast<std::size_t>(channels);
      if (!o.colour) {
        out[p] = static_cast<std::uint8_t>(std::lround(std::clamp(v, 0.0, 255.0)));
        continue;
      }
      const std::uint64_t pix = key ^ (static_cast<std::uint64_t>(y) << 20) ^ static_cast<std::uint64_t>(x);
      const double texture = 18 * (unit(pix) - 0.5) + 10 * std::sin(0.21 * x + 0.13 * y + 6.28 * unit(key + 7));
      for (int c = 0; c < 3; ++c) {
        out[p + static_cast<std::size_t>(c)] =
            static_cast<std::uint8_t>(std::lround(std::clamp(ground[c] + v * tint[c] + texture, 0.0, 255.0)));
      }
    }
  }
  return out;
}

MakeJpegResult make_jpeg_dataset(const InMemoryDataset& from, const MakeJpegOptions& o, const std::string& dir) {
  if (o.size < 1 || o.size > static_cast<int>(kMaxSide)) {
    throw_parameter(ErrorKind::usage, "jpeg_size", std::to_string(o.size) + ": give 1.." + std::to_string(kMaxSide) + " pixels");
  }
  if (o.quality < 1 || o.quality > 100) throw_parameter(ErrorKind::usage, "jpeg_quality", std::to_string(o.quality) + ": give 1..100");
  if (from.shape().channels != 1) throw_input(from.name() + ": JPEG data sets are made from greyscale images");
  const std::size_t count = o.limit == 0 ? from.size() : std::min(o.limit, from.size());
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec || !fs::is_directory(dir)) throw_parameter(ErrorKind::input, "out", dir + ": cannot make the folder (" + ec.message() + ")");
  // The three files are written to temporaries and renamed into place only once all are complete
  // (core/atomic_file.h): a full disk or a kill while remaking a set leaves the old set whole,
  // never new images beside an old index.
  const fs::path images_path = fs::path(dir) / "images.bin";
  AtomicFile images(images_path.string(), "out");
  JpegIndex index;
  index.width = index.height = static_cast<std::uint32_t>(o.size);
  index.channels = o.colour ? 3 : 1;
  index.classes = static_cast<std::uint32_t>(from.classes());
  index.entries.reserve(count);
  std::uint64_t offset = 0;
  for (std::size_t i = 0; i < count; ++i) {
    const std::vector<std::uint8_t> pixels = jpeg_source_pixels(from, i, o);
    const std::vector<std::uint8_t> jpeg =
        encode_jpeg(pixels, {o.size, o.size, static_cast<int>(index.channels)}, o.quality);
    images.write(jpeg.data(), jpeg.size());
    index.entries.push_back({offset, static_cast<std::uint32_t>(jpeg.size()), from.labels()[i]});
    offset += jpeg.size();
  }
  const std::vector<std::uint8_t> index_bytes = serialize_jpeg_index(index);
  AtomicFile idx((fs::path(dir) / "index.bin").string(), "out");
  idx.write(index_bytes.data(), index_bytes.size());
  const nlohmann::json manifest{{"schema", "scalelab.jpeg-dataset"},
                                {"version", kJpegIndexVersion},
                                {"source", from.name()},
                                {"count", count},
                                {"width", o.size},
                                {"height", o.size},
                                {"channels", index.channels},
                                {"classes", index.classes},
                                {"quality", o.quality},
                                {"colour", o.colour},
                                {"images_bytes", offset}};
  const std::string manifest_text = manifest.dump(2) + "\n";
  AtomicFile m((fs::path(dir) / "manifest.json").string(), "out");
  m.write(manifest_text.data(), manifest_text.size());
  // All three on disk before any replaces its old self: then three renames, back to back.
  images.prepare();
  idx.prepare();
  m.prepare();
  images.commit();
  idx.commit();
  m.commit();
  return {count, offset};
}

JpegDataset::JpegDataset(const std::string& dir) : dir_(dir) {
  if (!fs::is_directory(dir)) {
    throw_parameter(ErrorKind::input, "dataset", "jpeg:" + dir + ": no such folder; make one with `scalelab data make-jpeg --out " + dir + "`");
  }
  const fs::path index_path = fs::path(dir) / "index.bin";
  images_path_ = (fs::path(dir) / "images.bin").string();
  for (const fs::path& p : {index_path, fs::path(images_path_)}) {
    if (!fs::is_regular_file(p)) {
      std::error_code ec;
      throw_parameter(ErrorKind::input, "dataset", "jpeg:" + dir + ": " + p.filename().string() +
                                                       (fs::exists(p, ec) ? " is not a regular file" : " is missing") +
                                                       "; remake the data set with `scalelab data make-jpeg`");
    }
  }
  index_ = parse_jpeg_index(read_all(index_path), index_path.string());
  check_jpeg_entries(index_, fs::file_size(images_path_), images_path_);
}

}  // namespace scalelab::data
