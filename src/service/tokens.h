// Bearer tokens (`ptxbench serve --tokens FILE`): who may use the service, and each client's
// request rate and queue quota.
//
// File format, one client per line, `#` starts a comment:
//   NAME TOKEN [rate=R] [burst=B] [quota=Q]
// NAME ([A-Za-z0-9._-], unique) is what job records, lists and metrics show as the owner; the
// TOKEN (at least 16 characters, unique) is only ever compared, never stored, logged or returned.
// rate: requests per second (token bucket, refilled continuously), burst: the bucket's size,
// quota: jobs queued or running at once. Absent values take the service's defaults.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/result.h"

namespace ptxb::service {

struct ClientLimits {
  double rate_per_second = 200;  // requests; a long-poll counts once
  double burst = 400;
  int queue_quota = 10000;  // jobs queued or running
};

struct Client {
  std::string name;
  ClientLimits limits;
};

class TokenTable {
 public:
  // Parses the file's text; errors name `origin:LINE`.
  static Result<TokenTable> parse(const std::string& text, const std::string& origin,
                                  const ClientLimits& defaults);
  static Result<TokenTable> load(const std::string& path, const ClientLimits& defaults);

  // The client whose token is `token`, comparing every entry in constant time per byte so that
  // the answer's timing does not tell how much of a guess was right.
  std::optional<Client> find(const std::string& token) const;
  std::size_t size() const { return entries_.size(); }

 private:
  struct Entry {
    Client client;
    std::string token;
  };
  std::vector<Entry> entries_;
};

// "Bearer abc" -> "abc"; "" for any other form.
std::string bearer_token(const std::string& authorization_header);

}  // namespace ptxb::service
