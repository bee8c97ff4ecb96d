// Okapi BM25 over bags of terms (here: identifier tokens of comment-stripped kernel source,
// source_tokens.h), for retrieving historical fixes whose failing kernel looks like the one a
// model just wrote.
//
//   score(D, Q) = Σ_{q ∈ distinct(Q)} idf(q) · f(q,D)·(k1+1) / (f(q,D) + k1·(1 − b + b·|D|/avgdl))
//   idf(q)      = ln(1 + (N − n(q) + 0.5) / (n(q) + 0.5))
//
// with f(q,D) the count of q in D, |D| the document's length in terms, avgdl the mean length,
// N the number of documents and n(q) how many contain q. The "+1" inside the logarithm (the
// Lucene form) keeps idf positive for terms in more than half the documents: identifiers such
// as `threadIdx` are in nearly every kernel, and a negative weight would punish matching them.
// Each distinct query term counts once, so a query kernel that repeats `smem` fifty times does
// not drown its rarer identifiers.
#pragma once

#include <string>
#include <vector>

namespace ptxb::adapt {

struct Bm25Parameters {
  double k1 = 1.2;  // term-frequency saturation (the common default)
  double b = 0.75;  // length normalization (the common default)
};

struct Bm25Hit {
  std::size_t document = 0;  // index in the order documents were added
  double score = 0;
};

class Bm25Index {
 public:
  explicit Bm25Index(Bm25Parameters parameters = {}) : parameters_(parameters) {}

  // Returns the document's index.
  std::size_t add(std::vector<std::string> terms);
  std::size_t size() const { return documents_.size(); }

  double score(std::size_t document, const std::vector<std::string>& query) const;
  // The best `k` documents with a score > 0, best first; ties by lower index (deterministic).
  // `allowed(i)` filters documents (e.g. same task only).
  template <typename Filter>
  std::vector<Bm25Hit> top_k(const std::vector<std::string>& query, std::size_t k,
                             Filter allowed) const;
  std::vector<Bm25Hit> top_k(const std::vector<std::string>& query, std::size_t k) const {
    return top_k(query, k, [](std::size_t) { return true; });
  }

  double idf(const std::string& term) const;

 private:
  std::vector<Bm25Hit> rank(const std::vector<std::string>& query, std::size_t k,
                            const std::vector<bool>& allowed) const;

  Bm25Parameters parameters_;
  std::vector<std::vector<std::string>> documents_;  // each sorted, for counting
  std::size_t total_terms_ = 0;
};

template <typename Filter>
std::vector<Bm25Hit> Bm25Index::top_k(const std::vector<std::string>& query, std::size_t k,
                                      Filter allowed) const {
  std::vector<bool> mask(documents_.size());
  for (std::size_t i = 0; i < documents_.size(); ++i) mask[i] = allowed(i);
  return rank(query, k, mask);
}

}  // namespace ptxb::adapt
