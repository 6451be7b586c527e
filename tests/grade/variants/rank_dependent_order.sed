# Fault: rank-dependent collective order: rank 1 calls a barrier that rank 0 does not, so rank 0
# waits in parameters_agree and rank 1 in the barrier until the grader kills the job at the limit.
# Loses: No deadlock; Reaches test accuracy; Parameters identical across ranks
# Seen: rank 0 waiting in scalelab::parameters_agree
s|^    const bool agree = scalelab::parameters_agree(model);|    if (scalelab::rank() == 1) scalelab::barrier();\n&|
