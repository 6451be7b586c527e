# Fault: no sharding: every rank reads the whole epoch.
# Loses: Training shards disjoint
# Seen: the ranks read the same samples (no sharding)
s/ShardedSampler sampler(data.train.size(), scalelab::size(), scalelab::rank(), seed)/ShardedSampler sampler(data.train.size(), 1, 0, seed)/
