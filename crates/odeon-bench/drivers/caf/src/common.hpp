// What every benchmark of the CAF Savina driver shares: the parameter table, the
// timed region (one actor_system per iteration), the work unit and the checks.
#pragma once

#include <chrono>
#include <cmath>
#include <cstdint>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "caf/all.hpp"

namespace savina {

/// One benchmark parameter, named by Savina's flag without the dash.
struct param_spec {
  std::string name;
  std::int64_t def;   ///< Savina's default (the catalog's).
  std::int64_t quick; ///< The catalog's `--quick` value.
  std::int64_t min;   ///< The smallest value the protocol terminates with.
};

/// Parameter values by flag name; all of them are integers for these benchmarks.
using params = std::map<std::string, std::int64_t>;

/// `ok` with what was checked, or not with why the result is wrong.
struct check {
  bool ok;
  std::string detail;
};

/// One iteration: the timed region and the validation of its result.
struct outcome {
  std::uint64_t ns;
  check result;
};

/// A benchmark: its parameters and how to run one iteration with T threads.
struct bench_def {
  std::vector<param_spec> specs;
  outcome (*run)(const params&, std::size_t threads);
};

/// `what = expected` when `got == expected`, else a failure naming both.
template <class T>
check expect(const std::string& what, const T& got, const T& expected) {
  std::ostringstream out;
  if (got == expected) {
    out << what << " = " << expected;
    return {true, out.str()};
  }
  out << what << ": got " << got << ", expected " << expected;
  return {false, out.str()};
}

/// The first failing check, or all the successful ones joined by "; ".
inline check all_of(const std::vector<check>& checks) {
  std::string detail;
  for (const auto& c : checks) {
    if (!c.ok)
      return c;
    detail += (detail.empty() ? "" : "; ") + c.detail;
  }
  return {true, detail};
}

/// Runs one iteration in a fresh actor system of `threads` workers, Savina's timed
/// region (§1.1): from creating the actor_system, through `body(sys)` (which
/// spawns the actors and sends the first messages), until every actor has exited
/// (`await_all_actors_done`). Shutting the system down (joining its threads) is
/// left outside. The config is built before the clock starts: Savina parses its
/// options outside the timed region too.
template <class Body>
std::uint64_t timed_system(std::size_t threads, Body&& body) {
  caf::actor_system_config cfg;
  // The default scheduler is the work-stealing one; only its size is set.
  cfg.set("scheduler.max-threads", static_cast<std::int64_t>(threads));
  auto start = std::chrono::steady_clock::now();
  caf::actor_system sys{cfg};
  body(sys);
  sys.await_all_actors_done();
  auto stop = std::chrono::steady_clock::now();
  return static_cast<std::uint64_t>(
    std::chrono::duration_cast<std::chrono::nanoseconds>(stop - start).count());
}

/// The work unit of §3.4/§3.5: sin(37.2)², failing when it is not positive. The
/// argument is read through a volatile so that the compiler cannot fold it away
/// (the JVM's reason for the check does not apply to a C++ compiler).
inline void work_unit() {
  static volatile double arg = 37.2;
  double s = std::sin(arg);
  double r = s * s;
  if (!(r > 0.0))
    throw std::runtime_error("work unit: sin(37.2)^2 is not positive");
}

/// Savina's PseudoRandom (§1.2a): a 16-bit LCG; `next_int(b)` is state mod b.
class pseudo_random {
public:
  explicit pseudo_random(std::int64_t seed) : value_(seed) {
  }
  std::int32_t next_int(std::int32_t bound) {
    value_ = (value_ * 1309 + 13849) & 65535;
    return static_cast<std::int32_t>(value_ % bound);
  }

private:
  std::int64_t value_;
};

// The benchmarks, one file each.
extern const bench_def pingpong;
extern const bench_def threadring;
extern const bench_def threadring503;
extern const bench_def counting;
extern const bench_def fjthrput;
extern const bench_def fjcreate;
extern const bench_def chameneos;
extern const bench_def big;

} // namespace savina
