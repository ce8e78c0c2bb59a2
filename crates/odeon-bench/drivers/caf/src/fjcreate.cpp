// Savina #5 Fork-Join Actor Creation (savina.md §3.5): N times, spawn an actor and
// send it one message; it does the work unit and exits.
#include "common.hpp"

namespace {

using msg_atom = caf::atom_constant<caf::atom("msg")>;

/// `handled`: this actor's slot, 1 once it has handled its message.
caf::behavior actor_fn(caf::event_based_actor* self, std::uint8_t* handled) {
  return {
    [=](msg_atom) {
      savina::work_unit();
      ++*handled;
      self->quit();
    },
  };
}

savina::outcome run(const savina::params& p, std::size_t threads) {
  auto n = p.at("n");
  std::vector<std::uint8_t> handled(static_cast<std::size_t>(n), 0);
  auto ns = savina::timed_system(threads, [&](caf::actor_system& sys) {
    for (auto& slot : handled)
      caf::anon_send(sys.spawn(actor_fn, &slot), msg_atom::value);
  });
  std::int64_t once = 0;
  for (auto k : handled)
    once += k == 1 ? 1 : 0;
  return {ns, savina::expect("actors that handled exactly one message", once, n)};
}

} // namespace

const savina::bench_def savina::fjcreate{{{"n", 40000, 1000, 0}}, run};
