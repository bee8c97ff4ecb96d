// A PNG reader for the screenshot test: 8-bit RGB or RGBA, non-interlaced, which is what
// headless Chromium writes. Enough to count pixels and colours; everything else is refused.
#pragma once

#include <zlib.h>

#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "core/result.h"

namespace ptxb::testing {

struct PngImage {
  int width = 0;
  int height = 0;
  int channels = 0;             // 3 (RGB) or 4 (RGBA)
  std::vector<uint8_t> pixels;  // row-major, `channels` bytes per pixel, filters undone

  const uint8_t* at(int x, int y) const {
    return &pixels[(static_cast<std::size_t>(y) * width + x) * channels];
  }
};

namespace png_detail {

inline uint32_t read_be32(const std::string& bytes, std::size_t at) {
  return (static_cast<uint32_t>(static_cast<uint8_t>(bytes[at])) << 24) |
         (static_cast<uint32_t>(static_cast<uint8_t>(bytes[at + 1])) << 16) |
         (static_cast<uint32_t>(static_cast<uint8_t>(bytes[at + 2])) << 8) |
         static_cast<uint32_t>(static_cast<uint8_t>(bytes[at + 3]));
}

// PNG spec §9.4: the predictor closest to a + b - c among left (a), up (b), upper-left (c).
inline uint8_t paeth(uint8_t a, uint8_t b, uint8_t c) {
  int p = a + b - c, pa = std::abs(p - a), pb = std::abs(p - b), pc = std::abs(p - c);
  if (pa <= pb && pa <= pc) return a;
  return pb <= pc ? b : c;
}

}  // namespace png_detail

inline Result<PngImage> decode_png(const std::string& bytes) {
  using png_detail::read_be32;
  static const std::string kSignature = "\x89PNG\r\n\x1a\n";
  if (bytes.compare(0, kSignature.size(), kSignature) != 0)
    return make_error("parse", "not a PNG file (bad signature)");
  PngImage image;
  std::string compressed;
  bool have_header = false, have_end = false;
  for (std::size_t at = kSignature.size(); at + 12 <= bytes.size() && !have_end;) {
    uint32_t length = read_be32(bytes, at);
    if (length > bytes.size() - at - 12) return make_error("parse", "PNG chunk at {} overruns", at);
    std::string type = bytes.substr(at + 4, 4);
    const char* data = bytes.data() + at + 8;
    // The CRC covers type and data; a truncated or corrupted screenshot must not pass.
    uint32_t crc = crc32(0, reinterpret_cast<const Bytef*>(bytes.data() + at + 4), length + 4);
    if (crc != read_be32(bytes, at + 8 + length))
      return make_error("parse", "PNG chunk {} at {}: CRC mismatch", type, at);
    if (type == "IHDR") {
      if (length != 13) return make_error("parse", "PNG IHDR of {} bytes", length);
      std::string header(data, length);
      image.width = static_cast<int>(read_be32(header, 0));
      image.height = static_cast<int>(read_be32(header, 4));
      int bit_depth = header[8], color_type = header[9], interlace = header[12];
      if (bit_depth != 8 || (color_type != 2 && color_type != 6) || interlace != 0)
        return make_error("parse",
                          "PNG bit depth {}, colour type {}, interlace {}: only 8-bit RGB/RGBA "
                          "non-interlaced is supported",
                          bit_depth, color_type, interlace);
      image.channels = color_type == 2 ? 3 : 4;
      have_header = true;
    } else if (type == "IDAT") {
      compressed.append(data, length);
    } else if (type == "IEND") {
      have_end = true;
    }
    at += 12 + length;
  }
  if (!have_header || !have_end) return make_error("parse", "PNG without IHDR or IEND");
  if (image.width <= 0 || image.height <= 0 || image.width > 20000 || image.height > 20000)
    return make_error("parse", "PNG of {}x{} pixels", image.width, image.height);

  std::size_t stride = static_cast<std::size_t>(image.width) * image.channels;
  // Each row is one filter-type byte followed by the filtered pixels.
  std::vector<uint8_t> raw(static_cast<std::size_t>(image.height) * (stride + 1));
  uLongf raw_size = raw.size();
  int rc = uncompress(raw.data(), &raw_size, reinterpret_cast<const Bytef*>(compressed.data()),
                      compressed.size());
  if (rc != Z_OK || raw_size != raw.size())
    return make_error("parse", "PNG image data: zlib error {} ({} of {} bytes)", rc, raw_size,
                      raw.size());

  image.pixels.resize(static_cast<std::size_t>(image.height) * stride);
  const int bpp = image.channels;
  for (int y = 0; y < image.height; ++y) {
    const uint8_t* in = &raw[y * (stride + 1)];
    uint8_t filter = in[0];
    ++in;
    uint8_t* out = &image.pixels[y * stride];
    const uint8_t* up = y > 0 ? out - stride : nullptr;
    for (std::size_t i = 0; i < stride; ++i) {
      uint8_t a = i >= static_cast<std::size_t>(bpp) ? out[i - bpp] : 0;
      uint8_t b = up ? up[i] : 0;
      uint8_t c = up && i >= static_cast<std::size_t>(bpp) ? up[i - bpp] : 0;
      uint8_t predictor;
      switch (filter) {
        case 0:
          predictor = 0;
          break;
        case 1:
          predictor = a;
          break;
        case 2:
          predictor = b;
          break;
        case 3:
          predictor = static_cast<uint8_t>((a + b) / 2);
          break;
        case 4:
          predictor = png_detail::paeth(a, b, c);
          break;
        default:
          return make_error("parse", "PNG row {}: unknown filter type {}", y, filter);
      }
      out[i] = static_cast<uint8_t>(in[i] + predictor);
    }
  }
  return image;
}

}  // namespace ptxb::testing
