#include "protocol/frame.h"

#include <errno.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

namespace ptxb {
namespace {

using Clock = std::chrono::steady_clock;

std::uint32_t decode_length(const char* header) {
  const auto* bytes = reinterpret_cast<const unsigned char*>(header);
  return static_cast<std::uint32_t>(bytes[0]) | (static_cast<std::uint32_t>(bytes[1]) << 8) |
         (static_cast<std::uint32_t>(bytes[2]) << 16) |
         (static_cast<std::uint32_t>(bytes[3]) << 24);
}

Status check_length(std::size_t length, std::size_t max_bytes) {
  if (length == 0) return make_error(kFrameErrorEmpty, "channel: empty frame (length 0)");
  if (length > max_bytes) {
    return make_error(kFrameErrorOversize, "channel: frame of {} bytes exceeds the {}-byte limit",
                      length, max_bytes);
  }
  return ok_status();
}

// Waits until `fd` is readable or `deadline` passes (nullopt: forever).
Status wait_readable(int fd, std::optional<Clock::time_point> deadline, const char* what) {
  while (true) {
    int timeout_ms = -1;
    if (deadline) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(*deadline - Clock::now());
      if (left.count() <= 0)
        return make_error(kFrameErrorTimeout, "channel: timed out waiting for {}", what);
      timeout_ms = static_cast<int>(std::min<long long>(left.count(), 1 << 30));
    }
    pollfd entry{fd, POLLIN, 0};
    int ready = ::poll(&entry, 1, timeout_ms);
    if (ready > 0) return ok_status();  // readable, hung up or error: read() tells which
    if (ready < 0 && errno != EINTR) {
      return make_error(kFrameErrorIo, "channel: poll: {}", std::strerror(errno));
    }
  }
}

// Reads exactly `size` bytes. `got` counts what arrived (for EOF diagnostics).
Status read_exact(int fd, char* out, std::size_t size, std::optional<Clock::time_point> deadline,
                  const char* what, std::size_t& got) {
  got = 0;
  while (got < size) {
    PTXB_RETURN_IF_ERROR(wait_readable(fd, deadline, what));
    ssize_t n = ::read(fd, out + got, size - got);
    if (n > 0) {
      got += static_cast<std::size_t>(n);
    } else if (n == 0) {
      return make_error(kFrameErrorEof, "channel: end of stream");
    } else if (errno != EINTR && errno != EAGAIN && errno != EWOULDBLOCK) {
      return make_error(kFrameErrorIo, "channel: read: {}", std::strerror(errno));
    }
  }
  return ok_status();
}

}  // namespace

Result<std::string> encode_frame(std::string_view payload, std::size_t max_bytes) {
  PTXB_RETURN_IF_ERROR(check_length(payload.size(), max_bytes));
  std::string frame(kFrameHeaderBytes, '\0');
  const auto length = static_cast<std::uint32_t>(payload.size());
  for (std::size_t i = 0; i < kFrameHeaderBytes; ++i) {
    frame[i] = static_cast<char>((length >> (8 * i)) & 0xffu);
  }
  frame.append(payload);
  return frame;
}

Status FrameDecoder::feed(std::string_view bytes) {
  if (failure_) return *failure_;
  buffer_.append(bytes);
  if (buffer_.size() >= kFrameHeaderBytes) {
    Status length_ok = check_length(decode_length(buffer_.data()), max_frame_bytes_);
    if (!length_ok.ok()) {
      failure_ = length_ok.error();
      return *failure_;
    }
  }
  return ok_status();
}

std::optional<std::string> FrameDecoder::next_frame() {
  if (failure_ || buffer_.size() < kFrameHeaderBytes) return std::nullopt;
  const std::size_t length = decode_length(buffer_.data());
  if (buffer_.size() < kFrameHeaderBytes + length) return std::nullopt;
  std::string payload = buffer_.substr(kFrameHeaderBytes, length);
  buffer_.erase(0, kFrameHeaderBytes + length);
  // The following header (if already buffered) must be checked too.
  if (buffer_.size() >= kFrameHeaderBytes) {
    Status length_ok = check_length(decode_length(buffer_.data()), max_frame_bytes_);
    if (!length_ok.ok()) failure_ = length_ok.error();
  }
  return payload;
}

std::size_t FrameDecoder::missing_bytes() const {
  if (buffer_.empty()) return 0;
  if (buffer_.size() < kFrameHeaderBytes) return kFrameHeaderBytes - buffer_.size();
  return kFrameHeaderBytes + decode_length(buffer_.data()) - buffer_.size();
}

Result<std::string> read_frame(int fd, const FrameReadOptions& options) {
  std::optional<Clock::time_point> first_deadline;
  if (options.first_byte_timeout.count() > 0)
    first_deadline = Clock::now() + options.first_byte_timeout;
  char header[kFrameHeaderBytes];
  std::size_t got = 0;
  // The first byte may take arbitrarily long (idle channel); the rest of the frame may not.
  Status first = read_exact(fd, header, 1, first_deadline, "the next message", got);
  if (!first.ok()) return first.error();
  const auto frame_deadline = Clock::now() + options.frame_timeout;
  Status rest =
      read_exact(fd, header + 1, kFrameHeaderBytes - 1, frame_deadline, "a frame header", got);
  if (!rest.ok()) {
    if (rest.error().code == kFrameErrorEof) {
      return make_error(kFrameErrorTruncated,
                        "channel: stream ended inside a frame header ({} of {} bytes)", 1 + got,
                        kFrameHeaderBytes);
    }
    return rest.error();
  }
  const std::size_t length = decode_length(header);
  PTXB_RETURN_IF_ERROR(check_length(length, options.max_frame_bytes));
  std::string payload(length, '\0');
  Status body = read_exact(fd, payload.data(), length, frame_deadline, "the rest of a frame", got);
  if (!body.ok()) {
    if (body.error().code == kFrameErrorEof) {
      return make_error(kFrameErrorTruncated,
                        "channel: stream ended inside a frame ({} of {} payload bytes)", got,
                        length);
    }
    return body.error();
  }
  return payload;
}

Status write_frame(int fd, std::string_view payload, std::size_t max_bytes) {
  PTXB_ASSIGN_OR_RETURN(std::string frame, encode_frame(payload, max_bytes));
  std::size_t sent = 0;
  bool is_socket = true;
  while (sent < frame.size()) {
    ssize_t n = is_socket ? ::send(fd, frame.data() + sent, frame.size() - sent, MSG_NOSIGNAL)
                          : ::write(fd, frame.data() + sent, frame.size() - sent);
    if (n >= 0) {
      sent += static_cast<std::size_t>(n);
    } else if (errno == ENOTSOCK && is_socket) {
      is_socket = false;  // a pipe in tests: plain write(2)
    } else if (errno == EAGAIN || errno == EWOULDBLOCK) {
      pollfd entry{fd, POLLOUT, 0};
      ::poll(&entry, 1, 1000);
    } else if (errno != EINTR) {
      return make_error(kFrameErrorIo, "channel: write: {}", std::strerror(errno));
    }
  }
  return ok_status();
}

}  // namespace ptxb
