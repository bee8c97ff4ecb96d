// A whole supervisor ↔ runner conversation without a GPU: RunnerClient on one end of a
// socketpair, a scripted fake runner (speaking protocol/protocol.h) on the other.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <functional>
#include <thread>

#include "protocol/frame.h"
#include "protocol/protocol.h"
#include "supervisor/runner_client.h"

namespace ptxb {
namespace {

using std::chrono::milliseconds;

// Answers requests with `respond` until it returns nullopt (then closes the channel).
class FakeRunner {
 public:
  using Respond = std::function<std::optional<std::string>(const Json& request)>;
  FakeRunner(int fd, Respond respond) : fd_(fd), thread_([this, respond] { loop(respond); }) {}
  ~FakeRunner() {
    thread_.join();
    ::close(fd_);
  }
  std::vector<Json> seen;

 private:
  void loop(const Respond& respond) {
    while (true) {
      auto frame = read_frame(fd_);
      if (!frame.ok()) return;
      Json request = Json::parse(*frame);
      seen.push_back(request);
      auto reply = respond(request);
      if (!reply) {
        ::shutdown(fd_, SHUT_WR);  // the client sees EOF now, not at the fake's destruction
        return;
      }
      if (!reply->empty() && !write_frame(fd_, *reply).ok()) return;
    }
  }
  int fd_;
  std::thread thread_;
};

struct Channel {
  int fds[2];
  Channel() { EXPECT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, fds), 0); }
};

std::string ok_reply(const Json& request, Json body) {
  return encode_message(
      make_ok_reply(request["type"], request["seq"].get<std::uint64_t>(), std::move(body)));
}

HelloReply fake_hello() {
  HelloReply hello;
  hello.pid = 42;
  hello.device_name = "Fake H200";
  hello.pci_bus_id = "0000:00:00.0";
  hello.cupti_version = 130001;
  hello.runner_version = "test";
  return hello;
}

TEST(FakeRunner, FullConversation) {
  Channel channel;
  FakeRunner runner(channel.fds[1], [](const Json& request) -> std::optional<std::string> {
    const std::string type = request["type"];
    if (type == "hello") return ok_reply(request, to_json(fake_hello()));
    if (type == "load")
      return ok_reply(request, to_json(LoadReply{request["expected_signature"], {}}));
    if (type == "bind") return ok_reply(request, to_json(BindReply{request["sets"].size(), 4096}));
    if (type == "call") {
      CallReply reply;
      reply.call_index = 1;
      reply.external_id = 1;
      reply.has_window = true;
      reply.window_start_ns = 1000;
      reply.window_end_ns = 1500;
      reply.device_ns = 500;
      reply.kernel_count = 1;
      return ok_reply(request, to_json(reply));
    }
    if (type == "shutdown") {
      return ok_reply(request, Json::object());
    }
    return std::nullopt;
  });
  auto client = RunnerClient::attach(channel.fds[0]);
  auto hello = client->hello(milliseconds(2000));
  ASSERT_TRUE(hello.ok()) << hello.error().message;
  EXPECT_EQ(hello->device_name, "Fake H200");
  auto load = client->load(LoadRequest{"/tmp/kernel.so", "void run(cudaStream_t stream)", {}},
                           milliseconds(2000));
  ASSERT_TRUE(load.ok()) << load.error().message;
  EXPECT_EQ(load->abi_signature, "void run(cudaStream_t stream)");
  BindRequest bind;
  bind.sets = {{}, {}};
  auto bound = client->bind(bind, milliseconds(2000));
  ASSERT_TRUE(bound.ok()) << bound.error().message;
  EXPECT_EQ(bound->set_count, 2u);
  CallBracket bracket;
  auto call = client->call(CallRequest{1, true, false}, milliseconds(2000), &bracket);
  ASSERT_TRUE(call.ok()) << call.error().message;
  EXPECT_EQ(call->device_ns, 500u);
  EXPECT_GT(bracket.round_trip_ns, 0u);
  EXPECT_TRUE(client->shutdown(milliseconds(2000)).ok());
  client.reset();
  // seq numbers increase by one per request
  for (std::size_t i = 0; i < runner.seen.size(); ++i) EXPECT_EQ(runner.seen[i]["seq"], i + 1);
}

TEST(FakeRunner, RunnerErrorsBecomeClientErrorsWithTheRunnersCode) {
  Channel channel;
  FakeRunner runner(channel.fds[1], [](const Json& request) -> std::optional<std::string> {
    return encode_message(
        make_error_reply(request["type"], request["seq"].get<std::uint64_t>(),
                         make_error("load", "dlopen(/x.so): undefined symbol: cublasCreate")));
  });
  auto client = RunnerClient::attach(channel.fds[0]);
  auto load = client->load(LoadRequest{"/x.so", "", {}}, milliseconds(2000));
  ASSERT_FALSE(load.ok());
  EXPECT_EQ(load.error().code, "runner:load");
  EXPECT_NE(load.error().message.find("cublasCreate"), std::string::npos);
  ::shutdown(channel.fds[0], SHUT_RDWR);
}

