// SHA-256 (FIPS 180-4), for content addresses of compile artifacts and modules. Our own small
// implementation so the core library needs no crypto dependency; checked against the FIPS
// test vectors in tests/core/sha256_test.cc.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace ptxb {

class Sha256 {
 public:
  Sha256();
  Sha256& update(std::string_view data);
  Sha256& update(const void* data, std::size_t size);
  std::array<std::uint8_t, 32> digest();
  std::string hex_digest();

 private:
  void compress(const std::uint8_t* block);
  std::array<std::uint32_t, 8> state_;
  std::array<std::uint8_t, 64> buffer_{};
  std::size_t buffer_size_ = 0;
  std::uint64_t total_bytes_ = 0;
};

std::string sha256_hex(std::string_view data);

}  // namespace ptxb
