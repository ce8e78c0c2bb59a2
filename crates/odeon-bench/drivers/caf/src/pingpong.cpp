// Savina #1 Ping Pong (savina.md §3.1): a strictly sequential request/reply exchange
// between two actors; Ping's next ping goes back through its own mailbox.
#include "common.hpp"

namespace {

using start_atom = caf::atom_constant<caf::atom("start")>;
using ping_atom = caf::atom_constant<caf::atom("ping")>;
using send_ping_atom = caf::atom_constant<caf::atom("sendping")>;
using send_pong_atom = caf::atom_constant<caf::atom("sendpong")>;
using stop_atom = caf::atom_constant<caf::atom("stop")>;

/// What the actors report; each field is written by one actor only and read by the
/// driver after every actor has exited.
struct result {
  std::int64_t pongs = 0;      ///< Pong's counter.
  std::int64_t pings_sent = 0; ///< SendPing messages Ping sent.
};

caf::behavior pong_actor(caf::event_based_actor* self, result* res) {
  return {
    [=](send_ping_atom, const caf::actor& from) {
      self->send(from, send_pong_atom::value, caf::actor_cast<caf::actor>(self));
      ++res->pongs;
    },
    [=](stop_atom) { self->quit(); },
  };
}

struct ping_state {
  std::int64_t pings_left = 0;
};

caf::behavior ping_actor(caf::stateful_actor<ping_state>* self, caf::actor pong,
                         std::int64_t n, result* res) {
  self->state.pings_left = n;
  auto send_ping = [=] {
    self->send(pong, send_ping_atom::value, caf::actor_cast<caf::actor>(self));
    --self->state.pings_left;
    ++res->pings_sent;
  };
  return {
    [=](start_atom) { send_ping(); },
    [=](ping_atom) { send_ping(); },
    [=](send_pong_atom, const caf::actor&) {
      if (self->state.pings_left > 0) {
        self->send(caf::actor_cast<caf::actor>(self), ping_atom::value);
      } else {
        self->send(pong, stop_atom::value);
        self->quit();
      }
    },
  };
}

savina::outcome run(const savina::params& p, std::size_t threads) {
  auto n = p.at("n");
  result res;
  auto ns = savina::timed_system(threads, [&](caf::actor_system& sys) {
    auto pong = sys.spawn(pong_actor, &res);
    auto ping = sys.spawn(ping_actor, pong, n, &res);
    caf::anon_send(ping, start_atom::value);
  });
  return {ns, savina::all_of({savina::expect("pongs sent", res.pongs, n),
                              savina::expect("round trips", res.pings_sent, n)})};
}

} // namespace

/// N >= 1: Ping always sends its first ping.
const savina::bench_def savina::pingpong{{{"n", 40000, 2000, 1}}, run};
