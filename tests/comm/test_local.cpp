// The local (threads) backend: point-to-point, library collectives, and above all that a failing
// or missing rank makes the others fail instead of hanging. Also require_same's message.
#include <gtest/gtest.h>

#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

#include "comm/consistency.h"
#include "comm/local.h"
#include "core/error.h"

namespace scalelab::comm {
namespace {

TEST(Local, RingOfSendrecvPassesEachRanksValueRight) {
  std::vector<int> got(4, -1);
  run_local(4, [&](Communicator& comm) {
    const int r = comm.rank(), p = comm.size();
    int mine = r * 10, theirs = -1;
    comm.sendrecv(&mine, sizeof mine, (r + 1) % p, &theirs, sizeof theirs, (r + p - 1) % p, 3);
    got[static_cast<std::size_t>(r)] = theirs;
  });
  EXPECT_EQ(got, (std::vector<int>{30, 0, 10, 20}));
}

TEST(Local, LibraryCollectivesMatchTheirDefinitions) {
  run_local(3, [](Communicator& comm) {
    const int r = comm.rank();
    std::vector<double> v{1.0 + r, 2.0 * r};
    comm.allreduce(v.data(), v.data(), 2, DataType::f64, ReduceOp::sum);
    EXPECT_EQ(v, (std::vector<double>{6.0, 6.0}));
    std::vector<std::int32_t> all(3);
    std::int32_t mine = r + 100;
    comm.allgather(&mine, all.data(), 1, DataType::i32);
    EXPECT_EQ(all, (std::vector<std::int32_t>{100, 101, 102}));
    std::vector<float> blocks{1.0f, 2.0f, 3.0f};
    float out = 0;
    comm.reduce_scatter(blocks.data(), &out, 1, DataType::f32, ReduceOp::max);
    EXPECT_EQ(out, static_cast<float>(r + 1));
    float b = r == 2 ? 7.0f : 0.0f;
    comm.broadcast(&b, 1, DataType::f32, 2);
    EXPECT_EQ(b, 7.0f);
    EXPECT_EQ(comm.max_over_ranks(r * 1.5), 3.0);
  });
}

TEST(Local, ARankThatThrowsMakesTheBlockedRanksFailAndItsErrorIsRethrown) {
  try {
    run_local(3, [](Communicator& comm) {
      if (comm.rank() == 1) throw std::runtime_error("bad input on rank 1");
      int x = 0;
      comm.recv(&x, sizeof x, 1, 0);  // never sent: must not hang
    });
    FAIL() << "no error";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()), "bad input on rank 1");
  }
}

TEST(Local, WaitingOnARankThatAlreadyReturnedIsAnError) {
  EXPECT_THROW(run_local(2,
                         [](Communicator& comm) {
                           if (comm.rank() == 0) comm.barrier();  // rank 1 never comes
                         }),
               Error);
  EXPECT_THROW(run_local(2,
                         [](Communicator& comm) {
                           int x = 1;
                           if (comm.rank() == 0) comm.send(&x, sizeof x, 1, 0);  // rank 1 never receives
                         }),
               Error);
}

TEST(Local, MismatchedMessageSizesAreReported) {
  EXPECT_THROW(run_local(2,
                         [](Communicator& comm) {
                           double d = 0;
                           if (comm.rank() == 0) comm.send(&d, sizeof d, 1, 0);
                           else comm.recv(&d, 4, 0, 0);
                         }),
               Error);
}

TEST(Consistency, RequireSameNamesTheRanksThatDisagree) {
  try {
    run_local(3, [](Communicator& comm) {
      require_same(comm, comm.rank() == 0 ? 262144 : 524288, "--minbytes: ranks disagree on the element count");
    });
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::comm);
    EXPECT_EQ(std::string(e.what()),
              "--minbytes: ranks disagree on the element count: rank 0 has 262144, rank 1 has 524288, rank 2 has "
              "524288; launch every rank with the same arguments");
  }
  EXPECT_NO_THROW(run_local(3, [](Communicator& comm) { require_same(comm, 5, "x"); }));
}

TEST(Consistency, RequireSameCanNameTheParameterAsTheLibraryDoes) {
  try {
    run_local(2, [](Communicator& comm) { require_same(comm, comm.rank() == 0 ? 32 : 64, "batch_size", "ranks disagree"); });
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::comm);
    EXPECT_EQ(e.parameter(), "batch_size");
    EXPECT_EQ(std::string(e.what()),
              "batch_size: ranks disagree: rank 0 has 32, rank 1 has 64; launch every rank with the same arguments");
  }
}

TEST(Consistency, RequireSameFieldsNamesEachDifferingFieldWithTheRanksValues) {
  try {
    run_local(3, [](Communicator& comm) {
      const int r = comm.rank();
      require_same_fields(comm, {{"lr", r == 2 ? "0.1" : "0.05"},
                                 {"seed", "42"},
                                 {"algo", r == 0 ? "ring" : "tree"},
                                 {"timeline", r == 1 ? "" : "on"}});
    });
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::usage);
    EXPECT_EQ(e.parameter(), "lr");
    EXPECT_EQ(std::string(e.what()),
              "lr differs across ranks: rank 0 has 0.05, rank 2 has 0.1; "
              "algo differs across ranks: rank 0 has ring, rank 1 has tree, rank 2 has tree; "
              "timeline differs across ranks: rank 0 has on, rank 1 has (none); launch every rank with the same arguments");
    // A front end puts its own name in place of every parameter the error names.
    EXPECT_EQ(e.message_with([](const std::string& p) { return "--" + p; }).substr(0, 60),
              "--lr differs across ranks: rank 0 has 0.05, rank 2 has 0.1; ");
    EXPECT_NE(e.message_with([](const std::string& p) { return "--" + p; }).find("; --algo differs"), std::string::npos);
    // Another kind keeps every clause.
    EXPECT_EQ(std::string(e.as(ErrorKind::comm).what()), std::string(e.what()));
  }
  EXPECT_NO_THROW(run_local(3, [](Communicator& comm) {
    require_same_fields(comm, {{"lr", "0.05"}, {"note", comm.rank() == 0 ? "" : ""}});
  }));
}

TEST(Consistency, RequireSameFieldsCountsRanksBeyondTheFirstFew) {
  try {
    run_local(7, [](Communicator& comm) {
      require_same_fields(comm, {{"epochs", comm.rank() == 0 ? "1" : "2"}}, ErrorKind::comm);
    });
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::comm);
    EXPECT_EQ(std::string(e.what()),
              "epochs differs across ranks: rank 0 has 1, rank 1 has 2, rank 2 has 2, rank 3 has 2, rank 4 has 2 "
              "(and 2 more ranks differ); launch every rank with the same arguments");
  }
}

}  // namespace
}  // namespace scalelab::comm
