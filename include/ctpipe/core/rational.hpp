// ctpipe/core/rational.hpp: exact rational numbers for times, costs and fractions.
//
// Decision: our own small type rather than boost::rational<long long>. Both work in
// constant expressions, but Boost's header pulls in the iostream family (about 0.4 s per
// translation unit here) and silently wraps on overflow. Exactness is what this library
// exists for, so overflow must be an error: every operation checks it and raises
// `ctpipe: rational overflow (64-bit numerator or denominator)` through detail::fail,
// a compile error in a constant expression and ctpipe::error at run time.
#pragma once

#include <cstddef>      // std::size_t
#include <cstdint>      // std::int64_t, INT64_MIN
#include <string_view>  // parse_rational input

#include "ctpipe/core/error.hpp"

namespace ctpipe {

/// An exact rational number `num / den` with 64-bit integers.
///
/// Invariant: reduced to lowest terms and `den > 0` (so `==` compares values).
/// Construct through the constructor, which normalises; the members are public only so
/// that `rational` is a structural type usable as a template argument (costs of a frozen
/// schedule). Units are whatever the caller measures: times are in units of the cost of
/// one whole-rank forward `t_f` (docs/spec.md §1).
/// Errors: a zero denominator raises `ctpipe: rational with zero denominator`;
/// overflow of any arithmetic operation raises `ctpipe: rational overflow (64-bit
/// numerator or denominator)`; comparisons never overflow.
struct rational {
  std::int64_t num = 0;  ///< numerator (carries the sign)
  std::int64_t den = 1;  ///< denominator, always > 0

  constexpr rational() = default;
  constexpr rational(std::int64_t n) : num(n), den(1) { check_overflow(n == INT64_MIN); }  // NOLINT: implicit
  constexpr rational(std::int64_t n, std::int64_t d) : num(n), den(d) {
    detail::require(d != 0, "ctpipe: rational with zero denominator");
    // -2^63 has no negation (nor an absolute value for gcd()): out of range.
    check_overflow(n == INT64_MIN || d == INT64_MIN);
    if (den == 1) return;  // an integer: nothing to reduce
    if (den < 0) {
      num = negate(num);
      den = negate(den);
    }
    const std::int64_t g = gcd(num, den);
    num /= g;
    den /= g;
  }

  friend constexpr rational operator+(rational a, rational b) {
    if (a.den == 1 && b.den == 1) return rational{add(a.num, b.num)};
    const std::int64_t g = gcd(a.den, b.den);
    const std::int64_t bd = b.den / g;
    return {add(mul(a.num, bd), mul(b.num, a.den / g)), mul(a.den, bd)};
  }
  friend constexpr rational operator-(rational a) { return {negate(a.num), a.den}; }
  friend constexpr rational operator-(rational a, rational b) { return a + (-b); }
  friend constexpr rational operator*(rational a, rational b) {
    if (a.den == 1 && b.den == 1) return rational{mul(a.num, b.num)};
    const std::int64_t g1 = gcd(a.num, b.den);
    const std::int64_t g2 = gcd(b.num, a.den);
    return {mul(a.num / g1, b.num / g2), mul(a.den / g2, b.den / g1)};
  }
  friend constexpr rational operator/(rational a, rational b) {
    detail::require(b.num != 0, "ctpipe: rational division by zero");
    return a * rational{b.den, b.num};
  }
  constexpr rational& operator+=(rational b) { return *this = *this + b; }
  constexpr rational& operator-=(rational b) { return *this = *this - b; }
  constexpr rational& operator*=(rational b) { return *this = *this * b; }
  constexpr rational& operator/=(rational b) { return *this = *this / b; }

  friend constexpr bool operator==(rational a, rational b) = default;
  /// Order: exact for every pair of rationals, never an overflow (the cross products are
  /// taken in 128 bits, a GCC and Clang extension).
  friend constexpr bool operator<(rational a, rational b) {
    __extension__ using wide = __int128;
    return static_cast<wide>(a.num) * b.den < static_cast<wide>(b.num) * a.den;
  }
  friend constexpr bool operator>(rational a, rational b) { return b < a; }
  friend constexpr bool operator<=(rational a, rational b) { return !(b < a); }
  friend constexpr bool operator>=(rational a, rational b) { return !(a < b); }

