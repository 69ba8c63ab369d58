// ctpipe/exact/search_cbc.hpp: the exact form of search() (docs/search.md): the problem
// as a mixed-integer program solved by CBC (COIN-OR Branch and Cut, Debian's
// coinor-libcbc-dev, through its C interface), started from search()'s schedule. Not a
// core header: it needs CBC (CMake target ctpipe::exact).
//
// Why CBC: a well-kept open solver packaged by Debian, strong on the disjunctive
// programs a schedule makes (the Zero Bubble authors' own ILP ran on it through PuLP).
#pragma once

#include <coin/Cbc_C_Interface.h>

#include <algorithm>  // std::sort
#include <chrono>
#include <cmath>  // std::ceil, std::llround
#include <cstdint>
#include <memory>  // std::unique_ptr
#include <string>  // the time limit as CBC's parameter text
#include <utility>
#include <vector>

#include "ctpipe/plan/search.hpp"

namespace ctpipe {

/// Options of search_exact(): CBC's wall-clock limit in seconds, and the largest shape
/// it is run on (P m at most `max_pairs`, 3 P m ops; above it the greedy's schedule and
/// bound are returned as they are).
struct exact_options {
  double seconds = 60;
  int max_pairs = 32;   ///< P = 4, m = 8: 96 ops
  int max_v_pairs = 8;  ///< the V-shape: P = 2, m = 4 or P = 4, m = 2: 48 ops
};

namespace detail {

/// Runs CBC on `model` within `seconds` of wall-clock time, one thread; true when it
/// returned a solution (not proved infeasible). Both programs below solve through it.
inline bool solve_cbc(Cbc_Model* model, double seconds) {
  Cbc_setParameter(model, "timeMode", "elapsed");  // wall-clock seconds, not CPU
  Cbc_setMaximumSeconds(model, seconds);
  Cbc_setParameter(model, "threads", "1");
  Cbc_solve(model);
  const double* x = Cbc_getColSolution(model);
  return x != nullptr && !Cbc_isProvenInfeasible(model);
}

/// Adds the row sum(coef x) >= lo to `model`, its terms as (column, coefficient).
inline void add_cbc_row(Cbc_Model* model, const std::vector<std::pair<int, double>>& terms, double lo) {
  std::vector<int> cols;
  std::vector<double> coef;
  for (const auto& [c, v] : terms) cols.push_back(c), coef.push_back(v);
  Cbc_addRow(model, "", static_cast<int>(cols.size()), cols.data(), coef.data(), 'G', lo);
}

/// The mixed-integer program of a search_problem, in integer ticks and memory units
/// (docs/search.md "The exact method"): per op its end e (continuous, within its window:
/// windows()),
/// per rank and unordered pair of ops (an F or I of a later micro-batch against an I or W
/// of an earlier one) a binary x, 1 when the first of the pair runs first; the objective
/// Z >= e(W of the last micro-batch) - s_r on every rank, where s_r = r (t_f + t_c) is
/// where rank r's first F starts in every schedule the simulator runs (it has nothing
/// to wait for but its input). Rows: the chains of each kind and F -> I -> W of one
/// micro-batch, the inputs across ranks with t_c, both sides of every disjunction with
/// the least big-M the windows allow (a side they rule out fixes x), the orders'
/// monotonicity, the memory level after each F starts (cap: P limits in memory units),
/// and lower <= Z <= upper (the bound and the greedy's span, in ticks).
class search_program {
 public:
  search_program(int P, int m, std::int64_t tf, std::int64_t ti, std::int64_t tw, std::int64_t tc, std::int64_t unit,
                 std::int64_t fi, std::int64_t fw, const std::int64_t* cap, std::int64_t lower, std::int64_t upper)
      : P_(P), m_(m), d_{tf, ti, tw}, model_(Cbc_newModel(), &Cbc_deleteModel) {
    Cbc_setLogLevel(model_.get(), 0);
    windows(tc, upper);
    for (int r = 0; r < P; ++r) {
      for (int k = 0; k < 3; ++k) {
        for (int j = 0; j < m; ++j) {
          const std::size_t q = static_cast<std::size_t>(e(r, k, j));
          Cbc_addCol(model_.get(), "", static_cast<double>(early_[q]), static_cast<double>(late_[q]), 0, 0, 0, nullptr,
                     nullptr);
        }
      }
    }
    z_ = column_count();
    Cbc_addCol(model_.get(), "Z", static_cast<double>(lower), static_cast<double>(upper), 1, 0, 0, nullptr, nullptr);
    for (int r = 0; r < P; ++r) {
      const double s = static_cast<double>(r) * static_cast<double>(tf + tc);
      add_precedences(r, tc);
      add_disjunctions(r);
      add_monotonicity(r);
      add_memory_rows(r, unit, fi, fw, cap[r]);
      row({{z_, 1}, {e(r, 2, m - 1), -1}}, -s);
    }
  }

