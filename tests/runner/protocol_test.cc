#include "protocol/protocol.h"

#include <gtest/gtest.h>

#include <cstring>

#include "protocol/param_layout.h"

namespace ptxb {
namespace {

constexpr const char* kGemmSignature =
    "void run(const __nv_bfloat16* A, const __nv_bfloat16* B, __nv_bfloat16* C, int64_t M, int64_t "
    "N, int64_t K, "
    "cudaStream_t stream)";

TEST(Protocol, EnvelopeRoundTrip) {
  Json request = make_request(kMsgCall, 7, to_json(CallRequest{2, true, false}));
  EXPECT_EQ(request.dump(), R"({"type":"call","seq":7,"set":2,"flush_l2":true,"collect":false})");
  auto envelope = parse_request_envelope(request);
  ASSERT_TRUE(envelope.ok());
  EXPECT_EQ(envelope->type, "call");
  EXPECT_EQ(envelope->seq, 7u);
}

TEST(Protocol, EnvelopeRejectsUnknownTypesAndMissingSeq) {
  EXPECT_FALSE(parse_request_envelope(Json{{"type", "format_disk"}, {"seq", 1}}).ok());
  EXPECT_FALSE(parse_request_envelope(Json{{"type", "hello"}}).ok());
  EXPECT_FALSE(parse_request_envelope(Json{{"type", "hello"}, {"seq", -1}}).ok());
  EXPECT_FALSE(parse_request_envelope(Json::array()).ok());
}

TEST(Protocol, CheckReplyMatchesTypeAndSeqAndSurfacesErrors) {
  EXPECT_TRUE(check_reply(make_ok_reply("load", 3), "load", 3).ok());
  EXPECT_FALSE(check_reply(make_ok_reply("load", 4), "load", 3).ok());
  EXPECT_FALSE(check_reply(make_ok_reply("bind", 3), "load", 3).ok());
  auto failed =
      check_reply(make_error_reply("load", 3, make_error("abi_mismatch", "differs")), "load", 3);
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.error().code, "runner:abi_mismatch");
  EXPECT_NE(failed.error().message.find("differs"), std::string::npos);
}

TEST(Protocol, HelloRoundTrip) {
  HelloReply hello;
  hello.pid = 1234;
  hello.device_name = "NVIDIA H200";
  hello.pci_bus_id = "00000000:19:00.0";
  hello.cuda_runtime_version = 13000;
  hello.cuda_driver_version = 13000;
  hello.cupti_version = 130001;
  hello.l2_bytes = 52428800;
  hello.l2_flush_bytes = 104857600;
  hello.sm_clock_mhz = 1980;
  hello.runner_version = "0.1.0";
  auto back = hello_reply_from_json(to_json(hello));
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->device_name, "NVIDIA H200");
  EXPECT_EQ(back->sm_clock_mhz, 1980u);
  EXPECT_EQ(back->l2_flush_bytes, 104857600);
  Json wrong = to_json(hello);
  wrong["protocol_version"] = 99;
  EXPECT_FALSE(hello_reply_from_json(wrong).ok());
}

TEST(Protocol, LoadRequestValidation) {
  LoadRequest load{"/tmp/x/kernel.so", kGemmSignature, {std::string(64, 'a')}};
  auto back = load_request_from_json(to_json(load));
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->expected_signature, kGemmSignature);
  Json relative = to_json(load);
  relative["so_path"] = "kernel.so";
  EXPECT_FALSE(load_request_from_json(relative).ok());
  Json bad_hash = to_json(load);
  bad_hash["expected_module_sha256"] = Json::array({"abc"});
  EXPECT_FALSE(load_request_from_json(bad_hash).ok());
}

