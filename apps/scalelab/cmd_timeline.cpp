// `scalelab timeline FILE`: where a step's time went, from a Chrome trace (lib/report/timeline_summary.h).
#include <cstdio>

#include "commands.h"
#include "core/results.h"
#include "report/timeline_summary.h"

namespace scalelab::cli {

int cmd_timeline(const Args& args) {
  po::options_description opts("scalelab timeline options");
  opts.add_options()("file", po::value<std::string>(), "a timeline: train --timeline or simulate --timeline")(
      "json", po::value<std::string>(), "write the summary as JSON (schema scalelab.timeline)");
  po::positional_options_description pos;
  pos.add("file", 1);
  const auto vm = parse(args,
                        "scalelab timeline FILE [--json OUT]\n\n"
                        "Where the time went, per rank (or simulated track): each phase's total and share of the\n"
                        "track's span, the communication's share, and how much of it ran while the track computed\n"
                        "(the overlap bucketed allreduce buys). The file is the Chrome trace that `train --timeline` or\n"
                        "`simulate --timeline` wrote (Perfetto and chrome://tracing draw it).",
                        opts, &pos);
  if (!vm) return 0;
  if (!vm->count("file")) usage_error(args, "give the timeline file, e.g. scalelab timeline trace.json");
  check_output_files(*vm, {"json"});
  check_distinct_files(*vm, {"json"}, "file");
  const std::string file = (*vm)["file"].as<std::string>();
  const report::TimelineSummary s = report::summarize_timeline(read_json_file(file), file);

  std::printf("# scalelab timeline: %s (%d events)\n", file.c_str(), s.events);
  int overlapping = 0;
  for (const auto& t : s.tracks) overlapping += t.overlapping_spans;
  if (overlapping > 0) {
    std::fprintf(stderr,
                 "warning: %s: %d span(s) start before the span before them on the same thread has ended; the phases' "
                 "shares below then add up to more than 100%% (a trace written twice into one file?)\n",
                 file.c_str(), overlapping);
  }
  nlohmann::json doc = make_envelope("timeline", 1, args.full);
  doc["file"] = file;
  doc["tracks"] = nlohmann::json::array();
  for (const auto& t : s.tracks) {
    const double span = t.span_us > 0 ? t.span_us : 1;
    std::printf("\n%s: %.3f ms from the first event to the last\n", t.name.c_str(), t.span_us / 1e3);
    std::printf("  %-14s %10s %7s %7s\n", "phase", "ms", "share", "events");
    nlohmann::json phases = nlohmann::json::array();
    for (std::size_t i = 0; i < t.phases.size(); ++i) {
      const auto& [name, us] = t.phases[i];
      std::printf("  %-14s %10.3f %6.1f%% %7d\n", name.c_str(), us / 1e3, 100 * us / span, t.counts[i].second);
      phases.push_back({{"name", name}, {"ms", us / 1e3}, {"share", us / span}, {"events", t.counts[i].second}});
    }
    const double hidden = t.comm_us > 0 ? t.comm_overlapped_us / t.comm_us : 0;
    if (t.comm_us > 0) {
      std::printf("  communication %.3f ms (%.1f%% of the span); %.3f ms of it (%.1f%%) ran while this track computed\n",
                  t.comm_us / 1e3, 100 * t.comm_us / span, t.comm_overlapped_us / 1e3, 100 * hidden);
    } else {
      std::printf("  no communication on this track\n");
    }
    doc["tracks"].push_back({{"pid", t.pid}, {"name", t.name}, {"span_ms", t.span_us / 1e3}, {"phases", phases},
                             {"communication_ms", t.comm_us / 1e3}, {"compute_ms", t.compute_us / 1e3},
                             {"overlapped_ms", t.comm_overlapped_us / 1e3}, {"overlapped_share", hidden},
                             {"overlapping_spans", t.overlapping_spans}});
  }
  if (vm->count("json")) write_json_file((*vm)["json"].as<std::string>(), doc);
  return 0;
}

}  // namespace scalelab::cli
