// Savina #3 Counting Actor (savina.md §3.3): one handler of the Producer sends N
// increments back to back, then asks the Counter for its count.
#include "common.hpp"

namespace {

using increment_atom = caf::atom_constant<caf::atom("increment")>;
using retrieve_atom = caf::atom_constant<caf::atom("retrieve")>;
using result_atom = caf::atom_constant<caf::atom("result")>;

struct result {
  std::int64_t counter = -1;  ///< The Counter's count when it exited.
  std::int64_t producer = -1; ///< The count the Producer received.
};

struct counter_state {
  std::int64_t count = 0;
};

caf::behavior counter_actor(caf::stateful_actor<counter_state>* self, result* res) {
  return {
    [=](increment_atom) { ++self->state.count; },
    [=](retrieve_atom, const caf::actor& from) {
      self->send(from, result_atom::value, self->state.count);
      res->counter = self->state.count;
      self->quit();
    },
  };
}

caf::behavior producer_actor(caf::event_based_actor* self, caf::actor counter,
                             std::int64_t n, result* res) {
  return {
    [=](increment_atom) {
      for (std::int64_t i = 0; i < n; ++i)
        self->send(counter, increment_atom::value);
      self->send(counter, retrieve_atom::value, caf::actor_cast<caf::actor>(self));
    },
    [=](result_atom, std::int64_t count) {
      res->producer = count;
      self->quit();
    },
  };
}

savina::outcome run(const savina::params& p, std::size_t threads) {
  auto n = p.at("n");
  result res;
  auto ns = savina::timed_system(threads, [&](caf::actor_system& sys) {
    auto counter = sys.spawn(counter_actor, &res);
    auto producer = sys.spawn(producer_actor, counter, n, &res);
    caf::anon_send(producer, increment_atom::value);
  });
  return {ns, savina::all_of({savina::expect("count seen by the producer", res.producer, n),
                              savina::expect("count", res.counter, n)})};
}

} // namespace

const savina::bench_def savina::counting{{{"n", 1000000, 20000, 0}}, run};
