// Process-wide MPI state: initialise once (thread level MPI_THREAD_FUNNELED or better),
// finalise once, and bring the whole job down when one rank fails. Used by main() and by the
// MPI-backed communicators; nothing else calls MPI_Init/MPI_Finalize/MPI_Abort.
#pragma once

namespace scalelab::comm {

// Initialises MPI if it is not yet (idempotent). Returns the world size.
int ensure_mpi_initialized();
// True between MPI_Init and MPI_Finalize.
[[nodiscard]] bool mpi_active();
// MPI_Finalize if active (idempotent).
void finalize_mpi();
// After an error on this rank: with more than one rank, MPI_Abort so no peer waits forever;
// otherwise finalise. The caller has already printed the message.
void fail_job(int exit_code);

}  // namespace scalelab::comm