  /// Starts CBC from a schedule's orders and ends (per rank its ops, ends in ticks).
  void start_from(const std::vector<std::vector<std::pair<op, std::int64_t>>>& ranks, std::int64_t span) {
    std::vector<int> cols;
    std::vector<double> values;
    std::vector<std::vector<int>> position(static_cast<std::size_t>(P_),
                                           std::vector<int>(static_cast<std::size_t>(3 * m_), 0));
    for (int r = 0; r < P_; ++r) {
      int at = 0;
      for (const auto& [o, end] : ranks[static_cast<std::size_t>(r)]) {
        const int k = kind_index(o.kind());
        const std::size_t c = idx(e(r, k, o.microbatch()));
        require(early_[c] <= end && end <= late_[c],
                "ctpipe: search_exact's windows exclude the greedy's schedule (a bug)");
        cols.push_back(e(r, k, o.microbatch())), values.push_back(static_cast<double>(end));
        position[static_cast<std::size_t>(r)][static_cast<std::size_t>(k * m_ + o.microbatch())] = at++;
      }
    }
    for (const pair_column& q : pairs_) {
      const auto& pos = position[static_cast<std::size_t>(q.rank)];
      cols.push_back(q.column);
      values.push_back(
          pos[static_cast<std::size_t>(q.ka * m_ + q.a)] < pos[static_cast<std::size_t>(q.kb * m_ + q.b)] ? 1 : 0);
    }
    cols.push_back(z_), values.push_back(static_cast<double>(span));
    Cbc_setMIPStartI(model_.get(), static_cast<int>(cols.size()), cols.data(), values.data());
  }

  /// Solves within `seconds`; true when CBC returned a solution.
  bool solve(double seconds) { return solve_cbc(model_.get(), seconds); }
  double bound() { return Cbc_getBestPossibleObjValue(model_.get()); }

