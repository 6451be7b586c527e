// LoadReport (load_report.h): one fixed-size record per rank through host_allgather.
#include "load_report.h"

#include <iostream>
#include <type_traits>
#include <vector>

#include "comm/communicator.h"

namespace scalelab::cli {

nlohmann::json LoadReport::finish(comm::Communicator& c, int threads, bool warn) const {
  static_assert(std::is_trivially_copyable_v<RankLoad>, "RankLoad travels as bytes");
  RankLoad mine = meter_.stop(threads);
  mine.rank = c.rank();
  std::vector<RankLoad> all(static_cast<std::size_t>(c.size()));
  c.host_allgather(&mine, all.data(), sizeof(RankLoad));
  const LoadSummary summary = summarize_load(all);
  if (warn && c.rank() == 0 && summary.contended) std::cerr << "warning: " + summary.warning + "\n" << std::flush;
  return load_json(all);
}

bool contended(const nlohmann::json& load) {
  return load.is_object() && load.value("verdict", std::string()) == "contended";
}

}  // namespace scalelab::cli
