// require_same and require_same_fields (consistency.h): every rank's value (or fingerprint) through
// the host control-plane exchange, compared on every rank, so all ranks throw the same message
// together.
#include "comm/consistency.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "core/error.h"

namespace scalelab::comm {

namespace {

constexpr const char* kLaunchAlike = "; launch every rank with the same arguments";
constexpr int kShownRanks = 4;  // ranks named per disagreement; the rest are counted

// Every rank's `text`, indexed by rank: lengths first, then the texts padded to the longest.
std::vector<std::string> gather_texts(Communicator& comm, const std::string& text) {
  const auto n = static_cast<std::size_t>(comm.size());
  std::uint64_t length = text.size();
  std::vector<std::uint64_t> lengths(n);
  comm.host_allgather(&length, lengths.data(), sizeof(length));
  const std::size_t longest = std::max<std::size_t>(1, *std::max_element(lengths.begin(), lengths.end()));
  std::vector<char> mine(longest, '\0'), all(longest * n);
  std::memcpy(mine.data(), text.data(), text.size());
  comm.host_allgather(mine.data(), all.data(), longest);
  std::vector<std::string> texts(n);
  for (std::size_t r = 0; r < n; ++r) {
    texts[r].assign(all.data() + r * longest, lengths[r]);
    if (texts[r].empty()) texts[r] = "(none)";
  }
  return texts;
}

// Empty when every rank holds rank 0's value; else ": rank 0 has A, rank 1 has B ...; launch ...".
std::string disagreement(Communicator& comm, std::uint64_t value) {
  std::vector<std::uint64_t> all(static_cast<std::size_t>(comm.size()));
  comm.host_allgather(&value, all.data(), sizeof(value));
  // Name rank 0's value and the first few ranks that differ from it.
  std::string detail;
  int shown = 0, differing = 0;
  for (std::size_t r = 1; r < all.size(); ++r) {
    if (all[r] == all[0]) continue;
    ++differing;
    if (shown < 4) {
      detail += ", rank " + std::to_string(r) + " has " + std::to_string(all[r]);
      ++shown;
    }
  }
  if (differing == 0) return "";
  comm.barrier();  // every rank has its copy before any throws (see require_same_fields)
  if (differing > shown) detail += " (and " + std::to_string(differing - shown) + " more ranks differ)";
  return ": rank 0 has " + std::to_string(all[0]) + detail + kLaunchAlike;
}

}  // namespace

void require_same(Communicator& comm, std::uint64_t value, std::string_view what) {
  const std::string d = disagreement(comm, value);
  if (!d.empty()) throw_comm(std::string(what) + d);
}

void require_same(Communicator& comm, std::uint64_t value, std::string_view parameter, std::string_view what) {
  const std::string d = disagreement(comm, value);
  if (!d.empty()) throw_parameter(ErrorKind::comm, std::string(parameter), ": " + std::string(what) + d);
}

std::uint64_t fingerprint(std::string_view text) {
  std::uint64_t h = 1469598103934665603ull;
  for (const unsigned char ch : text) h = (h ^ ch) * 1099511628211ull;
  return h;
}

void require_same_fields(Communicator& comm, const std::vector<NamedValue>& fields, ErrorKind kind) {
  const auto n = static_cast<std::size_t>(comm.size());
  // Slot 0 fingerprints the list of names, so ranks built with different field lists are told
  // apart from ranks holding different values.
  std::vector<std::uint64_t> mine(fields.size() + 1);
  std::string names;
  for (std::size_t i = 0; i < fields.size(); ++i) {
    names += fields[i].parameter + '\n';
    mine[i + 1] = fingerprint(fields[i].parameter + '=' + fields[i].value);
  }
  mine[0] = fingerprint(names);
  require_same(comm, fields.size(), "the number of checked settings: ranks run different scalelab builds");
  std::vector<std::uint64_t> all(mine.size() * n);
  comm.host_allgather(mine.data(), all.data(), mine.size() * sizeof(std::uint64_t));
  const auto at = [&](std::size_t rank, std::size_t slot) { return all[rank * mine.size() + slot]; };
  for (std::size_t r = 1; r < n; ++r) {
    if (at(r, 0) != at(0, 0)) throw_comm("the checked settings differ across ranks: ranks run different scalelab builds");
  }
  std::vector<std::pair<std::string, std::string>> clauses;
  for (std::size_t i = 0; i < fields.size(); ++i) {
    bool differs = false;
    for (std::size_t r = 1; r < n; ++r) differs = differs || at(r, i + 1) != at(0, i + 1);
    if (!differs) continue;  // the same decision on every rank: all of them gather below, or none
    const std::vector<std::string> texts = gather_texts(comm, fields[i].value);
    std::string detail = "differs across ranks: rank 0 has " + texts[0];
    int shown = 0, differing = 0;
    for (std::size_t r = 1; r < n; ++r) {
      if (texts[r] == texts[0]) continue;
      if (++differing <= kShownRanks) {
        detail += ", rank " + std::to_string(r) + " has " + texts[r];
        ++shown;
      }
    }
    if (differing > shown) detail += " (and " + std::to_string(differing - shown) + " more ranks differ)";
    clauses.emplace_back(fields[i].parameter, detail);
  }
  if (clauses.empty()) return;
  // Every rank reached the same verdict; none throws before all have finished the exchanges
  // above, so that no rank's exchange is cut short by another's failure and every rank reports
  // the same disagreement rather than "rank N failed".
  comm.barrier();
  clauses.back().second += kLaunchAlike;
  throw Error(kind, std::move(clauses));
}

}  // namespace scalelab::comm
