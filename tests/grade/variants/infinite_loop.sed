# Fault: an infinite loop after training, on every rank: killed at the time limit. Graded at 1
# rank only, to spend one time limit rather than two (at more ranks it also loses the deadlock
# and final-parameter tests, as rank_dependent_order does).
# Loses: Runs at 1 rank; Reaches test accuracy
# Seen: killed at the 30 s limit
# Seen: rank 0 not in a collective
s|^    return agree ? 0 : 1;|    for (volatile unsigned long spin = 0;; spin = spin + 1) {\n    }\n&|
