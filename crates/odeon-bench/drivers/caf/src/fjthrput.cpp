// Savina #4 Fork-Join Throughput (savina.md §3.4): the driver sends N rounds of one
// message to each of A actors, in index order; each actor does the sin-squared work
// unit per message and exits after its N-th.
#include "common.hpp"

namespace {

using msg_atom = caf::atom_constant<caf::atom("msg")>;

struct worker_state {
  std::int64_t count = 0;
};

/// `handled`: this actor's slot of the handled-message count (A * N in all).
caf::behavior worker(caf::stateful_actor<worker_state>* self, std::int64_t n,
                     std::int64_t* handled) {
  return {
    [=](msg_atom) {
      savina::work_unit();
      if (++self->state.count == n) {
        *handled = self->state.count;
        self->quit();
      }
    },
  };
}

savina::outcome run(const savina::params& p, std::size_t threads) {
  auto n = p.at("n");
  auto a = p.at("a");
  std::vector<std::int64_t> handled(static_cast<std::size_t>(a), 0);
  auto ns = savina::timed_system(threads, [&](caf::actor_system& sys) {
    std::vector<caf::actor> actors;
    actors.reserve(handled.size());
    for (auto& slot : handled)
      actors.push_back(sys.spawn(worker, n, &slot));
    for (std::int64_t m = 0; m < n; ++m)
      for (const auto& w : actors)
        caf::anon_send(w, msg_atom::value);
  });
  std::int64_t total = 0;
  for (auto k : handled)
    total += k;
  return {ns, savina::expect("handled messages", total, a * n)};
}

} // namespace

/// N >= 1: an actor exits only on its N-th message.
const savina::bench_def savina::fjthrput{{{"n", 10000, 200, 1}, {"a", 60, 10, 1}}, run};
