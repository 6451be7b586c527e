// Output paths checked before the work: a command that will write a file (or fill a folder) at
// the end checks first that it can, so a typo in a path costs one line and no lost measurement.
// The checks leave nothing behind: the probe file they create to test the folder is removed.
//
//   check_output_file("checkpoint", config.checkpoint);   // before training starts
//   prepare_output_folder("out_dir", options.out_dir);     // creates it when missing
// Errors are input errors (exit 2) naming the parameter (core/error.h), so the CLI prints its flag:
//   error: --checkpoint /nonexistent/ck.bin: the folder /nonexistent does not exist; create it or give another path
#pragma once
#include <string>

namespace scalelab {

// `path` can be created or replaced as a file: it is not a folder, its folder exists and a file
// can be created there (tested by creating and removing a probe file), and an existing file can
// be opened for writing. An empty path (no output asked for) passes.
void check_output_file(const std::string& parameter, const std::string& path);

// The file a write to `path` replaces: a symbolic link's target (the link is kept and the file it
// names gets the bytes), else `path` itself. AtomicFile writes there, check_output_file checks there.
[[nodiscard]] std::string resolved_output_path(const std::string& path);

// `path` is a folder files can be created in, created (with its parents) when missing. A file in
// its place, a parent that cannot be created or a folder that cannot be written is an input
// error naming the parameter.
void prepare_output_folder(const std::string& parameter, const std::string& path);

// A temporary name beside `path` that no other process picks: "<path>.tmp.<pid>.<random hex>".
[[nodiscard]] std::string unique_temp_name(const std::string& path);

// Temporaries of `target` that writers killed mid-write left behind: removed when their process
// is gone from this machine and they are an hour old (a writer on another host of a shared
// folder is not visible here; an hour outlasts any write). AtomicFile calls it before each write.
void remove_abandoned_temporaries(const std::string& target);

}  // namespace scalelab
