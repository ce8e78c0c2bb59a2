%% @doc Savina #2 Thread Ring (savina.md §3.2), also `threadring503' (the same
%% protocol with 503 actors): one token circulates R hops, then an exit token
%% travels N+1 hops; the second exit reaching an exited process is dropped, as
%% Erlang drops every message sent to a dead pid.
-module(sv_threadring).
-export([params/1, run/2]).

%% {flag, default, quick, minimum}.
params("threadring503") -> [{"n", 503, 503, 1}, {"r", 10000000, 20000, 0}];
params(_) -> [{"n", 100, 10, 1}, {"r", 100000, 2000, 0}].

run(_, #{"n" := N, "r" := R}) ->
    Latch = {self(), make_ref()},
    {Ns, Pings} =
        sv_util:timed(
          fun() ->
                  Ring = [spawn(fun() -> wire(Latch, N) end) || _ <- lists:seq(1, N)],
                  Nexts = tl(Ring) ++ [hd(Ring)],
                  lists:foreach(fun({A, Next}) -> A ! {data, Next} end, lists:zip(Ring, Nexts)),
                  hd(Ring) ! {ping, R},
                  lists:sum(sv_util:await(Latch, N))
          end),
    {Ns, sv_util:expect("ping deliveries", Pings, R + 1)}.

wire(Latch, N) ->
    receive
        {data, Next} -> loop(Latch, N, Next, 0)
    end.

%% Pings: ping deliveries to this actor, summed by the driver (R + 1 in all).
loop(Latch, N, Next, Pings) ->
    receive
        {ping, 0} ->
            Next ! {exit, N},
            loop(Latch, N, Next, Pings + 1);
        {ping, K} ->
            Next ! {ping, K - 1},
            loop(Latch, N, Next, Pings + 1);
        {exit, K} ->
            K > 0 andalso (Next ! {exit, K - 1}),
            sv_util:done(Latch, Pings)
    end.
