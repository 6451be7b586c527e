# Fault: metrics not averaged: each rank reports the loss and accuracy of its own shard. The
# accuracy is read from the reduced metric, so there is none to grade.
# Loses: Metrics averaged; Reaches test accuracy
# Seen: the metrics are not averaged
s/scalelab::average_over_ranks(train.loss_sum \/ train.samples)/(train.loss_sum \/ train.samples)/
s/scalelab::sum_over_ranks({test.correct, test.samples})/std::vector<double>{test.correct, test.samples}/
