// The public API's job functions (include/scalelab/runtime.h) over lib/comm and lib/train.
#include <cstdio>
#include <exception>
#include <memory>
#include <string>
#include <string_view>

#include "api/context.h"
#include "api/trace.h"
#include "comm/consistency.h"
#include "comm/factory.h"
#include "comm/mpi_runtime.h"
#include "nn/model.h"
#include "scalelab/model.h"
#include "scalelab/optimizer.h"
#include "train/replicate.h"

namespace scalelab {
namespace {

std::unique_ptr<comm::Communicator>& the_communicator() {
  static std::unique_ptr<comm::Communicator> c;
  return c;
}

// MPI cannot start again once finalised: a second Runtime after the first is refused.
bool& runtime_ended() {
  static bool ended = false;
  return ended;
}

}  // namespace

namespace api {

bool runtime_alive() { return the_communicator() != nullptr; }

comm::Communicator& communicator(const char* function) {
  if (!runtime_alive()) {
    throw ApiError(std::string(function) +
                       ": no scalelab::Runtime is alive: create one (scalelab::Runtime runtime;) at the top of main",
                   2);
  }
  return *the_communicator();
}

}  // namespace api

Runtime::Runtime() {
  if (api::runtime_alive()) {
    throw ApiError("scalelab::Runtime: one is already alive: create exactly one per process", 2);
  }
  if (runtime_ended()) {
    throw ApiError("scalelab::Runtime: the process's first Runtime has ended (MPI cannot start twice): "
                   "create exactly one per process, alive for as long as the API is used",
                   2);
  }
  the_communicator() = api::translated([] { return comm::make_communicator("mpi"); });
  try {
    api::open_trace(*the_communicator());
  } catch (...) {
    the_communicator().reset();
    throw;
  }
}

Runtime::~Runtime() {
  try {
    api::close_trace();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
  }
  the_communicator().reset();
  runtime_ended() = true;
  // Leaving through an exception: MPI stays up so that run_main can bring the whole job down
  // (MPI_Finalize here would leave the other ranks waiting for this one).
  if (std::uncaught_exceptions() == 0) comm::finalize_mpi();
}

int rank() { return api::communicator("scalelab::rank").rank(); }
int size() { return api::communicator("scalelab::size").size(); }
int local_rank() { return api::communicator("scalelab::local_rank").local_rank(); }
int local_size() { return api::communicator("scalelab::local_size").local_size(); }

void barrier() {
  comm::Communicator& c = api::communicator("scalelab::barrier");
  api::trace_enter("barrier", "scalelab::barrier");
  api::translated([&] { c.barrier(); });
  if (api::tracing()) api::trace("collective", {{"op", "barrier"}, {"call", "scalelab::barrier"}, {"bytes", 0}});
}

std::vector<double> sum_over_ranks(const std::vector<double>& values) {
  comm::Communicator& c = api::communicator("scalelab::sum_over_ranks");
  std::vector<double> out(values);
  api::trace_enter("allreduce", "scalelab::sum_over_ranks");
  api::translated([&] {
    comm::require_same(c, static_cast<std::uint64_t>(values.size()), "values",
                       "(the number of values summed) differs across ranks");
    c.allreduce(out.data(), out.data(), out.size(), comm::DataType::f64, comm::ReduceOp::sum);
  });
  if (api::tracing()) {
    api::trace("collective", {{"op", "allreduce"}, {"call", "scalelab::sum_over_ranks"}, {"bytes", out.size() * sizeof(double)},
                              {"values", values}, {"results", out}});
  }
  return out;
}

double sum_over_ranks(double value) {
  comm::Communicator& c = api::communicator("scalelab::sum_over_ranks");
  const double mine = value;
  api::trace_enter("allreduce", "scalelab::sum_over_ranks");
  api::translated([&] { c.allreduce(&value, &value, 1, comm::DataType::f64, comm::ReduceOp::sum); });
  if (api::tracing()) {
    api::trace("collective", {{"op", "allreduce"}, {"call", "scalelab::sum_over_ranks"}, {"bytes", sizeof(double)},
                              {"values", {mine}}, {"results", {value}}});
  }
  return value;
}

double average_over_ranks(double value) {
  comm::Communicator& c = api::communicator("scalelab::average_over_ranks");
  const double mine = value;
  api::trace_enter("allreduce", "scalelab::average_over_ranks");
  api::translated([&] { c.allreduce(&value, &value, 1, comm::DataType::f64, comm::ReduceOp::sum); });
  value /= c.size();
  if (api::tracing()) {
    api::trace("collective", {{"op", "allreduce"}, {"call", "scalelab::average_over_ranks"}, {"bytes", sizeof(double)},
                              {"values", {mine}}, {"results", {value}}});
  }
  return value;
}

void broadcast_from_rank0(Model& model, Optimizer& optimizer) {
  comm::Communicator& c = api::communicator("scalelab::broadcast_from_rank0");
  if (&optimizer.model() != &model) {
    throw ApiError("scalelab::broadcast_from_rank0: the optimizer belongs to another model: pass the model it was built for", 2);
  }
  api::trace_enter("broadcast", "scalelab::broadcast_from_rank0");
  api::translated([&] {
    nn::ParameterSet& params = model.impl().parameters();
    train::require_same_model(c, params);
    train::broadcast_from_rank0(c, params, optimizer.impl(), nullptr, 0);
  });
  if (api::tracing()) {
    const nn::ParameterSet& p = model.impl().parameters();
    const std::size_t bytes = p.values().size_bytes() + p.state().size_bytes() + optimizer.state().size_bytes();
    api::trace("collective", {{"op", "broadcast"}, {"call", "scalelab::broadcast_from_rank0"}, {"bytes", bytes}, {"root", 0}});
    api::trace("parameters", {{"when", "broadcast"}, {"step", optimizer.step_count()}, {"fingerprint", api::fingerprint_text(model.fingerprint())}});
  }
}

bool parameters_agree(const Model& model) {
  comm::Communicator& c = api::communicator("scalelab::parameters_agree");
  const std::uint64_t mine = model.fingerprint();
  std::vector<std::uint64_t> all(static_cast<std::size_t>(c.size()));
  api::trace_enter("allgather", "scalelab::parameters_agree");
  api::translated([&] { c.host_allgather(&mine, all.data(), sizeof mine); });
  bool agree = true;
  for (std::uint64_t f : all) agree = agree && f == all[0];
  if (api::tracing()) {
    api::trace("collective", {{"op", "allgather"}, {"call", "scalelab::parameters_agree"}, {"bytes", sizeof mine},
                              {"results", {agree}}});
  }
  return agree;
}

int run_main(const std::function<int()>& body) {
  int code = 0;
  try {
    return body();
  } catch (const ApiError& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    code = e.exit_code();
  } catch (const Error& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    code = e.exit_code();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    code = 1;
  }
  std::fflush(stderr);
  comm::fail_job(code);  // with several ranks: MPI_Abort, so that no rank waits for this one
  return code;
}

}  // namespace scalelab
