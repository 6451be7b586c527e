// Names, sizes and parsing of element types and operators, and the backend factory's errors.
#include <gtest/gtest.h>

#include <string>

#include "comm/factory.h"
#include "comm/types.h"
#include "core/error.h"

namespace scalelab::comm {
namespace {

TEST(Types, NamesFollowNcclTestsAndRoundTrip) {
  for (const DataType t : {DataType::f32, DataType::f64, DataType::f16, DataType::i32}) {
    EXPECT_EQ(parse_datatype(name_of(t), "-d"), t);
  }
  for (const ReduceOp op : {ReduceOp::sum, ReduceOp::avg, ReduceOp::min, ReduceOp::max}) {
    EXPECT_EQ(parse_reduce_op(name_of(op), "-o"), op);
  }
  EXPECT_EQ(name_of(DataType::f16), "half");
  EXPECT_EQ(size_of(DataType::f16), 2u);
  EXPECT_EQ(size_of(DataType::f64), 8u);
  EXPECT_EQ(parse_datatype("float32", "-d"), DataType::f32);
}

TEST(Types, UnknownValuesAreUsageErrorsNamingTheFlagAndTheChoices) {
  try {
    (void)parse_datatype("bfloat16", "-d");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::usage);
    EXPECT_EQ(std::string(e.what()), "-d: unknown data type 'bfloat16'; use one of float, double, half, int32");
  }
  EXPECT_THROW((void)parse_reduce_op("prod", "-o"), Error);
}

TEST(Factory, UnknownBackendIsAUsageErrorListingTheValidOnes) {
  try {
    (void)make_communicator("gloo");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::usage);
    const std::string m = e.what();
    EXPECT_EQ(e.parameter(), "backend") << m;
    EXPECT_NE(m.find("'gloo'"), std::string::npos) << m;
    EXPECT_NE(m.find("mpi"), std::string::npos) << m;
  }
  EXPECT_EQ(backend_names().front(), "mpi");
}

}  // namespace
}  // namespace scalelab::comm
