# Fault: the learning rate is not scaled with the number of ranks (Horovod's warm-up still rises
# from a share of it to it).
# Loses: Learning rate scaled
# Seen: the learning rate is not scaled by 2
s/\.scaling = "linear"/.scaling = "none"/
