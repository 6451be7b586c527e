// The behaviour trace: what a program did through the public API, one JSON object per line, for
// a grader (or any tool) to read instead of the program's own output. Off unless the environment
// names a descriptor open for writing in SCALELAB_TRACE_FD:
//   N        this process's descriptor N (inherited from whoever started it), or
//   PID:N    descriptor N of process PID, reached through /proc/PID/fd/N: how a program that
//            starts mpirun hands its descriptor to the ranks (Open MPI closes inherited ones).
// Every rank writes to it; each line is one write() of at most 4096 bytes, so lines from several
// ranks do not interleave in a pipe or a file. The format (events, fields) is in docs/api.md.
//
//   api::open_trace(comm);                              // Runtime's constructor
//   if (api::tracing()) api::trace("step", {{"step", 3}, {"lr", 0.1}});
#pragma once
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "comm/communicator.h"

namespace scalelab::api {

// Reads SCALELAB_TRACE_FD and, when set, opens the trace and writes the "start" event. A value
// that is not a descriptor open for writing throws ApiError (exit code 2) naming it.
void open_trace(comm::Communicator& comm);
// Writes the "end" event and stops tracing.
void close_trace();
[[nodiscard]] bool tracing();
// Writes one event: {"seq": n, "rank": r, "event": event, ...fields}. seq counts this rank's
// events from 0, so a missing or inserted line shows.
// A parameter fingerprint as the trace writes it: 16 hexadecimal digits.
[[nodiscard]] std::string fingerprint_text(std::uint64_t fingerprint);
void trace(const char* event, nlohmann::ordered_json fields = nlohmann::ordered_json::object());
// Writes the "enter" event before a collective call blocks: {"event": "enter", "op": op, "call":
// call}. A rank whose last line is an "enter" was waiting in that collective when it stopped.
void trace_enter(const char* op, const char* call);

}  // namespace scalelab::api
