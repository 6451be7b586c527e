// The public API's learning-rate schedule (include/scalelab/schedule.h) over lib/optim.
#include "api/context.h"
#include "optim/schedule.h"
#include "scalelab/schedule.h"

namespace scalelab {

LrSchedule::LrSchedule(const LrScheduleOptions& o) {
  impl_ = api::translated([&] {
    optim::ScheduleConfig c;
    c.base_lr = o.base_lr;
    c.scaling = optim::parse_scaling_rule(o.scaling);
    c.reference_batch = o.reference_batch;
    c.global_batch = o.global_batch;
    c.warmup = optim::parse_warmup_kind(o.warmup);
    c.warmup_epochs = o.warmup_epochs;
    c.workers = o.workers;
    c.decay = optim::parse_decay_kind(o.decay);
    c.end_lr = o.end_lr;
    c.epochs = o.epochs;
    c.steps_per_epoch = o.steps_per_epoch;
    return std::make_unique<optim::LrSchedule>(std::move(c));
  });
}

LrSchedule::~LrSchedule() = default;
LrSchedule::LrSchedule(LrSchedule&&) noexcept = default;
LrSchedule& LrSchedule::operator=(LrSchedule&&) noexcept = default;

double LrSchedule::lr(long step) const { return impl_->lr(step); }
double LrSchedule::peak_lr() const { return impl_->peak_lr(); }
long LrSchedule::warmup_steps() const { return impl_->warmup_steps(); }
std::string LrSchedule::table() const { return impl_->table(); }

}  // namespace scalelab
