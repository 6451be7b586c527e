// DivergenceCheck (train/divergence.h).
#include "train/divergence.h"

#include <cmath>

#include <fmt/format.h>

#include "core/error.h"

namespace scalelab::train {

void DivergenceCheck::after_step(double loss_sum, std::int64_t step, int epoch, double lr) {
  // 0: finite; 1: infinite; 2: NaN. The largest over the ranks names what happened.
  double flag = std::isnan(loss_sum) ? 2.0 : (std::isinf(loss_sum) ? 1.0 : 0.0);
  comm_.allreduce(&flag, &flag, 1, comm::DataType::f64, comm::ReduceOp::max);
  if (flag == 0.0) return;
  throw_parameter(ErrorKind::usage, "lr",
                  fmt::format(": the loss became {} at step {} (epoch {}): the learning rate {:g} is probably too "
                              "high; lower it",
                              flag == 2.0 ? "NaN" : "infinite", step, epoch, lr));
}

}  // namespace scalelab::train
