// IDX reading and writing through zlib's gz* calls, which read plain files as they are.
#include "data/idx.h"

#include <zlib.h>

#include <algorithm>
#include <array>
#include <filesystem>
#include <fstream>
#include <memory>

#include "core/error.h"
#include "core/file_check.h"

namespace scalelab::data {
namespace {

constexpr std::uint32_t kImagesMagic = 0x00000803;
constexpr std::uint32_t kLabelsMagic = 0x00000801;
// Limits that catch a garbage header before it asks for gigabytes.
constexpr std::uint64_t kMaxBytes = std::uint64_t{4} << 30;

struct GzCloser {
  void operator()(gzFile_s* f) const { gzclose(f); }
};
using GzFile = std::unique_ptr<gzFile_s, GzCloser>;

GzFile open_read(const std::string& path) {
  check_input_file(path, "IDX file");
  GzFile f(gzopen(path.c_str(), "rb"));
  if (!f) throw_input(path + ": cannot open the IDX file; check the path or the data folder");
  gzbuffer(f.get(), 1 << 17);
  return f;
}

// Throws zlib's complaint about `f` (the last gzread failed), without the file name zlib puts in
// front of it: a stream cut short is "truncated", anything else "corrupt".
[[noreturn]] void throw_corrupt(gzFile_s* f, const std::string& path, const char* what) {
  int err = 0;
  std::string msg = gzerror(f, &err);
  if (msg.rfind(path + ": ", 0) == 0) msg.erase(0, path.size() + 2);
  const std::string problem = err == Z_BUF_ERROR ? ": truncated: the compressed data ends early while reading "
                                                 : ": corrupt compressed data while reading ";
  throw_input(path + problem + what + " (" + msg + "); download the file again");
}

// Reads exactly `n` bytes or throws naming the file ("truncated" or zlib's complaint); `before`
// bytes of the same `what` were read already (they count in the message).
void read_exact(gzFile_s* f, const std::string& path, void* dst, std::uint64_t n, const char* what,
                std::uint64_t before = 0, std::uint64_t total = 0) {
  auto* out = static_cast<std::uint8_t*>(dst);
  std::uint64_t done = 0;
  while (done < n) {
    const unsigned chunk = static_cast<unsigned>(std::min<std::uint64_t>(n - done, 1u << 30));
    const int got = gzread(f, out + done, chunk);
    if (got < 0) throw_corrupt(f, path, what);
    if (got == 0) {
      throw_input(path + ": truncated: " + what + " needs " + std::to_string(total > 0 ? total : n) +
                  " bytes but the file ends after " + std::to_string(before + done));
    }
    done += static_cast<std::uint64_t>(got);
  }
}

// Reads the `n` data bytes a header announces into `out`, which grows only as the bytes arrive,
// so that a header claiming more than the file holds costs no more memory than the file does.
// A plain file's size is known: it is checked before anything is allocated.
void read_payload(gzFile_s* f, const std::string& path, std::vector<std::uint8_t>& out, std::uint64_t n,
                  std::uint64_t header_bytes, const char* what) {
  if (gzdirect(f) == 1) {
    std::error_code ec;
    const std::uint64_t size = std::filesystem::file_size(path, ec);
    if (!ec && size < header_bytes + n) {
      throw_input(path + ": truncated: the header announces " + std::to_string(n) + " bytes of " + what +
                  " but the file holds " + std::to_string(size > header_bytes ? size - header_bytes : 0) +
                  "; the file is incomplete or its header is wrong");
    }
  }
  constexpr std::uint64_t kChunk = std::uint64_t{64} << 20;
  out.clear();
  while (out.size() < n) {
    const std::uint64_t done = out.size();
    out.resize(done + std::min(n - done, kChunk));
    read_exact(f, path, out.data() + done, out.size() - done, what, done, n);
  }
}
std::uint32_t read_be32(gzFile_s* f, const std::string& path, const char* what) {
  std::array<std::uint8_t, 4> b{};
  read_exact(f, path, b.data(), 4, what);
  return (std::uint32_t{b[0]} << 24) | (std::uint32_t{b[1]} << 16) | (std::uint32_t{b[2]} << 8) | b[3];
}

// The file ends where its header says: no bytes after the data, and for a gzipped file a whole
// trailer. `total` is the uncompressed size (header and data).
void expect_end(gzFile_s* f, const std::string& path, std::uint64_t total) {
  std::uint8_t extra = 0;
  // -1 here is the gzip trailer's check failing (a corrupt or cut stream), not the end of the file.
  const int got = gzread(f, &extra, 1);
  if (got < 0) throw_corrupt(f, path, "the end of the file");
  if (got > 0) {
    throw_input(path + ": has bytes after the data its header announces; the header's counts are wrong");
  }
  if (gzdirect(f) == 1) return;
  // A file cut inside its 8-byte trailer (CRC-32, then the size mod 2^32, little-endian) after all
  // the data reads as a clean end of file through gzread; the trailer's size field then no longer
  // matches what was read. (An IDX file is one gzip member, whose trailer ends the file.)
  std::ifstream in(path, std::ios::binary);
  std::array<unsigned char, 8> trailer{};
  in.seekg(-8, std::ios::end);
  if (!in.read(reinterpret_cast<char*>(trailer.data()), 8)) throw_input(path + ": cannot read its gzip trailer; download the file again");
  const std::uint32_t isize = trailer[4] | (trailer[5] << 8) | (trailer[6] << 16) | (static_cast<std::uint32_t>(trailer[7]) << 24);
  if (isize != static_cast<std::uint32_t>(total)) {
    throw_input(path + ": truncated: the file stops inside its gzip trailer (the last 8 bytes do not hold the data's "
                "size); download the file again");
  }
}

std::string magic_text(std::uint32_t m) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%08x", m);
  return buf;
}

GzFile open_write(const std::string& path, bool gzip) {
  GzFile f(gzopen(path.c_str(), gzip ? "wb6" : "wbT"));
  if (!f) throw_input(path + ": cannot open for writing");
  return f;
}

void write_all(gzFile_s* f, const std::string& path, const void* src, std::size_t n) {
  if (n > 0 && gzwrite(f, src, static_cast<unsigned>(n)) != static_cast<int>(n)) throw_runtime(path + ": write failed");
}

void write_be32(gzFile_s* f, const std::string& path, std::uint32_t v) {
  const std::array<std::uint8_t, 4> b{static_cast<std::uint8_t>(v >> 24), static_cast<std::uint8_t>(v >> 16),
                                      static_cast<std::uint8_t>(v >> 8), static_cast<std::uint8_t>(v)};
  write_all(f, path, b.data(), b.size());
}

}  // namespace

