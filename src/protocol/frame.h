// Message framing on the supervisor ↔ runner channel (docs/runner.md "Channel").
//
// A frame is a 4-byte little-endian payload length followed by that many bytes of UTF-8 JSON.
// The channel is a SOCK_STREAM socketpair, so a frame may arrive in any number of pieces; the
// decoder is a pure byte-stream parser (tested without sockets) and the fd helpers add blocking
// I/O with deadlines. Neither side ever trusts the other's length: a header announcing more than
// kMaxFrameBytes is rejected before any allocation, and once a frame has started the rest must
// arrive within a deadline, so a truncated message can never hang the runner.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/result.h"

namespace ptxb {

// Largest payload either side accepts. The biggest legitimate message is a call reply with the
// full activity list (a few hundred records of ~200 bytes); 16 MiB leaves room for a bind with
// thousands of input sets while keeping a hostile length from allocating gigabytes.
inline constexpr std::size_t kMaxFrameBytes = 16u << 20;
inline constexpr std::size_t kFrameHeaderBytes = 4;

// Error codes used by the framing layer (Error::code).
inline constexpr const char* kFrameErrorOversize = "frame_oversize";
inline constexpr const char* kFrameErrorEmpty = "frame_empty";
inline constexpr const char* kFrameErrorTruncated = "frame_truncated";  // EOF inside a frame
inline constexpr const char* kFrameErrorEof = "eof";                    // EOF between frames
inline constexpr const char* kFrameErrorTimeout = "timeout";
inline constexpr const char* kFrameErrorIo = "io";

// "\x05\x00\x00\x00hello" for "hello". Fails for an empty or oversize payload.
Result<std::string> encode_frame(std::string_view payload, std::size_t max_bytes = kMaxFrameBytes);

// Incremental decoder: feed() any chunking of the byte stream, then take complete frames.
class FrameDecoder {
 public:
  explicit FrameDecoder(std::size_t max_frame_bytes = kMaxFrameBytes)
      : max_frame_bytes_(max_frame_bytes) {}

  // Appends bytes. Fails (and stays failed) as soon as a header announces an empty or oversize
  // frame: the stream cannot be resynchronised after that.
  Status feed(std::string_view bytes);
  // The next complete payload, if one is buffered.
  std::optional<std::string> next_frame();
  // True when some bytes of an unfinished frame are buffered (EOF now means truncation).
  bool mid_frame() const { return !buffer_.empty(); }
  // Bytes still missing to complete the current frame (header included), 0 if none started.
  std::size_t missing_bytes() const;

 private:
  std::size_t max_frame_bytes_;
  std::string buffer_;
  std::optional<Error> failure_;
};

struct FrameReadOptions {
  // Wait for the first byte of a frame; 0 waits forever (the runner between requests: the
  // supervisor owns its lifetime and an exiting supervisor closes the socket → EOF).
  std::chrono::milliseconds first_byte_timeout{0};
  // Once a frame has started, the whole of it must arrive within this time.
  std::chrono::milliseconds frame_timeout{10000};
  std::size_t max_frame_bytes = kMaxFrameBytes;
};

// Reads exactly one frame from a blocking or non-blocking fd (poll(2) enforces the deadlines).
// Errors: kFrameErrorEof (clean EOF before a frame), kFrameErrorTruncated, kFrameErrorTimeout,
// kFrameErrorOversize, kFrameErrorEmpty, kFrameErrorIo.
Result<std::string> read_frame(int fd, const FrameReadOptions& options = {});

// Writes one frame completely (partial writes and EINTR retried; never raises SIGPIPE on a
// socket: a closed peer is an kFrameErrorIo error).
Status write_frame(int fd, std::string_view payload, std::size_t max_bytes = kMaxFrameBytes);

}  // namespace ptxb
