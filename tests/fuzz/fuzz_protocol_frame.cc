// Runner protocol frames as the supervisor reads a (possibly hostile) runner's byte stream: the
// incremental frame decoder over arbitrary chunking, then each payload through the strict JSON
// reader and the typed reply and request readers.
#include "fuzz_input.h"
#include "protocol/frame.h"
#include "protocol/protocol.h"

namespace {

void parse_message(const std::string& payload) {
  auto json = ptxb::parse_json(payload, "frame");
  if (!json.ok()) return;
  const ptxb::Json& message = json.value();
  (void)ptxb::parse_request_envelope(message);
  (void)ptxb::check_reply(message, "call", 1);
  (void)ptxb::hello_reply_from_json(message);
  (void)ptxb::load_request_from_json(message);
  (void)ptxb::load_reply_from_json(message);
  (void)ptxb::bind_request_from_json(message);
  (void)ptxb::bind_reply_from_json(message);
  (void)ptxb::call_request_from_json(message);
  (void)ptxb::call_reply_from_json(message);
  (void)ptxb::batch_request_from_json(message);
  (void)ptxb::batch_reply_from_json(message);
  if (message.is_string()) (void)ptxb::from_hex(message.get<std::string>());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto [selector, stream] = ptxb::fuzz::split_selector(data, size);
  // A small frame limit, so that the oversize path is reachable from small inputs.
  ptxb::FrameDecoder decoder(4096);
  const std::size_t chunk = 1 + selector % 17;
  for (std::size_t at = 0; at < stream.size(); at += chunk) {
    if (!decoder.feed(stream.substr(at, chunk)).ok()) return 0;
    while (auto frame = decoder.next_frame()) parse_message(*frame);
  }
  (void)decoder.mid_frame();
  (void)decoder.missing_bytes();
  return 0;
}
