// Process-wide MPI state: initialise once (asking for MPI_THREAD_SERIALIZED: calls from any
// thread, one at a time, which the CPU engine's communication thread needs),
// finalise once, and bring the whole job down when one rank fails. Used by main() and by the
// MPI-backed communicators; nothing else calls MPI_Init/MPI_Finalize/MPI_Abort.
#pragma once

namespace scalelab::comm {

// Initialises MPI if it is not yet (idempotent). Returns the world size.
int ensure_mpi_initialized();
// True between MPI_Init and MPI_Finalize.
[[nodiscard]] bool mpi_active();
// Whether the MPI library, as initialised, allows calls from threads other than the one that
// initialised it (one at a time): MPI_THREAD_SERIALIZED or better was provided. True when MPI is
// not initialised (nothing to ask of it).
[[nodiscard]] bool mpi_serialized_threads();
// The thread level MPI provided, in MPI's words ("MPI_THREAD_FUNNELED"), for messages.
[[nodiscard]] const char* mpi_thread_level_name();
// MPI_Finalize if active (idempotent).
void finalize_mpi();
// After an error on this rank: with more than one rank, MPI_Abort so no peer waits forever;
// otherwise finalise. The caller has already printed the message.
void fail_job(int exit_code);

}  // namespace scalelab::comm
