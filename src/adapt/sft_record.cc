#include "adapt/sft_record.h"

#include <random>

#include "adapt/source_tokens.h"
#include "core/sha256.h"
#include "packs/token_estimate.h"

namespace ptxb::adapt {
namespace {

std::string fenced(const std::string& kernel) {
  return "```cuda\n" + kernel + (kernel.ends_with("\n") ? "" : "\n") + "```";
}

Json chat_message(const std::string& role, const std::string& content, bool loss) {
  return Json{{"role", role}, {"content", content}, {"loss", loss}};
}

// Fisher–Yates with std::mt19937_64, whose output sequence the standard fixes (unlike
// std::shuffle and the distributions): the same seed gives the same order everywhere. The
// modulo's bias (< 2^-40 for any realistic row count) does not matter for a training order.
template <typename T>
void seeded_shuffle(std::vector<T>& items, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  for (std::size_t i = items.size(); i > 1; --i) {
    const std::size_t j = static_cast<std::size_t>(rng() % i);
    std::swap(items[i - 1], items[j]);
  }
}

}  // namespace

std::string final_answer(const SftExample& e) {
  return "<think>\n" + e.analysis + "\n\n" + e.plan + "\n</think>\n\n" + fenced(e.fixed_kernel);
}

Json chat_row(const SftExample& e) {
  Json messages = Json::array();
  messages.push_back(chat_message("system", e.system, false));
  messages.push_back(chat_message("user", e.task_message, false));
  if (e.kind == "fixit") {
    messages.push_back(chat_message("assistant", fenced(e.wrong_kernel), false));
    messages.push_back(chat_message("user", e.feedback, false));
  }
  messages.push_back(chat_message("assistant", final_answer(e), true));
  return Json{{"id", e.id}, {"kind", e.kind}, {"task", e.task}, {"messages", messages}};
}

Json four_part_row(const SftExample& e) {
  return Json{{"id", e.id},
              {"kind", e.kind},
              {"task", e.task},
              {"wrong_code", e.wrong_kernel},
              {"analysis", e.analysis},
              {"plan", e.plan},
              {"correct_code", e.fixed_kernel}};
}

std::size_t estimated_tokens(const Json& row) {
  std::size_t bytes = 0;
  for (const Json& m : row["messages"]) bytes += m["content"].get_ref<const std::string&>().size();
  return approx_tokens_for_bytes(bytes);
}

std::size_t tokenizer_tokens(const Json& row, const BpeTokenizer& tokenizer) {
  std::size_t tokens = 0;
  for (const Json& m : row["messages"])
    tokens += tokenizer.count(m["content"].get_ref<const std::string&>());
  return tokens;
}

Result<ExportResult> export_records(std::vector<SftExample> examples,
                                    const ExportOptions& options) {
  if (options.format != "chat-jsonl" && options.format != "four-part")
    return make_error("usage", "unknown format '{}' (chat-jsonl or four-part)", options.format);
  // Input order first (by id), so the shuffle depends on the seed and the set only.
  std::sort(examples.begin(), examples.end(),
            [](const SftExample& a, const SftExample& b) { return a.id < b.id; });
  seeded_shuffle(examples, options.seed);

  ExportResult result;
  Json rows = Json::array(), drops = Json::array();
  std::map<std::string, int> drop_counts, kinds;
  for (const SftExample& e : examples) {
    const Json chat = chat_row(e);
    auto drop = [&](const std::string& reason, Json detail) {
      drops.push_back(Json{{"id", e.id}, {"reason", reason}, {"detail", detail}});
      ++drop_counts[reason];
    };
    if (options.holdout_tasks.count(e.task)) {
      drop("holdout_task", e.task);
      continue;
    }
    auto collision = options.test_kernels.find(canonical_source_hash(e.fixed_kernel));
    if (collision == options.test_kernels.end() && !e.wrong_kernel.empty())
      collision = options.test_kernels.find(canonical_source_hash(e.wrong_kernel));
    if (collision != options.test_kernels.end()) {
      drop("same_as_test_kernel", collision->second);
      continue;
    }
    // Counted after the cheaper drops: the tokenizer reads every byte of the row.
    const std::size_t estimate = estimated_tokens(chat);
    Json counts{{"estimated_tokens", estimate}};
    std::size_t tokens = estimate;
    if (options.tokenizer) {
      tokens = tokenizer_tokens(chat, *options.tokenizer);
      counts["tokenizer_tokens"] = tokens;
    }
    if (tokens > options.max_tokens) {
      counts["limit"] = options.max_tokens;
      drop("over_token_limit", counts);
      continue;
    }
    const Json row = options.format == "chat-jsonl" ? chat : four_part_row(e);
    const std::string line = row.dump();
    result.jsonl += line + "\n";
    Json parts = Json::array();
    for (const Json& m : chat["messages"])
      parts.push_back(sha256_hex(m["content"].get_ref<const std::string&>()));
    Json entry{{"id", e.id}, {"kind", e.kind}, {"task", e.task}};
    entry.update(counts);
    entry["row_sha256"] = sha256_hex(line);
    entry["message_sha256"] = parts;
    rows.push_back(std::move(entry));
    ++kinds[e.kind];
  }
  result.manifest =
      Json{{"format", "ptxbench-sft-export/1"},
           {"record_format", options.format},
           {"shuffle_seed", options.seed},
           {"max_tokens", options.max_tokens},
           {"token_count", options.tokenizer
                               ? options.tokenizer->method()
                               : "estimate: ceil(UTF-8 bytes / 3.5) (packs/token_estimate.h)"},
           {"counts",
            {{"input", examples.size()},
             {"written", rows.size()},
             {"written_by_kind", kinds},
             {"dropped", drops.size()},
             {"dropped_by_reason", drop_counts}}},
           {"file_sha256", sha256_hex(result.jsonl)},
           {"rows", rows},
           {"drops", drops}};
  return result;
}

}  // namespace ptxb::adapt
