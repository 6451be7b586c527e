// StepPlan (nn/step_plan.h): the greedy reverse-order packing of gradients into buckets.
#include "nn/step_plan.h"

#include <algorithm>
#include <cstdio>

#include "core/error.h"
#include "core/size_parse.h"

namespace scalelab::nn {

StepPlan::StepPlan(const std::vector<ParamInfo>& params, const AveragingOptions& options)
    : options_(options), bucket_of_(params.size(), 0) {
  if (options_.backward_passes_per_step < 1) {
    throw_parameter(ErrorKind::usage, "backward_passes_per_step",
                    std::to_string(options_.backward_passes_per_step) + ": must be at least 1");
  }
  const std::size_t cap = options_.bucket_cap_bytes;
  for (std::size_t i = 1; i < params.size(); ++i) {
    if (params[i].offset < params[i - 1].offset + params[i - 1].size) {
      throw_runtime("step plan: parameter " + params[i].name + " overlaps or precedes " + params[i - 1].name +
                    " in the flat buffer; build the plan from a finalized ParameterSet");
    }
  }
  constexpr std::size_t kFloatBytes = sizeof(float);
  std::size_t bytes = 0;  // gradient bytes of the open bucket (its tensors, padding not counted)
  for (std::size_t k = params.size(); k-- > 0;) {
    const ParamInfo& p = params[k];
    const std::size_t p_bytes = p.size * kFloatBytes;
    if (!buckets_.empty() && cap > 0 && bytes + p_bytes <= cap) {
      Bucket& b = buckets_.back();  // p sits just before b in the buffer
      b.count += b.offset - p.offset;
      b.offset = p.offset;
      b.first_param = k;
      bytes += p_bytes;
    } else {
      buckets_.push_back({p.offset, p.size, k, k});
      bytes = p_bytes;
    }
    bucket_of_[k] = buckets_.size() - 1;
  }
  for (const Bucket& b : buckets_) largest_ = std::max(largest_, b.count);
}

namespace {
// "4.6 MiB", "12.0 KiB": a bucket's size to one decimal (format_size prints exact multiples only).
std::string approx_size(std::size_t bytes) {
  char buf[32];
  if (bytes < 1024) {
    std::snprintf(buf, sizeof buf, "%zu B", bytes);
  } else if (bytes < (std::size_t{1} << 20)) {
    std::snprintf(buf, sizeof buf, "%.1f KiB", static_cast<double>(bytes) / 1024.0);
  } else {
    std::snprintf(buf, sizeof buf, "%.1f MiB", static_cast<double>(bytes) / (1024.0 * 1024.0));
  }
  return buf;
}
}  // namespace

std::size_t StepPlan::wire_bytes() const {
  std::size_t n = 0;
  for (const Bucket& b : buckets_) n += wire_bytes(b);
  return n;
}

std::string StepPlan::describe() const {
  std::string s = std::to_string(buckets_.size()) + (buckets_.size() == 1 ? " bucket" : " buckets");
  s += options_.bucket_cap_bytes == 0 ? " (one per tensor)" : " of <= " + format_size(options_.bucket_cap_bytes);
  // A tensor larger than the cap is a bucket of its own, whatever the cap.
  const bool over = options_.bucket_cap_bytes > 0 &&
                    std::any_of(buckets_.begin(), buckets_.end(),
                                [&](const auto& b) { return b.count * sizeof(float) > options_.bucket_cap_bytes; });
  if (over) s += " or one tensor larger than that";
  s += " (";
  const std::size_t shown = std::min<std::size_t>(buckets_.size(), 4);
  for (std::size_t i = 0; i < shown; ++i) {
    s += (i ? ", " : "") + approx_size(buckets_[i].count * sizeof(float));
  }
  if (buckets_.size() > shown) s += ", ...";
  s += ")";
  return s;
}

BucketReadiness::BucketReadiness(const StepPlan& plan) : plan_(plan) { reset(); }

bool BucketReadiness::mark(std::size_t param) {
  if (param >= done_.size()) {
    throw_runtime("gradient averaging: parameter index " + std::to_string(param) + " is out of range (the model has " +
                  std::to_string(done_.size()) + ")");
  }
  if (done_[param]) {
    throw_runtime("gradient averaging: parameter " + std::to_string(param) +
                  " was reported final twice in one step; end the step (finish()) once per step");
  }
  done_[param] = 1;
  return --pending_[plan_.bucket_of(param)] == 0;
}

void BucketReadiness::reset() {
  pending_.resize(plan_.size());
  for (std::size_t k = 0; k < plan_.size(); ++k) pending_[k] = plan_.buckets()[k].params();
  done_.assign(plan_.param_count(), 0);
}

}  // namespace scalelab::nn
