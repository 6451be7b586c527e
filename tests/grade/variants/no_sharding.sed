# Fault: no sharding: every rank reads the whole epoch, the same batches in the same order, so
# the averaged gradient is one rank's at twice the learning rate: the accuracy falls short too.
# Loses: Training shards disjoint; Reaches test accuracy
# Seen: the ranks read the same samples (no sharding)
s/ShardedSampler sampler(data.train.size(), scalelab::size(), scalelab::rank(), seed)/ShardedSampler sampler(data.train.size(), 1, 0, seed)/