IdxImages read_idx_images(const std::string& path) {
  GzFile f = open_read(path);
  const std::uint32_t magic = read_be32(f.get(), path, "the header");
  if (magic != kImagesMagic) {
    throw_input(path + ": bad magic " + magic_text(magic) + " (an IDX image file starts with 0x00000803); is it the right file?");
  }
  IdxImages img;
  img.count = read_be32(f.get(), path, "the header");
  img.rows = read_be32(f.get(), path, "the header");
  img.cols = read_be32(f.get(), path, "the header");
  const std::uint64_t bytes = std::uint64_t{img.count} * img.rows * img.cols;
  if (img.rows == 0 || img.cols == 0 || img.rows > 4096 || img.cols > 4096 || bytes > kMaxBytes) {
    throw_input(path + ": implausible dimensions " + std::to_string(img.count) + " x " + std::to_string(img.rows) + " x " +
                std::to_string(img.cols) + " in the header");
  }
  read_payload(f.get(), path, img.pixels, bytes, 16, "the pixels");
  expect_end(f.get(), path, 16 + bytes);
  return img;
}

std::vector<std::uint8_t> read_idx_labels(const std::string& path) {
  GzFile f = open_read(path);
  const std::uint32_t magic = read_be32(f.get(), path, "the header");
  if (magic != kLabelsMagic) {
    throw_input(path + ": bad magic " + magic_text(magic) + " (an IDX label file starts with 0x00000801); is it the right file?");
  }
  const std::uint32_t count = read_be32(f.get(), path, "the header");
  if (count > kMaxBytes) throw_input(path + ": implausible label count " + std::to_string(count));
  std::vector<std::uint8_t> labels;
  read_payload(f.get(), path, labels, count, 8, "the labels");
  expect_end(f.get(), path, std::uint64_t{8} + count);
  return labels;
}

void write_idx_images(const std::string& path, const IdxImages& images, bool gzip) {
  GzFile f = open_write(path, gzip);
  write_be32(f.get(), path, kImagesMagic);
  write_be32(f.get(), path, images.count);
  write_be32(f.get(), path, images.rows);
  write_be32(f.get(), path, images.cols);
  write_all(f.get(), path, images.pixels.data(), images.pixels.size());
}

void write_idx_labels(const std::string& path, const std::vector<std::uint8_t>& labels, bool gzip) {
  GzFile f = open_write(path, gzip);
  write_be32(f.get(), path, kLabelsMagic);
  write_be32(f.get(), path, static_cast<std::uint32_t>(labels.size()));
  write_all(f.get(), path, labels.data(), labels.size());
}

}  // namespace scalelab::data
