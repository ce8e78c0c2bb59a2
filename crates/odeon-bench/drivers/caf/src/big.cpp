// Savina #8 Big (savina.md §3.8): W workers ping random workers (Savina's
// PseudoRandom seeded with the worker's id) N times each; each pong must come from
// the worker last pinged. A Sink collects one exit per worker, then stops them all.
#include "common.hpp"

namespace {

using neighbors_atom = caf::atom_constant<caf::atom("neighbors")>;
using ping_atom = caf::atom_constant<caf::atom("ping")>;
using pong_atom = caf::atom_constant<caf::atom("pong")>;
using exit_atom = caf::atom_constant<caf::atom("exit")>;

/// One worker's report, written as it exits.
struct worker_result {
  std::int64_t sent = -1;   ///< Pings sent.
  std::int64_t errors = 0;  ///< Pongs from a worker other than the one last pinged.
};

struct worker_state {
  std::vector<caf::actor> neighbors;
  savina::pseudo_random rng{0};
  std::int32_t expected = -1; ///< The worker last pinged; -1 matches the kick-off.
  std::int64_t sent = 0;
  std::int64_t errors = 0;
};

caf::behavior worker(caf::stateful_actor<worker_state>* self, std::int32_t id, std::int64_t n,
                     caf::actor sink, worker_result* res) {
  self->state.rng = savina::pseudo_random{id};
  return {
    [=](neighbors_atom, const std::vector<caf::actor>& all) { self->state.neighbors = all; },
    [=](ping_atom, std::int32_t from) {
      self->send(self->state.neighbors[static_cast<std::size_t>(from)], pong_atom::value, id);
    },
    [=](pong_atom, std::int32_t from) {
      auto& s = self->state;
      if (from != s.expected)
        ++s.errors;
      if (s.sent == n) {
        self->send(sink, exit_atom::value);
        return;
      }
      auto w = static_cast<std::int32_t>(s.neighbors.size());
      s.expected = s.rng.next_int(w);
      self->send(s.neighbors[static_cast<std::size_t>(s.expected)], ping_atom::value, id);
      ++s.sent;
    },
    [=](exit_atom) {
      res->sent = self->state.sent;
      res->errors = self->state.errors;
      self->state.neighbors.clear();
      self->quit();
    },
  };
}

struct sink_state {
  std::vector<caf::actor> workers;
  std::int64_t exits = 0;
};

caf::behavior sink_actor(caf::stateful_actor<sink_state>* self, std::int64_t* exits) {
  return {
    [=](neighbors_atom, const std::vector<caf::actor>& all) { self->state.workers = all; },
    [=](exit_atom) {
      auto& s = self->state;
      if (++s.exits < static_cast<std::int64_t>(s.workers.size()))
        return;
      for (const auto& w : s.workers)
        self->send(w, exit_atom::value);
      *exits = s.exits;
      s.workers.clear();
      self->quit();
    },
  };
}

savina::outcome run(const savina::params& p, std::size_t threads) {
  auto n = p.at("n");
  auto w = p.at("w");
  std::vector<worker_result> results(static_cast<std::size_t>(w));
  std::int64_t exits = -1;
  auto ns = savina::timed_system(threads, [&](caf::actor_system& sys) {
    auto sink = sys.spawn(sink_actor, &exits);
    std::vector<caf::actor> workers;
    workers.reserve(results.size());
    for (std::size_t i = 0; i < results.size(); ++i)
      workers.push_back(sys.spawn(worker, static_cast<std::int32_t>(i), n, sink, &results[i]));
    // One message, shared by every receiver (CAF messages are reference counted),
    // as Savina shares one array.
    auto neighbors = caf::make_message(neighbors_atom::value, std::move(workers));
    caf::anon_send(sink, neighbors);
    const auto& all = neighbors.get_as<std::vector<caf::actor>>(1);
    for (const auto& a : all)
      caf::anon_send(a, neighbors);
    for (const auto& a : all)
      caf::anon_send(a, pong_atom::value, std::int32_t{-1});
  });
  std::int64_t sent = 0;
  std::int64_t errors = 0;
  for (const auto& r : results) {
    sent += r.sent;
    errors += r.errors;
  }
  return {ns, savina::all_of({savina::expect("exits at the sink", exits, w),
                              savina::expect("pings sent", sent, w * n),
                              savina::expect("expected-pinger errors", errors, std::int64_t{0})})};
}

} // namespace

const savina::bench_def savina::big{{{"n", 20000, 200, 0}, {"w", 120, 10, 1}}, run};