TEST(Protocol, BindRoundTripWithTypedScalars) {
  BindRequest bind;
  IpcBuffer buffer;
  for (std::size_t i = 0; i < buffer.handle.size(); ++i)
    buffer.handle[i] = static_cast<std::uint8_t>(i * 3);
  buffer.bytes = 4096;
  bind.buffers = {buffer};
  ParamValue pointer;
  pointer.is_buffer = true;
  pointer.offset = 256;
  auto axis = param_value_from_json(Json{{"i64", 8192}});
  ASSERT_TRUE(axis.ok());
  bind.sets = {{pointer, *axis}};
  auto back = bind_request_from_json(to_json(bind));
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->buffers[0].handle, buffer.handle);
  EXPECT_EQ(back->sets[0][0].offset, 256u);
  ASSERT_EQ(back->sets[0][1].storage.size(), 8u);
  std::int64_t value = 0;
  std::memcpy(&value, back->sets[0][1].storage.data(), 8);
  EXPECT_EQ(value, 8192);
}

TEST(Protocol, BindRejectsBadHandlesIndicesAndOffsets) {
  Json good = {{"buffers", Json::array({{{"ipc_handle", std::string(128, '0')}, {"bytes", 100}}})},
               {"sets", Json::array({Json::array({{{"buffer", 0}, {"offset", 0}}})})}};
  EXPECT_TRUE(bind_request_from_json(good).ok());
  Json short_handle = good;
  short_handle["buffers"][0]["ipc_handle"] = std::string(126, '0');
  EXPECT_FALSE(bind_request_from_json(short_handle).ok());
  Json not_hex = good;
  not_hex["buffers"][0]["ipc_handle"] = std::string(127, '0') + "z";
  EXPECT_FALSE(bind_request_from_json(not_hex).ok());
  Json bad_index = good;
  bad_index["sets"][0][0]["buffer"] = 1;
  EXPECT_NE(bind_request_from_json(bad_index).error().message.find("out of range"),
            std::string::npos);
  Json bad_offset = good;
  bad_offset["sets"][0][0]["offset"] = 101;
  EXPECT_FALSE(bind_request_from_json(bad_offset).ok());
  Json two_kinds = good;
  two_kinds["sets"][0][0] = {{"i64", 1}, {"f32", 2.0}};
  EXPECT_FALSE(bind_request_from_json(two_kinds).ok());
  EXPECT_FALSE(param_value_from_json(Json{{"i32", 1ll << 40}}).ok());
  EXPECT_FALSE(param_value_from_json(Json{{"raw_hex", std::string(40, '0')}}).ok());
}

TEST(Protocol, CallReplyRoundTrip) {
  CallReply reply;
  reply.call_index = 5;
  reply.external_id = 5;
  reply.cuda_error =
      CudaErrorInfo{"cudaErrorIllegalAddress", "an illegal memory access", "cudaStreamSynchronize"};
  reply.has_window = true;
  reply.window_start_ns = 100;
  reply.window_end_ns = 350;
  reply.device_ns = 250;
  reply.kernel_count = 2;
  ActivityRecord record{"kernel", "bad", 7, 11, 3, 120, 130, 0, "call", ""};
  reply.foreign_stream = {record};
  reply.out_of_window = {
      ActivityRecord{"kernel", "late", 13, 12, std::nullopt, 900, 950, 0, "unattributed", "after"}};
  reply.new_modules = {ModuleInfo{1, std::string(64, 'f'), 1000, "candidate", false}};
  reply.unexpected_modules = reply.new_modules;
  reply.activity = {record};
  reply.kernel_names = {"bad", "_Z4gemmv"};
  reply.leftover_threads = {LeftoverTask{4242, "ptxbench-runne"}};
  reply.leftover_processes = {LeftoverTask{77, "sleep"}};
  auto back = call_reply_from_json(to_json(reply));
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->cuda_error->name, "cudaErrorIllegalAddress");
  EXPECT_EQ(back->device_ns, 250u);
  EXPECT_EQ(back->foreign_stream[0].external_id, 3u);
  EXPECT_EQ(back->out_of_window[0].relation, "after");
  EXPECT_FALSE(back->out_of_window[0].external_id.has_value());
  EXPECT_EQ(back->unexpected_modules[0].expected, false);
  EXPECT_EQ(back->kernel_names, reply.kernel_names);
  ASSERT_EQ(back->leftover_threads.size(), 1u);
  EXPECT_EQ(back->leftover_threads[0].id, 4242);
  EXPECT_EQ(back->leftover_processes[0].name, "sleep");
  // A reply without the integrity fields (a scripted runner) reports none.
  Json bare = to_json(reply);
  bare.erase("kernel_names");
  bare.erase("leftover_threads");
  bare.erase("leftover_processes");
  auto bare_back = call_reply_from_json(bare);
  ASSERT_TRUE(bare_back.ok()) << bare_back.error().message;
  EXPECT_TRUE(bare_back->leftover_threads.empty());
  Json wrong = to_json(reply);
  wrong["leftover_threads"] = Json::array({Json{{"id", "x"}, {"name", "t"}}});
  EXPECT_FALSE(call_reply_from_json(wrong).ok());
  CallReply empty;
  auto empty_back = call_reply_from_json(to_json(empty));
  ASSERT_TRUE(empty_back.ok());
  EXPECT_FALSE(empty_back->has_window);
  EXPECT_FALSE(empty_back->cuda_error.has_value());
}