  /// The solution's orders: each rank's ops sorted by their ends (distinct, as every op
  /// lasts at least one tick).
  std::vector<std::vector<op>> orders() {
    const double* x = Cbc_getColSolution(model_.get());
    std::vector<std::vector<op>> out(static_cast<std::size_t>(P_));
    for (int r = 0; r < P_; ++r) {
      std::vector<std::pair<double, op>> ends;
      for (int k = 0; k < 3; ++k) {
        for (int j = 0; j < m_; ++j)
          ends.push_back({x[e(r, k, j)], op{k == 0 ? op_kind::F : k == 1 ? op_kind::I : op_kind::W, r, j}});
      }
      std::sort(ends.begin(), ends.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
      for (const auto& [t, o] : ends) out[static_cast<std::size_t>(r)].push_back(o);
    }
    return out;
  }

 private:
  struct pair_column {
    int rank, ka, a, kb, b, column;
  };
  static int kind_index(op_kind k) { return k == op_kind::F ? 0 : k == op_kind::I ? 1 : 2; }
  static std::size_t idx(int c) { return static_cast<std::size_t>(c); }
  /// A row sum(coef x) >= lo of this program.
  void row(const std::vector<std::pair<int, double>>& terms, double lo) { add_cbc_row(model_.get(), terms, lo); }

  /// Rank r's precedence rows: the chains of each kind, F -> I -> W of one micro-batch,
  /// and the inputs across ranks with t_c.
  void add_precedences(int r, std::int64_t tc) {
    const std::int64_t tf = d_[0], ti = d_[1], tw = d_[2];
    for (int j = 0; j < m_; ++j) {
      for (int k = 0; k < 3; ++k) {
        if (j > 0) row({{e(r, k, j), 1}, {e(r, k, j - 1), -1}}, static_cast<double>(d_[k]));
      }
      row({{e(r, 1, j), 1}, {e(r, 0, j), -1}}, static_cast<double>(ti));
      row({{e(r, 2, j), 1}, {e(r, 1, j), -1}}, static_cast<double>(tw));
      if (r > 0) row({{e(r, 0, j), 1}, {e(r - 1, 0, j), -1}}, static_cast<double>(tf + tc));
      if (r + 1 < P_) row({{e(r, 1, j), 1}, {e(r + 1, 1, j), -1}}, static_cast<double>(ti + tc));
    }
  }

  /// Rank r's disjunctions: (F a, I b), (F a, W b), (I a, W b) for a > b; x = 1: (ka, a)
  /// first, e_B - d_B >= e_A; x = 0: e_A - d_A >= e_B. Each side's big-M is the most it
  /// can be violated within the windows; a side the windows rule out fixes x.
  void add_disjunctions(int r) {
    for (int a = 0; a < m_; ++a) {
      for (int b = 0; b < a; ++b) {
        for (const auto& [ka, kb] : {std::pair{0, 1}, std::pair{0, 2}, std::pair{1, 2}}) {
          const int A = e(r, ka, a), B = e(r, kb, b);
          const std::int64_t first_ok = late_[idx(B)] - d_[kb] - early_[idx(A)];   // A first possible?
          const std::int64_t second_ok = late_[idx(A)] - d_[ka] - early_[idx(B)];  // B first possible?
          const int x = column_count();
          Cbc_addCol(model_.get(), "", second_ok < 0 ? 1 : 0, first_ok < 0 ? 0 : 1, 0, 1, 0, nullptr, nullptr);
          pairs_.push_back({r, ka, a, kb, b, x});
          const double m1 = static_cast<double>(late_[idx(A)] - early_[idx(B)] + d_[kb]);  // e_A - e_B + d_B at most
          const double m0 = static_cast<double>(late_[idx(B)] - early_[idx(A)] + d_[ka]);
          if (m1 > 0) row({{B, 1}, {A, -1}, {x, -m1}}, static_cast<double>(d_[kb]) - m1);
          if (m0 > 0) row({{A, 1}, {B, -1}, {x, m0}}, static_cast<double>(d_[ka]));
        }
      }
    }
  }

  /// The binary of rank r's pair ((ka, a), (kb, b)), or -1 when it has none.
  int pair_of(int r, int ka, int a, int kb, int b) const {
    for (const pair_column& q : pairs_) {
      if (q.rank == r && q.ka == ka && q.a == a && q.kb == kb && q.b == b) return q.column;
    }
    return -1;
  }

  /// Rank r's rows of the orders' monotonicity, implied by the times but not by their
  /// relaxation: an op before the later of two chained ops is before the earlier too.
  void add_monotonicity(int r) {
    for (const pair_column& q : pairs_) {
      if (q.rank != r) continue;
      const int later_a = q.a + 1 < m_ ? pair_of(r, q.ka, q.a + 1, q.kb, q.b) : -1;  // x(a, b) >= x(a+1, b)
      if (later_a >= 0) row({{q.column, 1}, {later_a, -1}}, 0);
      const int later_b = q.b + 1 < q.a ? pair_of(r, q.ka, q.a, q.kb, q.b + 1) : -1;  // x(a, b) <= x(a, b+1)
      if (later_b >= 0) row({{later_b, 1}, {q.column, -1}}, 0);
      if (q.ka == 0 && q.kb == 1)
        row({{pair_of(r, 0, q.a, 2, q.b), 1}, {q.column, -1}}, 0);  // F a before I b: before W b
      if (q.ka == 1 && q.kb == 2) row({{pair_of(r, 0, q.a, 2, q.b), 1}, {q.column, -1}}, 0);  // I a before W b: F a too
    }
  }

  /// Rank r's memory rows: after F j starts, (j+1) unit - fi #(I b before) - fw #(W b
  /// before) <= cap, with [I b before F j] = 1 - x(F j, I b): sum fi x + fw x <= cap -
  /// (j+1) unit + j (fi + fw).
  void add_memory_rows(int r, std::int64_t unit, std::int64_t fi, std::int64_t fw, std::int64_t cap) {
    for (int j = 0; j < m_; ++j) {
      std::vector<std::pair<int, double>> terms;
      for (const pair_column& q : pairs_) {
        if (q.rank == r && q.ka == 0 && q.a == j)
          terms.push_back({q.column, -static_cast<double>(q.kb == 1 ? fi : fw)});
      }
      const double room = static_cast<double>(cap - (j + 1) * unit + j * (fi + fw));
      if (!terms.empty()) row(terms, -room);
    }
  }

  /// Each op's window of ends [early, late] in every schedule with span <= `upper`: early
  /// from its inputs and the ops its rank must run before it (its chain predecessors),
  /// late from the ops that must follow it and rank r's last end s_r + upper.
  void windows(std::int64_t tc, std::int64_t upper) {
    const std::size_t n = static_cast<std::size_t>(3 * P_ * m_);
    early_.assign(n, 0), late_.assign(n, 0);
    const std::int64_t tf = d_[0], ti = d_[1], tw = d_[2];
    for (int r = 0; r < P_; ++r) {
      const std::int64_t s = r * (tf + tc);
      for (int j = 0; j < m_; ++j) {
        std::int64_t f = s + (j + 1) * tf;
        if (j > 0) f = std::max(f, early_[idx(e(r, 0, j - 1))] + tf);
        if (r > 0) f = std::max(f, early_[idx(e(r - 1, 0, j))] + tc + tf);
        early_[idx(e(r, 0, j))] = f;
      }
    }
    for (int r = P_ - 1; r >= 0; --r) {
      const std::int64_t s = r * (tf + tc);
      for (int j = 0; j < m_; ++j) {
        std::int64_t i = std::max(early_[idx(e(r, 0, j))] + ti, s + (j + 1) * (tf + ti));
        if (j > 0) i = std::max(i, early_[idx(e(r, 1, j - 1))] + ti);
        if (r + 1 < P_) i = std::max(i, early_[idx(e(r + 1, 1, j))] + tc + ti);
        early_[idx(e(r, 1, j))] = i;
        std::int64_t w = std::max(i + tw, s + (j + 1) * (tf + ti + tw));
        if (j > 0) w = std::max(w, early_[idx(e(r, 2, j - 1))] + tw);
        early_[idx(e(r, 2, j))] = w;
      }
    }
    for (int r = 0; r < P_; ++r) {
      const std::int64_t last = r * (tf + tc) + upper;
      for (int j = m_ - 1; j >= 0; --j) {
        std::int64_t w = last - (m_ - 1 - j) * tw;
        if (j + 1 < m_) w = std::min(w, late_[idx(e(r, 2, j + 1))] - tw);
        late_[idx(e(r, 2, j))] = w;
      }
    }
    for (int r = 0; r < P_; ++r) {  // an I feeds the rank before it: ranks in order
      const std::int64_t last = r * (tf + tc) + upper;
      for (int j = m_ - 1; j >= 0; --j) {
        std::int64_t i = std::min(late_[idx(e(r, 2, j))] - tw, last - (m_ - 1 - j) * ti - (m_ - j) * tw);
        if (j + 1 < m_) i = std::min(i, late_[idx(e(r, 1, j + 1))] - ti);
        if (r > 0) i = std::min(i, late_[idx(e(r - 1, 1, j))] - ti - tc);
        late_[idx(e(r, 1, j))] = i;
      }
    }
    for (int r = P_ - 1; r >= 0; --r) {  // an F feeds the rank after it
      const std::int64_t last = r * (tf + tc) + upper;
      for (int j = m_ - 1; j >= 0; --j) {
        std::int64_t f = std::min(late_[idx(e(r, 1, j))] - ti, last - (m_ - 1 - j) * tf - (m_ - j) * (ti + tw));
        if (j + 1 < m_) f = std::min(f, late_[idx(e(r, 0, j + 1))] - tf);
        if (r + 1 < P_) f = std::min(f, late_[idx(e(r + 1, 0, j))] - tf - tc);
        late_[idx(e(r, 0, j))] = f;
      }
    }
    for (int r = 0; r < P_; ++r) late_[idx(e(r, 0, 0))] = early_[idx(e(r, 0, 0))];  // the first F starts at s_r
  }
  int e(int r, int k, int j) const { return (r * 3 + k) * m_ + j; }
  int column_count() { return Cbc_getNumCols(model_.get()); }

  int P_, m_;
  std::int64_t d_[3];
  std::unique_ptr<Cbc_Model, void (*)(Cbc_Model*)> model_;
  int z_ = 0;
  std::vector<pair_column> pairs_;
  std::vector<std::int64_t> early_, late_;  // per op (column order): its window of ends
};

/// The mixed-integer program of a V-shape search_problem (docs/search.md "The exact
/// method"), in integer ticks and memory units of chunks (each op costs t/2, an F adds one
/// chunk): the same variables and rows as search_program, written for any op graph (rank r
/// runs stage r, chunk 0, and stage 2P-1-r, chunk 1; each (chunk, kind) in micro-batch
/// order). Each op's window comes from the longest paths of its precedences (its inputs,
/// with t_c between ranks, and the op before it of its own chunk and kind) from s_r, rank
/// r's first start, and to s_r + upper; a binary orders every pair of one rank's ops that
/// no precedence path orders (a side the windows rule out fixes it); the memory level
/// after each F starts counts the ops the paths put before it and the binaries of the
/// rest; Z >= each chunk's last W end - s_r.
class v_search_program {
 public:
  v_search_program(int P, int m, std::int64_t tf, std::int64_t ti, std::int64_t tw, std::int64_t tc, std::int64_t unit,
                   std::int64_t fi, std::int64_t fw, const std::int64_t* cap, std::int64_t lower, std::int64_t upper)
      : P_(P), m_(m), d_{tf, ti, tw}, model_(Cbc_newModel(), &Cbc_deleteModel) {
    Cbc_setLogLevel(model_.get(), 0);
    const int n = 6 * P * m;
    const precedence_lists pred = precedences(tc);
    std::vector<std::vector<int>> succ(static_cast<std::size_t>(n));
    const std::vector<int> order = topological_order(pred, succ);
    windows(pred, succ, order, tc, upper);
    const std::vector<std::vector<bool>> before = paths(pred, order);  // a path a -> b
    for (int o = 0; o < n; ++o) {
      Cbc_addCol(model_.get(), "", static_cast<double>(early_[idx(o)]), static_cast<double>(late_[idx(o)]), 0, 0, 0,
                 nullptr, nullptr);
    }
    z_ = Cbc_getNumCols(model_.get());
    Cbc_addCol(model_.get(), "Z", static_cast<double>(lower), static_cast<double>(upper), 1, 0, 0, nullptr, nullptr);
    for (int o = 0; o < n; ++o) {
      for (const auto& [q, lag] : pred[idx(o)]) row({{o, 1}, {q, -1}}, static_cast<double>(lag + d_[kind_of(o)]));
    }
    // pair_[a * n + b] (a < b, one rank, unordered by paths): the binary, 1 when a runs first
    pair_.assign(idx(n) * idx(n), -1);
    for (int r = 0; r < P; ++r) {
      add_disjunctions(r, before);
      add_memory_rows(r, before, unit, fi, fw, cap[r]);
      for (int c = 0; c < 2; ++c) row({{z_, 1}, {id(r, c, 2, m - 1), -1}}, -static_cast<double>(start_of(r, tf, tc)));
    }
  }

