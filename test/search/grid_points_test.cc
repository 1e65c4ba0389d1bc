// GridPoints: each kind's grid values (Determined's rules), the product's order and size, and
// its errors.
#include "runtime/search/grid_points.h"

#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace cohort {
namespace {

using Kind = HyperparameterSpace::Kind;
using ::testing::DoubleNear;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

HyperparameterSpace Range(Kind kind, double minval, double maxval, uint64_t count) {
  HyperparameterSpace space;
  space.kind = kind;
  space.minval = minval;
  space.maxval = maxval;
  space.count = count;
  return space;
}

HyperparameterSpace Categorical(std::vector<Hyperparameters::Value> vals) {
  HyperparameterSpace space;
  space.kind = Kind::kCategorical;
  space.vals = std::move(vals);
  return space;
}

HyperparameterSpace Const(Hyperparameters::Value value) {
  HyperparameterSpace space;
  space.value = std::move(value);
  return space;
}

// The grid values of one space, read back through GridPoints.
std::vector<int64_t> Ints(HyperparameterSpace space) {
  absl::StatusOr<std::vector<Hyperparameters>> grid = GridPoints({{"x", space}}, 1000);
  EXPECT_TRUE(grid.ok()) << grid.status();
  std::vector<int64_t> values;
  for (const Hyperparameters& point : *grid) values.push_back(*point.GetInt("x"));
  return values;
}

std::vector<double> Doubles(HyperparameterSpace space) {
  absl::StatusOr<std::vector<Hyperparameters>> grid = GridPoints({{"x", space}}, 1000);
  EXPECT_TRUE(grid.ok()) << grid.status();
  std::vector<double> values;
  for (const Hyperparameters& point : *grid) {
    EXPECT_EQ(point.TypeOf("x"), COHORT_HPARAM_DOUBLE);
    values.push_back(*point.GetDouble("x"));
  }
  return values;
}

TEST(GridPointsTest, IntPointsAreEvenlySpacedAndRoundedHalfAwayFromZero) {
  EXPECT_THAT(Ints(Range(Kind::kInt, 0, 10, 3)), ElementsAre(0, 5, 10));
  EXPECT_THAT(Ints(Range(Kind::kInt, 1, 4, 3)), ElementsAre(1, 3, 4));       // 2.5 -> 3
  EXPECT_THAT(Ints(Range(Kind::kInt, -4, -1, 3)), ElementsAre(-4, -3, -1));  // -2.5 -> -3
  EXPECT_THAT(Ints(Range(Kind::kInt, 0, 9, 4)), ElementsAre(0, 3, 6, 9));
  EXPECT_THAT(Ints(Range(Kind::kInt, 0, 10, 4)), ElementsAre(0, 3, 7, 10));  // 3.33, 6.67
}

TEST(GridPointsTest, IntCountIsClampedToTheIntegersInTheRange) {
  EXPECT_THAT(Ints(Range(Kind::kInt, 1, 3, 10)), ElementsAre(1, 2, 3));
  EXPECT_THAT(Ints(Range(Kind::kInt, 7, 7, 4)), ElementsAre(7));
  EXPECT_THAT(Ints(Range(Kind::kInt, -9007199254740992.0, 9007199254740992.0, 3)),
              ElementsAre(-9007199254740992, 0, 9007199254740992));
}

TEST(GridPointsTest, CountOneIsTheMidpoint) {
  EXPECT_THAT(Ints(Range(Kind::kInt, 8, 13, 1)), ElementsAre(11));   // 10.5 -> 11
  EXPECT_THAT(Ints(Range(Kind::kInt, -4, -1, 1)), ElementsAre(-3));  // -2.5 -> -3
  EXPECT_THAT(Ints(Range(Kind::kInt, 2, 6, 1)), ElementsAre(4));
  EXPECT_THAT(Doubles(Range(Kind::kDouble, 0.2, 0.8, 1)), ElementsAre(DoubleNear(0.5, 1e-15)));
  EXPECT_THAT(Doubles(Range(Kind::kLog, -4, -2, 1)), ElementsAre(DoubleNear(1e-3, 1e-18)));
}

TEST(GridPointsTest, DoubleAndLogPointsIncludeBothEnds) {
  EXPECT_THAT(Doubles(Range(Kind::kDouble, 0, 1, 5)), ElementsAre(0, 0.25, 0.5, 0.75, 1));
  EXPECT_THAT(Doubles(Range(Kind::kDouble, -1, 1, 2)), ElementsAre(-1, 1));
  EXPECT_THAT(Doubles(Range(Kind::kDouble, 0.5, 0.5, 3)), ElementsAre(0.5));  // equal collapse
  HyperparameterSpace log = Range(Kind::kLog, -3, -1, 3);
  EXPECT_THAT(Doubles(log), ElementsAre(DoubleNear(1e-3, 1e-18), DoubleNear(1e-2, 1e-17),
                                        DoubleNear(1e-1, 1e-16)));
  log.base = 2;
  log.minval = 0;
  log.maxval = 4;
  EXPECT_THAT(Doubles(log), ElementsAre(1, 4, 16));
}

TEST(GridPointsTest, CategoricalGivesEveryValueAndConstItsOne) {
  absl::StatusOr<std::vector<Hyperparameters>> grid = GridPoints(
      {{"act", Categorical({std::string("relu"), std::string("tanh"), std::string("relu")})},
       {"global_batch_size", Const(int64_t{32})}},
      1000);
  ASSERT_TRUE(grid.ok()) << grid.status();
  ASSERT_EQ(grid->size(), 3u);
  EXPECT_EQ(**(*grid)[0].GetString("act"), "relu");
  EXPECT_EQ(**(*grid)[1].GetString("act"), "tanh");
  EXPECT_EQ(**(*grid)[2].GetString("act"), "relu");
  for (const Hyperparameters& point : *grid) EXPECT_EQ(*point.GetInt("global_batch_size"), 32);
}

TEST(GridPointsTest, TheProductRunsInNameOrderWithTheFirstNameSlowest) {
  absl::StatusOr<std::vector<Hyperparameters>> grid =
      GridPoints({{"b", Range(Kind::kInt, 1, 3, 3)},
                  {"a", Categorical({std::string("x"), std::string("y")})},
                  {"c", Range(Kind::kDouble, 0, 1, 2)},
                  {"global_batch_size", Const(int64_t{8})}},
                 1000);
  ASSERT_TRUE(grid.ok()) << grid.status();
  ASSERT_EQ(grid->size(), 12u);
  std::vector<std::string> order;
  for (const Hyperparameters& point : *grid) {
    EXPECT_EQ(point.values().size(), 4u);
    order.push_back(
        absl::StrCat(**point.GetString("a"), *point.GetInt("b"), *point.GetDouble("c")));
  }
  EXPECT_THAT(order, ElementsAre("x10", "x11", "x20", "x21", "x30", "x31", "y10", "y11", "y20",
                                 "y21", "y30", "y31"));
}

TEST(GridPointsTest, OnlyConstantsGiveOnePoint) {
  absl::StatusOr<std::vector<Hyperparameters>> grid =
      GridPoints({{"global_batch_size", Const(int64_t{8})}, {"lr", Const(0.1)}}, 1);
  ASSERT_TRUE(grid.ok()) << grid.status();
  ASSERT_EQ(grid->size(), 1u);
  EXPECT_EQ(*(*grid)[0].GetDouble("lr"), 0.1);
}

TEST(GridPointsTest, ARangeWithoutCountIsAnErrorNamingIt) {
  HyperparameterSpace lr = Range(Kind::kLog, -4, -1, 1);
  lr.count.reset();
  absl::StatusOr<std::vector<Hyperparameters>> grid =
      GridPoints({{"optimizer.lr", lr}, {"global_batch_size", Const(int64_t{8})}}, 1000);
  ASSERT_FALSE(grid.ok());
  EXPECT_EQ(grid.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(grid.status().message()),
              HasSubstr("hyperparameters.optimizer.lr.count"));
}

// Where a count asks for more values than the range has, the submission is told.
TEST(GridPointsTest, ACountTheRangeCannotGiveIsNoted) {
  const std::map<std::string, HyperparameterSpace> spaces = {
      {"lr", Range(Kind::kDouble, 0.1, 0.1, 3)},
      {"layers", Range(Kind::kInt, 1, 2, 5)},
      {"width", Range(Kind::kInt, 1, 8, 4)},  // 4 distinct integers: nothing to say
      {"once", Range(Kind::kDouble, 0, 1, 1)},
      {"act", Categorical({std::string("relu"), std::string("tanh")})}};
  EXPECT_THAT(GridCountNotes(spaces),
              ElementsAre("hyperparameters.layers: count 5, but its range gives 2 distinct values "
                          "(1, 2): the grid takes each once",
                          "hyperparameters.lr: count 3, but its range gives 1 distinct value "
                          "(0.1): the grid takes it once"));
}

TEST(GridPointsTest, AGridBeyondTheLimitIsAnError) {
  const std::map<std::string, HyperparameterSpace> spaces = {{"a", Range(Kind::kInt, 0, 99, 10)},
                                                             {"b", Range(Kind::kDouble, 0, 1, 10)}};
  EXPECT_TRUE(GridPoints(spaces, 100).ok());
  absl::StatusOr<std::vector<Hyperparameters>> grid = GridPoints(spaces, 99);
  ASSERT_FALSE(grid.ok());
  EXPECT_THAT(std::string(grid.status().message()), HasSubstr("exceeds 99 trials"));
  // Counts whose product overflows 64 bits are caught, not wrapped.
  EXPECT_FALSE(GridPoints({{"a", Range(Kind::kDouble, 0, 1, uint64_t{1} << 40)},
                           {"b", Range(Kind::kDouble, 0, 1, uint64_t{1} << 40)}},
                          100000)
                   .ok());
}

}  // namespace
}  // namespace cohort
