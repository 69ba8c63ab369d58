// ctpipe/core/error.hpp: the one error path of the library.
//
// Every rejected input goes through detail::fail(message). fail is deliberately not
// constexpr: reached during constant evaluation it stops compilation, and both GCC and
// Clang print the call that led there, whose argument is the message literal
// (`require(..., "ctpipe: P must be >= 1")`); reached at run time it throws
// ctpipe::error carrying the same text. So one check, written once, serves
// static_assert-style gates, run-time callers and the `ctpipe` tool.
#pragma once

#include <exception>  // std::exception, base of ctpipe::error

namespace ctpipe {

/// Thrown at run time by every check of the library. `what()` is one line starting
/// with `ctpipe:` that names the parameter and the rule, e.g.
/// `ctpipe: P (pipeline ranks) must be >= 1`. The text is a string literal with static
/// storage, so copying an error never allocates.
class error : public std::exception {
 public:
  explicit error(const char* message) noexcept : message_(message) {}
  const char* what() const noexcept override { return message_; }

 private:
  const char* message_;
};

namespace detail {

/// Raises ctpipe::error(message). Not constexpr on purpose (see the file comment).
[[noreturn]] inline void fail(const char* message) { throw error(message); }

/// A rule reporter that raises: `raise("ctpipe: ...")` is fail() as a function object,
/// for the rule sets written as `rules(value, on_error)` (see check_shape), whose other
/// reporters record the message instead (shape_error).
struct raise_error {
  constexpr void operator()(const char* message) const {
    if (message != nullptr) fail(message);
  }
};
inline constexpr raise_error raise{};

/// The gate every public entry point uses: `require(P >= 1, "ctpipe: ...")`.
/// Compile time: a hard error whose diagnostic shows the message. Run time: throws.
constexpr void require(bool ok, const char* message) {
  if (!ok) fail(message);
}

}  // namespace detail
}  // namespace ctpipe