  /// Nearest double, for display only; never used in a comparison.
  constexpr double to_double() const { return static_cast<double>(num) / static_cast<double>(den); }

  /// Checked 64-bit helpers (GCC and Clang builtins, usable in constant expressions).
  static constexpr std::int64_t mul(std::int64_t a, std::int64_t b) {
    std::int64_t r = 0;
    check_overflow(__builtin_mul_overflow(a, b, &r));
    return r;
  }
  static constexpr std::int64_t add(std::int64_t a, std::int64_t b) {
    std::int64_t r = 0;
    check_overflow(__builtin_add_overflow(a, b, &r));
    return r;
  }
  static constexpr std::int64_t negate(std::int64_t a) { return mul(a, -1); }
  /// gcd(|a|, |b|) by Euclid's remainders, a statement per remainder (neither is -2^63:
  /// the constructor refuses it). libstdc++'s std::gcd (the binary method, a loop per
  /// bit) made one addition of two integers cost Clang 14 about 240 constexpr steps;
  /// with this and the integers' shortcuts, 24 (periodic certificates sum rationals per
  /// rank and per point: docs/compile-time.md).
  static constexpr std::int64_t gcd(std::int64_t a, std::int64_t b) {
    std::int64_t x = a < 0 ? -a : a, y = b < 0 ? -b : b, t = 0;
    while (y != 0) t = x % y, x = y, y = t;
    return x;
  }

  /// The one overflow error: the message is a literal at the require() call, so GCC's and
  /// Clang's compile-time diagnostics both show it.
  static constexpr void check_overflow(bool overflowed) {
    detail::require(!overflowed, "ctpipe: rational overflow (64-bit numerator or denominator)");
  }
};

/// max of two rationals.
constexpr rational max(rational a, rational b) { return a < b ? b : a; }

namespace detail {
/// The parser's one error (a literal at the require() call, for GCC's diagnostics).
constexpr void check_number(bool ok) { require(ok, "ctpipe: not an exact number (use 3, 1/2 or 0.25)"); }

/// Reads a run of 1 to 18 decimal digits at text[i...] (so the value fits 64 bits),
/// advancing i; writes the value and returns the digit count.
constexpr int read_digits(std::string_view text, std::size_t& i, std::int64_t& value) {
  int count = 0;
  value = 0;
  for (; i < text.size() && text[i] >= '0' && text[i] <= '9'; ++i, ++count) {
    require(count < 18,
            "ctpipe: more than 18 digits in a number (exact numbers are 64-bit: write it as a fraction of shorter "
            "numbers or in larger units)");
    value = value * 10 + (text[i] - '0');
  }
  check_number(count > 0);
  return count;
}
}  // namespace detail

/// Parses an exact number: an integer (`3`, `-2`), a fraction (`1/2`, `-7/3`) or a
/// decimal (`0.43` = 43/100, `1.5`). Surrounding spaces are not accepted; anything else
/// (empty text, `1.`, `.5`, `2x`) raises `ctpipe: not an exact number (use 3, 1/2 or
/// 0.25)`, a run of more than 18 digits `ctpipe: more than 18 digits in a number (...)`
/// (a fresh tester's finding: 2^60 - 1 was "not an exact number"); `1/0` raises the
/// zero-denominator message. The same parser runs at compile time and in the `ctpipe` tool.
constexpr rational parse_rational(std::string_view text) {
  std::size_t i = 0;
  const bool negative = i < text.size() && text[i] == '-';
  if (i < text.size() && (text[i] == '-' || text[i] == '+')) ++i;
  std::int64_t whole = 0;
  detail::read_digits(text, i, whole);
  rational value{whole};
  if (i < text.size() && text[i] == '.') {
    std::int64_t fraction = 0;
    const int digits = detail::read_digits(text, ++i, fraction);
    std::int64_t scale = 1;
    for (int d = 0; d < digits; ++d) scale *= 10;  // at most 10^18: fits
    value = value + rational{fraction, scale};
  } else if (i < text.size() && text[i] == '/') {
    std::int64_t den = 0;
    detail::read_digits(text, ++i, den);
    value = rational{whole, den};
  }
  detail::check_number(i == text.size());
  return negative ? -value : value;
}

}  // namespace ctpipe
