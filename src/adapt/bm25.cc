#include "adapt/bm25.h"

#include <algorithm>
#include <cmath>
#include <set>

namespace ptxb::adapt {
namespace {

std::size_t count_in_sorted(const std::vector<std::string>& sorted, const std::string& term) {
  const auto [first, last] = std::equal_range(sorted.begin(), sorted.end(), term);
  return static_cast<std::size_t>(last - first);
}

}  // namespace

std::size_t Bm25Index::add(std::vector<std::string> terms) {
  std::sort(terms.begin(), terms.end());
  total_terms_ += terms.size();
  documents_.push_back(std::move(terms));
  return documents_.size() - 1;
}

double Bm25Index::idf(const std::string& term) const {
  const double n = static_cast<double>(documents_.size());
  double containing = 0;
  for (const auto& document : documents_)
    if (std::binary_search(document.begin(), document.end(), term)) containing += 1;
  return std::log(1.0 + (n - containing + 0.5) / (containing + 0.5));
}

double Bm25Index::score(std::size_t document, const std::vector<std::string>& query) const {
  if (document >= documents_.size() || total_terms_ == 0) return 0;
  const auto& terms = documents_[document];
  const double average_length =
      static_cast<double>(total_terms_) / static_cast<double>(documents_.size());
  const double length_factor =
      1.0 - parameters_.b + parameters_.b * static_cast<double>(terms.size()) / average_length;
  const std::set<std::string> distinct(query.begin(), query.end());
  double total = 0;
  for (const auto& term : distinct) {
    const double frequency = static_cast<double>(count_in_sorted(terms, term));
    if (frequency == 0) continue;
    total +=
        idf(term) * frequency * (parameters_.k1 + 1) / (frequency + parameters_.k1 * length_factor);
  }
  return total;
}

std::vector<Bm25Hit> Bm25Index::rank(const std::vector<std::string>& query, std::size_t k,
                                     const std::vector<bool>& allowed) const {
  std::vector<Bm25Hit> hits;
  for (std::size_t i = 0; i < documents_.size(); ++i) {
    if (!allowed[i]) continue;
    const double s = score(i, query);
    if (s > 0) hits.push_back({i, s});
  }
  std::stable_sort(hits.begin(), hits.end(),
                   [](const Bm25Hit& a, const Bm25Hit& b) { return a.score > b.score; });
  if (hits.size() > k) hits.resize(k);
  return hits;
}

}  // namespace ptxb::adapt
