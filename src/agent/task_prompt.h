// The prompt of a registry task (design.md §5): adapts a Task to the registry-independent
// PromptTask of src/packs and builds the exact system prompt and first user message, as
// `ptxbench prompt` prints them and as MiniPTXAgent sends them.
#pragma once

#include <string>

#include "packs/pack_library.h"
#include "packs/prompt_builder.h"
#include "tasks/task.h"

namespace ptxb {

// The library reference as the model should read it (the manifest stores backend keys).
std::string reference_label(const std::string& backend);

PromptTask prompt_task_from(const Task& task);

Result<Prompt> build_task_prompt(const PackLibrary& library, const Task& task,
                                 const std::string& variant);

}  // namespace ptxb
