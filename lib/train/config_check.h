// The training configuration every rank must share, and the check that they do. Ranks launched
// with different arguments (Open MPI's MPMD syntax, a wrapper script per host) would otherwise
// hang in a collective, crash on mismatched buffer sizes or silently train something else; this
// turns that into one line on every rank naming each option that differs and the ranks' values:
//   --lr differs across ranks: rank 0 has 0.05, rank 1 has 0.1; launch every rank with the same arguments
//
//   require_same_config(comm, config);          // collective; the Trainer calls it before step 1
//   auto fields = agreed_fields(config);        // {"lr", "0.05"}, {"seed", "42"}, ...
#pragma once
#include <vector>

#include "comm/communicator.h"
#include "comm/consistency.h"
#include "train/config.h"

namespace scalelab::train {

// Every TrainConfig field that must agree across ranks, named as the field (core/error.h), with
// its value as text. Per-rank fields are left out; config_check.cpp says which and why.
[[nodiscard]] std::vector<comm::NamedValue> agreed_fields(const TrainConfig& c);

// Throws a usage error (exit 2) on every rank when any agreed field differs across ranks,
// naming each and the ranks' values (comm::require_same_fields). Collective.
void require_same_config(comm::Communicator& comm, const TrainConfig& c);

}  // namespace scalelab::train
