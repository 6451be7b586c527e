#include "commands.h"
#include "core/error.h"

namespace scalelab::cli {

int cmd_info(const Args& args) {
  usage_error(args, "not built yet");
}

}  // namespace scalelab::cli
