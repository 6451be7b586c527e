// StepTimeline (train/timeline.h): events travel to rank 0 as raw TraceEvent bytes.
#include "train/timeline.h"

#include <cstdint>
#include <vector>

namespace scalelab::train {

StepTimeline::StepTimeline(bool enabled, int rank, std::size_t expected_events)
    : enabled_(enabled),
      rank_(rank),
      trace_({"data wait", "forward", "backward", "allreduce", "optimizer", "evaluate", "checkpoint"}) {
  if (enabled_) trace_.reserve(expected_events);
}

void StepTimeline::gather_and_write(comm::Communicator& comm, const std::string& path) {
  constexpr int kTag = 7301;
  if (comm.rank() != 0) {
    const std::uint64_t n = trace_.events().size();
    comm.send(&n, sizeof n, 0, kTag);
    if (n > 0) comm.send(trace_.events().data(), n * sizeof(TraceEvent), 0, kTag);
    return;
  }
  Trace all(trace_.names());
  all.reserve(trace_.events().size() * static_cast<std::size_t>(comm.size()));
  for (const auto& e : trace_.events()) all.add(e);
  std::vector<TraceEvent> incoming;
  for (int r = 1; r < comm.size(); ++r) {
    std::uint64_t n = 0;
    comm.recv(&n, sizeof n, r, kTag);
    incoming.resize(n);
    if (n > 0) comm.recv(incoming.data(), n * sizeof(TraceEvent), r, kTag);
    for (const auto& e : incoming) all.add(e);
  }
  TraceLabels labels;
  for (int r = 0; r < comm.size(); ++r) labels.process_names.push_back("rank " + std::to_string(r));
  labels.thread_names = {"training loop", "communication thread"};
  labels.category = "train";
  write_chrome_trace(path, all, labels);
}

}  // namespace scalelab::train
