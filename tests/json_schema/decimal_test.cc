#include "compiler/json_schema/decimal.h"

#include <cstdint>
#include <limits>

#include "gtest/gtest.h"

namespace maskd::json_schema {
namespace {

Decimal D(const char* s) {
  absl::StatusOr<Decimal> d = Decimal::FromString(s);
  EXPECT_TRUE(d.ok()) << s << ": " << d.status();
  return d.ok() ? *d : Decimal();
}

TEST(DecimalTest, EqualValuesHaveOneRepresentation) {
  EXPECT_EQ(D("1"), D("1.0"));
  EXPECT_EQ(D("1"), D("10e-1"));
  EXPECT_EQ(D("0"), D("-0.000"));
  EXPECT_FALSE(D("-0").negative());
  EXPECT_EQ(D("1500").digits(), "15");
  EXPECT_EQ(D("1500").exponent(), 2);
  EXPECT_EQ(D("0.0150").digits(), "15");
  EXPECT_EQ(D("0.0150").exponent(), -3);
}

TEST(DecimalTest, Ordering) {
  EXPECT_LT(D("-2"), D("-1.5"));
  EXPECT_LT(D("-0.001"), D("0"));
  EXPECT_LT(D("0.099"), D("0.1"));
  EXPECT_LT(D("99"), D("1e2"));
  EXPECT_GT(D("1e20"), D("99999999999999999999"));
}

TEST(DecimalTest, RejectsMalformed) {
  for (const char* bad : {"", "-", "01", "1.", ".5", "+1", "1e", "1e+", "1x", "NaN", "1e999999"}) {
    EXPECT_FALSE(Decimal::FromString(bad).ok()) << bad;
  }
}

TEST(DecimalTest, FromDoubleIsShortestRoundTrip) {
  EXPECT_EQ(*Decimal::FromDouble(0.1), D("0.1"));
  EXPECT_EQ(*Decimal::FromDouble(1e30), D("1e30"));
  EXPECT_EQ(*Decimal::FromDouble(-2.5e-7), D("-0.00000025"));
  EXPECT_FALSE(Decimal::FromDouble(std::numeric_limits<double>::infinity()).ok());
}

TEST(DecimalTest, IntegerHelpers) {
  EXPECT_EQ(D("2.5").Floor(), D("2"));
  EXPECT_EQ(D("2.5").Ceil(), D("3"));
  EXPECT_EQ(D("-2.5").Floor(), D("-3"));
  EXPECT_EQ(D("-2.5").Ceil(), D("-2"));
  EXPECT_EQ(D("-0.5").Ceil(), D("0"));
  EXPECT_EQ(D("999").PlusOne(), D("1000"));
  EXPECT_EQ(D("-1").PlusOne(), D("0"));
  EXPECT_EQ(D("0").MinusOne(), D("-1"));
  EXPECT_EQ(D("-999").MinusOne(), D("-1000"));
  EXPECT_EQ(D("1000").MinusOne(), D("999"));
  EXPECT_EQ(D("123.045").IntegerDigits(), "123");
  EXPECT_EQ(D("123.045").FractionDigits(), "045");
  EXPECT_EQ(D("0.5").IntegerDigits(), "0");
  EXPECT_EQ(D("1e3").IntegerDigits(), "1000");
  int64_t v = 0;
  EXPECT_TRUE(Decimal::FromInt64(std::numeric_limits<int64_t>::min()).ToInt64(&v));
  EXPECT_EQ(v, std::numeric_limits<int64_t>::min());
  EXPECT_FALSE(D("9223372036854775808").ToInt64(&v));
  EXPECT_TRUE(D("9223372036854775807").ToInt64(&v));
  EXPECT_EQ(v, std::numeric_limits<int64_t>::max());
  EXPECT_FALSE(D("1.5").ToInt64(&v));
}

TEST(DecimalTest, ToStringRoundTrips) {
  for (const char* s : {"0", "1", "-1", "0.001", "123.456", "1e25", "-1.5e-30", "100"}) {
    Decimal d = D(s);
    EXPECT_EQ(D(d.ToString().c_str()), d) << s << " -> " << d.ToString();
  }
}

}  // namespace
}  // namespace maskd::json_schema
