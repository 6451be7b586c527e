# Fault: no warm-up: the scaled learning rate from the first step.
# Loses: Learning rate warmed up
# Seen: no warm-up
s/\.warmup = "horovod",/.warmup = "none",/