TEST(FakeRunner, GarbageRepliesAreRejected) {
  Channel channel;
  int calls = 0;
  FakeRunner runner(channel.fds[1], [&calls](const Json& request) -> std::optional<std::string> {
    ++calls;
    if (calls == 1) return std::string("{not json");
    if (calls == 2)
      return encode_message(make_ok_reply("hello", request["seq"].get<std::uint64_t>() + 5));
    return encode_message(
        make_ok_reply("call", request["seq"].get<std::uint64_t>(), Json{{"window", 3}}));
  });
  auto client = RunnerClient::attach(channel.fds[0]);
  EXPECT_FALSE(client->hello(milliseconds(2000)).ok());  // not JSON
  auto mismatched = client->hello(milliseconds(2000));   // answers another request
  ASSERT_FALSE(mismatched.ok());
  EXPECT_NE(mismatched.error().message.find("does not answer"), std::string::npos);
  EXPECT_FALSE(client->call(CallRequest{}, milliseconds(2000)).ok());  // fields missing
  ::shutdown(channel.fds[0], SHUT_RDWR);
}

TEST(FakeRunner, AHangingRunnerTimesOut) {
  Channel channel;
  FakeRunner runner(channel.fds[1],
                    [](const Json&) -> std::optional<std::string> { return std::string(); });
  auto client = RunnerClient::attach(channel.fds[0]);
  const auto start = std::chrono::steady_clock::now();
  auto call = client->call(CallRequest{}, milliseconds(100));
  ASSERT_FALSE(call.ok());
  EXPECT_EQ(call.error().code, kFrameErrorTimeout);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  ::shutdown(channel.fds[0], SHUT_RDWR);
}

TEST(FakeRunner, ARunnerThatDiesMidReplyIsTruncated) {
  Channel channel;
  FakeRunner runner(channel.fds[1], [&channel](const Json&) -> std::optional<std::string> {
    const std::string partial("\x40\x00\x00\x00{\"type\"", 11);
    EXPECT_EQ(::write(channel.fds[1], partial.data(), partial.size()), 11);
    return std::nullopt;  // the fake closes its end: EOF inside the frame
  });
  auto client = RunnerClient::attach(channel.fds[0]);
  auto hello = client->hello(milliseconds(2000));
  ASSERT_FALSE(hello.ok());
  EXPECT_EQ(hello.error().code, kFrameErrorTruncated);
}

TEST(RunnerProcess, SpawnReportsAnEarlyExit) {
  RunnerLaunchSpec spec;
  spec.runner_path = "/bin/false";  // exits 1 at once: hello sees EOF, wait() the exit code
  auto client = RunnerClient::spawn(spec);
  ASSERT_TRUE(client.ok()) << client.error().message;
  auto hello = (*client)->hello(milliseconds(5000));
  EXPECT_FALSE(hello.ok());
  RunnerExit exit = (*client)->wait(milliseconds(5000));
  EXPECT_TRUE(exit.finished);
  EXPECT_NE(exit.exit_code, 0);
}

TEST(RunnerProcess, OnlyTheChannelIsInheritedAndTheLogIsCaptured) {
  // A descriptor the supervisor leaked without O_CLOEXEC must not reach the runner.
  const int leaked = ::fcntl(2, F_DUPFD, 20);  // no O_CLOEXEC, like a careless library
  ASSERT_GE(leaked, 20);
  RunnerLaunchSpec spec;
  spec.runner_path = "runner";  // becomes $0.. of the script below
  const std::string script = "[ -S /proc/self/fd/3 ] || exit 5; [ -e /proc/self/fd/" +
                             std::to_string(leaked) + " ] && exit 6; echo log-line >&2; exit 0";
  spec.wrapper_argv = {"/bin/sh", "-c", script};
  auto client = RunnerClient::spawn(spec);
  ::close(leaked);
  ASSERT_TRUE(client.ok()) << client.error().message;
  RunnerExit exit = (*client)->wait(milliseconds(5000));
  EXPECT_EQ(exit.exit_code, 0) << exit.describe();
  for (int i = 0; i < 100 && (*client)->log().empty(); ++i)
    std::this_thread::sleep_for(milliseconds(10));
  EXPECT_EQ((*client)->log(), "log-line\n");
}

TEST(RunnerProcess, WaitKillsARunnerThatDoesNotExit) {
  RunnerLaunchSpec spec;
  spec.runner_path = "runner";
  spec.wrapper_argv = {"/bin/sh", "-c", "sleep 30"};
  auto client = RunnerClient::spawn(spec);
  ASSERT_TRUE(client.ok());
  const auto start = std::chrono::steady_clock::now();
  RunnerExit exit = (*client)->wait(milliseconds(100));
  EXPECT_TRUE(exit.finished);
  EXPECT_EQ(exit.term_signal, SIGKILL);
  EXPECT_TRUE(exit.killed_by_us);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
}

}  // namespace
}  // namespace ptxb
