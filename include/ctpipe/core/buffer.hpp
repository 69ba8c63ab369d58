// ctpipe/core/buffer.hpp: a fixed-size owning array usable in constant expressions.
//
// Why our own: std::vector is not allowed in core headers (weight) and constexpr
// std::vector is not dependable across GCC 12 / Clang 14 with libstdc++ 12; the analyses
// need scratch memory of a size known only at evaluation time, both inside a
// static_assert (C++20 transient allocation) and at run time. This is the smallest thing
// that does that: one new[], one delete[], move-only.
#pragma once

#include <cstddef>  // std::size_t
#include <span>     // std::span views of the storage

namespace ctpipe::detail {

/// `n` value-initialised elements of T on the free store; move-only.
template <class T>
class buffer {
 public:
  constexpr buffer() = default;
  constexpr explicit buffer(std::size_t n) : data_(n ? new T[n]{} : nullptr), size_(n) {}
  /// `n` copies of `fill`.
  constexpr buffer(std::size_t n, const T& fill) : buffer(n) {
    for (std::size_t k = 0; k < n; ++k) data_[k] = fill;
  }
  constexpr buffer(buffer&& o) noexcept : data_(o.data_), size_(o.size_) {
    o.data_ = nullptr;
    o.size_ = 0;
  }
  constexpr buffer& operator=(buffer&& o) noexcept {
    if (this != &o) {
      delete[] data_;
      data_ = o.data_;
      size_ = o.size_;
      o.data_ = nullptr;
      o.size_ = 0;
    }
    return *this;
  }
  buffer(const buffer&) = delete;
  buffer& operator=(const buffer&) = delete;
  constexpr ~buffer() { delete[] data_; }

  constexpr T* data() { return data_; }
  constexpr const T* data() const { return data_; }
  constexpr std::size_t size() const { return size_; }
  constexpr T& operator[](std::size_t k) { return data_[k]; }
  constexpr const T& operator[](std::size_t k) const { return data_[k]; }
  constexpr std::span<T> span() { return {data_, size_}; }
  constexpr std::span<const T> span() const { return {data_, size_}; }

 private:
  T* data_ = nullptr;
  std::size_t size_ = 0;
};

}  // namespace ctpipe::detail