  /// Starts CBC from a schedule's orders and ends (per rank its ops, ends in ticks).
  void start_from(const std::vector<std::vector<std::pair<op, std::int64_t>>>& ranks, std::int64_t span) {
    const int n = 6 * P_ * m_;
    std::vector<int> cols;
    std::vector<double> values;
    std::vector<int> position(idx(n), 0);
    for (int r = 0; r < P_; ++r) {
      int at = 0;
      for (const auto& [o, end] : ranks[idx(r)]) {
        const int c = column_of(r, o);
        require(early_[idx(c)] <= end && end <= late_[idx(c)],
                "ctpipe: search_exact's windows exclude the greedy's schedule (a bug)");
        cols.push_back(c), values.push_back(static_cast<double>(end));
        position[idx(c)] = at++;
      }
    }
    for (int a = 0; a < n; ++a) {
      for (int b = a + 1; b < n; ++b) {
        const int x = pair_[idx(a) * idx(n) + idx(b)];
        if (x >= 0) cols.push_back(x), values.push_back(position[idx(a)] < position[idx(b)] ? 1 : 0);
      }
    }
    cols.push_back(z_), values.push_back(static_cast<double>(span));
    Cbc_setMIPStartI(model_.get(), static_cast<int>(cols.size()), cols.data(), values.data());
  }

