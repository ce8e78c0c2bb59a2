%% @doc Savina #1 Ping Pong (savina.md §3.1): a strictly sequential request/reply
%% exchange between two processes; Ping's next ping goes through its own mailbox.
-module(sv_pingpong).
-export([params/1, run/2]).

%% {flag, default, quick, minimum}. N >= 1: Ping always sends its first ping.
params(_) -> [{"n", 40000, 2000, 1}].

run(_, #{"n" := N}) ->
    Latch = {self(), make_ref()},
    {Ns, Infos} =
        sv_util:timed(
          fun() ->
                  Pong = spawn(fun() -> pong(Latch, 0) end),
                  Ping = spawn(fun() -> ping(Latch, Pong, N, 0) end),
                  Ping ! start,
                  sv_util:await(Latch, 2)
          end),
    {Ns, check(Infos, N)}.

%% Pong's counter and the pings Ping sent must both be N.
check(Infos, N) ->
    case sv_util:expect("pongs sent", proplists:get_value(pong, Infos), N) of
        {ok, _} -> sv_util:expect("round trips", proplists:get_value(ping, Infos), N);
        Err -> Err
    end.

%% Left: pings still to send; Sent: SendPing messages sent (the check).
ping(Latch, Pong, Left, Sent) ->
    receive
        Go when Go =:= start; Go =:= ping ->
            Pong ! {send_ping, self()},
            ping(Latch, Pong, Left - 1, Sent + 1);
        {send_pong, _From} when Left > 0 ->
            self() ! ping,
            ping(Latch, Pong, Left, Sent);
        {send_pong, _From} ->
            Pong ! stop,
            sv_util:done(Latch, {ping, Sent})
    end.

pong(Latch, Count) ->
    receive
        {send_ping, From} ->
            From ! {send_pong, self()},
            pong(Latch, Count + 1);
        stop ->
            sv_util:done(Latch, {pong, Count})
    end.
