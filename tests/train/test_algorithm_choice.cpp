// --algo auto: every rank runs rank 0's choice (whatever the others' choosers would say), the MPI
// library's allreduce when there is nothing to choose by, and a chooser's unknown name is an error.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "comm/local.h"
#include "core/error.h"
#include "train/algorithm_choice.h"

using namespace scalelab;

TEST(AlgorithmChoice, EveryRankRunsRankZerosChoice) {
  for (int ranks : {2, 3}) {
    std::vector<std::string> got(static_cast<std::size_t>(ranks));
    std::vector<double> asked(static_cast<std::size_t>(ranks), -1.0);
    comm::run_local(ranks, [&](comm::Communicator& comm) {
      const auto me = static_cast<std::size_t>(comm.rank());
      // Rank 0's chooser says shm; the others' would say ring (e.g. another host's profile).
      const train::AlgorithmChoice c =
          train::choose_allreduce(comm, 4.8e6, ranks == 2, [&](const collectives::ChoiceQuery& q) {
            asked[me] = q.bytes;
            EXPECT_EQ(q.collective, collectives::Collective::allreduce);
            EXPECT_EQ(q.ranks, ranks);
            EXPECT_TRUE(q.in_place) << "the gradients are averaged in place";
            EXPECT_EQ(q.shared_buffers, ranks == 2);
            return std::string(comm.rank() == 0 ? "shm" : "ring");
          });
      got[me] = c.algorithm;
      EXPECT_NE(c.words.find("auto: the fastest the calibrated model predicts"), std::string::npos) << c.words;
    });
    for (int r = 0; r < ranks; ++r) EXPECT_EQ(got[static_cast<std::size_t>(r)], "shm") << "rank " << r;
    EXPECT_EQ(asked[0], 4.8e6);
    for (int r = 1; r < ranks; ++r) EXPECT_EQ(asked[static_cast<std::size_t>(r)], -1.0) << "only rank 0 chooses";
  }
}

TEST(AlgorithmChoice, WithoutAProfileTheLibrarysOwnAndSaysHowToCalibrate) {
  comm::run_local(3, [&](comm::Communicator& comm) {
    for (const collectives::Chooser& chooser :
         {collectives::Chooser{}, collectives::Chooser{[](const collectives::ChoiceQuery&) { return std::string(); }}}) {
      const train::AlgorithmChoice c = train::choose_allreduce(comm, 1e6, false, chooser);
      EXPECT_EQ(c.algorithm, "library");
      EXPECT_NE(c.words.find("calibrate"), std::string::npos) << c.words;
    }
  });
}

TEST(AlgorithmChoice, AChoiceThatIsNoAllreduceAlgorithmIsAnError) {
  // Two ranks: rank 0 chooses and finds the choice wrong before its broadcast, and its error ends
  // the job (under MPI, fail_job). Only rank 0 is checked: rank 1 would wait in the broadcast
  // rank 0 never reaches.
  comm::run_local(2, [&](comm::Communicator& comm) {
    if (comm.rank() != 0) return;
    try {
      (void)train::choose_allreduce(comm, 1e6, false,
                                    [](const collectives::ChoiceQuery&) { return std::string("nvls"); });
      ADD_FAILURE() << "accepted";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("'nvls'"), std::string::npos) << e.what();
    }
  });
}

TEST(AlgorithmChoice, OneRankHasNothingToChoose) {
  comm::run_local(1, [&](comm::Communicator& comm) {
    const train::AlgorithmChoice c =
        train::choose_allreduce(comm, 1e6, false,
                                [](const collectives::ChoiceQuery&) -> std::string { throw std::logic_error("asked"); });
    EXPECT_EQ(c.algorithm, "library");
    EXPECT_TRUE(c.words.empty()) << c.words;
  });
}
