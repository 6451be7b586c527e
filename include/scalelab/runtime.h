// scalelab's public API, the job: start and stop the ranks (Runtime, RAII), ask who this rank is,
// make every rank start from rank 0's state, average metrics, let one rank do what only one should.
// Horovod's steps map onto it one to one:
//   hvd.init()                       scalelab::Runtime runtime;   (MPI_Finalize when it goes)
//   hvd.rank(), size(), local_rank() scalelab::rank(), size(), local_rank()
//   broadcast_parameters(...) and    scalelab::broadcast_from_rank0(model, optimizer)
//     broadcast_optimizer_state(...)
//   hvd.allreduce(metric)            scalelab::average_over_ranks(value)
//   if hvd.rank() == 0: save(...)    scalelab::on_rank0([&] { save(...); });
//
//   int main() {
//     return scalelab::run_main([] {
//       scalelab::Runtime runtime;                     // one per process
//       std::printf("rank %d of %d\n", scalelab::rank(), scalelab::size());
//       return 0;
//     });
//   }
// Every function but run_main needs a live Runtime; without one it throws scalelab::ApiError
// naming the function and the fix. Collective functions must be called by every rank in the same
// order, or the job waits forever.
#pragma once
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

namespace scalelab {

class Model;
class Optimizer;

// What every API error is: a std::runtime_error whose what() is one line naming the input and the
// fix. exit_code() is 2 for a usage or input error (fix the program or the file), 1 otherwise.
class ApiError : public std::runtime_error {
 public:
  ApiError(const std::string& message, int exit_code) : std::runtime_error(message), exit_code_(exit_code) {}
  [[nodiscard]] int exit_code() const { return exit_code_; }

 private:
  int exit_code_;
};

// Starts the ranks (MPI under mpirun, or one rank alone) on construction, stops them on
// destruction. One per process, alive for as long as anything of the API is used.
class Runtime {
 public:
  Runtime();
  ~Runtime();
  Runtime(const Runtime&) = delete;
  Runtime& operator=(const Runtime&) = delete;
};

// This rank (0 .. size()-1), the number of ranks, this rank's index among the ranks on its
// machine (the device to pin: local_rank() of local_size()).
[[nodiscard]] int rank();
[[nodiscard]] int size();
[[nodiscard]] int local_rank();
[[nodiscard]] int local_size();
[[nodiscard]] inline bool is_rank0() { return rank() == 0; }

// Runs `f` on rank 0 only (checkpoints, logs, result files: one writer).
template <class F>
void on_rank0(F&& f) {
  if (is_rank0()) f();
}

// Collective. Waits until every rank has arrived.
void barrier();
// Collective. The mean (sum) over all ranks of each rank's `value`: what metrics are reported as.
[[nodiscard]] double average_over_ranks(double value);
[[nodiscard]] double sum_over_ranks(double value);
[[nodiscard]] std::vector<double> sum_over_ranks(const std::vector<double>& values);

// Collective. Checks that every rank built the same model (else an error naming the ranks that
// differ), then copies rank 0's parameters, running statistics, optimizer state and step count
// to every rank.
void broadcast_from_rank0(Model& model, Optimizer& optimizer);
// Collective. True when every rank holds bit-identical parameters (compared by fingerprint).
[[nodiscard]] bool parameters_agree(const Model& model);

// Runs `body` and returns its exit status. An exception leaving it is printed as one line on
// stderr ("error: ...") and becomes exit status 2 (usage or input) or 1; with more than one rank
// the whole job is brought down, so that no rank waits forever for the one that failed.
int run_main(const std::function<int()>& body);

}  // namespace scalelab