TEST(Protocol, ActivityRecordCarriesAsyncAndLegacyStream) {
  ActivityRecord copy{"memcpy", "memcpy HtoD", 1, 12, 3, 10, 20, 4096, "call", ""};
  copy.async = true;
  copy.legacy_stream = true;
  auto back = activity_record_from_json(to_json(copy));
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_TRUE(back->async);
  EXPECT_TRUE(back->legacy_stream);
  copy.async = copy.legacy_stream = false;
  back = activity_record_from_json(to_json(copy));
  ASSERT_TRUE(back.ok());
  EXPECT_FALSE(back->async);
  EXPECT_FALSE(back->legacy_stream);
  // Absent (an older runner): both false; mistyped: refused.
  Json bare = to_json(copy);
  bare.erase("async");
  bare.erase("legacy_stream");
  back = activity_record_from_json(bare);
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_FALSE(back->async);
  Json wrong = to_json(copy);
  wrong["legacy_stream"] = "yes";
  EXPECT_FALSE(activity_record_from_json(wrong).ok());
}

TEST(Protocol, TimedBatchesCarryTheirFlagsAndOneTimePerCall) {
  BatchRequest request;
  request.sets = {0, 0, 0};
  request.flush_l2 = true;
  request.timed = true;
  auto back = batch_request_from_json(to_json(request));
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_TRUE(back->flush_l2 && back->timed);
  EXPECT_EQ(to_json(BatchRequest{{1}}).dump(), R"({"sets":[1]})");  // the bound's, unchanged
  Json bad = to_json(request);
  bad["timed"] = "yes";
  EXPECT_FALSE(batch_request_from_json(bad).ok());
  BatchReply reply;
  reply.calls = 2;
  reply.device_ns = {1500, 1490};
  auto parsed = batch_reply_from_json(to_json(reply));
  ASSERT_TRUE(parsed.ok()) << parsed.error().message;
  EXPECT_EQ(parsed->device_ns, reply.device_ns);
  Json short_list = to_json(reply);
  short_list["device_ns"] = Json::array({1500});
  EXPECT_FALSE(batch_reply_from_json(short_list).ok());  // one time per call
}

TEST(Protocol, EncodeMessageSurvivesInvalidUtf8) {
  Json message = {{"error", std::string("dlopen(/tmp/\xff.so)")}};
  EXPECT_NE(encode_message(message).find("dlopen"), std::string::npos);
}

TEST(ParamLayout, ParsesTheGemmSignature) {
  auto layout = parse_param_layout(kGemmSignature);
  ASSERT_TRUE(layout.ok()) << layout.error().message;
  ASSERT_EQ(layout->size(), 7u);
  EXPECT_TRUE((*layout)[0].is_pointer);
  EXPECT_EQ((*layout)[0].type, "const __nv_bfloat16*");
  EXPECT_EQ((*layout)[0].name, "A");
  EXPECT_EQ((*layout)[3].value_bytes, 8u);
  EXPECT_TRUE((*layout)[6].is_stream);
}

