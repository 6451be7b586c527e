// Sizes as typed on the command line (core/size_parse.h): suffixes, fractions of a byte, and sizes
// too large to hold.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "core/error.h"
#include "core/size_parse.h"

using namespace scalelab;

TEST(SizeParse, SuffixesArePowersOf1024) {
  EXPECT_EQ(parse_size("8", "-b"), 8u);
  EXPECT_EQ(parse_size("64K", "-b"), 64u * 1024);
  EXPECT_EQ(parse_size("1.5M", "-b"), 3u * 512 * 1024);
  EXPECT_EQ(parse_size("1T", "-b"), std::uint64_t{1} << 40);
  EXPECT_EQ(parse_size("8388607T", "-b"), std::uint64_t{8388607} << 40);
}

// Sizes from 2^63 bytes up were converted through llround beyond its range: "16000000T" came
// back as 9223372036854775808 instead of an error.
TEST(SizeParse, SizesFrom2To63BytesAreTooLargeNamingTheFlag) {
  for (const char* text : {"8388608T", "16000000T", "9223372036854775808", "17000000000000000000"}) {
    try {
      (void)parse_size(text, "-b/--minbytes");
      ADD_FAILURE() << text << " was accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::usage);
      EXPECT_EQ(std::string(e.what()), std::string("-b/--minbytes: '") + text + "' is too large; give less than 8388608T");
    }
  }
}

// A plain byte count with a fraction was rounded without a word ("4.4" ran 4 bytes, "1.5" 2); a
// size in larger units still rounds to the nearest byte.
TEST(SizeParse, AFractionOfAByteIsRefusedNamingTheFlag) {
  for (const char* text : {"4.4", "1.5", "0.5B"}) {
    try {
      (void)parse_size(text, "-b/--minbytes");
      ADD_FAILURE() << text << " was accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::usage);
      EXPECT_NE(std::string(e.what()).find(std::string("-b/--minbytes: '") + text + "' is not a whole number of bytes"),
                std::string::npos)
          << e.what();
    }
  }
  EXPECT_EQ(parse_size("4.0", "-b"), 4u);
  EXPECT_EQ(parse_size("0.3K", "-b"), 307u);
}
