// The screenshot test's PNG reader on small images encoded here, one row per filter type, so
// that a decoding error cannot hide behind Chromium's choice of filters.
#include "png_image.h"

#include <gtest/gtest.h>

namespace ptxb {
namespace {

void append_be32(std::string& out, uint32_t value) {
  for (int shift = 24; shift >= 0; shift -= 8) out += static_cast<char>((value >> shift) & 0xff);
}

void append_chunk(std::string& out, const std::string& type, const std::string& data) {
  append_be32(out, static_cast<uint32_t>(data.size()));
  std::string body = type + data;
  out += body;
  append_be32(out, crc32(0, reinterpret_cast<const Bytef*>(body.data()), body.size()));
}

// Row y is filtered with type y % 5 (None, Sub, Up, Average, Paeth), computed from the
// definitions in the PNG specification (§9.2), independently of the reader.
std::string encode_png(int width, int height, int channels, const std::vector<uint8_t>& pixels) {
  std::size_t stride = static_cast<std::size_t>(width) * channels;
  std::string raw;
  for (int y = 0; y < height; ++y) {
    int filter = y % 5;
    raw += static_cast<char>(filter);
    for (std::size_t i = 0; i < stride; ++i) {
      int x = pixels[y * stride + i];
      int left = i >= static_cast<std::size_t>(channels) ? pixels[y * stride + i - channels] : 0;
      int above = y > 0 ? pixels[(y - 1) * stride + i] : 0;
      int corner = y > 0 && i >= static_cast<std::size_t>(channels)
                       ? pixels[(y - 1) * stride + i - channels]
                       : 0;
      int estimate = left + above - corner;
      int d_left = std::abs(estimate - left), d_above = std::abs(estimate - above),
          d_corner = std::abs(estimate - corner);
      int paeth = (d_left <= d_above && d_left <= d_corner) ? left
                  : d_above <= d_corner                     ? above
                                                            : corner;
      int predicted[] = {0, left, above, (left + above) / 2, paeth};
      raw += static_cast<char>((x - predicted[filter]) & 0xff);
    }
  }
  std::string compressed(compressBound(raw.size()), '\0');
  uLongf size = compressed.size();
  EXPECT_EQ(compress(reinterpret_cast<Bytef*>(compressed.data()), &size,
                     reinterpret_cast<const Bytef*>(raw.data()), raw.size()),
            Z_OK);
  compressed.resize(size);

  std::string png = "\x89PNG\r\n\x1a\n";
  std::string header;
  append_be32(header, width);
  append_be32(header, height);
  header += std::string{8, static_cast<char>(channels == 3 ? 2 : 6), 0, 0, 0};
  append_chunk(png, "IHDR", header);
  // Two IDAT chunks: the reader must join them before inflating.
  append_chunk(png, "IDAT", compressed.substr(0, compressed.size() / 2));
  append_chunk(png, "IDAT", compressed.substr(compressed.size() / 2));
  append_chunk(png, "IEND", "");
  return png;
}

std::vector<uint8_t> pattern(int width, int height, int channels) {
  std::vector<uint8_t> pixels(static_cast<std::size_t>(width) * height * channels);
  for (std::size_t i = 0; i < pixels.size(); ++i)
    pixels[i] = static_cast<uint8_t>((i * 37 + (i / 7) * 11) % 256);
  return pixels;
}

TEST(PngImage, DecodesEveryFilterTypeRgbAndRgba) {
  for (int channels : {3, 4}) {
    std::vector<uint8_t> pixels = pattern(7, 10, channels);
    auto image = testing::decode_png(encode_png(7, 10, channels, pixels));
    ASSERT_TRUE(image.ok()) << image.error().message;
    EXPECT_EQ(image->width, 7);
    EXPECT_EQ(image->height, 10);
    EXPECT_EQ(image->channels, channels);
    EXPECT_EQ(image->pixels, pixels);
    EXPECT_EQ(image->at(1, 2)[0], pixels[(2 * 7 + 1) * channels]);
  }
}

TEST(PngImage, RefusesCorruptOrUnsupportedFiles) {
  std::string good = encode_png(3, 3, 3, pattern(3, 3, 3));
  EXPECT_FALSE(testing::decode_png("GIF89a").ok());
  std::string corrupt = good;
  corrupt[45] ^= 0x55;  // inside the first IDAT: its CRC no longer matches
  auto bad_crc = testing::decode_png(corrupt);
  ASSERT_FALSE(bad_crc.ok());
  EXPECT_NE(bad_crc.error().message.find("CRC"), std::string::npos) << bad_crc.error().message;
  EXPECT_FALSE(testing::decode_png(good.substr(0, good.size() - 12)).ok());  // no IEND
  std::string sixteen_bit = good;
  sixteen_bit[24] = 16;  // IHDR bit depth; fix its CRC so the depth itself is what is refused
  uint32_t crc = crc32(0, reinterpret_cast<const Bytef*>(sixteen_bit.data() + 12), 17);
  for (int i = 0; i < 4; ++i) sixteen_bit[29 + i] = static_cast<char>((crc >> (24 - 8 * i)) & 0xff);
  auto unsupported = testing::decode_png(sixteen_bit);
  ASSERT_FALSE(unsupported.ok());
  EXPECT_NE(unsupported.error().message.find("bit depth 16"), std::string::npos)
      << unsupported.error().message;
}

}  // namespace
}  // namespace ptxb
