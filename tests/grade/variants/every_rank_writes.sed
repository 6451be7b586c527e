# Fault: every rank writes the checkpoint (save_checkpoint outside on_rank0).
# Loses: Only rank 0 writes checkpoints and logs
# Seen: every rank writes the checkpoint
/scalelab::save_checkpoint((out \/ "model.ckpt").string(), model, sgd, epoch + 1);/d
s|^      });$|      });\n      std::filesystem::create_directories(out);\n      scalelab::save_checkpoint((out / "model.ckpt").string(), model, sgd, epoch + 1);|
