# Fault: every rank opens the log (std::ofstream outside on_rank0), so ranks 1.. each create
# OUT_DIR/train.log: a write the trace cannot see, caught because each rank runs in a folder of
# its own.
# Loses: Only rank 0 writes checkpoints and logs
# Seen: rank 1 wrote out/train.log
s|scalelab::on_rank0(\[&\] { std::filesystem::create_directories(out); });|std::filesystem::create_directories(out);|
s|scalelab::on_rank0(\[&\] { log.emplace(out / "train.log"); });|log.emplace(out / "train.log");|
