// Savina #2 Thread Ring (savina.md §3.2), and `threadring503` (the same protocol with
// 503 actors): one token circulates R hops, then an exit token travels N+1 hops; the
// second exit reaching an actor that has quit is dropped by CAF.
#include "common.hpp"

namespace {

using data_atom = caf::atom_constant<caf::atom("data")>;
using ping_atom = caf::atom_constant<caf::atom("ping")>;
using exit_atom = caf::atom_constant<caf::atom("exit")>;

struct ring_state {
  caf::actor next;
};

/// `pings`: this actor's slot of the ping-delivery count (R + 1 summed over the ring).
caf::behavior ring_actor(caf::stateful_actor<ring_state>* self, std::int64_t n,
                         std::int64_t* pings) {
  return {
    [=](data_atom, caf::actor& next) { self->state.next = std::move(next); },
    [=](ping_atom, std::int64_t k) {
      ++*pings;
      if (k > 0)
        self->send(self->state.next, ping_atom::value, k - 1);
      else
        self->send(self->state.next, exit_atom::value, n);
    },
    [=](exit_atom, std::int64_t k) {
      if (k > 0)
        self->send(self->state.next, exit_atom::value, k - 1);
      // Drop the ring reference so that the ring of handles does not keep the
      // actors' memory alive; then exit unconditionally.
      self->state.next = caf::actor{};
      self->quit();
    },
  };
}

savina::outcome run(const savina::params& p, std::size_t threads) {
  auto n = p.at("n");
  auto r = p.at("r");
  std::vector<std::int64_t> pings(static_cast<std::size_t>(n), 0);
  auto ns = savina::timed_system(threads, [&](caf::actor_system& sys) {
    std::vector<caf::actor> ring;
    ring.reserve(pings.size());
    for (auto& slot : pings)
      ring.push_back(sys.spawn(ring_actor, n, &slot));
    for (std::size_t i = 0; i < ring.size(); ++i)
      caf::anon_send(ring[i], data_atom::value, ring[(i + 1) % ring.size()]);
    caf::anon_send(ring[0], ping_atom::value, r);
  });
  std::int64_t delivered = 0;
  for (auto k : pings)
    delivered += k;
  return {ns, savina::expect("ping deliveries", delivered, r + 1)};
}

} // namespace

const savina::bench_def savina::threadring{{{"n", 100, 10, 1}, {"r", 100000, 2000, 0}}, run};
const savina::bench_def savina::threadring503{{{"n", 503, 503, 1}, {"r", 10000000, 20000, 0}},
                                              run};