TEST(ParamLayout, RejectsUnknownTypesAndAMissingStream) {
  EXPECT_FALSE(parse_param_layout("void run(const float* A, int64_t M)").ok());
  EXPECT_FALSE(parse_param_layout("void run(std::string s, cudaStream_t stream)").ok());
  EXPECT_FALSE(parse_param_layout("not a declaration").ok());
  auto scalar =
      parse_param_layout("void run(const float* x, float alpha, float* y, cudaStream_t stream)");
  ASSERT_TRUE(scalar.ok());
  EXPECT_EQ((*scalar)[1].value_bytes, 4u);
}

TEST(ParamLayout, ChecksSetsAgainstTheLayout) {
  auto layout =
      parse_param_layout("void run(const float* x, float* y, int64_t n, cudaStream_t stream)")
          .value();
  ParamValue buffer;
  buffer.is_buffer = true;
  ParamValue n = param_value_from_json(Json{{"i64", 10}}).value();
  ParamValue n32 = param_value_from_json(Json{{"i32", 10}}).value();
  EXPECT_TRUE(check_set_against_layout(layout, {buffer, buffer, n}).ok());
  EXPECT_FALSE(check_set_against_layout(layout, {buffer, buffer}).ok());  // missing axis
  EXPECT_FALSE(check_set_against_layout(layout, {buffer, n, n}).ok());    // scalar for a pointer
  EXPECT_FALSE(
      check_set_against_layout(layout, {buffer, buffer, n32}).ok());  // 4 bytes for int64_t
}

TEST(Protocol, LaunchShapesRoundTripAndDefaultToZeros) {
  ActivityRecord kernel{"kernel", "_Z4gemmv", 7, 11, 5, 120, 130, 0, "call", ""};
  kernel.grid = {132, 2, 1};
  kernel.block = {384, 1, 1};
  auto back = activity_record_from_json(to_json(kernel));
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->grid, kernel.grid);
  EXPECT_EQ(back->block, kernel.block);
  // A record from a runner without shapes reads as zeros; a malformed shape is an error.
  Json old = to_json(kernel);
  old.erase("grid");
  old.erase("block");
  auto old_back = activity_record_from_json(old);
  ASSERT_TRUE(old_back.ok());
  EXPECT_EQ(old_back->grid, (std::array<std::uint32_t, 3>{0, 0, 0}));
  Json bad = to_json(kernel);
  bad["grid"] = Json::array({1, 2});
  EXPECT_FALSE(activity_record_from_json(bad).ok());
  bad["grid"] = Json::array({1, -2, 3});
  EXPECT_FALSE(activity_record_from_json(bad).ok());

  CallReply reply;
  note_kernel_launch(reply.kernel_launches, kernel);
  note_kernel_launch(reply.kernel_launches, kernel);
  ActivityRecord other = kernel;
  other.grid = {66, 1, 1};
  note_kernel_launch(reply.kernel_launches, other);
  ASSERT_EQ(reply.kernel_launches.size(), 2u);
  EXPECT_EQ(reply.kernel_launches[0].count, 2u);
  EXPECT_EQ(reply.kernel_launches[1].count, 1u);
  auto reply_back = call_reply_from_json(to_json(reply));
  ASSERT_TRUE(reply_back.ok()) << reply_back.error().message;
  ASSERT_EQ(reply_back->kernel_launches.size(), 2u);
  EXPECT_TRUE(reply_back->kernel_launches[1].same_shape(reply.kernel_launches[1]));
  EXPECT_EQ(reply_back->kernel_launches[0].count, 2u);
  EXPECT_EQ(reply_back->kernel_launches[0].device_ns, 2 * (kernel.end_ns - kernel.start_ns));
  // A reply without the launches' time (an older runner) reads as 0, never as an error.
  Json untimed = to_json(reply);
  untimed["kernel_launches"][0].erase("device_ns");
  auto untimed_back = call_reply_from_json(untimed);
  ASSERT_TRUE(untimed_back.ok());
  EXPECT_EQ(untimed_back->kernel_launches[0].device_ns, 0u);
  Json no_launches = to_json(reply);
  no_launches.erase("kernel_launches");
  auto bare = call_reply_from_json(no_launches);
  ASSERT_TRUE(bare.ok());
  EXPECT_TRUE(bare->kernel_launches.empty());
}

}  // namespace
}  // namespace ptxb
