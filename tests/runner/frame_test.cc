#include "protocol/frame.h"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <thread>

namespace ptxb {
namespace {

std::string header(std::uint32_t length) {
  std::string bytes(4, '\0');
  for (int i = 0; i < 4; ++i) bytes[i] = static_cast<char>((length >> (8 * i)) & 0xff);
  return bytes;
}

struct SocketPair {
  int fds[2] = {-1, -1};
  SocketPair() { EXPECT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, fds), 0); }
  ~SocketPair() {
    for (int fd : fds) {
      if (fd >= 0) ::close(fd);
    }
  }
  void close_writer() {
    ::close(fds[1]);
    fds[1] = -1;
  }
  void write_raw(const std::string& bytes) {
    ASSERT_EQ(::write(fds[1], bytes.data(), bytes.size()), (ssize_t)bytes.size());
  }
};

TEST(FrameEncoding, LittleEndianLengthPrefix) {
  auto frame = encode_frame("hello");
  ASSERT_TRUE(frame.ok());
  EXPECT_EQ(*frame, std::string("\x05\x00\x00\x00hello", 9));
  EXPECT_EQ(encode_frame("").error().code, kFrameErrorEmpty);
  EXPECT_EQ(encode_frame("abcdef", 5).error().code, kFrameErrorOversize);
}

TEST(FrameDecoder, ReassemblesByteByByte) {
  FrameDecoder decoder;
  const std::string stream = *encode_frame("{\"a\":1}") + *encode_frame("[2]");
  std::vector<std::string> frames;
  for (char c : stream) {
    ASSERT_TRUE(decoder.feed(std::string_view(&c, 1)).ok());
    while (auto frame = decoder.next_frame()) frames.push_back(*frame);
  }
  EXPECT_EQ(frames, (std::vector<std::string>{"{\"a\":1}", "[2]"}));
  EXPECT_FALSE(decoder.mid_frame());
}

TEST(FrameDecoder, ReportsMissingBytesOfAPartialFrame) {
  FrameDecoder decoder;
  ASSERT_TRUE(decoder.feed(header(10) + "abc").ok());
  EXPECT_FALSE(decoder.next_frame().has_value());
  EXPECT_TRUE(decoder.mid_frame());
  EXPECT_EQ(decoder.missing_bytes(), 7u);
  ASSERT_TRUE(decoder.feed("defghij").ok());
  EXPECT_EQ(decoder.next_frame().value(), "abcdefghij");
}

TEST(FrameDecoder, RejectsOversizeHeaderBeforeTheBody) {
  FrameDecoder decoder(1024);
  auto status = decoder.feed(header(1025));
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.error().code, kFrameErrorOversize);
  // The stream cannot be resynchronised: it stays failed.
  EXPECT_FALSE(decoder.feed("x").ok());
  EXPECT_FALSE(decoder.next_frame().has_value());
}

TEST(FrameDecoder, RejectsAnOversizeFrameFollowingAGoodOne) {
  FrameDecoder decoder(16);
  ASSERT_TRUE(decoder.feed(*encode_frame("ok") + header(0xffffffffu)).ok());
  EXPECT_EQ(decoder.next_frame().value(), "ok");
  EXPECT_FALSE(decoder.next_frame().has_value());
  EXPECT_EQ(decoder.feed("x").error().code, kFrameErrorOversize);
}

TEST(FrameDecoder, RejectsEmptyFrame) {
  FrameDecoder decoder;
  EXPECT_EQ(decoder.feed(header(0)).error().code, kFrameErrorEmpty);
}

TEST(FrameIo, RoundTripOverASocket) {
  SocketPair pair;
  ASSERT_TRUE(write_frame(pair.fds[1], "{\"type\":\"hello\"}").ok());
  auto frame = read_frame(pair.fds[0]);
  ASSERT_TRUE(frame.ok()) << frame.error().message;
  EXPECT_EQ(*frame, "{\"type\":\"hello\"}");
}

TEST(FrameIo, ReadsAFrameWrittenInPieces) {
  SocketPair pair;
  const std::string frame = *encode_frame(std::string(100000, 'x'));
  std::thread writer([&] {
    for (std::size_t i = 0; i < frame.size(); i += 777) {
      std::string piece = frame.substr(i, 777);
      ASSERT_EQ(::write(pair.fds[1], piece.data(), piece.size()), (ssize_t)piece.size());
      if (i % 7770 == 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  });
  auto payload = read_frame(pair.fds[0]);
  writer.join();
  ASSERT_TRUE(payload.ok()) << payload.error().message;
  EXPECT_EQ(payload->size(), 100000u);
}

TEST(FrameIo, CleanEofBetweenFrames) {
  SocketPair pair;
  pair.close_writer();
  EXPECT_EQ(read_frame(pair.fds[0]).error().code, kFrameErrorEof);
}

TEST(FrameIo, TruncatedHeaderAndBody) {
  {
    SocketPair pair;
    pair.write_raw(std::string("\x05\x00", 2));
    pair.close_writer();
    auto result = read_frame(pair.fds[0]);
    EXPECT_EQ(result.error().code, kFrameErrorTruncated) << result.error().message;
  }
  {
    SocketPair pair;
    pair.write_raw(header(10) + "abc");
    pair.close_writer();
    auto result = read_frame(pair.fds[0]);
    EXPECT_EQ(result.error().code, kFrameErrorTruncated);
    EXPECT_NE(result.error().message.find("3 of 10"), std::string::npos) << result.error().message;
  }
}

TEST(FrameIo, AStalledFrameTimesOutInsteadOfHanging) {
  SocketPair pair;
  pair.write_raw(header(10) + "abc");  // the writer stays open but sends nothing more
  FrameReadOptions options;
  options.frame_timeout = std::chrono::milliseconds(100);
  const auto start = std::chrono::steady_clock::now();
  auto result = read_frame(pair.fds[0], options);
  EXPECT_EQ(result.error().code, kFrameErrorTimeout);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
}

TEST(FrameIo, IdleTimeoutOnlyWhenAsked) {
  SocketPair pair;
  FrameReadOptions options;
  options.first_byte_timeout = std::chrono::milliseconds(50);
  EXPECT_EQ(read_frame(pair.fds[0], options).error().code, kFrameErrorTimeout);
}

TEST(FrameIo, OversizeHeaderIsRejectedWithoutReadingTheBody) {
  SocketPair pair;
  pair.write_raw(header(static_cast<std::uint32_t>(kMaxFrameBytes + 1)));
  auto result = read_frame(pair.fds[0]);
  EXPECT_EQ(result.error().code, kFrameErrorOversize);
}

TEST(FrameIo, GarbageIsAnOversizeOrEmptyFrameNotAHang) {
  SocketPair pair;
  pair.write_raw("GET / HTTP/1.1\r\n");  // "GET " = 0x20544547 bytes: far over the limit
  EXPECT_EQ(read_frame(pair.fds[0]).error().code, kFrameErrorOversize);
}

TEST(FrameIo, WriteToAClosedPeerIsAnErrorNotSigpipe) {
  SocketPair pair;
  ::close(pair.fds[0]);
  pair.fds[0] = -1;
  Status status = write_frame(pair.fds[1], "x");
  for (int i = 0; i < 3 && status.ok(); ++i) status = write_frame(pair.fds[1], "x");
  EXPECT_FALSE(status.ok());
  EXPECT_EQ(status.error().code, kFrameErrorIo);
}

}  // namespace
}  // namespace ptxb
