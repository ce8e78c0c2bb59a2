// The CAF Savina driver: parses the driver command line of
// crates/odeon-bench/savina/src/protocol.rs, runs the iterations and prints one
// `SAVINA-RESULT {json}` line per iteration.
#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include "common.hpp"

namespace {

constexpr int exit_invalid = 3;
constexpr int exit_usage = 2;
constexpr int exit_unsupported = 4;

/// Every id of the shared catalog (catalog.rs): an id outside it is bad input
/// (exit 2); an id in it that this driver does not implement is unsupported (4).
const std::vector<std::string> catalog = {
  "pingpong",  "threadring", "counting",    "fjthrput",   "fjcreate",
  "fib",       "chameneos",  "big",         "concdict",   "concsll",
  "bndbuffer", "philosopher", "barber",     "cigsmok",    "logmap",
  "banking",   "apsp",       "astar",       "nqueenk",    "recmatmul",
  "quicksort", "radixsort",  "filterbank",  "bitonicsort", "sieve",
  "uct",       "facloc",     "trapezoid",   "piprecision", "sor",
  "threadring503"};

const savina::bench_def* implemented(const std::string& id) {
  if (id == "pingpong") return &savina::pingpong;
  if (id == "threadring") return &savina::threadring;
  if (id == "threadring503") return &savina::threadring503;
  if (id == "counting") return &savina::counting;
  if (id == "fjthrput") return &savina::fjthrput;
  if (id == "fjcreate") return &savina::fjcreate;
  if (id == "chameneos") return &savina::chameneos;
  if (id == "big") return &savina::big;
  return nullptr;
}

/// Bad input: thrown with the message for stderr, exit status 2.
struct usage_error {
  std::string msg;
};

std::string usage() {
  std::string s = "usage: run.sh <bench> [--variant V] [--iterations K] [--warmup W] "
                  "[--threads T] [--quick] [-flag value]...\nbenchmarks:";
  for (const auto& id : catalog)
    s += " " + id;
  return s;
}

/// A whole-string decimal integer, or false.
bool parse_int(const std::string& text, std::int64_t& out) {
  if (text.empty())
    return false;
  errno = 0;
  char* end = nullptr;
  long long v = std::strtoll(text.c_str(), &end, 10);
  if (errno != 0 || *end != '\0' || std::isspace(static_cast<unsigned char>(text[0])))
    return false;
  out = v;
  return true;
}

std::int64_t count(const std::string& flag, const std::string& value) {
  std::int64_t n = 0;
  if (!parse_int(value, n) || n < 0 || n > UINT32_MAX)
    throw usage_error{flag + " \"" + value + "\" is not a count"};
  return n;
}

std::string json_str(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 32) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

struct invocation {
  std::string id;
  std::string variant;
  std::int64_t iterations = 1;
  std::int64_t warmup = 0;
  std::size_t threads = 1;
  savina::params values;
};

invocation parse(const std::string& id, const savina::bench_def& bench,
                 const std::vector<std::string>& rest) {
  invocation inv;
  inv.id = id;
  inv.threads = std::max(1u, std::thread::hardware_concurrency());
  bool quick = false;
  for (const auto& a : rest)
    quick |= a == "--quick";
  for (const auto& p : bench.specs)
    inv.values[p.name] = quick ? p.quick : p.def;
  for (std::size_t i = 0; i < rest.size(); ++i) {
    const auto& flag = rest[i];
    if (flag == "--quick")
      continue;
    if (i + 1 >= rest.size())
      throw usage_error{flag + " needs a value"};
    const auto& value = rest[++i];
    if (flag == "--variant") {
      inv.variant = value;
    } else if (flag == "--iterations") {
      inv.iterations = count(flag, value);
    } else if (flag == "--warmup") {
      inv.warmup = count(flag, value);
    } else if (flag == "--threads") {
      inv.threads = static_cast<std::size_t>(std::max<std::int64_t>(1, count(flag, value)));
    } else if (flag.size() > 1 && flag[0] == '-' && flag[1] != '-') {
      auto key = flag.substr(1);
      auto spec = std::find_if(bench.specs.begin(), bench.specs.end(),
                               [&](const savina::param_spec& p) { return p.name == key; });
      if (spec == bench.specs.end()) {
        std::string known;
        for (const auto& p : bench.specs)
          known += (known.empty() ? "-" : " -") + p.name;
        throw usage_error{id + ": unknown parameter " + flag + " (known: " + known + ")"};
      }
      std::int64_t n = 0;
      if (!parse_int(value, n))
        throw usage_error{id + ": " + flag + " \"" + value + "\" is not an integer"};
      if (n < spec->min)
        throw usage_error{id + ": " + flag + " " + value + " is below the minimum "
                          + std::to_string(spec->min)};
      inv.values[key] = n;
    } else {
      throw usage_error{"unexpected argument \"" + flag + "\"\n" + usage()};
    }
  }
  // One configuration only: event-based actors on the default work-stealing scheduler.
  if (!inv.variant.empty() && inv.variant != "default")
    throw usage_error{"unknown variant \"" + inv.variant + "\" (caf has only the default one)"};
  return inv;
}

int run(const std::vector<std::string>& args) {
  if (args.empty())
    throw usage_error{usage()};
  const auto& id = args[0];
  if (std::find(catalog.begin(), catalog.end(), id) == catalog.end())
    throw usage_error{"unknown benchmark \"" + id + "\"\n" + usage()};
  const auto* bench = implemented(id);
  if (bench == nullptr) {
    std::cout << "SAVINA-UNSUPPORTED " << id << std::endl;
    return exit_unsupported;
  }
  auto inv = parse(id, *bench, std::vector<std::string>(args.begin() + 1, args.end()));
  bool all_valid = true;
  for (int phase = 0; phase < 2; ++phase) {
    bool warm = phase == 0;
    auto n = warm ? inv.warmup : inv.iterations;
    for (std::int64_t i = 0; i < n; ++i) {
      auto out = bench->run(inv.values, inv.threads);
      all_valid &= out.result.ok;
      std::cout << "SAVINA-RESULT {\"bench\":" << json_str(id)
                << ",\"runtime\":\"caf\",\"variant\":" << json_str(inv.variant)
                << ",\"iteration\":" << i << ",\"warmup\":" << (warm ? "true" : "false")
                << ",\"ns\":" << out.ns << ",\"valid\":" << (out.result.ok ? "true" : "false")
                << ",\"detail\":" << json_str(out.result.detail) << "}" << std::endl;
    }
  }
  return all_valid ? 0 : exit_invalid;
}

} // namespace

int main(int argc, char** argv) {
  try {
    return run(std::vector<std::string>(argv + 1, argv + argc));
  } catch (const usage_error& e) {
    std::cerr << "caf: " << e.msg << std::endl;
    return exit_usage;
  }
}
