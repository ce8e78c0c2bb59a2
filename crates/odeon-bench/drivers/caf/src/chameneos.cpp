// Savina #7 Chameneos (savina.md §3.7): C chameneos meet pairwise through one broker,
// the Mall, until it has arranged M meetings; then the Mall fades every chameneo that
// asks for another meeting and sums their meeting counts.
#include "common.hpp"

namespace {

using meet_atom = caf::atom_constant<caf::atom("meet")>;
using change_atom = caf::atom_constant<caf::atom("change")>;
using count_atom = caf::atom_constant<caf::atom("mcount")>;
using exit_atom = caf::atom_constant<caf::atom("exit")>;

/// RED, YELLOW, BLUE are 0, 1, 2.
constexpr std::int32_t faded = 3;

/// Same colours stay; FADED wins; two different live colours give the third.
std::int32_t complement(std::int32_t a, std::int32_t b) {
  if (a == b)
    return a;
  if (a == faded || b == faded)
    return faded;
  return 3 - a - b;
}

struct result {
  std::int64_t sum = -1;      ///< The Mall's sum of reported meeting counts.
  std::int64_t faded = -1;    ///< How many chameneos the Mall saw fade.
  std::vector<std::int64_t> own; ///< Each chameneo's own count, written as it exits.
};

struct chameneo_state {
  std::int32_t colour = 0;
  std::int64_t meetings = 0;
};

caf::behavior chameneo(caf::stateful_actor<chameneo_state>* self, caf::actor mall,
                       std::int32_t colour, std::int64_t* own) {
  self->state.colour = colour;
  self->send(mall, meet_atom::value, colour, caf::actor_cast<caf::actor>(self));
  return {
    [=](meet_atom, std::int32_t other, const caf::actor& from) {
      auto& s = self->state;
      s.colour = complement(s.colour, other);
      ++s.meetings;
      auto me = caf::actor_cast<caf::actor>(self);
      self->send(from, change_atom::value, s.colour, me);
      self->send(mall, meet_atom::value, s.colour, me);
    },
    [=](change_atom, std::int32_t c, const caf::actor&) {
      auto& s = self->state;
      s.colour = c;
      ++s.meetings;
      self->send(mall, meet_atom::value, c, caf::actor_cast<caf::actor>(self));
    },
    [=](exit_atom, const caf::actor& from) {
      auto& s = self->state;
      s.colour = faded;
      *own = s.meetings;
      self->send(from, count_atom::value, s.meetings, caf::actor_cast<caf::actor>(self));
      self->quit();
    },
  };
}

struct mall_state {
  std::int64_t meetings_left = 0;
  caf::actor waiting; ///< The chameneo in the slot, or none.
  std::int64_t sum = 0;
  std::int64_t faded = 0;
};

/// The Mall creates the chameneos when it starts; chameneo i has colour i mod 3.
caf::behavior mall(caf::stateful_actor<mall_state>* self, std::int64_t c, std::int64_t m,
                   result* res) {
  self->state.meetings_left = m;
  auto me = caf::actor_cast<caf::actor>(self);
  for (std::int64_t i = 0; i < c; ++i)
    self->spawn(chameneo, me, static_cast<std::int32_t>(i % 3), &res->own[i]);
  return {
    [=](meet_atom, std::int32_t colour, caf::actor& sender) {
      auto& s = self->state;
      if (s.meetings_left == 0) {
        self->send(sender, exit_atom::value, caf::actor_cast<caf::actor>(self));
      } else if (!s.waiting) {
        s.waiting = std::move(sender);
      } else {
        --s.meetings_left;
        self->send(s.waiting, meet_atom::value, colour, sender);
        s.waiting = caf::actor{};
      }
    },
    [=](count_atom, std::int64_t count, const caf::actor&) {
      auto& s = self->state;
      s.sum += count;
      if (++s.faded == c) {
        res->sum = s.sum;
        res->faded = s.faded;
        self->quit();
      }
    },
  };
}

savina::outcome run(const savina::params& p, std::size_t threads) {
  auto c = p.at("c");
  auto m = p.at("m");
  result res;
  res.own.assign(static_cast<std::size_t>(c), -1);
  auto ns = savina::timed_system(
    threads, [&](caf::actor_system& sys) { sys.spawn(mall, c, m, &res); });
  std::int64_t own = 0;
  for (auto k : res.own)
    own += k;
  return {ns, savina::all_of({savina::expect("faded chameneos", res.faded, c),
                              savina::expect("meetings counted by the chameneos", own, 2 * m),
                              savina::expect("sum of meetings", res.sum, 2 * m)})};
}

} // namespace

/// C >= 2: a lone chameneo would wait forever.
const savina::bench_def savina::chameneos{{{"c", 100, 10, 2}, {"m", 200000, 2000, 0}}, run};
