// The public API's shared insides (include/scalelab/): the process's communicator while a
// scalelab::Runtime is alive, and the translation of the library's errors into scalelab::ApiError.
//
//   comm::Communicator& comm = api::communicator("scalelab::rank");   // throws without a Runtime
//   return api::translated([&] { return something_that_may_throw_core_error(); });
#pragma once
#include <utility>

#include "comm/communicator.h"
#include "core/error.h"
#include "scalelab/runtime.h"

namespace scalelab::api {

// The live Runtime's communicator; without one, ApiError naming `function` and the fix.
[[nodiscard]] comm::Communicator& communicator(const char* function);
// True while a Runtime is alive.
[[nodiscard]] bool runtime_alive();

// Runs f; a scalelab::Error leaving it becomes an ApiError with the same line and exit code.
template <class F>
decltype(auto) translated(F&& f) {
  try {
    return std::forward<F>(f)();
  } catch (const Error& e) {
    throw ApiError(e.what(), e.exit_code());
  }
}

}  // namespace scalelab::api
