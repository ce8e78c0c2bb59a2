%% @doc Savina #3 Counting Actor (savina.md §3.3): one handler of the Producer sends
%% N increments back to back, then asks the Counter for its count.
-module(sv_counting).
-export([params/1, run/2]).

%% {flag, default, quick, minimum}.
params(_) -> [{"n", 1000000, 20000, 0}].

run(_, #{"n" := N}) ->
    Latch = {self(), make_ref()},
    {Ns, Infos} =
        sv_util:timed(
          fun() ->
                  Counter = spawn(fun() -> counter(Latch, 0) end),
                  Producer = spawn(fun() -> producer(Latch, Counter, N) end),
                  Producer ! increment,
                  sv_util:await(Latch, 2)
          end),
    %% The count the producer received, and the counter's own.
    Check = case proplists:get_value(producer, Infos) of
                N -> sv_util:expect("count", proplists:get_value(counter, Infos), N);
                Got -> sv_util:expect("count seen by the producer", Got, N)
            end,
    {Ns, Check}.

producer(Latch, Counter, N) ->
    receive
        increment ->
            send_increments(Counter, N),
            Counter ! {retrieve, self()},
            receive
                {result, Count} -> sv_util:done(Latch, {producer, Count})
            end
    end.

send_increments(_Counter, 0) ->
    ok;
send_increments(Counter, K) ->
    Counter ! increment,
    send_increments(Counter, K - 1).

counter(Latch, Count) ->
    receive
        increment ->
            counter(Latch, Count + 1);
        {retrieve, From} ->
            From ! {result, Count},
            sv_util:done(Latch, {counter, Count})
    end.
