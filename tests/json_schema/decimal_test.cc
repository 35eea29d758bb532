#include "compiler/json_schema/decimal.h"

#include <cstdint>
#include <limits>

#include "gtest/gtest.h"

namespace maskd::json_schema {
namespace {

Decimal DecimalOf(const char* s) {
  absl::StatusOr<Decimal> d = Decimal::FromString(s);
  EXPECT_TRUE(d.ok()) << s << ": " << d.status();
  return d.ok() ? *d : Decimal();
}

TEST(DecimalTest, EqualValuesHaveOneRepresentation) {
  EXPECT_EQ(DecimalOf("1"), DecimalOf("1.0"));
  EXPECT_EQ(DecimalOf("1"), DecimalOf("10e-1"));
  EXPECT_EQ(DecimalOf("0"), DecimalOf("-0.000"));
  EXPECT_FALSE(DecimalOf("-0").negative());
  EXPECT_EQ(DecimalOf("1500").digits(), "15");
  EXPECT_EQ(DecimalOf("1500").exponent(), 2);
  EXPECT_EQ(DecimalOf("0.0150").digits(), "15");
  EXPECT_EQ(DecimalOf("0.0150").exponent(), -3);
}

TEST(DecimalTest, Ordering) {
  EXPECT_LT(DecimalOf("-2"), DecimalOf("-1.5"));
  EXPECT_LT(DecimalOf("-0.001"), DecimalOf("0"));
  EXPECT_LT(DecimalOf("0.099"), DecimalOf("0.1"));
  EXPECT_LT(DecimalOf("99"), DecimalOf("1e2"));
  EXPECT_GT(DecimalOf("1e20"), DecimalOf("99999999999999999999"));
}

TEST(DecimalTest, RejectsMalformed) {
  for (const char* bad : {"", "-", "01", "1.", ".5", "+1", "1e", "1e+", "1x", "NaN", "1e999999"}) {
    EXPECT_FALSE(Decimal::FromString(bad).ok()) << bad;
  }
}

TEST(DecimalTest, FromDoubleIsShortestRoundTrip) {
  EXPECT_EQ(*Decimal::FromDouble(0.1), DecimalOf("0.1"));
  EXPECT_EQ(*Decimal::FromDouble(1e30), DecimalOf("1e30"));
  EXPECT_EQ(*Decimal::FromDouble(-2.5e-7), DecimalOf("-0.00000025"));
  EXPECT_FALSE(Decimal::FromDouble(std::numeric_limits<double>::infinity()).ok());
}

TEST(DecimalTest, IntegerHelpers) {
  EXPECT_EQ(DecimalOf("2.5").Floor(), DecimalOf("2"));
  EXPECT_EQ(DecimalOf("2.5").Ceil(), DecimalOf("3"));
  EXPECT_EQ(DecimalOf("-2.5").Floor(), DecimalOf("-3"));
  EXPECT_EQ(DecimalOf("-2.5").Ceil(), DecimalOf("-2"));
  EXPECT_EQ(DecimalOf("-0.5").Ceil(), DecimalOf("0"));
  EXPECT_EQ(DecimalOf("999").PlusOne(), DecimalOf("1000"));
  EXPECT_EQ(DecimalOf("-1").PlusOne(), DecimalOf("0"));
  EXPECT_EQ(DecimalOf("0").MinusOne(), DecimalOf("-1"));
  EXPECT_EQ(DecimalOf("-999").MinusOne(), DecimalOf("-1000"));
  EXPECT_EQ(DecimalOf("1000").MinusOne(), DecimalOf("999"));
  EXPECT_EQ(DecimalOf("123.045").IntegerDigits(), "123");
  EXPECT_EQ(DecimalOf("123.045").FractionDigits(), "045");
  EXPECT_EQ(DecimalOf("0.5").IntegerDigits(), "0");
  EXPECT_EQ(DecimalOf("1e3").IntegerDigits(), "1000");
  int64_t v = 0;
  EXPECT_TRUE(Decimal::FromInt64(std::numeric_limits<int64_t>::min()).ToInt64(&v));
  EXPECT_EQ(v, std::numeric_limits<int64_t>::min());
  EXPECT_FALSE(DecimalOf("9223372036854775808").ToInt64(&v));
  EXPECT_TRUE(DecimalOf("9223372036854775807").ToInt64(&v));
  EXPECT_EQ(v, std::numeric_limits<int64_t>::max());
  EXPECT_FALSE(DecimalOf("1.5").ToInt64(&v));
}

TEST(DecimalTest, ToStringRoundTrips) {
  for (const char* s : {"0", "1", "-1", "0.001", "123.456", "1e25", "-1.5e-30", "100"}) {
    Decimal d = DecimalOf(s);
    EXPECT_EQ(DecimalOf(d.ToString().c_str()), d) << s << " -> " << d.ToString();
  }
}

}  // namespace
}  // namespace maskd::json_schema
