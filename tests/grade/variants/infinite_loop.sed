# Fault: an infinite loop after training, on every rank: killed at the time limit.
# Loses: Runs at 1 rank; No deadlock; Reaches test accuracy; Parameters identical across ranks
# Seen: hung: killed at the
s|^    return agree ? 0 : 1;|    for (volatile unsigned long spin = 0;; spin = spin + 1) {\n    }\n&|
