%% @doc Savina #5 Fork-Join Actor Creation (savina.md §3.5): N times, spawn a
%% process and send it one message; it does the work unit and exits.
-module(sv_fjcreate).
-export([params/1, run/2]).

%% {flag, default, quick, minimum}.
params(_) -> [{"n", 40000, 1000, 0}].

run(_, #{"n" := N}) ->
    Latch = {self(), make_ref()},
    {Ns, Infos} =
        sv_util:timed(
          fun() ->
                  spawn_all(Latch, N),
                  sv_util:await(Latch, N)
          end),
    %% Each actor reports how many messages it handled before exiting.
    Check = case sv_util:expect("actors", length(Infos), N) of
                {ok, _} -> sv_util:expect("messages handled, one per actor", lists:sum(Infos), N);
                Err -> Err
            end,
    {Ns, Check}.

spawn_all(_Latch, 0) ->
    ok;
spawn_all(Latch, K) ->
    P = spawn(fun() -> actor(Latch) end),
    P ! msg,
    spawn_all(Latch, K - 1).

actor(Latch) ->
    receive
        msg ->
            sv_util:work(),
            sv_util:done(Latch, 1)
    end.