  /// Solves within `seconds`; true when CBC returned a solution.
  bool solve(double seconds) { return solve_cbc(model_.get(), seconds); }
  double bound() { return Cbc_getBestPossibleObjValue(model_.get()); }

  /// The solution's orders: each rank's ops sorted by their ends.
  std::vector<std::vector<op>> orders() {
    const double* x = Cbc_getColSolution(model_.get());
    std::vector<std::vector<op>> out(idx(P_));
    for (int r = 0; r < P_; ++r) {
      std::vector<std::pair<double, op>> ends;
      for (int o = id(r, 0, 0, 0); o < id(r, 0, 0, 0) + 6 * m_; ++o) ends.push_back({x[o], op_of(o)});
      std::sort(ends.begin(), ends.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
      for (const auto& [t, o] : ends) out[idx(r)].push_back(o);
    }
    return out;
  }

 private:
  static std::size_t idx(int c) { return static_cast<std::size_t>(c); }
  /// Per op its precedences: (predecessor, lag between its end and this op's start).
  using precedence_lists = std::vector<std::vector<std::pair<int, std::int64_t>>>;

  /// A row sum(coef x) >= lo of this program.
  void row(const std::vector<std::pair<int, double>>& terms, double lo) { add_cbc_row(model_.get(), terms, lo); }

  /// Each op's precedences: the op before it of its own chunk and kind, and its inputs,
  /// with t_c between ranks (the V's turn at rank P-1 has none).
  precedence_lists precedences(std::int64_t tc) const {
    precedence_lists pred(static_cast<std::size_t>(6 * P_ * m_));
    for (int r = 0; r < P_; ++r) {
      for (int c = 0; c < 2; ++c) {
        for (int j = 0; j < m_; ++j) {
          auto& in = pred[idx(id(r, c, 0, j))];
          for (int k = 0; k < 3; ++k) {
            if (j > 0) pred[idx(id(r, c, k, j))].push_back({id(r, c, k, j - 1), 0});
          }
          // F: the stage before (chunk 0 from rank r-1; chunk 1 from rank r+1, or the turn at P-1)
          if (c == 0 && r > 0) in.push_back({id(r - 1, 0, 0, j), tc});
          if (c == 1)
            in.push_back(r == P_ - 1 ? std::pair{id(r, 0, 0, j), std::int64_t{0}} : std::pair{id(r + 1, 1, 0, j), tc});
          // I: its own F and the stage after (chunk 1 from rank r-1 but the last stage;
          // chunk 0 from rank r+1, or the turn at P-1)
          auto& back = pred[idx(id(r, c, 1, j))];
          back.push_back({id(r, c, 0, j), 0});
          if (c == 1 && r > 0) back.push_back({id(r - 1, 1, 1, j), tc});
          if (c == 0)
            back.push_back(r == P_ - 1 ? std::pair{id(r, 1, 1, j), std::int64_t{0}}
                                       : std::pair{id(r + 1, 0, 1, j), tc});
          pred[idx(id(r, c, 2, j))].push_back({id(r, c, 1, j), 0});
        }
      }
    }
    return pred;
  }

  /// The ops in a topological order of `pred` (Kahn's), filling `succ` (one list per op,
  /// given empty) with each op's successors.
  static std::vector<int> topological_order(const precedence_lists& pred, std::vector<std::vector<int>>& succ) {
    const int n = static_cast<int>(pred.size());
    std::vector<int> order, count(static_cast<std::size_t>(n), 0);
    for (int o = 0; o < n; ++o) {
      for (const auto& [q, lag] : pred[idx(o)]) succ[idx(q)].push_back(o), ++count[idx(o)];
    }
    for (int o = 0; o < n; ++o) {
      if (count[idx(o)] == 0) order.push_back(o);
    }
    for (std::size_t x = 0; x < order.size(); ++x) {
      for (const int o : succ[idx(order[x])]) {
        if (--count[idx(o)] == 0) order.push_back(o);
      }
    }
    return order;
  }

  /// Each op's window of ends [early, late] (early_, late_): the longest paths of its
  /// precedences from s_r, rank r's first start, and to s_r + upper; the first F of each
  /// rank starts at s_r.
  void windows(const precedence_lists& pred, const std::vector<std::vector<int>>& succ, const std::vector<int>& order,
               std::int64_t tc, std::int64_t upper) {
    const std::int64_t tf = d_[0];
    early_.assign(pred.size(), 0), late_.assign(pred.size(), 0);
    for (const int o : order) {
      std::int64_t start = start_of(rank_of(o), tf, tc);
      for (const auto& [q, lag] : pred[idx(o)]) start = std::max(start, early_[idx(q)] + lag);
      early_[idx(o)] = start + d_[kind_of(o)];
    }
    for (auto x = order.rbegin(); x != order.rend(); ++x) {
      const int o = *x;
      std::int64_t end = start_of(rank_of(o), tf, tc) + upper;
      for (const int q : succ[idx(o)]) {
        for (const auto& [p, lag] : pred[idx(q)]) {
          if (p == o) end = std::min(end, late_[idx(q)] - d_[kind_of(q)] - lag);
        }
      }
      late_[idx(o)] = end;
    }
    for (int r = 0; r < P_; ++r) late_[idx(id(r, 0, 0, 0))] = early_[idx(id(r, 0, 0, 0))];  // the first F starts at s_r
  }

  /// `before[a][b]`: a path of precedences leads from op a to op b (`order` topological).
  static std::vector<std::vector<bool>> paths(const precedence_lists& pred, const std::vector<int>& order) {
    const std::size_t n = pred.size();
    std::vector<std::vector<bool>> before(n, std::vector<bool>(n, false));
    for (const int o : order) {
      for (const auto& [q, lag] : pred[idx(o)]) {
        before[idx(q)][idx(o)] = true;
        for (std::size_t a = 0; a < n; ++a) {
          if (before[a][idx(q)]) before[a][idx(o)] = true;
        }
      }
    }
    return before;
  }

  /// Rank r's disjunctions: a binary for every pair of its ops that no path orders
  /// (pair_), 1 when the first runs first, with both sides' rows and the least big-M the
  /// windows allow (a side they rule out fixes it).
  void add_disjunctions(int r, const std::vector<std::vector<bool>>& before) {
    const int n = 6 * P_ * m_, first = id(r, 0, 0, 0), last = first + 6 * m_;
    for (int a = first; a < last; ++a) {
      for (int b = a + 1; b < last; ++b) {
        if (before[idx(a)][idx(b)] || before[idx(b)][idx(a)]) continue;
        const std::int64_t da = d_[kind_of(a)], db = d_[kind_of(b)];
        const std::int64_t a_first_ok = late_[idx(b)] - db - early_[idx(a)],
                           b_first_ok = late_[idx(a)] - da - early_[idx(b)];
        const int x = Cbc_getNumCols(model_.get());
        Cbc_addCol(model_.get(), "", b_first_ok < 0 ? 1 : 0, a_first_ok < 0 ? 0 : 1, 0, 1, 0, nullptr, nullptr);
        pair_[idx(a) * idx(n) + idx(b)] = x;
        const double m1 = static_cast<double>(late_[idx(a)] - early_[idx(b)] + db);  // e_a - e_b + d_b at most
        const double m0 = static_cast<double>(late_[idx(b)] - early_[idx(a)] + da);
        if (m1 > 0) row({{b, 1}, {a, -1}, {x, -m1}}, static_cast<double>(db) - m1);
        if (m0 > 0) row({{a, 1}, {b, -1}, {x, m0}}, static_cast<double>(da));
      }
    }
  }

  /// Rank r's memory rows: the level after each F starts, unit for each F up to it, less
  /// fi, fw for each I, W before it: sum over the open pairs of coef [b before F] <= cap -
  /// the fixed part.
  void add_memory_rows(int r, const std::vector<std::vector<bool>>& before, std::int64_t unit, std::int64_t fi,
                       std::int64_t fw, std::int64_t cap) {
    const int n = 6 * P_ * m_, first = id(r, 0, 0, 0), last = first + 6 * m_;
    const std::int64_t gain[3] = {unit, -fi, -fw};
    for (int f = first; f < last; ++f) {
      if (kind_of(f) != 0) continue;
      std::vector<std::pair<int, double>> terms;
      double fixed = static_cast<double>(unit);
      for (int b = first; b < last; ++b) {
        if (b == f || before[idx(f)][idx(b)]) continue;
        const double g = static_cast<double>(gain[kind_of(b)]);
        if (before[idx(b)][idx(f)]) {
          fixed += g;
        } else if (b < f) {  // x = 1: b first
          terms.push_back({pair_[idx(b) * idx(n) + idx(f)], -g});
        } else {  // x = 1: f first, so b before it is 1 - x
          fixed += g;
          terms.push_back({pair_[idx(f) * idx(n) + idx(b)], g});
        }
      }
      if (!terms.empty())
        row(terms, fixed - static_cast<double>(cap));  // else fixed <= cap: the greedy's schedule fits
    }
  }
  int id(int r, int c, int k, int j) const { return ((r * 2 + c) * 3 + k) * m_ + j; }
  int rank_of(int o) const { return o / (6 * m_); }
  int kind_of(int o) const { return (o / m_) % 3; }
  std::int64_t start_of(int r, std::int64_t tf, std::int64_t tc) const { return r * (tf + tc); }
  op op_of(int o) const {
    const int r = rank_of(o), c = (o / (3 * m_)) % 2, k = kind_of(o), j = o % m_;
    return op{k == 0 ? op_kind::F : k == 1 ? op_kind::I : op_kind::W, c == 0 ? r : 2 * P_ - 1 - r, j};
  }
  int column_of(int r, op o) const {
    const int c = o.stage() == r ? 0 : 1;
    const int k = o.kind() == op_kind::F ? 0 : o.kind() == op_kind::I ? 1 : 2;
    return id(r, c, k, o.microbatch());
  }

  int P_, m_;
  std::int64_t d_[3];
  std::unique_ptr<Cbc_Model, void (*)(Cbc_Model*)> model_;
  int z_ = 0;
  std::vector<int> pair_;
  std::vector<std::int64_t> early_, late_;
};

}  // namespace detail

namespace detail {

/// Per rank, the greedy's ops as search_exact() hands them to CBC.
using exact_start = std::vector<std::vector<std::pair<op, std::int64_t>>>;

/// The solution search_exact() reads from CBC: its orders (empty when it returned none)
/// and its best possible objective (its optimum when proven).
using exact_solution = std::pair<std::vector<std::vector<op>>, double>;

/// `x` in ticks of 1/den, truncated.
inline std::int64_t exact_ticks(rational x, std::int64_t den) {
  const rational t = x * rational{den};
  return t.num / t.den;
}

/// Per rank of `v` its ops with their ends (simulated with `c`) in ticks of 1/den: the
/// start search_exact() gives CBC.
inline exact_start ends_in_ticks(schedule_view v, const costs& c, std::int64_t den) {
  exact_start ranks(static_cast<std::size_t>(v.shape.P));
  const simulation sim = simulate(v, c);
  for (int r = 0; r < v.shape.P; ++r) {
    for (std::uint32_t k = v.offsets[r]; k < v.offsets[r + 1]; ++k)
      ranks[static_cast<std::size_t>(r)].push_back({v.ops[k], exact_ticks(sim.end(k), den)});
  }
  return ranks;
}

/// Starts `program` (search_program or v_search_program) from `ranks` with span
/// `span_ticks` and solves it within `seconds`.
template <class Program>
exact_solution run_exact_program(Program& program, const exact_start& ranks, std::int64_t span_ticks, double seconds) {
  program.start_from(ranks, span_ticks);
  const bool solved = program.solve(seconds);
  return exact_solution{solved ? program.orders() : std::vector<std::vector<op>>{}, program.bound()};
}

/// The exact method on `p` (units `u`): its program (v_search_program on the V-shape, else
/// search_program) between `rep`'s bound and span, started from `greedy`, solved by CBC
/// within `seconds`.
inline exact_solution solve_exact(const search_problem& p, const integer_units& u, const search_report& rep,
                                  schedule_view greedy, double seconds) {
  const costs& c = p.cost;
  const bool v_shape = p.shape.layout == placement::v_shape;
  const rational scale{v_shape ? 2 : 1};
  // the integer ceiling of the bound in ticks
  const rational lower = rep.lower_bound * rational{u.den};
  const std::int64_t lower_ticks = (lower.num + lower.den - 1) / lower.den, span_ticks = exact_ticks(rep.span, u.den);
  const exact_start ranks = ends_in_ticks(greedy, c, u.den);
  const std::int64_t tf = u.ticks(c.f / scale), ti = u.ticks(c.i / scale), tw = u.ticks(c.w / scale), tc = u.ticks(c.c);
  if (v_shape) {
    v_search_program program(p.shape.P, p.shape.m, tf, ti, tw, tc, u.unit, u.fi, u.fw, u.cap.data(), lower_ticks,
                             span_ticks);
    return run_exact_program(program, ranks, span_ticks, seconds);
  }
  search_program program(p.shape.P, p.shape.m, tf, ti, tw, tc, u.unit, u.fi, u.fw, u.cap.data(), lower_ticks,
                         span_ticks);
  return run_exact_program(program, ranks, span_ticks, seconds);
}

/// Replaces `out`'s schedule and report by CBC's `orders` when they make a valid schedule
/// within the memory limit whose exact simulation has a smaller span.
inline void adopt_if_better(const search_problem& p, const std::vector<std::vector<op>>& orders, search_result& out) {
  const costs& c = p.cost;
  search_report& rep = out.report;
  schedule found = schedule_of(p.shape, orders);
  const schedule_view v = found.view();
  if (!validate(v).ok()) return;
  const simulation sim = simulate(v, c);
  const in_flight_profile memory = in_flight(v, p.gamma);
  const rational span = sim.largest_span();
  rational peak{0};
  bool within = true;
  for (int r = 0; r < p.shape.P; ++r)
    within = within && memory.peak_activations(r) <= p.limit(r), peak = max(peak, memory.peak_activations(r));
  if (within && span < rep.span) {
    out.ops = std::move(found);
    rep.span = span, rep.peak = peak, rep.makespan = sim.makespan();
    rep.bubble = (span - rational{p.shape.m} * (c.f + c.i + c.w)) / span;
  }
}

}  // namespace detail

/// search() (docs/search.md), then, when its schedule is not proved optimal and the shape
/// is small enough (loop: P m <= exact_options::max_pairs; V-shape: P m <=
/// exact_options::max_v_pairs), the exact method: the mixed-integer program of
/// detail::search_program (loop) or detail::v_search_program (V-shape) solved by CBC within
/// `exact.seconds`, started from search()'s schedule. CBC's schedule replaces search()'s
/// when its exact simulation has a smaller span; the lower bound becomes the larger of
/// search_lower_bound() and CBC's best bound b, as ceil(b - 1/2) ticks (every span is a
/// whole number of ticks; the half tick absorbs CBC's floating-point error either way).
/// `method` is search_method::exact when CBC ran; `optimal` when the span meets the bound
/// (CBC proved it, or it did not finish and the bounds still meet). CBC computes in
/// floating point; the schedule it returns is checked exactly like search()'s (validate(),
/// the limit, the exact simulation). Needs t_i > 0 and t_w > 0 (every op lasts: the orders
/// are read from the ends), else it returns search()'s result. Errors: search()'s.
inline search_result search_exact(const search_problem& p, const exact_options& exact = {},
                                  const search_options& options = {}) {
  const auto started = std::chrono::steady_clock::now();
  search_result out = search(p, options);
  search_report& rep = out.report;
  const bool v_shape = p.shape.layout == placement::v_shape;
  if (rep.optimal || p.shape.P * p.shape.m > (v_shape ? exact.max_v_pairs : exact.max_pairs) ||
      p.cost.i <= rational{0} || p.cost.w <= rational{0}) {
    return out;
  }
  // in ticks and memory units of the constructions (on the V-shape: chunks, each op t/2)
  const detail::integer_units u = detail::construction_units(p.shape, p.cost, p.gamma, p.memory_limit);
  const detail::exact_solution solved = detail::solve_exact(p, u, rep, out.ops.view(), exact.seconds);
  rep.method = search_method::exact;
  if (!solved.first.empty()) detail::adopt_if_better(p, solved.first, out);
  const double b = solved.second;  // CBC's best possible objective: its optimum when proven
  // every span is a whole number of ticks: a bound b proves ceil(b); half a tick off
  // absorbs CBC's floating-point error either way
  const std::int64_t cbc_ticks = static_cast<std::int64_t>(std::ceil(b - 0.5));
  const rational cbc_bound{cbc_ticks, u.den};
  rep.lower_bound = max(rep.lower_bound, cbc_bound < rep.span ? cbc_bound : rep.span);
  rep.optimal = rep.span == rep.lower_bound;
  rep.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return out;
}

}  // namespace ctpipe
