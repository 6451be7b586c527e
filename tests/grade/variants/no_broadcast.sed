# Fault: no broadcast from rank 0: every rank starts from its own initial weights (and the
# program, seeing its ranks disagree at the end, exits 1: the accuracy test needs exit status 0).
# Loses: Parameters identical across ranks; Reaches test accuracy
# Seen: no broadcast from rank 0
/scalelab::broadcast_from_rank0(model, sgd);/d
