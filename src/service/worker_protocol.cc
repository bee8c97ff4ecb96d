#include "service/worker_protocol.h"

#include <unistd.h>

#include <string>

namespace ptxb::service {
namespace {

void send(std::ostream& out, const Json& message) {
  out << message.dump() << '\n' << std::flush;
}

Json error_reply(const std::string& message) {
  return Json{{"type", "error"}, {"code", "eval_error"}, {"message", message}};
}

}  // namespace

int serve_worker_loop(std::istream& in, std::ostream& out, TurnEvaluator& evaluator,
                      const CanaryProbe& canary) {
  send(out, Json{{"type", "ready"}, {"pid", static_cast<long>(::getpid())}});
  std::string line;
  while (std::getline(in, line)) {
    auto message = parse_json(line, "worker request");
    if (!message.ok() || !message->is_object()) {
      send(out, error_reply("malformed request: " + (message.ok() ? std::string("not an object")
                                                                  : message.error().message)));
      continue;
    }
    const std::string type = message->value("type", "");
    if (type == "canary") {
      auto ms = canary();
      send(out, ms.ok() ? Json{{"type", "canary"}, {"ms", *ms}}
                        : error_reply("canary: " + ms.error().message));
      continue;
    }
    if (type != "evaluate" || !message->contains("request")) {
      send(out, error_reply("unknown request type \"" + type + "\""));
      continue;
    }
    auto request = EvalRequest::from_json((*message)["request"]);
    if (!request.ok()) {
      send(out, error_reply(request.error().message));
      continue;
    }
    auto result = evaluator.evaluate(*request);
    send(out, result.ok() ? Json{{"type", "result"}, {"result", result->to_json()}}
                          : error_reply(result.error().message));
  }
  return 0;
}

}  // namespace ptxb::service
