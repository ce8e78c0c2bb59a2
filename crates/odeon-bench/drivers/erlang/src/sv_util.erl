%% @doc What every benchmark module shares: the timed region, the exit latch and
%% the fork-join work unit.
-module(sv_util).
-export([timed/1, await/2, done/2, work/0, expect/3]).

%% Runs `Fun' (which spawns the actors and waits until all have exited) and returns
%% `{Nanoseconds, Result}', Result being what Fun returned. Validation happens on
%% Result afterwards, outside the timed region (as Savina's cleanupIteration).
timed(Fun) ->
    T0 = erlang:monotonic_time(nanosecond),
    Result = Fun(),
    {erlang:monotonic_time(nanosecond) - T0, Result}.

%% The exit latch of Savina's actor wrapper (§1.1): every actor's last act is
%% `done(Latch, Info)', and the iteration ends when `await' has seen all of them.
%% A message rather than a monitor, because that is what the reference counts and
%% because it carries each actor's counters back for validation at no extra cost.
%% `Latch' is `{DriverPid, Ref}'; the ref keeps iterations apart.
done({Driver, Ref}, Info) ->
    Driver ! {Ref, Info},
    ok.

%% Waits for `N' `done' messages of this latch's ref and returns their infos.
await({_, Ref}, N) ->
    await(Ref, N, []).

await(_Ref, 0, Acc) ->
    Acc;
await(Ref, N, Acc) ->
    receive
        {Ref, Info} -> await(Ref, N - 1, [Info | Acc])
    end.

%% The work unit of §3.4/§3.5: sin(37.2)^2, failing if it is not positive so that
%% the compiler cannot drop it.
work() ->
    S = math:sin(37.2),
    R = S * S,
    case R > 0.0 of
        true -> ok;
        false -> erlang:error({bad_work_unit, R})
    end.

%% `{ok, "What = Expected"}' or `{error, ...}' naming both values.
expect(What, Got, Expected) when Got =:= Expected ->
    {ok, io_lib:format("~s = ~p", [What, Expected])};
expect(What, Got, Expected) ->
    {error, io_lib:format("~s: got ~p, expected ~p", [What, Got, Expected])}.
