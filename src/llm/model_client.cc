#include "llm/model_client.h"

namespace ptxb {

Json ModelUsage::to_json() const {
  return Json{{"prompt", prompt},
              {"completion", completion},
              {"reasoning", reasoning},
              {"reasoning_source", reasoning_source}};
}

Json ModelReply::to_json() const {
  return Json{{"finish_reason", finish_reason},
              {"response_id", response_id},
              {"served_model", served_model},
              {"usage", usage.to_json()},
              {"attempts", attempts},
              {"retries", retries},
              {"wall_s", wall_s}};
}

}  // namespace ptxb
