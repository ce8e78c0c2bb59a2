%% @doc Savina #4 Fork-Join Throughput (savina.md §3.4): the driver sends N rounds
%% of one message to each of A actors, in index order; each actor does the
%% sin-squared work unit per message and exits after its N-th.
-module(sv_fjthrput).
-export([params/1, run/2]).

%% {flag, default, quick, minimum}. N >= 1: an actor exits only on its N-th message.
params(_) -> [{"n", 10000, 200, 1}, {"a", 60, 10, 1}].

run(_, #{"n" := N, "a" := A}) ->
    Latch = {self(), make_ref()},
    {Ns, Handled} =
        sv_util:timed(
          fun() ->
                  Actors = [spawn(fun() -> worker(Latch, N, 0) end) || _ <- lists:seq(1, A)],
                  rounds(Actors, N),
                  lists:sum(sv_util:await(Latch, A))
          end),
    {Ns, sv_util:expect("handled messages", Handled, A * N)}.

rounds(_Actors, 0) ->
    ok;
rounds(Actors, M) ->
    lists:foreach(fun(P) -> P ! msg end, Actors),
    rounds(Actors, M - 1).

worker(Latch, N, Count) ->
    receive
        msg ->
            sv_util:work(),
            case Count + 1 of
                N -> sv_util:done(Latch, N);
                C -> worker(Latch, N, C)
            end
    end.
