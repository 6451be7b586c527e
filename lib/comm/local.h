// The local backend: N ranks as N threads of this process, talking through in-process mailboxes.
// Used by unit tests (every collective algorithm at 1..5 ranks without mpirun) and by lessons that
// demonstrate an algorithm step by step on one laptop.
//
//   run_local(4, [&](Communicator& comm) {
//     std::vector<float> g(1000, float(comm.rank()));
//     comm.allreduce(g.data(), g.data(), g.size(), DataType::f32, ReduceOp::sum);
//   });
//
// Point-to-point sends are synchronous (a send returns once the receiver has copied the data,
// like MPI's rendezvous protocol for large messages), so an algorithm that deadlocks under MPI
// deadlocks here too rather than passing by luck. sendrecv posts its send before receiving.
// If one rank's body throws, every rank blocked in a communicator call fails with a comm error
// naming that rank, and run_local rethrows the first rank's original exception after joining all
// threads. A rank waiting on a peer whose body already returned fails likewise: nothing hangs.
#pragma once
#include <functional>

#include "comm/communicator.h"

namespace scalelab::comm {

// Runs body(comm) on `nranks` threads (rank i on thread i) and returns when all have finished.
// local_rank() == rank() and local_size() == size(); memory_space() is host.
void run_local(int nranks, const std::function<void(Communicator&)>& body);

}  // namespace scalelab::comm
