// Turning one JPEG of a packed data set into a tensor (see jpeg_sample.h).
#include "data/jpeg_sample.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

#include "core/error.h"

namespace scalelab::data {
namespace {

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

}  // namespace

void load_jpeg_sample(const JpegDataset& set, int fd, std::size_t i, const AugmentParams& p, JpegIdct idct, bool cold,
                      SampleScratch& scratch, float* chw, StageSeconds& t) {
  const JpegIndex& index = set.index();
  const JpegEntry& e = index.entries[i];
  auto t0 = Clock::now();
  scratch.bytes.resize(e.size);
  const auto offset = static_cast<off_t>(e.offset);
  if (cold) ::posix_fadvise(fd, offset, static_cast<off_t>(e.size), POSIX_FADV_DONTNEED);
  std::size_t got = 0;
  while (got < e.size) {
    const ssize_t n = ::pread(fd, scratch.bytes.data() + got, e.size - got, offset + static_cast<off_t>(got));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw_runtime(set.images_path() + ": reading sample " + std::to_string(i) + " failed (" + std::strerror(errno) + ")");
    if (n == 0) throw BadSample{"images.bin ends inside it (truncated)"};
    got += static_cast<std::size_t>(n);
  }
  t.read += since(t0);

  t0 = Clock::now();
  JpegInfo info;
  try {
    info = read_jpeg_header(scratch.bytes);
  } catch (const JpegError& err) {
    throw BadSample{err.what()};
  }
  if (info.width != static_cast<int>(index.width) || info.height != static_cast<int>(index.height)) {
    throw BadSample{"a " + std::to_string(info.width) + "x" + std::to_string(info.height) + " image in a set of " +
                    std::to_string(index.width) + "x" + std::to_string(index.height) + " images"};
  }
  try {
    decode_jpeg_into(scratch.bytes, static_cast<int>(index.channels), idct, p.decode_scale, scratch.decoded);
  } catch (const JpegError& err) {
    throw BadSample{err.what()};
  }
  t.decode += since(t0);

  t0 = Clock::now();
  augment_into(p, scratch.decoded, chw);
  t.augment += since(t0);
}

void bad_sample(const JpegDataset& set, std::size_t i, const std::string& what, bool skippable) {
  const JpegEntry& e = set.index().entries[i];
  const std::string sample = set.images_path() + " sample " + std::to_string(i) + " (" + std::to_string(e.size) +
                             " bytes at offset " + std::to_string(e.offset) + "): " + what;
  if (!skippable) throw_input(sample + "; remake the data set with `scalelab data make-jpeg`");
  throw_parameter(ErrorKind::input, "on_bad_sample",
                  "stop: " + sample + "; remake the data set with `scalelab data make-jpeg`, or skip bad samples");
}

}  // namespace scalelab::data
