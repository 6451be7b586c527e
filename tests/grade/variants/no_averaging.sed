# Fault: gradients not averaged: the optimizer is not wrapped in a DistributedOptimizer, so the
# ranks start alike (the broadcast) and drift apart from the first step (and the program, seeing
# its ranks disagree at the end, exits 1). Not in the assessment's list: a further fault.
# Loses: Parameters identical across ranks; Reaches test accuracy
# Seen: gradients not averaged
/scalelab::DistributedOptimizer optimizer(sgd);/d
s/model.train_batch(b, optimizer.gradient_scale())/model.train_batch(b)/
s/optimizer.step(static_cast<float>/sgd.step(static_cast<float>/
