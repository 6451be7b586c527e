// How the CLI names the library's parameters. Library errors name a parameter in the library's
// own terms (core/error.h: "batch_size 0: ..."); before printing, the CLI puts its flag in that
// name's place ("--batch-size 0: ..."). One table, in flag_names.cpp; a parameter without a row
// is printed under the library's name.
#pragma once
#include <string>
#include <string_view>

#include "core/error.h"

namespace scalelab::cli {

// The flag that sets `parameter` ("batch_size" -> "--batch-size"), or "" when no flag does.
[[nodiscard]] std::string flag_for(std::string_view parameter);
// The same in `command` ("converge"), whose options may set the parameter under another flag.
[[nodiscard]] std::string flag_for(std::string_view parameter, std::string_view command);

// The one line `command` prints for `e`: what() with the parameter's flag in place of its name.
[[nodiscard]] std::string cli_message(const Error& e, std::string_view command = "");

}  // namespace scalelab::cli
