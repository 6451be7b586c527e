// The divergence check: training whose loss turns NaN or infinite (a learning rate far too high,
// most often) is stopped at the step where it happens, on every rank at once, before a record
// says it completed and before a checkpoint could hold the ruined weights.
//
// Each step every rank contributes whether its running training loss is still finite; one small
// allreduce (max of the flags) makes every rank take the same decision at the same step, so no
// rank waits in a collective for a peer that stopped.
//
//   DivergenceCheck check(comm);
//   check.after_step(engine.peek_train_tally().loss_sum, global_step, epoch + 1, lr);  // collective
#pragma once
#include <cstdint>

#include "comm/communicator.h"

namespace scalelab::train {

class DivergenceCheck {
 public:
  explicit DivergenceCheck(comm::Communicator& comm) : comm_(comm) {}
  // Collective. loss_sum: this rank's training-loss sum so far this epoch; step: the global step
  // just taken (1-based); epoch: 1-based; lr: that step's learning rate. Throws a usage error
  // naming "lr" ("lr: the loss became NaN at step 37 (epoch 1): the learning rate 1e+09 is
  // probably too high; lower it") on every rank when any rank's loss is not finite.
  void after_step(double loss_sum, std::int64_t step, int epoch, double lr);

 private:
  comm::Communicator& comm_;
};

}  // namespace scalelab::train
